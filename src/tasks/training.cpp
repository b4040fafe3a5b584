#include "tasks/training.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "io/files.hpp"
#include "io/json_text.hpp"
#include "model/config.hpp"
#include "text/bpe.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace attnlab::tasks {

namespace fs = std::filesystem;

namespace {

// One `attnlab train` per output folder: two writing the same checkpoints would interleave them. The
// kernel releases the lock however the process ends (SIGKILL included); the descriptor stays open
// until then.
void lock_out_dir(const std::string& out) {
  const std::string path = (fs::path(out) / ".train.lock").string();
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
  for (const auto& e : fs::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    for (const char* prefix : {".model.ckpt.tmp-", ".train-state.ckpt.tmp-", ".train-log.json.tmp-"})
      if (name.rfind(prefix, 0) == 0) fs::remove(e.path(), ec);
  }
}

// `path` renamed to path + suffix (or suffix-2, -3, … when taken); the new name. Nothing is thrown
// away: what a user or a killed run left is kept beside the new file.
std::string set_aside(const std::string& path, const std::string& suffix, std::error_code& ec) {
  std::string kept = path + suffix;
  for (int i = 2; fs::exists(fs::symlink_status(kept, ec)); ++i) kept = path + suffix + "-" + std::to_string(i);
  fs::rename(path, kept, ec);
  return kept;
}

}  // namespace

std::string TrainingRun::path(const char* name) const { return (fs::path(req_.out) / name).string(); }

nlohmann::json TrainingRun::meta(std::int64_t step) const {
  const RunConfig& run = req_.run;
  nlohmann::json j{{"task", run.lm ? "lm" : "translate"},
                   {"run_config", run.raw},
                   {"config_file", req_.config_file},
                   {"trained_steps", step},
                   {"matmul_precision", req_.precision},
                   {"attnlab_version", ATTNLAB_VERSION}};
  if (!data_.known_source_words.empty()) j["known_source_words"] = data_.known_source_words;
  return j;
}

TrainingRun::TrainingRun(TrainRequest request, backend::Ops<float>& be, const std::function<void(const std::string&)>& warn)
    : req_(std::move(request)) {
  const std::string& out = req_.out;
  const std::string state_path = path("train-state.ckpt"), model_path = path("model.ckpt"), log_path = path("train-log.json");
  std::error_code ec;
  if (req_.resume && !fs::exists(state_path, ec))
    throw InputError("--resume: " + out + " holds no training state (" + state_path + " is missing); start without --resume");
  if (!req_.resume && fs::exists(state_path, ec))
    throw InputError("--out " + out + " already holds a training run; continue it with --resume, or choose another --out");
  // A trained model without its training state (deleted to save space, or a model kept on its own) is
  // no less the user's: a fresh run does not write over it (an adversarial pass lost one that way).
  // train-log.json on its own is what a kill during a run's first checkpoint leaves (the log is
  // written last); it is not refused, since neither a fresh start nor --resume could then go on, but
  // kept aside once the folder is locked.
  if (!req_.resume && fs::exists(model_path, ec))
    throw InputError("--out " + out + " already holds model.ckpt from another run; choose another --out, or move it away first");
  // The log is the run's history: something else in its place (a folder, a FIFO) would make the first
  // checkpoint fail after minutes of training, so say no now.
  if (fs::exists(fs::symlink_status(log_path, ec)) && !fs::is_regular_file(fs::symlink_status(log_path, ec)))
    throw InputError(log_path + ": is not a plain file; move it away, training writes its log there");
  // --snapshots and --probe are checked (the probe file read, a resumed run's timeline read) before
  // anything is written.
  if (req_.snapshots > 0 && req_.run.lm)
    throw InputError("--snapshots: expected a translation model (task \"translate\"), got a language model (task \"lm\") in " +
                     req_.config_file);
  snapshots_ = std::make_unique<Snapshots>(
      Snapshots::Options{out, req_.snapshots, req_.probe_file, req_.resume, static_cast<std::int64_t>(req_.run.train.steps)});
  fs::create_directories(out, ec);
  if (ec) throw InputError("--out " + out + ": cannot create the folder (" + ec.message() + ")");
  lock_out_dir(out);
  remove_stale_temporaries(out);
  if (!req_.resume && fs::is_regular_file(fs::symlink_status(log_path, ec))) {
    const std::string kept = set_aside(log_path, ".unfinished", ec);
    if (ec) throw InputError(log_path + ": is left from a run that saved no checkpoint, and could not be set aside (" + ec.message() + ")");
    warn(shown_path(out) + " holds train-log.json but no checkpoint (a run stopped during its first save); kept it as " +
         shown_path(kept) + ", starting a new run");
  }

  RunConfig& run = req_.run;
  data_ = build_task_data(run);
  model::check_fits_in_memory(run.model, run.train.batch_size, run.model.max_len,
                              fmt::format("train.batch_size = {} with model.max_len = {} and {} parameters", run.train.batch_size,
                                          run.model.max_len, model::parameter_count(run.model)),
                              "lower train.batch_size or the model's size in " + req_.config_file);
  trainer_ = std::make_unique<model::Trainer>(run.model, run.train, data_.vocab.words(), be);
  if (data_.vocab.bpe()) trainer_->set_tokenizer(data_.vocab.bpe()->to_json());

  log_ = {{"steps", nlohmann::json::array()}, {"valid", nlohmann::json::array()}};
  if (!req_.resume) {
    snapshots_->start(data_.vocab, run.model, 0);
    return;
  }

  // Resuming reads train-state.ckpt only. A run killed between the renames of train-state.ckpt and
  // model.ckpt left model.ckpt one checkpoint behind: write it again from the restored state, so the
  // two agree from here on.
  const nlohmann::json saved = trainer_->restore(state_path);
  std::vector<ConfigChange> changes;
  if (saved.is_object() && saved.contains("run_config")) changes = resume_changes(saved["run_config"], run);
  // The matrix products' precision is the command line's, not the config's; a run saved before it was
  // recorded computed in fp32.
  const std::string saved_precision = saved.is_object() && saved.contains("matmul_precision") && saved["matmul_precision"].is_string()
                                          ? saved["matmul_precision"].get<std::string>()
                                          : "fp32";
  if (saved_precision != req_.precision) changes.push_back({"--precision", saved_precision, req_.precision});
  if (!changes.empty() && !req_.allow_config_change) {
    const ConfigChange& c = changes.front();
    std::string others;
    for (std::size_t i = 1; i < changes.size(); ++i) others += (i > 1 ? ", " : "") + changes[i].field;
    throw InputError(fmt::format("--resume: {} is {} {}, but the run in {} was trained with {}{}; resuming would finish "
                                 "it as a different run. Put the value back, or pass --allow-config-change to resume "
                                 "with the new value anyway (the change is recorded in train-log.json)",
                                 c.field, c.given, c.field == "--precision" ? "on the command line" : "in " + req_.config_file, out,
                                 c.saved, others.empty() ? "" : fmt::format(" (also changed: {})", others)));
  }
  for (const auto& c : changes)
    warn(fmt::format("--allow-config-change: {} changes from {} to {} at step {}", c.field, c.saved, c.given, trainer_->step()));
  trainer_->save_model(model_path, meta(trainer_->step()));

  // The log: the state carries it as it was when the state was saved, the run's history whole even
  // where train-log.json fell behind (a kill or a full disk after the state was written, before the
  // log). A state saved before it carried one: train-log.json, which may then be ahead of it.
  if (fs::exists(log_path, ec)) {
    try {
      log_ = io::parse_json_bounded(io::read_text_file(log_path, 256u << 20));
    } catch (const std::exception& e) {
      // Never thrown away: the unreadable log is kept beside the new one (an adversarial pass lost a
      // 20-step history to one comment line added by hand).
      const std::string kept = set_aside(log_path, ".unreadable", ec);
      if (ec) throw InputError(log_path + ": is unreadable (" + e.what() + ") and could not be set aside (" + ec.message() + ")");
      warn(shown_path(log_path) + " is unreadable (" + visible_text(e.what()) + "); kept as " + shown_path(kept) + ", starting a new log");
    }
  }
  if (saved.is_object() && saved.contains("train_log") && saved["train_log"].is_object()) log_ = saved["train_log"];
  // Keep only the steps the restored state has done.
  for (const char* key : {"steps", "valid"}) {
    nlohmann::json kept = nlohmann::json::array();
    if (log_.is_object() && log_.contains(key) && log_[key].is_array())
      for (const auto& e : log_[key])
        if (e.is_object() && e.contains("step") && e["step"].is_number_integer() && e["step"].get<std::int64_t>() <= trainer_->step())
          kept.push_back(e);
    log_[key] = kept;
  }
  if (!changes.empty()) {  // what --allow-config-change let through, where and when
    if (!log_.contains("config_changes") || !log_["config_changes"].is_array()) log_["config_changes"] = nlohmann::json::array();
    for (const auto& c : changes)
      log_["config_changes"].push_back({{"step", trainer_->step()}, {"field", c.field}, {"from", c.saved}, {"to", c.given}});
  }
  snapshots_->start(data_.vocab, run.model, trainer_->step());
}

// The snapshot of `step`, with the last validation at or before it from the log.
void TrainingRun::take_snapshot(std::int64_t step, std::optional<double> loss) {
  nlohmann::json valid = nullptr;
  for (const auto& e : log_["valid"])
    if (e["step"].get<std::int64_t>() <= step) valid = e;
  snapshots_->take(trainer_->model(), data_.vocab, data_.test, data_.test_pairs, step, loss, valid);
}

void TrainingRun::save_checkpoint(std::int64_t step) {
  nlohmann::json state_meta = meta(step);
  state_meta["train_log"] = log_;
  trainer_->save(path("train-state.ckpt"), state_meta);
  trainer_->save_model(path("model.ckpt"), meta(step));
  io::write_file_atomic(path("train-log.json"), log_.dump());
}

std::int64_t TrainingRun::train(const std::function<void(const model::StepInfo&)>& on_step, std::atomic<bool>* stop) {
  // A scheduled snapshot of the step training starts from that is not in the folder: step 0's, before
  // any update (a resumed run's was taken before it stopped). Its loss is the log's, if any.
  const std::int64_t first = trainer_->step();
  if (snapshots_->due(first) && !fs::exists(fs::path(snapshots_->dir()) / Snapshots::file_name(first))) {
    std::optional<double> loss;
    for (const auto& e : log_["steps"])
      if (e["step"].get<std::int64_t>() == first) loss = e["loss"].get<double>();
    take_snapshot(first, loss);
  }
  return trainer_->run(
      data_.train, data_.valid, 0,
      [&](const model::StepInfo& s) {
        log_["steps"].push_back({{"step", s.step}, {"loss", s.loss}, {"lr", s.lr}, {"grad_norm", s.grad_norm}});
        if (s.evaluated)
          log_["valid"].push_back({{"step", s.step}, {"loss", s.valid.loss}, {"token_accuracy", s.valid.token_accuracy}});
        if (snapshots_->due(s.step)) take_snapshot(s.step, s.loss);
        on_step(s);
      },
      [&](std::int64_t step) { save_checkpoint(step); }, stop);
}

}  // namespace attnlab::tasks
