#pragma once
// A training run in its output folder (`attnlab train`; docs/training.md): the folder's rules, the
// resume, the checkpoints and the log. The command line parses, opens the backend, handles signals
// and prints; everything that decides what is written where is here.
//
// The folder holds train-state.ckpt (everything --resume needs, with the log so far in its meta),
// model.ckpt (the weights and what eval and translate need) and train-log.json (each step's loss,
// each validation). One run per folder: a second `attnlab train` on it is refused while the first
// holds its lock.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/trainer.hpp"
#include "tasks/snapshots.hpp"
#include "tasks/task.hpp"

namespace attnlab::tasks {

struct TrainRequest {
  std::string config_file;  // the config as given (a name or a file), recorded in the checkpoints
  RunConfig run;            // the config, with the command line's --steps already applied
  std::string out;          // the run folder
  bool resume = false;
  bool allow_config_change = false;  // --resume with a corpus or train setting that differs
  std::string precision = "fp32";    // the matrix products' precision, recorded; a resume must match
  int snapshots = 0;                 // --snapshots K: attention snapshots at K log-spaced steps (tasks/snapshots.hpp)
  std::string probe_file;            // --probe FILE: their sentences (default: the lessons')
};

class TrainingRun {
 public:
  // Checks the folder (a fresh run never writes over another run's checkpoints; --resume needs a
  // training state), creates and locks it, removes temporaries a killed write left, sets aside a log
  // without a checkpoint, builds the data and the trainer and, on --resume, restores the state and
  // the log up to its step. Each warning (a setting changed under --allow-config-change, a file set
  // aside) goes to `warn` as one line without the "attnlab: warning: " prefix. Throws InputError
  // (exit 2) before anything is written when the folder or the config is wrong.
  TrainingRun(TrainRequest request, backend::Ops<float>& backend, const std::function<void(const std::string&)>& warn);

  const TrainRequest& request() const { return req_; }
  const TaskData& data() const { return data_; }
  model::Trainer& trainer() { return *trainer_; }
  std::int64_t step() const { return trainer_->step(); }
  const nlohmann::json& log() const { return log_; }
  // The run's timeline (--snapshots, or a resumed run that records one): snapshots().active().
  const Snapshots& snapshots() const { return *snapshots_; }
  // Trains from the current step to run.train.steps, a checkpoint every train.checkpoint_every steps
  // and at the end, a snapshot at each step of the timeline's schedule (step 0 before the first
  // update; each after its step's log entry, before its checkpoint); `on_step` sees every step (after its log entry is added); a true `*stop` after a
  // step ends the run there without a checkpoint (call save_checkpoint). Returns the step reached.
  std::int64_t train(const std::function<void(const model::StepInfo&)>& on_step, std::atomic<bool>* stop);
  // train-state.ckpt first, which is all --resume reads and which carries the log in its meta, then
  // model.ckpt, then train-log.json; each write atomic, so a kill or a full disk between them leaves
  // complete files and the log never ahead of the state (resuming takes the log from the state).
  void save_checkpoint(std::int64_t step);

 private:
  nlohmann::json meta(std::int64_t step) const;
  void take_snapshot(std::int64_t step, std::optional<double> loss);
  std::string path(const char* name) const;

  TrainRequest req_;
  TaskData data_;
  std::unique_ptr<model::Trainer> trainer_;
  nlohmann::json log_;
  std::unique_ptr<Snapshots> snapshots_;
};

}  // namespace attnlab::tasks
