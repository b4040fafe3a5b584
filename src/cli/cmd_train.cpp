// attnlab train --config NAME|FILE [--steps N] [--out DIR] [--resume [--allow-config-change]] [--snapshots K [--probe FILE]]
// Trains a model on the generated corpus, with a progress bar, validation at intervals, atomic
// checkpoints, Ctrl-C that saves and exits, and --resume that continues bit-exactly (and refuses a
// config whose corpus or train settings differ from the run's, unless told otherwise).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/stop_signals.hpp"
#include "cli/config_lookup.hpp"
#include "cli/validators.hpp"
#include "model/config.hpp"
#include "render/progress.hpp"
#include "tasks/task.hpp"
#include "tasks/training.hpp"
#include "backend/cpu/blas_setup.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
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
  int snapshots = 0;
  std::string probe;
};

namespace {

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
  // Installed first thing, so a signal that arrives while the run is being set up (the corpus built,
  // model.ckpt rewritten on --resume) also ends in a saved checkpoint and exit 130 at the first step
  // boundary, never in a kill half-way.
  const StopOnSignals signals;
  tasks::TrainRequest req;
  req.config_file = o.config;
  req.run = tasks::load_run_config(find_config(o.config));
  if (o.steps > 0) {
    req.run.train.steps = o.steps;
    req.run.raw["train"]["steps"] = o.steps;
  }
  backend::Ops<float>& be = open_backend(o.backend);  // before anything is written: exit 2 if unavailable
  apply_precision(be, o.precision);                   // likewise: the CPU has no TF32 or bf16
  req.out = o.out.empty() ? "runs/" + req.run.name : o.out;
  req.resume = o.resume;
  req.allow_config_change = o.allow_config_change;
  req.precision = o.precision;
  req.snapshots = o.snapshots;
  req.probe_file = o.probe;
  tasks::TrainingRun tr(std::move(req), be, [](const std::string& line) { std::cerr << "attnlab: warning: " << line << '\n'; });
  const tasks::RunConfig& run = tr.request().run;
  const tasks::TaskData& data = tr.data();
  const std::string& out = tr.request().out;

  const cpu::BlasInfo blas = cpu::blas_info();
  std::cerr << fmt::format("train {}: {} model, {} parameters, vocabulary {}{}, {} train / {} valid {}\n", run.name,
                           run.lm ? "decoder-only" : "encoder–decoder", model::parameter_count(run.model), data.vocab.size(),
                           data.vocab.bpe() ? " (byte-level BPE)" : "", data.train.size(), data.valid.size(),
                           run.english ? fmt::format("windows of {} tokens", run.model.max_len) : "sentences");
  if (be.name() != "cpu") std::cerr << fmt::format("  backend: {}; matrix products in {}\n", be.name(), o.precision);
  std::cerr << fmt::format("  BLAS: {} kernel, {} threads; output: {}{}\n", blas.corename, blas.threads, shown_path(out),
                           o.resume ? fmt::format(" (resuming at step {})", tr.step()) : "");

  render::ProgressBar bar(run.train.steps, "train");
  double tokens_per_s = 0, last_loss = 0;
  // One stop flag for the trainer: set after a step when a signal has arrived or --time-limit has
  // passed (measured from the first step), so either stops at that step's boundary.
  std::atomic<bool> stop{StopOnSignals::requested()};  // a signal during the set-up: no step at all
  bool out_of_time = false;
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  const std::int64_t reached = tr.train(
      [&](const model::StepInfo& s) {
        tokens_per_s = s.tokens_per_s;
        last_loss = s.loss;
        if (s.evaluated)
          bar.message(fmt::format("step {:>6}: train loss {:.4f}, valid loss {:.4f}, valid token accuracy {:.2f}%", s.step, s.loss,
                                  s.valid.loss, 100 * s.valid.token_accuracy));
        bar.update(s.step, fmt::format("loss {:.3f} {:.0f} tok/s", s.loss, s.tokens_per_s));
        if (o.time_limit > 0 && elapsed() >= o.time_limit) out_of_time = true;
        if (out_of_time || StopOnSignals::requested()) stop = true;
      },
      &stop);
  if (StopOnSignals::requested() && reached < run.train.steps) {
    tr.save_checkpoint(reached);  // a second Ctrl-C meanwhile only sets the flag again: the save completes
    bar.message("");
    throw Interrupted(fmt::format("interrupted at step {} of {}; checkpoint saved in {}.\nContinue with: {}", reached,
                                  run.train.steps, out, resume_command(o, out)));
  }
  // --time-limit: a planned stop, not an error. The checkpoint is saved as at an interruption, so the
  // run can go on with --resume; exit 0.
  const bool stopped_early = out_of_time && reached < run.train.steps;
  if (stopped_early) tr.save_checkpoint(reached);
  const double seconds = elapsed();
  // The timeline's size and cost: the time its snapshots took against the training's own time.
  const tasks::Snapshots& snaps = tr.snapshots();
  nlohmann::json jsnap = nullptr;
  std::string snap_line;
  if (snaps.active()) {
    const double train_s = std::max(1e-9, seconds - snaps.seconds());
    const double cost = 100.0 * snaps.seconds() / train_s;
    jsnap = {{"dir", snaps.dir()}, {"schedule", snaps.schedule()}, {"taken", snaps.taken()}, {"bytes", snaps.bytes()},
             {"seconds", snaps.seconds()}, {"train_seconds", seconds - snaps.seconds()}, {"cost_percent", cost}};
    snap_line = fmt::format("snapshots: {} taken in this run ({} scheduled), {} bytes ({}) in {}; they took {:.3f} s, {:.2f} % of the "
                            "{:.2f} s of training (see them with: attnlab timeline --model {})\n",
                            snaps.taken(), snaps.schedule().size(), snaps.bytes(), human_size(static_cast<double>(snaps.bytes())),
                            shown_path(snaps.dir()), snaps.seconds(), cost, seconds - snaps.seconds(), visible_text(shell_word(out)));
  }
  bar.finish(fmt::format("(step {}, loss {:.4f}, {:.0f} tokens/s{})", reached, last_loss, tokens_per_s,
                         stopped_early ? fmt::format("; --time-limit {:g} s reached", o.time_limit) : ""));
  if (o.format == "json") {
    const nlohmann::json& log = tr.log();
    nlohmann::json j = {{"out", out}, {"steps", reached}, {"steps_planned", run.train.steps}, {"final_loss", last_loss},
                        {"tokens_per_s", tokens_per_s}, {"seconds", seconds}, {"stopped_by_time_limit", stopped_early},
                        {"backend", be.name()}, {"precision", o.precision}, {"valid", log["valid"].empty() ? nlohmann::json() : log["valid"].back()}};
    if (!jsnap.is_null()) j["snapshots"] = jsnap;
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
  if (o.format != "json") std::cout << snap_line;
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
  sub->add_option("--snapshots", opts->snapshots,
                  "Record the attention of the probe sentences, their translations, the loss and the head measures at K "
                  "log-spaced steps, step 0 and the last, into OUT/snapshots (see them with attnlab timeline)")
      ->transform(whole_number(1, tasks::kMaxSnapshots));
  sub->add_option("--probe", opts->probe, "With --snapshots: the probe sentences, one a line (default: the lessons' sentences)")
      ->check([](const std::string& v) { return v.empty() ? std::string("expected a file of sentences, got an empty value") : std::string(); });
  add_backend_option(*sub, opts->backend);
  add_precision_option(*sub, opts->precision);
  add_format_option(*sub, opts->format, "Summary format on stdout");
  sub->callback([opts] { run_train(*opts); });
}

}  // namespace attnlab::cli
