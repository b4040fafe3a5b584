#pragma once
// The JSON documents of `attend --format json` and `translate --format json`, built in one place so
// that the commands and `attnlab serve` (its /api/attend and /api/translate) answer with the same
// document for the same sentence and model. Each function runs the model (a forward pass that keeps
// its attention inside the model object: callers that share a model between threads hold a lock
// around the call, see cmd_serve.cpp) and returns what the command needs to print its other forms.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/decode.hpp"
#include "tasks/confidence.hpp"
#include "tasks/task.hpp"

namespace attnlab::cli {

// What attend computed for one sentence: the tokens (made visible, <bos> first for a language model)
// and, per layer, the heads × n × n self-attention weights.
struct AttendComputation {
  std::vector<std::string> tokens;
  std::vector<std::vector<float>> attention;
  std::vector<int> layer_ids, head_ids;  // the layers and heads shown (all, or the one asked for)
  // With vectors asked for (attend --vectors): per layer, the block's queries and keys, n × C each
  // (Transformer::attention_queries_keys); empty otherwise.
  std::vector<std::vector<float>> queries, keys;
  const float* block(int layer, int head) const {
    const std::size_t n = tokens.size();
    return attention[static_cast<std::size_t>(layer)].data() + static_cast<std::size_t>(head) * n * n;
  }
};

// Runs `m` on `text` (what: the name of the text in errors, "TEXT" or "sentence"). `layer`, `head`:
// −1 for all, else one (checked by the caller). Warnings (unknown words) go to `warnings`, or to stderr
// when it is null.
// `vectors`: keep the queries and keys too, for the document's "vectors" (the neuron view).
AttendComputation compute_attend(tasks::LoadedModel& m, const std::string& text, const std::string& what, int layer, int head,
                                 std::vector<std::string>* warnings, bool vectors = false);

// The document: {"tokens", "model", "attention": [set]}, and with `with_layers` the "layers" array
// (the same weights in attend's older shape) that `attend --format json` prints without --focus. With
// vectors computed, the set has "vectors" (see vectors_json).
nlohmann::json attend_document(const tasks::LoadedModel& m, const AttendComputation& a, bool with_layers);

struct TranslateRequest {
  std::string text;
  std::string what = "TEXT";  // the name of the text in errors
  int beam = 4;
  double length_penalty = 0.6;
  bool allow_loops = false;
  bool record_attention = false;  // keep the cross-attention of each decoding step (h.cross_attention)
  bool attention_sets = false;    // "attention": the encoder, decoder and cross sets (--show-attention, --html)
  bool cross_attention_json = false;  // "cross_attention": what --format json adds
  bool vectors = false;               // each attention set's "vectors" (needs attention_sets): --vectors
};

struct TranslateResult {
  nlohmann::json doc;
  model::Hypothesis hypothesis;
  std::string translation;
  std::vector<std::string> rows;        // the French tokens and <eos>
  std::vector<std::string> src_tokens;  // the English tokens read
  tasks::Verdict verdict;
};

// Translates with `m` (an encoder–decoder; InputError for a language model). Notes and warnings that
// the command prints on stderr (unknown words, the full stop added) go to `warnings`, or to stderr when
// it is null; the "likely wrong" warning is the caller's (verdict.unsure).
TranslateResult translate_document(tasks::LoadedModel& m, const TranslateRequest& r, std::vector<std::string>* warnings);

// An attention set's "vectors", what the neuron view needs to explain each weight end to end:
//   {"d_k": d_k, "q": [layer][head][row][d_k], "k": [layer][head][column][d_k]}
// for the set's layers and heads (ids in `layers`, `heads`), from per-layer (by layer id) queries
// (rows × C) and keys (columns × C): q and k with their biases, before the 1/√d_k scaling, so that
// softmax over a row of q·k/√d_k (keys after the query masked in a causal set) is that row's weights.
// Each number is the model's float written in the fewest digits that read back as the same float.
nlohmann::json vectors_json(const std::vector<std::vector<float>>& queries, const std::vector<std::vector<float>>& keys,
                            const std::vector<int>& layers, const std::vector<int>& heads, std::size_t rows,
                            std::size_t columns, int d_model, int n_heads);

// The JSON text the commands print: two-space indent, invalid UTF-8 replaced.
std::string json_text(const nlohmann::json& j);

}  // namespace attnlab::cli
