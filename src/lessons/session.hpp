#pragma once
// Running lessons: the options every lesson takes, the per-lesson context the computations read,
// and the runner that walks lesson.md step by step.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/attention.hpp"
#include "io/problem.hpp"
#include "lessons/lesson_doc.hpp"
#include "lessons/output.hpp"
#include "lessons/text.hpp"
#include "lessons/trained.hpp"

namespace attnlab::lessons {

inline constexpr std::size_t kDefaultDModel = 8;
inline constexpr std::size_t kDefaultHeads = 2;
inline constexpr std::size_t kMaxDModel = 512;
inline constexpr std::size_t kMaxHeads = 64;

// The options of `attnlab lesson` and `attnlab tour` (see src/cli/lesson_options.cpp).
struct LessonOptions {
  std::optional<std::string> sentence, target;
  std::optional<std::size_t> heads, d_model;
  std::uint64_t seed = 42;
  std::string weights_file;  // empty = seeded random
  bool random = false;       // --random: seeded random weights even when a trained model exists
  std::string model_dir;     // --model DIR; empty = data/models/translate-wide when it exists
  std::string format = "text";
  bool no_color = false, full = false, no_pause = false;
  int precision = 3;
};

// The sentences a lesson runs on by default (data/sentences/lessons.json).
struct LessonSentences {
  std::string sentence, target;
  // --sentence without --target: the lesson's own target belongs to its own sentence, so the target
  // is the trained model's translation of the learner's sentence (LessonContext::target).
  bool target_is_translation = false;
  // Everything else the lesson's data gives (data/sentences/lessons.json), by key: a word or a
  // sentence ("focus": "love") or a list of them ("coreference": [two sentences]). Each lesson's
  // computations read their own keys; the session only merges the layers of defaults.
  std::map<std::string, std::string> words;
  std::map<std::string, std::vector<std::string>> lists;
  // The value of `key`, or "" / an empty list when the lesson's data has none.
  const std::string& word(const std::string& key) const;
  const std::vector<std::string>& list(const std::string& key) const;
};

class Session;

// What the computations of one lesson see. The sentence, its input matrix X and the self-attention
// trace are built once per lesson and shared by its steps.
struct LessonContext {
  LessonContext(Session& s, const LessonDoc& d, Output& o) : session(s), doc(d), out(o) {}
  Session& session;
  const LessonDoc& doc;
  Output& out;
  std::size_t d_model = 0, heads = 0;
  std::uint64_t seed = 0;
  LessonSentences text;
  TokenizedSentence src;
  // n × d_model each. Random weights: x = embeddings·√d_model + pe. Trained model: embeddings are its
  // token-embedding rows and x is the true input of encoder layer 0's self-attention (the same sum
  // for a post-norm model, LayerNorm of it for a pre-norm one).
  core::Matrix embeddings, pe, x;
  const TrainedModel* model = nullptr;  // the trained translation model, or null for random weights
  float embedding_difference = 0.0f;     // trained: |E·√d_model + PE − the model's own embedding| (max)
  // What the lesson text may say about the model that runs, by name ({{d_ff}} in lesson.md, and the
  // conditions of <!-- trained key=value -->): its name, layer counts, widths, norm arrangement,
  // vocabulary, all read from the loaded model (or the random settings), never written by hand.
  std::map<std::string, std::string> facts;

  bool trained() const { return model != nullptr; }
  // Tokenizes with the vocabulary; unknown words become <unk> with one warning on stderr.
  TokenizedSentence encode(const std::string& sentence, const std::string& what);
  // E·√d_model + PE for any sentence (the model's embeddings when trained).
  core::Matrix input_for(const TokenizedSentence& s) const;
  // The attention weights of block `name` ("encoder.self", "decoder.self", "decoder.cross"): layer 0's
  // of the trained model, else from --weights when given, else seeded random.
  core::AttentionWeights weights(const std::string& name) const;
  // Self-attention of the lesson sentence with weights("encoder.self"), computed once.
  const core::AttentionTrace& self_trace();
  // Trained: encoder layer 0's self-attention replayed through the core, with the model's own output.
  const Replay& encoder_replay() const { return *replay_; }
  // The decoder-side sentence: --target, the lesson's default target, or (--sentence alone) the trained
  // model's own translation of the sentence, said in the output; without a model that is an error.
  const TokenizedSentence& target();

 private:
  friend class Session;
  std::optional<core::AttentionTrace> trace_;
  std::optional<Replay> replay_;
  std::optional<TokenizedSentence> target_;
};

using ShowFn = std::function<void(LessonContext&)>;
// One computation a lesson.md may name in <!-- show: NAME -->, in its two forms: with the seeded
// random weights of an untrained model, and with the trained model. An empty form shows nothing (the
// step's text says why); a show whose computation does not depend on the weights' origin has only
// `random`, used in both cases. run_show makes the choice, in this one place.
struct Show {
  ShowFn random, trained;
};
const std::map<std::string, Show>& show_registry();
void run_show(const Show& show, LessonContext& c);

class Session {
 public:
  // Finds the data folder, loads the lessons, the vocabulary, the default sentences and --weights.
  // `tour`: every lesson uses one sentence (the tour's) unless --sentence is given.
  Session(const LessonOptions& opts, bool tour);

  const std::vector<LessonDoc>& lessons() const { return lessons_; }
  const LessonOptions& options() const { return opts_; }
  // The vocabulary sentences are encoded with: the trained model's, else data/vocab.txt.
  const text::Vocab& vocab() const { return model_ ? model_->vocab() : vocab_; }
  std::string vocab_name() const;
  const TrainedModel* model() const { return model_ ? &*model_ : nullptr; }
  // The decoder-only model of the causal-mask demo (data/models/lm-small), loaded on first use;
  // null with random weights or when it is not there.
  const TrainedModel* language_model();
  const std::optional<io::Problem>& weights_problem() const { return weights_; }
  std::uint64_t seed() const { return opts_.seed; }

  // Runs one lesson into `out`. `pause` is called after every step but the last and returns false
  // when the learner wants to stop. Returns false when stopped early.
  bool run(const LessonDoc& doc, Output& out, const std::function<bool()>& pause);

  // Prints "warning: ..." for words not seen before in this session; `vocab_name` names the vocabulary.
  void warn_unknown(const std::vector<std::string>& words, const std::string& what, const std::string& vocab_name);
  // A BPE model reads every word, but one that never occurred whole in its training sentences is a
  // guess: one warning per word, as `attnlab translate` gives (source-side sentences only).
  void warn_unseen(const std::string& sentence, const std::string& what);

 private:
  LessonSentences sentences_for(int number) const;
  std::string weights_line(const LessonDoc& doc);
  LessonOptions opts_;
  bool tour_;
  std::filesystem::path root_;
  std::vector<LessonDoc> lessons_;
  text::Vocab vocab_;
  std::map<std::string, LessonSentences> defaults_;  // "default", "1" .. "9"
  LessonSentences tour_sentences_;                   // what `attnlab tour` sets in every lesson
  std::map<std::string, nlohmann::json> trained_defaults_;  // "1" .. "9": overrides with a trained model
  std::optional<io::Problem> weights_;
  std::optional<TrainedModel> model_;
  std::optional<TrainedModel> lm_;
  bool lm_tried_ = false;
  std::string random_reason_;  // why a trained model is not used (shown in the weights line)
  std::set<std::string> warned_;
  // `words` not warned about before, quoted and joined with ", " ("" when none), and now marked warned:
  // each word gets one warning per session, whether it was unknown or unseen.
  std::string not_yet_warned(const std::vector<std::string>& words);
};

// True when the lesson should wait for a key after each step: text output, no --no-pause, and both
// stdin and stdout are terminals (render/prompt.hpp tells).
bool interactive(const LessonOptions& opts);

// Prompts "[Enter] next step   [q] quit" and waits for one key (render/prompt.hpp reads it): q or Q
// (or end of input) means stop, anything else (Enter) means go on.
bool pause_for_key(bool color);

}  // namespace attnlab::lessons
