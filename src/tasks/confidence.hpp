#pragma once
// Is a translation likely wrong? The evidence a trained model has about its own answer, turned into
// one verdict ("unsure", with the reasons) for `translate`, the lessons that translate a learner's
// sentence, and `eval --everyday`, which measures how well the verdict separates right from wrong.
//
// The evidence, each a reason on its own:
//   unseen_words    a word of the sentence never occurred whole in the training sentences
//                   (tasks::unseen_words): its meaning is a guess from its BPE pieces;
//   low_confidence  the model's own probabilities: the least likely token it wrote (min over the
//                   chosen tokens and the final <eos> of p(token | source, tokens before)) is below a
//                   floor, or the mean log-probability per token is;
//   loop            the translation repeats a phrase (a model falls into a loop outside what it learned);
//   length_limit    decoding was cut at its length limit: the model was still writing.
//
// The floors are calibrated, not guessed: `attnlab eval --calibrate` translates the model's own test
// split (sentences it never saw, of the kinds it learned) and sets each floor at the value that all
// but `quantile` of its RIGHT translations reach (5 % by default), then writes them beside the
// checkpoint as confidence.json with the checkpoint's hash. A model without that file, or whose
// checkpoint changed since, is judged on the other reasons alone, and says so (calibrated = false).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/decode.hpp"

namespace attnlab::tasks {

struct LoadedModel;

// The model's confidence in one translation, from the per-token log-probabilities decoding recorded.
struct Confidence {
  double min_token_prob = 1;      // exp(min token log-probability), <eos> included
  double mean_logprob = 0;        // logprob / (tokens + 1)
  std::size_t weakest_token = 0;  // index of that token in Hypothesis::tokens (== tokens.size(): the <eos>)
};
Confidence confidence_of(const model::Hypothesis& h);

// The floors of low_confidence, and where they came from.
struct Calibration {
  double min_token_prob = 0;  // flag below this
  double mean_logprob = 0;    // flag below this
  double quantile = 0.05;     // the share of right test translations that fall below each floor
  std::size_t right = 0, wrong = 0;  // test translations it was measured on
  double right_flagged = 0, wrong_flagged = 0;  // shares of each that the floors flag, on that split
  int beam = 4;
  std::uint64_t checkpoint_hash = 0;  // the FNV-1a trailer of the checkpoint it was measured on
  nlohmann::json to_json() const;
};

// Floors at `quantile` of the right translations' confidences; `wrong` only reports what they flag.
Calibration calibrate(const std::vector<Confidence>& right, const std::vector<Confidence>& wrong, double quantile, int beam);

// confidence.json beside the model's checkpoint.
std::string calibration_path(const LoadedModel& m);
// The model's calibration: nullopt when there is none, or it was measured on another checkpoint
// (then `why_not` says which). A malformed file is an InputError naming the file.
std::optional<Calibration> load_calibration(const LoadedModel& m, std::string* why_not = nullptr);
// Writes it atomically beside the checkpoint; returns the path.
std::string save_calibration(const LoadedModel& m, const Calibration& c);
// The last 8 bytes of a checkpoint file: its FNV-1a hash (docs/checkpoint.md).
std::uint64_t checkpoint_hash(const LoadedModel& m);

struct UnsureReason {
  std::string code;  // unseen_words, low_confidence, loop, length_limit
  std::string text;  // one plain sentence for a person
};
// What a caller knows besides the hypothesis.
struct VerdictInputs {
  std::vector<std::string> unseen_words;
  std::string loop;        // the repeated phrase, or empty
  int length_limit = 0;    // the limit decoding stopped at, or 0 when it ended by itself
  int source_tokens = 0;
  std::vector<std::string> target_tokens;  // the hypothesis' tokens as text, to name the weakest one
};

struct Verdict {
  bool unsure = false;
  std::vector<UnsureReason> why;
  bool calibrated = false;  // low_confidence was judged (the model has a current calibration)
  Confidence confidence;
  VerdictInputs inputs;     // the evidence it was judged on (unseen words, loop, length limit)
  nlohmann::json why_json() const;  // [{"code": ..., "text": ...}, ...]
};
Verdict judge(const model::Hypothesis& h, const VerdictInputs& in, const std::optional<Calibration>& cal);

// The first loop in a translation's words: a word three times in a row ("très très très") or a phrase
// twice back to back ("par un pas par un pas"), the rule decoding enforces on tokens
// (model::loop_closed_by) applied to words. Empty when there is none.
std::string repeated_phrase(const std::string& translation);

// judge() for a translation `h` of `sentence` (`source_tokens` tokens long) by `m` with options `d`:
// finds the unseen words, the loop and the length limit itself.
Verdict judge_translation(const LoadedModel& m, std::string_view sentence, int source_tokens, const model::Hypothesis& h,
                          const model::DecodeOptions& d, const std::optional<Calibration>& cal);

// The reasons as one sentence for a person: "REASON; REASON".
std::string reasons_text(const Verdict& v);

}  // namespace attnlab::tasks
