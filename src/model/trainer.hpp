#pragma once
// Training: batching with padding, the optimisation loop, evaluation, and resumable checkpoints.
//
// Determinism: given the same data, config and seed, training produces bit-identical parameters.
// The data order of epoch e is a shuffle seeded by (seed, e); dropout draws from one splitmix64
// stream; both states live in the checkpoint, so --resume continues exactly where it stopped.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/optim.hpp"
#include "model/transformer.hpp"

namespace attnlab::model {

// One training pair as token ids, without <bos>/<eos> (added when batching). For a language model
// src is empty and tgt is the sequence.
//
// A packed language-model window (raw = true) is taken as it is: T + 1 tokens cut from a stream of
// "<bos> sentence <eos>" records, read as input tgt[0 .. T−1] and target tgt[1 .. T]; a target that
// is <bos> is not scored (the start of the next record is known, not predicted).
struct Example {
  std::vector<int> src, tgt;
  bool raw = false;
};

struct TrainConfig {
  int steps = 1000;
  int batch_size = 32;        // sentences per step
  int warmup = 400;
  double lr_scale = 1.0;      // multiplies the paper's schedule
  float label_smoothing = 0.1f;
  double clip = 1.0;          // global gradient norm; 0 = off
  float weight_decay = 0.0f;
  std::uint64_t seed = 1;
  int eval_every = 200;       // steps between validation passes (0 = only at the end)
  int checkpoint_every = 200; // steps between checkpoints (0 = only at the end)
};

TrainConfig train_config_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json train_config_to_json(const TrainConfig& c);

// Pads examples[indices] into a batch (B = indices.size()). Encoder–decoder: tgt_in = <bos> y,
// tgt_out = y <eos>. Language model: the same on tgt alone, or the raw window (see Example).
Batch make_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices, bool decoder_only);

struct EvalResult {
  double loss = 0;            // mean cross-entropy without label smoothing
  double token_accuracy = 0;  // teacher-forced argmax accuracy over non-padding targets
  std::size_t tokens = 0;
};
EvalResult evaluate(Transformer<float>& model, const std::vector<Example>& data, int batch_size);

// One optimisation step on a batch: forward, backward, the gradients' norm clipped to `clip` (0 =
// off), AdamW (h's lr, step and moments' settings; the clipping factor is set here). The order is
// chosen for a device, whose ops return once queued: forward, backward, clipping and AdamW are all
// queued before the host reads anything (AdamW reads the factor where clipping left it), and then
// the loss, the norm and the factor come back in one download, the step's one wait. When the loss
// or the norm is not finite, AdamW skips the update on the backend (params and moments keep their
// values) and updated() is false, for the caller to stop. The Trainer's steps and `attnlab bench`'s.
Transformer<float>::StepReadback train_step(Transformer<float>& net, const Batch& b, float smoothing,
                                            std::uint64_t* rng, double clip, float* m, float* v,
                                            const std::uint8_t* decay_mask, backend::AdamStep h);

// Progress of one step, for the caller's progress bar and logs.
struct StepInfo {
  std::int64_t step = 0, total = 0;
  double loss = 0, lr = 0, grad_norm = 0, tokens_per_s = 0, elapsed_s = 0;
  bool evaluated = false;
  EvalResult valid;
};

class Trainer {
 public:
  // Trains on `backend`: parameters, gradients and Adam's moments live there.
  Trainer(const ModelConfig& model, const TrainConfig& train, std::vector<std::string> vocab, backend::Ops<float>& backend);

  // Restores params, Adam moments, step and RNG/data state from a checkpoint written by save(), and
  // returns the meta it was saved with (the caller compares the run config it records).
  nlohmann::json restore(const std::string& checkpoint_path);
  // Writes everything needed to resume (atomically). `meta` is stored alongside.
  void save(const std::string& checkpoint_path, const nlohmann::json& meta) const;
  // Writes an inference-only checkpoint (no optimizer state): the file that ships with a model.
  void save_model(const std::string& checkpoint_path, const nlohmann::json& meta) const;

  // Runs until `until_step` (or train.steps), calling on_step after every step and on_checkpoint
  // when a checkpoint is due; stops early (after finishing the current step) when *stop becomes true.
  // Returns the step reached.
  std::int64_t run(const std::vector<Example>& train, const std::vector<Example>& valid, std::int64_t until_step,
                   const std::function<void(const StepInfo&)>& on_step,
                   const std::function<void(std::int64_t)>& on_checkpoint, const std::atomic<bool>* stop);

  // The sub-word tokenizer (a BPE's JSON form) that checkpoints store beside the vocabulary; null
  // for a word-level vocabulary. restore() refuses a checkpoint whose tokenizer differs.
  void set_tokenizer(nlohmann::json tokenizer) { tokenizer_ = std::move(tokenizer); }

  Transformer<float>& model() { return model_; }
  std::int64_t step() const { return step_; }
  const std::vector<double>& loss_history() const { return losses_; }

 private:
  ModelConfig mcfg_;
  TrainConfig tcfg_;
  std::vector<std::string> vocab_;
  nlohmann::json tokenizer_;
  Transformer<float> model_;
  backend::Buffer<float> m_, v_;
  backend::Buffer<std::uint8_t> decay_mask_;
  std::int64_t step_ = 0;
  std::uint64_t dropout_rng_ = 0;
  std::int64_t epoch_ = 0;
  std::size_t cursor_ = 0;
  std::vector<double> losses_;
};

// A deterministic permutation of 0…n−1 for (seed, epoch): Fisher–Yates on splitmix64, identical on
// every platform (unlike std::shuffle).
std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, std::int64_t epoch);

}  // namespace attnlab::model
