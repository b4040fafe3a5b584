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
  const float* block(int layer, int head) const {
    const std::size_t n = tokens.size();
    return attention[static_cast<std::size_t>(layer)].data() + static_cast<std::size_t>(head) * n * n;
  }
};

// Runs `m` on `text` (what: the name of the text in errors, "TEXT" or "sentence"). `layer`, `head`:
// −1 for all, else one (checked by the caller). Warnings (unknown words) go to `warnings`, or to stderr
// when it is null.
AttendComputation compute_attend(tasks::LoadedModel& m, const std::string& text, const std::string& what, int layer, int head,
                                 std::vector<std::string>* warnings);

// The document: {"tokens", "model", "attention": [set]}, and with `with_layers` the "layers" array
// (the same weights in attend's older shape) that `attend --format json` prints without --focus.
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

// The JSON text the commands print: two-space indent, invalid UTF-8 replaced.
std::string json_text(const nlohmann::json& j);

}  // namespace attnlab::cli
