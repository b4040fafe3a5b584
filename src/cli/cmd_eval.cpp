// attnlab eval --model DIR [--beam K] [--limit N]
// Scores a trained model on its corpus's test split (regenerated from the config stored in the
// checkpoint): exact match, and separately the accuracy of the context-dependent words (il/elle on
// coreference sentences, the sense of ambiguous words, agreement).
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "model/decode.hpp"
#include "render/progress.hpp"
#include "tasks/task.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace attnlab::cli {

struct EvalOptions {
  std::string model = tasks::kDefaultTranslateModel;
  int beam = 4;
  std::size_t limit = 0;
  int show_errors = 5;
  std::string format = "text";
  std::string backend = "cpu";
};

namespace {

struct Score {
  std::size_t right = 0, total = 0;
  double pct() const { return total ? 100.0 * static_cast<double>(right) / static_cast<double>(total) : 0.0; }
  nlohmann::json json() const { return {{"correct", right}, {"total", total}, {"accuracy", total ? static_cast<double>(right) / total : 0.0}}; }
};

void run_eval(const EvalOptions& o) {
  tasks::LoadedModel m = tasks::load_model(o.model, open_backend(o.backend));
  if (m.run.raw.is_null()) throw InputError(o.model + ": the checkpoint does not record its corpus settings (meta.run_config); cannot rebuild its test split");
  tasks::RunConfig run = m.run;
  const tasks::TaskData data = tasks::build_task_data(run, &m.vocab);
  if (data.test.empty())  // "0.00 % (0/0)" would read as a score
    throw InputError(o.model + ": corpus.test: expected at least 1 test sentence in the model's run config, got 0; "
                     "nothing to evaluate");
  nlohmann::json j = {{"model", m.dir}, {"task", run.lm ? "lm" : "translate"}};
  const auto t0 = std::chrono::steady_clock::now();
  if (run.lm) {
    const model::EvalResult r = model::evaluate(*m.net, data.test, 64);
    j["test"] = {{"sentences", data.test.size()}, {"tokens", r.tokens}, {"loss", r.loss}, {"perplexity", std::exp(r.loss)},
                 {"next_token_accuracy", r.token_accuracy}};
    if (o.format == "json") {
      std::cout << j.dump(2) << '\n';
    } else {
      std::cout << fmt::format("language model on {} test sentences ({} tokens): loss {:.4f}, perplexity {:.3f}, next-token accuracy {:.2f}%\n",
                               data.test.size(), r.tokens, r.loss, std::exp(r.loss), 100 * r.token_accuracy);
    }
    return;
  }
  std::size_t n = data.test.size();
  if (o.limit > 0) n = std::min(n, o.limit);
  Score exact, focus;
  std::map<std::string, Score> exact_by_cat, focus_by_cat;
  std::vector<nlohmann::json> errors;
  model::DecodeOptions d;
  d.beam = o.beam;
  ProgressBar bar(static_cast<std::int64_t>(n), "eval");
  for (std::size_t i = 0; i < n; ++i) {
    const corpus::Example& ex = data.test_pairs[i];
    const model::Hypothesis h = model::translate(*m.net, data.test[i].src, d);
    const std::vector<int>& ref = data.test[i].tgt;
    const bool ok = h.tokens == ref;
    exact.right += ok;
    ++exact.total;
    exact_by_cat[ex.category].right += ok;
    ++exact_by_cat[ex.category].total;
    if (!ex.focus_fr.empty()) {
      const int fid = m.vocab.id(ex.focus_fr);
      const auto count = [&](const std::vector<int>& v) { return std::count(v.begin(), v.end(), fid); };
      const bool fok = count(ref) > 0 && count(h.tokens) == count(ref);
      focus.right += fok;
      ++focus.total;
      focus_by_cat[ex.category].right += fok;
      ++focus_by_cat[ex.category].total;
    }
    if (!ok && static_cast<int>(errors.size()) < o.show_errors) {
      errors.push_back({{"en", ex.en}, {"expected", ex.fr},
                        {"got", text::detokenize(m.vocab.tokens_of(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end())))},
                        {"category", ex.category}});
    }
    bar.update(static_cast<std::int64_t>(i + 1), fmt::format("exact {:.1f}%", exact.pct()));
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bar.finish("");
  j["test_sentences"] = n;
  j["beam"] = o.beam;
  j["exact_match"] = exact.json();
  j["coreference_il_elle"] = focus_by_cat["coref"].json();
  j["word_sense"] = focus_by_cat["sense"].json();
  j["agreement"] = focus_by_cat["agreement"].json();
  for (const auto& [cat, s] : exact_by_cat) j["exact_match_by_category"][cat] = s.json();
  j["errors"] = errors;
  j["seconds"] = secs;
  if (o.format == "json") {
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format("test split: {} sentence pairs never seen in training (beam {}), {:.1f} s\n", n, o.beam, secs);
  std::cout << fmt::format("  exact match          {:6.2f}%  ({}/{})\n", exact.pct(), exact.right, exact.total);
  std::cout << fmt::format("  il/elle (coreference) {:5.2f}%  ({}/{})\n", focus_by_cat["coref"].pct(), focus_by_cat["coref"].right, focus_by_cat["coref"].total);
  std::cout << fmt::format("  word sense           {:6.2f}%  ({}/{})\n", focus_by_cat["sense"].pct(), focus_by_cat["sense"].right, focus_by_cat["sense"].total);
  std::cout << fmt::format("  agreement            {:6.2f}%  ({}/{})\n", focus_by_cat["agreement"].pct(), focus_by_cat["agreement"].right, focus_by_cat["agreement"].total);
  for (const auto& [cat, s] : exact_by_cat) std::cout << fmt::format("  exact match, {:<9} {:6.2f}%  ({}/{})\n", cat, s.pct(), s.right, s.total);
  for (const auto& e : errors) {
    std::cout << fmt::format("  ✗ {}\n      expected {}\n      got      {}\n", e["en"].get<std::string>(), e["expected"].get<std::string>(),
                             e["got"].get<std::string>());
  }
}

}  // namespace

void setup_eval(CLI::App& app) {
  auto opts = std::make_shared<EvalOptions>();
  CLI::App* sub = app.add_subcommand("eval", "Score a trained model on its test split (exact match, il/elle, word sense)");
  sub->add_option("-m,--model", opts->model, "Model folder (or .ckpt file)")->capture_default_str();
  sub->add_option("--beam", opts->beam, "Beam size (1 = greedy)")->check(whole_number(1, 64))->capture_default_str();
  sub->add_option("--limit", opts->limit, "Only the first N test sentences (0 = all)")->check(whole_number(0, 1000000000));
  sub->add_option("--show-errors", opts->show_errors, "How many wrong translations to print")->check(whole_number(0, 100000))->capture_default_str();
  add_backend_option(*sub, opts->backend);
  sub->add_option("-f,--format", opts->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  sub->callback([opts] { run_eval(*opts); });
}

}  // namespace attnlab::cli
