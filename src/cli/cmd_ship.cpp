// attnlab ship --model RUN --out DIR [--dtype bf16|fp32] [--compare N] [--beam K] [--force] [--format text|json]
// Makes a trained run into a model to ship: DIR/model.ckpt with the weights stored in bf16 (half the
// bytes; widened to float32 exactly on load, docs/checkpoint.md) or float32, without the training
// state, and train-log.json beside it. Then it says what the narrowing cost: the first N test
// sentences translated by the run's model and by the shipped one, and how many came out differently
// (a language model: both models' test loss and next-token accuracy).
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.hpp"
#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "io/files.hpp"
#include "model/checkpoint.hpp"
#include "model/decode.hpp"
#include "render/progress.hpp"
#include "render/terminal.hpp"
#include "tasks/confidence.hpp"
#include "tasks/task.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace attnlab::cli {

struct ShipOptions {
  std::string model;
  std::string out;
  std::string dtype = "bf16";
  std::size_t compare = 300;
  int beam = 4;
  bool force = false;
  std::string format = "text";
};

namespace {

namespace fs = std::filesystem;

struct Comparison {
  nlohmann::json json;
  std::vector<std::string> lines;  // the text report
};

// Translation: the first n test sentences by both models, beam search as `translate` does it.
Comparison compare_translations(const ShipOptions& o, tasks::LoadedModel& before, tasks::LoadedModel& after) {
  tasks::RunConfig run = before.run;
  const tasks::TaskData data = tasks::build_task_data(run, &before.vocab, tasks::Splits::TestOnly);
  const std::size_t n = std::min(o.compare, data.test.size());
  model::DecodeOptions d;
  d.beam = o.beam;
  std::size_t same = 0, right_before = 0, right_after = 0;
  nlohmann::json differ = nlohmann::json::array();
  render::ProgressBar bar(static_cast<std::int64_t>(n), "compare");
  for (std::size_t i = 0; i < n; ++i) {
    const model::Hypothesis a = model::translate(*before.net, data.test[i].src, d);
    const model::Hypothesis b = model::translate(*after.net, data.test[i].src, d);
    same += a.tokens == b.tokens;
    right_before += a.tokens == data.test[i].tgt;
    right_after += b.tokens == data.test[i].tgt;
    if (a.tokens != b.tokens) {
      const auto text = [&](const std::vector<int>& ids) { return before.vocab.decode(std::vector<text::TokenId>(ids.begin(), ids.end())); };
      differ.push_back({{"en", data.test_pairs[i].en}, {"expected", data.test_pairs[i].fr}, {"fp32", text(a.tokens)}, {"shipped", text(b.tokens)}});
    }
    bar.update(static_cast<std::int64_t>(i + 1), fmt::format("same {}/{}", same, i + 1));
  }
  bar.finish("");
  Comparison c;
  c.json = {{"test_sentences", n}, {"beam", o.beam}, {"same_translation", same}, {"different_translation", n - same},
            {"exact_match_fp32", right_before}, {"exact_match_shipped", right_after}, {"differences", differ}};
  if (n == 0) {
    c.lines.push_back("no test sentences to compare on (the run's config has corpus.test 0)");
    return c;
  }
  c.lines.push_back(fmt::format("the same translation for {} of the first {} test sentences (beam {}); {} differ", same, n, o.beam, n - same));
  c.lines.push_back(fmt::format("exact match on them: {:.1f} % from the run's weights, {:.1f} % shipped ({} and {} of {})",
                                100.0 * static_cast<double>(right_before) / static_cast<double>(n),
                                100.0 * static_cast<double>(right_after) / static_cast<double>(n), right_before, right_after, n));
  for (std::size_t k = 0; k < differ.size() && k < 5; ++k) {
    c.lines.push_back("  " + differ[k]["en"].get<std::string>());
    c.lines.push_back("    run      " + differ[k]["fp32"].get<std::string>());
    c.lines.push_back("    shipped  " + differ[k]["shipped"].get<std::string>());
  }
  if (differ.size() > 5) c.lines.push_back(fmt::format("  … and {} more (--format json lists them all)", differ.size() - 5));
  return c;
}

// A language model: teacher-forced loss and next-token accuracy on the first n test windows.
Comparison compare_lm(const ShipOptions& o, tasks::LoadedModel& before, tasks::LoadedModel& after) {
  tasks::RunConfig run = before.run;
  const tasks::TaskData data = tasks::build_task_data(run, &before.vocab, tasks::Splits::TestOnly);
  const std::size_t n = std::min(o.compare, data.test.size());
  const std::vector<model::Example> part(data.test.begin(), data.test.begin() + static_cast<std::ptrdiff_t>(n));
  Comparison c;
  if (n == 0) {
    c.json = {{"test_examples", 0}};
    c.lines.push_back("no test examples to compare on");
    return c;
  }
  const model::EvalResult a = model::evaluate(*before.net, part, 32), b = model::evaluate(*after.net, part, 32);
  c.json = {{"test_examples", n}, {"tokens", a.tokens},
            {"loss_fp32", a.loss}, {"loss_shipped", b.loss},
            {"next_token_accuracy_fp32", a.token_accuracy}, {"next_token_accuracy_shipped", b.token_accuracy}};
  c.lines.push_back(fmt::format("on the first {} test examples ({} tokens): loss {:.4f} from the run's weights, {:.4f} shipped; "
                                "next-token accuracy {:.2f} % and {:.2f} %",
                                n, a.tokens, a.loss, b.loss, 100 * a.token_accuracy, 100 * b.token_accuracy));
  return c;
}

void run_ship(const ShipOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  tasks::LoadedModel before = tasks::load_model(o.model, backend::cpu_backend<float>());
  const std::string src_file = tasks::checkpoint_file(before);
  const fs::path out_dir(o.out);
  const fs::path out_file = out_dir / "model.ckpt";
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
    throw InputError("--out " + o.out + ": is a file; give a folder (the shipped model.ckpt goes inside it)");
  if (fs::exists(out_file, ec) && fs::equivalent(out_file, src_file, ec))
    throw InputError("--out " + o.out + ": is the folder of the model being shipped; give another folder");
  if (fs::exists(out_file, ec) && !o.force)
    throw InputError("--out " + o.out + ": already holds a model.ckpt; give --force to replace it, or another folder");
  io::check_output_path(out_file.string(), io::OutputKind::Own, "--out");

  model::Checkpoint ck = model::load_checkpoint(src_file);
  const std::uintmax_t bytes_before = fs::file_size(src_file, ec);
  const bool had_state = !ck.adam_m.empty();
  ck.adam_m.clear();  // a model to ship; the optimizer's moments are the run's business
  ck.adam_v.clear();
  ck.params_storage = o.dtype == "bf16" ? model::Storage::bf16 : model::Storage::fp32;
  if (!ck.meta.is_object()) ck.meta = nlohmann::json::object();
  ck.meta["shipped"] = {{"from", fs::path(src_file).filename().string()},
                        {"from_fnv1a", fmt::format("{:016x}", tasks::checkpoint_hash(before))}, {"weights", o.dtype}};
  fs::create_directories(out_dir, ec);
  if (ec) throw InputError("--out " + o.out + ": cannot create the folder (" + ec.message() + ")");
  const std::string bytes = model::checkpoint_to_bytes(ck);
  io::write_file_atomic(out_file.string(), bytes);
  // The training curves go with the model (docs/models.md draws on them); confidence.json does not:
  // its floors are tied to the checkpoint's hash, and the shipped weights are not the run's.
  bool log_copied = false;
  const fs::path log = fs::path(src_file).parent_path() / "train-log.json";
  if (fs::exists(log, ec) && !fs::equivalent(log.parent_path(), out_dir, ec)) {
    io::write_file_atomic((out_dir / "train-log.json").string(), io::read_text_file(log.string(), std::size_t(1) << 30));
    log_copied = true;
  }

  nlohmann::json j = {{"from", src_file}, {"to", out_file.string()}, {"weights", o.dtype},
                      {"bytes_before", bytes_before}, {"bytes_shipped", bytes.size()},
                      {"dropped_training_state", had_state}, {"train_log_copied", log_copied}};
  Comparison cmp;
  if (o.compare > 0) {
    if (before.run.raw.is_null()) {
      cmp.lines.push_back("not compared: the checkpoint does not record its corpus settings (meta.run_config)");
      cmp.json = nullptr;
    } else {
      tasks::LoadedModel after = tasks::load_model(out_file.string(), backend::cpu_backend<float>());
      cmp = before.net->config().decoder_only ? compare_lm(o, before, after) : compare_translations(o, before, after);
    }
    j["comparison"] = cmp.json;
  }
  j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool translation = !before.net->config().decoder_only;
  if (translation) j["next"] = "attnlab eval --model " + out_dir.string() + " --calibrate";
  if (o.format == "json") {
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  const std::size_t width = render::detect_terminal(true).width;
  std::cout << "shipped " << shown_path(src_file) << " → " << shown_path(out_file.string()) << '\n';
  std::cout << fmt::format("  weights {}: {:.1f} MB → {:.1f} MB{}\n",
                           o.dtype == "bf16" ? "in bf16, widened to float32 exactly on load" : "in float32",
                           static_cast<double>(bytes_before) / 1e6, static_cast<double>(bytes.size()) / 1e6,
                           had_state ? " (the optimizer's state left out)" : "");
  // Each line indented by 2 more than it starts with, its continuation lines by 4 more.
  for (const std::string& line : cmp.lines) {
    const std::size_t lead = line.find_first_not_of(' ');
    const std::string indent(2 + (lead == std::string::npos ? 0 : lead), ' ');
    std::cout << render::wrap_words(visible_text(line.substr(indent.size() - 2)), width, indent, indent + "  ") << '\n';
  }
  if (translation)
    std::cout << render::wrap_words("next: `attnlab eval --model " + visible_text(shell_word(out_dir.string())) +
                                        " --calibrate` sets the floors of translate's \"unsure\" for the shipped weights "
                                        "(a confidence.json is tied to one checkpoint's hash)",
                                    width, "  ", "    ")
              << '\n';
}

}  // namespace

void setup_ship(CLI::App& app) {
  auto opts = std::make_shared<ShipOptions>();
  CLI::App* sub = app.add_subcommand("ship", "Make a trained run into a model to ship: weights in bf16 (half the size) or float32, "
                                             "and how many test translations that changes");
  sub->add_option("-m,--model", opts->model, "The run's folder (or a .ckpt file)")->required();
  sub->add_option("-o,--out", opts->out, "Folder to write model.ckpt (and train-log.json) into")->required();
  sub->add_option("--dtype", opts->dtype, "How the weights are stored: bf16 (half the bytes, rounded to nearest even) or fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}))
      ->capture_default_str();
  sub->add_option("--compare", opts->compare, "Translate this many test sentences with both and count the differences (0 = skip)")
      ->transform(whole_number(0, 1000000))
      ->capture_default_str();
  sub->add_option("--beam", opts->beam, "Beam size for the comparison (1 = greedy)")->transform(whole_number(1, 64))->capture_default_str();
  sub->add_flag("--force", opts->force, "Replace a model.ckpt already in --out");
  add_format_option(*sub, opts->format);
  sub->callback([opts] { run_ship(*opts); });
}

}  // namespace attnlab::cli
