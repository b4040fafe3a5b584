#pragma once
// The lessons on a trained model (tasks::load_model): which model folder, the line that describes it,
// and the replay of one of its attention blocks through the attention core.
//
// A replay takes what an attention block of the model saw in its last forward pass
// (Transformer::attention_view: the query input, the key/value input and the parameter offsets),
// slices the packed C × C matrices into per-head weights (head h owns the contiguous columns
// [h·d_k, (h+1)·d_k), biases likewise) and runs core/attention.hpp on them. The result is the same
// attention the model computed; `max_difference` says how far the core's output is from the model's
// own (float rounding only: a test holds it under 1e-5).
#include <optional>
#include <string>
#include <vector>

#include "core/attention.hpp"
#include "lessons/text.hpp"
#include "lessons/transformer.hpp"
#include "model/transformer.hpp"
#include "tasks/task.hpp"

namespace attnlab::lessons {

struct TrainedModel {
  tasks::LoadedModel m;
  std::string label;        // the folder as the user would write it, e.g. "data/models/translate-small"
  std::string description;  // "4000 steps; validation token accuracy 100.0 %", from meta and train-log.json
  model::Transformer<float>& net() const { return *m.net; }
  const text::Vocab& vocab() const { return m.vocab; }
  int d_model() const { return m.net->config().d_model; }
  int heads() const { return m.net->config().heads; }
};

// The folder of a default model (tasks::kDefaultTranslateModel, kDefaultLmModel) resolved as
// tasks::load_model resolves it, when it holds a model.ckpt; nullopt otherwise.
std::optional<std::string> find_default_model(const std::string& rel);

// One line on what a loaded model was trained to and how well it does on its test split, from its
// meta, eval.json and train-log.json ("4000 steps; exact match 99.1 % on 1000 test sentences it never saw").
std::string describe_model(const tasks::LoadedModel& m);

// Loads `dir` (tasks::load_model) and describes it; `label` is how the lessons name it.
TrainedModel load_trained_model(const std::string& dir, const std::string& label);

// Runs the model on one sentence pair (encoder–decoder; tgt_in = <bos> + target, tgt_out = target +
// <eos>) or on one token sequence (decoder-only: `tgt_in` only). Inference mode: no dropout.
void forward_one(model::Transformer<float>& net, const std::vector<int>& src, const std::vector<int>& tgt_in,
                 const std::vector<int>& tgt_out = {});

// Rows [row0, row0 + n) of a row-major buffer with `width` columns.
core::Matrix rows_of(const float* data, std::size_t row0, std::size_t n, std::size_t width);

// One attention block's parameters as core weights: per-head W_Q/W_K/W_V and b_Q/b_K/b_V, W_O, b_O.
core::AttentionWeights attention_weights_of(const model::Transformer<float>& net, const model::AttnLayout& p);
// The feed-forward net and a LayerNorm's gain and bias, as lesson matrices.
FeedForward feed_forward_of(const model::Transformer<float>& net, const model::FfnLayout& p);
struct NormParams {
  core::Matrix gain, bias;  // 1 × C each
};
NormParams norm_of(const model::Transformer<float>& net, const model::NormLayout& p);

struct Replay {
  core::Matrix x, kv;        // the block's query input (n × C) and key/value input (m × C)
  core::AttentionWeights w;
  core::AttentionTrace trace;  // the core's computation, every intermediate
  core::Matrix model_output;   // the model's own attention output (n × C)
  std::vector<core::Matrix> model_weights;  // the model's own softmax weights per head (n × m)
  float max_difference = 0.0f;        // largest |core − model| over the output and the weights
};

// Replays block `block` of layer `layer` from the model's last forward pass, for sequence `b` of
// the batch, with its first n query rows and m key rows (the rest is padding). Decoder
// self-attention gets the causal mask.
Replay replay_attention(const model::Transformer<float>& net, model::Transformer<float>::Block block, int layer,
                        std::size_t n, std::size_t m, int b = 0);

// Largest |a − b| over two same-shaped matrices.
float max_abs_difference(const core::Matrix& a, const core::Matrix& b);

}  // namespace attnlab::lessons
