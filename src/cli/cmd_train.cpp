// attnlab train --config NAME|FILE [--steps N] [--out DIR] [--resume [--allow-config-change]]
// Trains a model on the generated corpus, with a progress bar, validation at intervals, atomic
// checkpoints, Ctrl-C that saves and exits, and --resume that continues bit-exactly (and refuses a
// config whose corpus or train settings differ from the run's, unless told otherwise).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/stop_signals.hpp"
#include "cli/config_lookup.hpp"
#include "cli/validators.hpp"
#include "io/files.hpp"
#include "io/json_text.hpp"
#include "model/config.hpp"
#include "render/progress.hpp"
#include "text/bpe.hpp"
#include "tasks/task.hpp"
#include "backend/cpu/blas_setup.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace attnlab::cli {

struct TrainOptions {
  std::string config;
  std::string out;
  int steps = 0;
  double time_limit = 0;  // seconds of training; 0 = none
  bool resume = false;
  bool allow_config_change = false;
  std::string format = "text";
  std::string backend = "cpu";
  std::string precision = "fp32";
};

namespace {

// One `attnlab train` per output folder: two writing the same checkpoints would interleave them. The
// kernel releases the lock however the process ends (SIGKILL included); the descriptor stays open
// until then.
void lock_out_dir(const std::string& out) {
  const std::string path = (std::filesystem::path(out) / ".train.lock").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError("--out " + out + ": cannot write there (creating " + path + ": " + std::strerror(errno) + ")");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    throw RuntimeError(out + ": another attnlab train is writing to this folder; wait for it to finish, or stop it first");
  }
}

// The temporary files of write_file_atomic (".NAME.tmp-XXXXXX") that a run killed mid-write left
// behind: never a checkpoint that anything reads, but each as large as one.
void remove_stale_temporaries(const std::string& out) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    for (const char* prefix : {".model.ckpt.tmp-", ".train-state.ckpt.tmp-", ".train-log.json.tmp-"})
      if (name.rfind(prefix, 0) == 0) std::filesystem::remove(e.path(), ec);
  }
}

// The command that continues this run: the same config, folder, steps, backend and precision (a
// resume in another precision is refused, and without --steps it would aim at the config's count).
std::string resume_command(const TrainOptions& o, const std::string& out) {
  std::string c = fmt::format("attnlab train --config {} --out {}", shell_word(o.config), shell_word(out));
  if (o.steps > 0) c += fmt::format(" --steps {}", o.steps);
  if (o.backend != "cpu") c += " --backend " + o.backend;
  if (o.precision != "fp32") c += " --precision " + o.precision;
  return c + " --resume";
}

void run_train(const TrainOptions& o) {
  namespace fs = std::filesystem;
  // Installed first thing, so a signal that arrives while the run is being set up (the corpus built,
  // model.ckpt rewritten on --resume) also ends in a saved checkpoint and exit 130 at the first step
  // boundary, never in a kill half-way.
  const StopOnSignals signals;
  tasks::RunConfig run = tasks::load_run_config(find_config(o.config));
  if (o.steps > 0) {
    run.train.steps = o.steps;
    run.raw["train"]["steps"] = o.steps;
  }
  backend::Ops<float>& be = open_backend(o.backend);  // before anything is written: exit 2 if unavailable
  apply_precision(be, o.precision);                   // likewise: the CPU has no TF32 or bf16
  const std::string out = o.out.empty() ? "runs/" + run.name : o.out;
  const std::string state_path = (fs::path(out) / "train-state.ckpt").string();
  const std::string model_path = (fs::path(out) / "model.ckpt").string();
  std::error_code ec;
  if (o.resume && !fs::exists(state_path, ec)) {
    throw InputError("--resume: " + out + " holds no training state (" + state_path + " is missing); start without --resume");
  }
  if (!o.resume && fs::exists(state_path, ec)) {
    throw InputError("--out " + out + " already holds a training run; continue it with --resume, or choose another --out");
  }
  // A trained model without its training state (deleted to save space, or a model kept on its own) is
  // no less the user's: a fresh run does not write over it (an adversarial pass lost one that way).
  // train-log.json on its own is what a kill during a run's first checkpoint leaves (the log is written
  // first, below); it is not refused, since neither a fresh start nor --resume could then go on, but
  // kept aside once the folder is locked.
  const std::string log_path = (fs::path(out) / "train-log.json").string();
  if (!o.resume && fs::exists(fs::path(out) / "model.ckpt", ec))
    throw InputError("--out " + out + " already holds model.ckpt from another run; choose another --out, or move it away first");
  fs::create_directories(out, ec);
  if (ec) throw InputError("--out " + out + ": cannot create the folder (" + ec.message() + ")");
  lock_out_dir(out);
  remove_stale_temporaries(out);
  if (!o.resume && fs::is_regular_file(fs::symlink_status(log_path, ec))) {
    std::string kept = log_path + ".unfinished";
    for (int i = 2; fs::exists(fs::symlink_status(kept, ec)); ++i) kept = log_path + ".unfinished-" + std::to_string(i);
    fs::rename(log_path, kept, ec);
    if (ec) throw InputError(log_path + ": is left from a run that saved no checkpoint, and could not be set aside (" + ec.message() + ")");
    std::cerr << "attnlab: warning: " << shown_path(out) << " holds train-log.json but no checkpoint (a run stopped during its first save); "
              << "kept it as " << shown_path(kept) << ", starting a new run\n";
  }

  const tasks::TaskData data = tasks::build_task_data(run);
  model::check_fits_in_memory(run.model, run.train.batch_size, run.model.max_len,
                              fmt::format("train.batch_size = {} with model.max_len = {} and {} parameters", run.train.batch_size,
                                          run.model.max_len, model::parameter_count(run.model)),
                              "lower train.batch_size or the model's size in " + o.config);
  model::Trainer trainer(run.model, run.train, data.vocab.words(), be);
  if (data.vocab.bpe()) trainer.set_tokenizer(data.vocab.bpe()->to_json());
  auto meta = [&](std::int64_t step) {
    nlohmann::json j{{"task", run.lm ? "lm" : "translate"},
                     {"run_config", run.raw},
                     {"config_file", o.config},
                     {"trained_steps", step},
                     {"matmul_precision", o.precision},
                     {"attnlab_version", ATTNLAB_VERSION}};
    if (!data.known_source_words.empty()) j["known_source_words"] = data.known_source_words;
    return j;
  };
  std::vector<tasks::ConfigChange> config_changes;
  nlohmann::json saved_log;  // the log as of the restored state (train-state.ckpt's meta.train_log)
  if (o.resume) {
    // Resuming reads train-state.ckpt only. A run killed between the renames of train-state.ckpt and
    // model.ckpt left model.ckpt one checkpoint behind: write it again from the restored state, so
    // the two agree from here on.
    const nlohmann::json saved = trainer.restore(state_path);
    if (saved.is_object() && saved.contains("train_log") && saved["train_log"].is_object()) saved_log = saved["train_log"];
    if (saved.is_object() && saved.contains("run_config")) config_changes = tasks::resume_changes(saved["run_config"], run);
    // The matrix products' precision is the command line's, not the config's; a run saved before it
    // was recorded computed in fp32.
    const std::string saved_precision =
        saved.is_object() && saved.contains("matmul_precision") && saved["matmul_precision"].is_string()
            ? saved["matmul_precision"].get<std::string>()
            : "fp32";
    if (saved_precision != o.precision) config_changes.push_back({"--precision", saved_precision, o.precision});
    if (!config_changes.empty() && !o.allow_config_change) {
      const tasks::ConfigChange& c = config_changes.front();
      std::string others;
      for (std::size_t i = 1; i < config_changes.size(); ++i) others += (i > 1 ? ", " : "") + config_changes[i].field;
      throw InputError(fmt::format("--resume: {} is {} {}, but the run in {} was trained with {}{}; resuming would finish "
                                   "it as a different run. Put the value back, or pass --allow-config-change to resume "
                                   "with the new value anyway (the change is recorded in train-log.json)",
                                   c.field, c.given, c.field == "--precision" ? "on the command line" : "in " + o.config, out,
                                   c.saved, others.empty() ? "" : fmt::format(" (also changed: {})", others)));
    }
    for (const auto& c : config_changes)
      std::cerr << fmt::format("attnlab: warning: --allow-config-change: {} changes from {} to {} at step {}\n", c.field, c.saved,
                               c.given, trainer.step());
    trainer.save_model(model_path, meta(trainer.step()));
  }
  const cpu::BlasInfo blas = cpu::blas_info();
  std::cerr << fmt::format("train {}: {} model, {} parameters, vocabulary {}{}, {} train / {} valid {}\n", run.name,
                           run.lm ? "decoder-only" : "encoder–decoder", model::parameter_count(run.model), data.vocab.size(),
                           data.vocab.bpe() ? " (byte-level BPE)" : "", data.train.size(), data.valid.size(),
                           run.english ? fmt::format("windows of {} tokens", run.model.max_len) : "sentences");
  if (be.name() != "cpu") std::cerr << fmt::format("  backend: {}; matrix products in {}\n", be.name(), o.precision);
  std::cerr << fmt::format("  BLAS: {} kernel, {} threads; output: {}{}\n", blas.corename, blas.threads, shown_path(out),
                           o.resume ? fmt::format(" (resuming at step {})", trainer.step()) : "");

  nlohmann::json log = {{"steps", nlohmann::json::array()}, {"valid", nlohmann::json::array()}};
  // The log is the run's history: something else in its place (a folder, a FIFO) would make the first
  // checkpoint fail after minutes of training, so say no now.
  if (fs::exists(fs::symlink_status(log_path, ec)) && !fs::is_regular_file(fs::symlink_status(log_path, ec)))
    throw InputError(log_path + ": is not a plain file; move it away, training writes its log there");
  if (o.resume && fs::exists(log_path, ec)) {
    try {
      log = io::parse_json_bounded(io::read_text_file(log_path, 256u << 20));
    } catch (const std::exception& e) {
      // Never thrown away: the unreadable log is kept beside the new one (an adversarial pass lost a
      // 20-step history to one comment line added by hand).
      std::string kept = log_path + ".unreadable";
      for (int i = 2; fs::exists(fs::symlink_status(kept, ec)); ++i) kept = log_path + ".unreadable-" + std::to_string(i);
      fs::rename(log_path, kept, ec);
      if (ec) throw InputError(log_path + ": is unreadable (" + e.what() + ") and could not be set aside (" + ec.message() + ")");
      std::cerr << "attnlab: warning: " << shown_path(log_path) << " is unreadable (" << visible_text(e.what()) << "); kept as " << shown_path(kept)
                << ", starting a new log\n";
    }
  }
  if (o.resume) {
    // The state carries the log as it was when the state was saved: the run's history, whole even
    // where train-log.json fell behind (a kill or a full disk after the state was written, before the
    // log). A state saved before it carried one: train-log.json, which may then be ahead of it.
    if (saved_log.is_object()) log = saved_log;
    // Keep only the steps the restored state has done.
    for (const char* key : {"steps", "valid"}) {
      nlohmann::json kept = nlohmann::json::array();
      if (log.contains(key) && log[key].is_array())
        for (const auto& e : log[key])
          if (e.is_object() && e.contains("step") && e["step"].is_number_integer() &&
              e["step"].get<std::int64_t>() <= trainer.step())
            kept.push_back(e);
      log[key] = kept;
    }
  }
  if (!config_changes.empty()) {  // what --allow-config-change let through, where and when
    if (!log.contains("config_changes") || !log["config_changes"].is_array()) log["config_changes"] = nlohmann::json::array();
    for (const auto& c : config_changes)
      log["config_changes"].push_back({{"step", trainer.step()}, {"field", c.field}, {"from", c.saved}, {"to", c.given}});
  }
  // One checkpoint: train-state.ckpt first, which is all --resume reads and which carries the log so
  // far in its meta ("train_log"), then model.ckpt, then train-log.json. Each write is atomic; a kill
  // or a full disk between them leaves files that are each complete, the log never ahead of what was
  // saved (it was written first once, and a full disk then left it 10 steps ahead of both checkpoints:
  // round three's item 14); resuming rewrites model.ckpt and takes the log from the state.
  auto save_checkpoint = [&](std::int64_t step) {
    nlohmann::json state_meta = meta(step);
    state_meta["train_log"] = log;
    trainer.save(state_path, state_meta);
    trainer.save_model(model_path, meta(step));
    io::write_file_atomic(log_path, log.dump());
  };
  render::ProgressBar bar(run.train.steps, "train");
  double tokens_per_s = 0, last_loss = 0;
  // One stop flag for the trainer: set after a step when a signal has arrived or --time-limit has
  // passed (measured from the first step), so either stops at that step's boundary.
  std::atomic<bool> stop{StopOnSignals::requested()};  // a signal during the set-up: no step at all
  bool out_of_time = false;
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  const std::int64_t reached = trainer.run(
      data.train, data.valid, 0,
      [&](const model::StepInfo& s) {
        tokens_per_s = s.tokens_per_s;
        last_loss = s.loss;
        log["steps"].push_back({{"step", s.step}, {"loss", s.loss}, {"lr", s.lr}, {"grad_norm", s.grad_norm}});
        if (s.evaluated) {
          log["valid"].push_back({{"step", s.step}, {"loss", s.valid.loss}, {"token_accuracy", s.valid.token_accuracy}});
          bar.message(fmt::format("step {:>6}: train loss {:.4f}, valid loss {:.4f}, valid token accuracy {:.2f}%", s.step, s.loss,
                                  s.valid.loss, 100 * s.valid.token_accuracy));
        }
        bar.update(s.step, fmt::format("loss {:.3f} {:.0f} tok/s", s.loss, s.tokens_per_s));
        if (o.time_limit > 0 && elapsed() >= o.time_limit) out_of_time = true;
        if (out_of_time || StopOnSignals::requested()) stop = true;
      },
      [&](std::int64_t step) { save_checkpoint(step); },
      &stop);
  if (StopOnSignals::requested() && reached < run.train.steps) {
    save_checkpoint(reached);  // a second Ctrl-C meanwhile only sets the flag again: the save completes
    bar.message("");
    throw Interrupted(fmt::format("interrupted at step {} of {}; checkpoint saved in {}.\nContinue with: {}", reached,
                                  run.train.steps, out, resume_command(o, out)));
  }
  // --time-limit: a planned stop, not an error. The checkpoint is saved as at an interruption, so the
  // run can go on with --resume; exit 0.
  const bool stopped_early = out_of_time && reached < run.train.steps;
  if (stopped_early) save_checkpoint(reached);
  const double seconds = elapsed();
  bar.finish(fmt::format("(step {}, loss {:.4f}, {:.0f} tokens/s{})", reached, last_loss, tokens_per_s,
                         stopped_early ? fmt::format("; --time-limit {:g} s reached", o.time_limit) : ""));
  if (o.format == "json") {
    nlohmann::json j = {{"out", out}, {"steps", reached}, {"steps_planned", run.train.steps}, {"final_loss", last_loss},
                        {"tokens_per_s", tokens_per_s}, {"seconds", seconds}, {"stopped_by_time_limit", stopped_early},
                        {"backend", be.name()}, {"precision", o.precision}, {"valid", log["valid"].empty() ? nlohmann::json() : log["valid"].back()}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else if (stopped_early) {
    std::cout << fmt::format("trained {} of {} steps in {:.0f} s (--time-limit {:g} s); model in {}/model.ckpt (evaluate it with: "
                             "attnlab eval --model {}); continue with: {}\n",
                             reached, run.train.steps, seconds, o.time_limit, shown_path(out), visible_text(shell_word(out)),
                             visible_text(resume_command(o, out)));
  } else {
    std::cout << fmt::format("trained {} steps; model in {}/model.ckpt (evaluate it with: attnlab eval --model {})\n", reached,
                             shown_path(out), visible_text(shell_word(out)));
  }
}

}  // namespace

void setup_train(CLI::App& app) {
  auto opts = std::make_shared<TrainOptions>();
  CLI::App* sub = app.add_subcommand("train", "Train a transformer on the generated corpus (resumable; Ctrl-C saves and stops)");
  sub->add_option("-c,--config", opts->config, "Run config: a name from data/configs (translate-small, lm-small, …) or a file")->required();
  sub->add_option("--steps", opts->steps, "Train for this many steps instead of the config's train.steps")->transform(whole_number(1, 1000000000));
  sub->add_option("--time-limit", opts->time_limit,
                  "Stop after this many seconds of training, at a step boundary, saving a checkpoint that --resume continues")
      ->transform(real_number(0.001, 1e9));
  sub->add_option("-o,--out", opts->out, "Output folder for model.ckpt, train-state.ckpt, train-log.json (default runs/NAME)");
  CLI::Option* resume = sub->add_flag("--resume", opts->resume, "Continue the run saved in --out, bit-exactly");
  sub->add_flag("--allow-config-change", opts->allow_config_change,
                "With --resume: accept a corpus or train setting that differs from the run's (refused otherwise; "
                "train.steps may always grow)")
      ->needs(resume);
  add_backend_option(*sub, opts->backend);
  add_precision_option(*sub, opts->precision);
  add_format_option(*sub, opts->format, "Summary format on stdout");
  sub->callback([opts] { run_train(*opts); });
}

}  // namespace attnlab::cli
