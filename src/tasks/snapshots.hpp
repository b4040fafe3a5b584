#pragma once
// Attention while it learns (`attnlab train --snapshots K`, `attnlab timeline`; docs/timeline.md):
// at K log-spaced steps of a translation model's training, plus step 0 (before any update) and the
// last step, the run folder gets one snapshot: for each probe sentence its greedy translation and the
// attention of every layer and head (the sets of `translate --format json`, tasks/attention_sets.hpp),
// the training loss of that step, the last validation, and the cheap head measures of `attnlab heads`
// (cross-attention alignment error, the encoder's relation probes) on the first test sentences.
//
// In the run folder:
//   snapshots/timeline.json        {"format": "attnlab-timeline", "version": 1, "snapshots": K,
//                                   "train_steps": N, "steps": [the schedule], "probe_source",
//                                   "probes": [sentences], "relation_examples": M}
//   snapshots/step-000000123.json  {"format": "attnlab-snapshot", "version": 1, "step", "loss",
//                                   "valid", "probes": [...], "heads": {...}, "summary": {...}}
// Each written atomically; no weights, only maps and numbers. A snapshot never holds a time or
// anything else that differs between two runs of the same training, so a killed and resumed run
// writes the same files as an uninterrupted one (training is bit-exact on resume).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus/corpus.hpp"
#include "model/trainer.hpp"
#include "model/transformer.hpp"
#include "text/vocab.hpp"

namespace attnlab::tasks {

inline constexpr int kTimelineVersion = 1;
inline constexpr int kMaxSnapshots = 1000;
inline constexpr std::size_t kRelationExamples = 200;  // as `attnlab heads`' default --sentences

// The schedule: 0, then K steps spaced evenly in log(step) over 1…total (round(total^(i/K)), i = 1…K;
// the last is total), duplicates merged, so at most K + 1 steps. K from 1 to total.
std::vector<std::int64_t> snapshot_steps(int k, std::int64_t total);

// The lessons' sentences for a trained translation model (data/sentences/lessons.json): the
// sentences of "trained" (in lesson order), the tour's, the coreference pair and the word-sense list
// of "default", each once, in that order.
std::vector<std::string> lesson_probe_sentences();

// A probe file: one sentence a line (UTF-8; blank lines and lines starting with # skipped). Throws
// InputError naming "--probe FILE" (and the line) when it is missing, empty, not UTF-8 or too large.
std::vector<std::string> read_probe_file(const std::string& path);

struct ProbeSentence {
  std::string text;
  std::vector<int> ids;
  std::vector<std::string> tokens;
};
// Encodes the probes for `vocab` (text::encode_sentence): InputError naming `where` and the line when
// one has more than max_len tokens or none.
std::vector<ProbeSentence> encode_probes(const text::Vocab& vocab, const std::vector<std::string>& sentences, int max_len,
                                         const std::string& where);

// One snapshot's measures of `net` as it is now (no file): "probes" (each sentence's greedy
// translation and attention sets), "heads" (alignment and relations on the first `relation_examples`
// test pairs, as `attnlab heads` computes them) and "summary" (the best-aligned cross head, the
// strongest relation of each encoder layer). The caller adds step, loss and valid.
nlohmann::json snapshot_measures(model::Transformer<float>& net, const text::Vocab& vocab, const std::vector<ProbeSentence>& probes,
                                 const std::vector<model::Example>& test, const std::vector<corpus::Example>& test_pairs,
                                 std::size_t relation_examples);

// The summary of a snapshot's "heads": {"alignment_error": {"layer", "head", "rate"} of the cross head
// with the lowest alignment error rate (null without one), "strongest_relation": per encoder layer
// {"layer", "head", "relation", "mass", "chance"} of the relation and head whose mass is the most above
// its chance (a uniform row's mass)}.
nlohmann::json snapshot_summary(const nlohmann::json& heads);

// The snapshots of one run folder, as training writes them.
class Snapshots {
 public:
  struct Options {
    std::string out;         // the run folder
    int k = 0;               // --snapshots (0: not given)
    std::string probe_file;  // --probe ("" : the lessons' sentences)
    bool resume = false;
    std::int64_t total_steps = 0;
  };
  // Reads and checks what is needed before anything is written (the probe file; on --resume the
  // timeline already in the folder, whose K and probes a resume keeps). Active when K was given or
  // the resumed run has a timeline. InputError (exit 2) naming the field otherwise.
  explicit Snapshots(const Options& o);
  bool active() const { return active_; }
  // With the model's vocabulary and shape known: encodes the probes (InputError for one too long),
  // and on --resume removes the snapshots after `step` (a killed run's, to be taken again). Writes
  // the timeline's header.
  void start(const text::Vocab& vocab, const model::ModelConfig& config, std::int64_t step);
  bool due(std::int64_t step) const;
  // Takes and writes the snapshot of `step`. `loss`: that step's training loss (none at step 0);
  // `valid`: the last validation at or before it (null when none).
  void take(model::Transformer<float>& net, const text::Vocab& vocab, const std::vector<model::Example>& test,
            const std::vector<corpus::Example>& test_pairs, std::int64_t step, std::optional<double> loss, const nlohmann::json& valid);

  const std::vector<std::int64_t>& schedule() const { return schedule_; }
  int k() const { return k_; }
  std::size_t taken() const { return taken_; }      // by this process
  double seconds() const { return seconds_; }       // spent taking them, by this process
  std::uintmax_t bytes() const;                     // the snapshots folder now
  std::string dir() const;
  static std::string file_name(std::int64_t step);

 private:
  Options o_;
  bool active_ = false;
  int k_ = 0;
  std::string probe_source_;
  std::vector<std::string> sentences_;
  std::vector<ProbeSentence> probes_;
  std::vector<std::int64_t> schedule_;
  std::size_t taken_ = 0;
  double seconds_ = 0;
};

// A run folder's timeline as `attnlab timeline` reads it: the header and the snapshots that exist, in
// step order. InputError naming the file when one is missing, unreadable or of another version.
struct Timeline {
  nlohmann::json header;
  std::vector<nlohmann::json> snapshots;
};
Timeline read_timeline(const std::string& run_dir);

}  // namespace attnlab::tasks
