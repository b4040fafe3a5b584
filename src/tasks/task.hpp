#pragma once
// Glue between the corpus, the tokenizer and the model: a run config file (data/configs/NAME.json),
// the token-id datasets it describes, and loading a trained model folder.
//
//   {"name": "translate-small", "task": "translate" | "lm",
//    "corpus": {"seed", "train", "valid", "test"},      sizes of the generated splits
//    "model":  {…ModelConfig, without vocab_size (taken from the corpus's vocabulary)…},
//    "train":  {…TrainConfig…}}
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus/corpus.hpp"
#include "model/trainer.hpp"
#include "text/vocab.hpp"

namespace attnlab::tasks {

struct RunConfig {
  std::string name;
  bool lm = false;  // task "lm": a decoder-only language model on English sentences
  corpus::CorpusOptions corpus;
  corpus::LmOptions lm_corpus;
  model::ModelConfig model;
  model::TrainConfig train;
  nlohmann::json raw;  // the file as read, stored in checkpoints so eval can rebuild the test split
};

// Parses and validates a run config; every problem is an InputError naming the field.
RunConfig run_config_from_json(const nlohmann::json& j, const std::string& where);
RunConfig load_run_config(const std::string& path);

struct TaskData {
  text::Vocab vocab;
  std::vector<model::Example> train, valid, test;
  std::vector<corpus::Example> test_pairs;     // translation: the test split as text, with categories
  std::vector<std::string> lm_test_sentences;  // language model: the test split as text
};

// Generates the corpus, builds the vocabulary from the training split (or takes `vocab` when given,
// e.g. a trained model's) and encodes every split. Sets run.model.vocab_size. Throws InputError when
// model.max_len is too short for the longest sentence.
TaskData build_task_data(RunConfig& run, const text::Vocab* vocab = nullptr);

// A trained model folder: model.ckpt plus what is needed to use it.
struct LoadedModel {
  std::string dir;
  RunConfig run;
  text::Vocab vocab;
  std::unique_ptr<model::Transformer<float>> net;
  nlohmann::json meta;
};

// Loads DIR/model.ckpt ("DIR" may also be a .ckpt file). Relative paths that do not exist are looked
// up under the attnlab folder (so "data/models/translate-small" works from anywhere).
LoadedModel load_model(const std::string& dir);

// Default model folders shipped with attnlab.
inline constexpr const char* kDefaultTranslateModel = "data/models/translate-small";
inline constexpr const char* kDefaultLmModel = "data/models/lm-small";

}  // namespace attnlab::tasks
