#pragma once
// Glue between the corpus, the tokenizer and the model: a run config file (data/configs/NAME.json),
// the token-id datasets it describes, and loading a trained model folder.
//
//   {"name": "translate-small", "task": "translate" | "lm",
//    "corpus": {"seed", "train", "valid", "test"},      sizes of the generated splits
//            or {"source": "english", "dir": "data/english"}   (lm only) the real English text that
//                                                       scripts/english-corpus.sh prepares
//    "tokenizer": {"kind": "words"} (the default) or {"kind": "bpe", "vocab_size": N}: a byte-level
//                 BPE (text/bpe.hpp) trained on the training split, stored in the checkpoint
//    "model":  {…ModelConfig, without vocab_size (taken from the corpus's vocabulary)…},
//    "train":  {…TrainConfig…},
//    "reference": {…ReferenceModel…}}                   optional: the published model the config mirrors
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus/corpus.hpp"
#include "model/checkpoint.hpp"
#include "model/trainer.hpp"
#include "text/vocab.hpp"

namespace attnlab::tasks {

// The published model a config reproduces in shape (the paper's Transformer base/big, GPT-2 small), for
// `attnlab params` and `attnlab bench`. It describes that model; it changes nothing about what attnlab
// trains, which always takes its vocabulary from the corpus and always uses ReLU and sinusoidal
// positions. JSON: {"model": "...", "vocab_size": V, "reported_params": P, "positions":
// "sinusoidal"|"learned", "activation": "relu"|"gelu"}; every field but "model" is optional.
struct ReferenceModel {
  std::string model;                  // e.g. "Transformer base (Vaswani et al. 2017, Table 3)"
  int vocab_size = 0;                 // the published vocabulary (0: not stated)
  std::int64_t reported_params = 0;   // the published parameter count (0: not stated)
  bool learned_positions = false;     // the published model learns a max_len × C position table
  bool gelu = false;                  // the published model's FFN activation is GELU (no parameters)
};

struct RunConfig {
  std::string name;
  bool lm = false;  // task "lm": a decoder-only language model on English sentences
  // corpus.source "english": sentences read from english_dir/{train,valid,test}.txt (one a line),
  // packed into windows of model.max_len tokens (Example::raw) instead of one sentence per example.
  bool english = false;
  std::string english_dir = "data/english";
  std::size_t bpe_vocab = 0;  // tokenizer.vocab_size when tokenizer.kind is "bpe"; 0: word-level
  corpus::CorpusOptions corpus;
  corpus::LmOptions lm_corpus;
  model::ModelConfig model;
  model::TrainConfig train;
  std::optional<ReferenceModel> reference;
  nlohmann::json raw;  // the file as read, stored in checkpoints so eval can rebuild the test split
};

// Parses and validates a run config; every problem is an InputError naming the field.
RunConfig run_config_from_json(const nlohmann::json& j, const std::string& where);
RunConfig load_run_config(const std::string& path);

// What differs between the run config a checkpoint was trained with (its meta's "run_config") and
// the one given now, among the fields that change the model a run produces: the task, the corpus,
// and every train field but steps, eval_every and checkpoint_every (the step count may grow; the
// other two only decide when the run looks and saves). The model section is compared by
// Trainer::restore. One entry per field, e.g. {"train.seed", "1", "7"}; a saved config that cannot
// be read gives one entry for "run_config".
struct ConfigChange {
  std::string field, saved, given;
};
std::vector<ConfigChange> resume_changes(const nlohmann::json& saved_run_config, const RunConfig& given);

struct TaskData {
  text::Vocab vocab;
  std::vector<model::Example> train, valid, test;
  std::vector<corpus::Example> test_pairs;     // translation: the test split as text, with categories
  std::vector<std::string> lm_test_sentences;  // language model: the test split as text
  std::vector<std::string> lm_train_sentences;  // language model: the training split as text
  // A BPE translation model: every English word (case folded, text::tokenize) of the training split,
  // sorted. Stored in the checkpoint's meta ("known_source_words"), so `translate` can say which typed
  // words the model never read as whole words.
  std::vector<std::string> known_source_words;
};

// Generates the corpus, builds the vocabulary from the training split (or takes `vocab` when given,
// e.g. a trained model's) and encodes every split. Sets run.model.vocab_size. Throws InputError when
// model.max_len is too short for the longest sentence. With Splits::TestOnly, the training and
// validation splits are generated (the test split is defined by what they hold) but not encoded:
// a reader of a trained model's test split (eval, heads, lesson 10) skips most of the encoding
// work, which for a BPE corpus of 300,000 pairs takes longer than generating it.
enum class Splits { All, TestOnly };
TaskData build_task_data(RunConfig& run, const text::Vocab* vocab = nullptr, Splits splits = Splits::All);

// A trained model folder: model.ckpt plus what is needed to use it.
struct LoadedModel {
  std::string dir;
  RunConfig run;
  text::Vocab vocab;
  std::unique_ptr<model::Transformer<float>> net;
  nlohmann::json meta;
  std::set<std::string, std::less<>> known_source_words;  // from meta; empty when the checkpoint has none
  // How the checkpoint stored the weights: float32, or bf16 (a shipped model, docs/checkpoint.md),
  // widened to float32 on load either way. For commands to say so.
  model::Storage weights = model::Storage::fp32;
};

// The checkpoint file a loaded model came from: DIR/model.ckpt, or the .ckpt file given.
std::string checkpoint_file(const LoadedModel& m);

// The words of `sentence` (case folded, text::tokenize; letters only) that `m` never read as whole
// words in training. Empty when the model records no word list (word-level models: their unknown
// words are <unk>, which encode_sentence reports).
std::vector<std::string> unseen_words(const LoadedModel& m, std::string_view sentence);

// Whether a translation got an example's focus word (il/elle, banque/rive, …) right: the word occurs
// as often in the translation as in the reference, and at least once. A word vocabulary compares
// ids; a BPE, whose pieces are not words, compares the words of the two decoded texts (the focus
// word is often several pieces: "entraîne", "poursuivait").
bool focus_word_right(const text::Vocab& vocab, const corpus::Example& ex, const std::vector<int>& reference,
                      const std::vector<int>& translation);

// Loads DIR/model.ckpt ("DIR" may also be a .ckpt file). Relative paths that do not exist are looked
// up under the attnlab folder (so "data/models/translate-small" works from anywhere).
// The model is placed on `backend` (backend::cpu_backend<float>() for the CPU).
LoadedModel load_model(const std::string& dir, backend::Ops<float>& backend);

// Default model folders shipped with attnlab.
inline constexpr const char* kDefaultTranslateModel = "data/models/translate-wide";
inline constexpr const char* kDefaultLmModel = "data/models/lm-english";

}  // namespace attnlab::tasks
