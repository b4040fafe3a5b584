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

#include "core/attention.hpp"
#include "io/problem.hpp"
#include "lessons/lesson_doc.hpp"
#include "lessons/output.hpp"
#include "lessons/text.hpp"

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
  std::string format = "text";
  bool no_color = false, full = false, no_pause = false;
  int precision = 3;
};

// The sentences a lesson runs on by default (data/sentences/lessons.json).
struct LessonSentences {
  std::string sentence, target;
  std::string focus;                     // lesson 5: the word whose row is read as percentages
  std::string second;                    // lesson 6: the second sentence of the batch
  std::vector<std::string> coreference;  // lesson 9: the pair
  std::string coreference_focus;         // lesson 9: the pronoun
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
  Matrix embeddings, pe, x;  // n × d_model each; x = embeddings·√d_model + pe

  // Tokenizes with the vocabulary; unknown words become <unk> with one warning on stderr.
  TokenizedSentence encode(const std::string& sentence, const std::string& what);
  // E·√d_model + PE for any sentence.
  Matrix input_for(const TokenizedSentence& s) const;
  // The attention weights of block `name`: from --weights when given, else seeded random.
  AttentionWeights weights(const std::string& name) const;
  // Self-attention of the lesson sentence with weights("encoder.self"), computed once.
  const AttentionTrace& self_trace();
  // The decoder-side sentence (--target or the lesson's default target).
  const TokenizedSentence& target();

 private:
  std::optional<AttentionTrace> trace_;
  std::optional<TokenizedSentence> target_;
};

using ShowFn = std::function<void(LessonContext&)>;
// Every computation a lesson.md may name in <!-- show: NAME -->.
const std::map<std::string, ShowFn>& show_registry();

class Session {
 public:
  // Finds the data folder, loads the lessons, the vocabulary, the default sentences and --weights.
  // `tour`: every lesson uses one sentence (the tour's) unless --sentence is given.
  Session(const LessonOptions& opts, bool tour);

  const std::vector<LessonDoc>& lessons() const { return lessons_; }
  const LessonOptions& options() const { return opts_; }
  const Vocabulary& vocab() const { return vocab_; }
  const std::optional<Problem>& weights_problem() const { return weights_; }
  std::uint64_t seed() const { return opts_.seed; }

  // Runs one lesson into `out`. `pause` is called after every step but the last and returns false
  // when the learner wants to stop. Returns false when stopped early.
  bool run(const LessonDoc& doc, Output& out, const std::function<bool()>& pause);

  // Prints "warning: ..." for words not seen before in this session.
  void warn_unknown(const std::vector<std::string>& words, const std::string& what);

 private:
  LessonSentences sentences_for(int number) const;
  LessonOptions opts_;
  bool tour_;
  std::filesystem::path root_;
  std::vector<LessonDoc> lessons_;
  Vocabulary vocab_;
  std::map<std::string, LessonSentences> defaults_;  // "default", "tour", "1" .. "9"
  std::optional<Problem> weights_;
  std::set<std::string> warned_;
};

// True when the lesson should wait for a key after each step: text output, no --no-pause, and both
// stdin and stdout are terminals.
bool interactive(const LessonOptions& opts);

// Waits for one key on the terminal (raw mode for the duration of the read only): q or Q (or end of
// input) means stop, anything else (Enter) means go on. Prints a prompt on stdout first.
bool pause_for_key(bool color);

}  // namespace attnlab::lessons
