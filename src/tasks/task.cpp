#include "tasks/task.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "io/files.hpp"
#include "io/json_text.hpp"
#include "model/checkpoint.hpp"
#include "text/bpe.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace attnlab::tasks {

namespace {

std::size_t get_size(const nlohmann::json& j, const char* key, std::size_t def, const std::string& where) {
  if (!j.contains(key)) return def;
  if (!j[key].is_number_unsigned() && !(j[key].is_number_integer() && j[key].get<long long>() >= 0)) {
    throw InputError(where + "." + key + ": expected a non-negative integer, got " + io::json_brief(j[key]));
  }
  const auto v = j[key].get<std::uint64_t>();
  if (v > corpus::kMaxSplitSize) {
    throw InputError(where + "." + key + ": " + std::to_string(v) + " is more than the limit of " + std::to_string(corpus::kMaxSplitSize));
  }
  return static_cast<std::size_t>(v);
}

ReferenceModel reference_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object");
  static const std::set<std::string> known = {"model", "vocab_size", "reported_params", "positions", "activation"};
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) {
      throw InputError(where + ": unknown field \"" + k + "\"; expected model, vocab_size, reported_params, positions, activation");
    }
  ReferenceModel r;
  if (!j.contains("model") || !j["model"].is_string() || j["model"].get<std::string>().empty())
    throw InputError(where + ".model: expected the name of the published model, e.g. \"Transformer base (Vaswani et al. 2017)\"");
  r.model = j["model"].get<std::string>();
  auto positive = [&](const char* key, long long hi) -> long long {
    if (!j.contains(key)) return 0;
    const auto& v = j[key];
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > hi) {
      throw InputError(where + "." + key + ": expected an integer in [1, " + std::to_string(hi) + "], got " + v.dump());
    }
    return v.get<long long>();
  };
  r.vocab_size = static_cast<int>(positive("vocab_size", 10'000'000));  // model_config_from_json's limit
  if (j.contains("vocab_size") && r.vocab_size < 5)
    throw InputError(where + ".vocab_size: " + std::to_string(r.vocab_size) + " is too small (4 special tokens + at least 1 word)");
  r.reported_params = positive("reported_params", 1'000'000'000'000LL);
  auto choice = [&](const char* key, const char* a, const char* b) -> bool {  // true for b
    if (!j.contains(key)) return false;
    const std::string v = j[key].is_string() ? j[key].get<std::string>() : "";
    if (v != a && v != b)
      throw InputError(where + "." + key + ": expected \"" + a + "\" or \"" + b + "\", got " + j[key].dump());
    return v == b;
  };
  r.learned_positions = choice("positions", "sinusoidal", "learned");
  r.gelu = choice("activation", "relu", "gelu");
  return r;
}

}  // namespace

RunConfig run_config_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected a JSON object with \"task\", \"corpus\", \"model\" and \"train\"");
  static const std::set<std::string> known = {"name", "task", "corpus", "tokenizer", "model", "train", "description", "reference"};
  for (const auto& [k, v] : j.items())
    if (!known.count(k))
      throw InputError(where + ": unknown field \"" + k + "\"; expected name, task, corpus, tokenizer, model, train, reference");
  RunConfig r;
  r.raw = j;
  auto text_field = [&](const char* key, const char* def) {
    if (!j.contains(key)) return std::string(def);
    if (!j[key].is_string()) throw InputError(where + "." + key + ": expected a string, got " + io::json_brief(j[key]));
    return j[key].get<std::string>();
  };
  r.name = text_field("name", "run");
  // The name becomes the default output folder (runs/NAME): a plain folder name, never a path.
  {
    bool ok = !r.name.empty() && r.name.size() <= 64 && r.name != "." && r.name != "..";
    for (const char ch : r.name)
      ok = ok && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                  ch == '_' || ch == '.');
    if (!ok)
      throw InputError(where + ".name: expected a folder name of 1 to 64 letters, digits, '-', '_' or '.' (it names runs/NAME), got " +
                       io::json_brief(j["name"]));
  }
  text_field("description", "");
  const std::string task = text_field("task", "translate");
  if (task != "translate" && task != "lm") throw InputError(where + ".task: expected \"translate\" or \"lm\", got \"" + task + "\"");
  r.lm = task == "lm";
  const nlohmann::json c = j.value("corpus", nlohmann::json::object());
  if (!c.is_object()) throw InputError(where + ".corpus: expected an object");
  if (c.contains("source")) {
    const auto& src = c["source"];
    if (!src.is_string() || (src != "generated" && src != "english"))
      throw InputError(where + ".corpus.source: expected \"generated\" or \"english\", got " + io::json_brief(src));
    r.english = src == "english";
    if (r.english && !r.lm) throw InputError(where + ".corpus.source: \"english\" is English text only; it needs \"task\": \"lm\"");
  }
  for (const auto& [k, v] : c.items()) {
    const bool ok = r.english ? (k == "source" || k == "dir")
                              : (k == "source" || k == "seed" || k == "train" || k == "valid" || k == "test" ||
                                 (k == "grammar" && !r.lm));
    if (!ok)
      throw InputError(where + ".corpus: unknown field \"" + k + "\"; expected " +
                       (r.english ? "source, dir" : r.lm ? "source, seed, train, valid, test" : "source, grammar, seed, train, valid, test"));
  }
  if (c.contains("grammar") && !r.lm) {
    const auto& g = c["grammar"];
    const auto parsed = g.is_string() ? corpus::parse_grammar(g.get<std::string>()) : std::nullopt;
    if (!parsed)
      throw InputError(where + ".corpus.grammar: expected \"lessons\", \"wide\" or \"everyday\", got " + io::json_brief(g));
    r.corpus.grammar = *parsed;
  }
  if (r.english && c.contains("dir")) {
    if (!c["dir"].is_string() || c["dir"].get<std::string>().empty())
      throw InputError(where + ".corpus.dir: expected a folder name, got " + io::json_brief(c["dir"]));
    r.english_dir = c["dir"].get<std::string>();
  }
  if (j.contains("tokenizer")) {
    const auto& t = j["tokenizer"];
    if (!t.is_object()) throw InputError(where + ".tokenizer: expected an object such as {\"kind\": \"bpe\", \"vocab_size\": 4096}");
    for (const auto& [k, v] : t.items())
      if (k != "kind" && k != "vocab_size") throw InputError(where + ".tokenizer: unknown field \"" + k + "\"; expected kind, vocab_size");
    const std::string kind = t.contains("kind") && t["kind"].is_string() ? t["kind"].get<std::string>() : "";
    if (kind != "words" && kind != "bpe")
      throw InputError(where + ".tokenizer.kind: expected \"words\" or \"bpe\", got " + (t.contains("kind") ? io::json_brief(t["kind"]) : "(missing)"));
    if (kind == "bpe") {
      if (!t.contains("vocab_size") || !t["vocab_size"].is_number_integer() || t["vocab_size"].get<long long>() < 261 ||
          t["vocab_size"].get<long long>() > 1'000'000)
        throw InputError(where + ".tokenizer.vocab_size: expected a whole number from 261 to 1000000, got " +
                         (t.contains("vocab_size") ? io::json_brief(t["vocab_size"]) : "(missing)"));
      r.bpe_vocab = t["vocab_size"].get<std::size_t>();
    } else if (t.contains("vocab_size")) {
      throw InputError(where + ".tokenizer.vocab_size: only a \"bpe\" tokenizer takes one (a word vocabulary is every word of the corpus)");
    }
  }
  if (r.english && !r.bpe_vocab)
    throw InputError(where + ".tokenizer: the \"english\" corpus needs {\"kind\": \"bpe\", \"vocab_size\": N} (a word vocabulary would leave typed words <unk>)");
  if (!r.english && r.lm && r.bpe_vocab)
    throw InputError(where + ".tokenizer.kind: a language model reads \"bpe\" with the \"english\" corpus only (corpus.source); its generated corpus uses \"words\"");
  const std::uint64_t seed = get_size(c, "seed", 1, where + ".corpus");
  if (r.lm) {
    r.lm_corpus.seed = seed;
    r.lm_corpus.train = get_size(c, "train", r.lm_corpus.train, where + ".corpus");
    r.lm_corpus.valid = get_size(c, "valid", r.lm_corpus.valid, where + ".corpus");
    r.lm_corpus.test = get_size(c, "test", r.lm_corpus.test, where + ".corpus");
  } else {
    r.corpus.seed = seed;
    r.corpus.train = get_size(c, "train", r.corpus.train, where + ".corpus");
    r.corpus.valid = get_size(c, "valid", r.corpus.valid, where + ".corpus");
    r.corpus.test = get_size(c, "test", r.corpus.test, where + ".corpus");
  }
  nlohmann::json m = j.value("model", nlohmann::json::object());
  if (m.contains("vocab_size")) throw InputError(where + ".model.vocab_size: leave it out; it is taken from the corpus's vocabulary");
  if (m.contains("decoder_only")) throw InputError(where + ".model.decoder_only: leave it out; \"task\" decides it");
  m["vocab_size"] = 5;  // placeholder until the vocabulary is built
  m["decoder_only"] = r.lm;
  r.model = model::model_config_from_json(m, where + ".model");
  r.train = model::train_config_from_json(j.value("train", nlohmann::json::object()), where + ".train");
  if (j.contains("reference")) r.reference = reference_from_json(j["reference"], where + ".reference");
  return r;
}

RunConfig load_run_config(const std::string& path) {
  const std::string text = io::read_text_file(path, 1u << 20);
  return run_config_from_json(io::parse_json_text(text, path), path);
}

std::vector<ConfigChange> resume_changes(const nlohmann::json& saved_run_config, const RunConfig& given) {
  RunConfig saved;
  try {
    saved = run_config_from_json(saved_run_config, "run_config");
  } catch (const std::exception& e) {
    return {{"run_config", std::string("unreadable (") + e.what() + ")", "the file given"}};
  }
  std::vector<ConfigChange> changes;
  auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  auto compare = [&](const std::string& field, const nlohmann::json& a, const nlohmann::json& b) {
    if (a != b) changes.push_back({field, text(a), text(b)});
  };
  compare("task", saved.lm ? "lm" : "translate", given.lm ? "lm" : "translate");
  compare("corpus.source", saved.english ? "english" : "generated", given.english ? "english" : "generated");
  if (saved.english && given.english) compare("corpus.dir", saved.english_dir, given.english_dir);
  compare("tokenizer.vocab_size", saved.bpe_vocab, given.bpe_vocab);
  if (!saved.lm && !given.lm)
    compare("corpus.grammar", corpus::grammar_name(saved.corpus.grammar), corpus::grammar_name(given.corpus.grammar));
  if (saved.lm == given.lm && !saved.english && !given.english) {
    auto corpus_json = [](const RunConfig& r) {
      return r.lm ? nlohmann::json{{"seed", r.lm_corpus.seed}, {"train", r.lm_corpus.train}, {"valid", r.lm_corpus.valid},
                                   {"test", r.lm_corpus.test}}
                  : nlohmann::json{{"seed", r.corpus.seed}, {"train", r.corpus.train}, {"valid", r.corpus.valid},
                                   {"test", r.corpus.test}};
    };
    const nlohmann::json a = corpus_json(saved), b = corpus_json(given);
    for (const auto& [k, v] : a.items()) compare("corpus." + k, v, b[k]);
  }
  const nlohmann::json a = model::train_config_to_json(saved.train), b = model::train_config_to_json(given.train);
  for (const auto& [k, v] : a.items())
    if (k != "steps" && k != "eval_every" && k != "checkpoint_every") compare("train." + k, v, b[k]);
  return changes;
}

namespace {

std::vector<std::string> read_english_split(const std::string& dir, const char* split) {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(dir) / (std::string(split) + ".txt")).string();
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw InputError("corpus.dir " + dir + ": no " + split + ".txt there; prepare the English text first with `bash scripts/english-corpus.sh`");
  const std::string text = io::read_text_file(path, std::size_t{1} << 30);
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (lines.empty()) throw InputError(path + ": holds no sentences; prepare it again with `bash scripts/english-corpus.sh`");
  return lines;
}

// The sentences as one stream of "<bos> ids <eos>" records, cut into windows of window + 1 tokens
// that overlap by one (the last token of a window is the first input of the next), so that every
// token after the first is a target exactly once.
std::vector<model::Example> pack_windows(const text::Vocab& vocab, const std::vector<std::string>& sentences, int window) {
  std::vector<int> stream;
  for (const auto& s : sentences) {
    stream.push_back(text::Vocab::kBos);
    for (text::TokenId id : vocab.encode(s)) stream.push_back(id);
    stream.push_back(text::Vocab::kEos);
  }
  std::vector<model::Example> out;
  const std::size_t w = static_cast<std::size_t>(window);
  for (std::size_t start = 0; start + 1 < stream.size(); start += w) {
    model::Example e;
    e.raw = true;
    e.tgt.assign(stream.begin() + static_cast<std::ptrdiff_t>(start),
                 stream.begin() + static_cast<std::ptrdiff_t>(std::min(stream.size(), start + w + 1)));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

TaskData build_task_data(RunConfig& run, const text::Vocab* given, Splits splits) {
  TaskData d;
  const bool all = splits == Splits::All;
  auto encode = [&](const std::string& s) { return d.vocab.encode(s); };
  if (run.english) {
    const std::string dir = resolve_data_path(run.english_dir);
    const std::vector<std::string> train = read_english_split(dir, "train");
    if (given) {
      d.vocab = *given;
      if (!d.vocab.bpe()) throw InputError("the model's vocabulary is word-level, but its run config reads English text with a BPE tokenizer");
    } else {
      d.vocab = text::Vocab::from_bpe(text::Bpe::train_on_texts(train, run.bpe_vocab));
    }
    if (all) {
      d.train = pack_windows(d.vocab, train, run.model.max_len);
      d.valid = pack_windows(d.vocab, read_english_split(dir, "valid"), run.model.max_len);
    }
    d.lm_test_sentences = read_english_split(dir, "test");
    d.test = pack_windows(d.vocab, d.lm_test_sentences, run.model.max_len);
    d.lm_train_sentences = train;
    run.model.vocab_size = static_cast<int>(d.vocab.size());
    return d;
  }
  if (run.lm) {
    const corpus::LmCorpus c = corpus::generate_lm(run.lm_corpus);
    d.vocab = given ? *given : corpus::build_lm_vocab(c.train);
    if (all) {
      for (const auto& s : c.train) d.train.push_back({{}, encode(s)});
      for (const auto& s : c.valid) d.valid.push_back({{}, encode(s)});
    }
    for (const auto& s : c.test) d.test.push_back({{}, encode(s)});
    d.lm_test_sentences = c.test;
    d.lm_train_sentences = c.train;
  } else {
    const corpus::Corpus c = corpus::generate(run.corpus);
    if (given) {
      d.vocab = *given;
      if ((d.vocab.bpe() != nullptr) != (run.bpe_vocab > 0))
        throw InputError(std::string("the model's vocabulary is ") + (d.vocab.bpe() ? "a BPE" : "word-level") +
                         ", but its run config's tokenizer is " + (run.bpe_vocab ? "\"bpe\"" : "\"words\""));
    } else if (run.bpe_vocab) {
      // One BPE for both languages, learned on both sides of the training split, so that shared
      // pieces (names, numbers, cognates) get one id and a name is copied piece by piece.
      std::vector<std::string> texts;
      texts.reserve(2 * c.train.size());
      for (const auto& e : c.train) {
        texts.push_back(e.en);
        texts.push_back(e.fr);
      }
      d.vocab = text::Vocab::from_bpe(text::Bpe::train_on_texts(texts, run.bpe_vocab));
    } else {
      d.vocab = corpus::build_vocab(c.train);
    }
    if (all) {
      for (const auto& e : c.train) d.train.push_back({encode(e.en), encode(e.fr)});
      for (const auto& e : c.valid) d.valid.push_back({encode(e.en), encode(e.fr)});
    }
    for (const auto& e : c.test) d.test.push_back({encode(e.en), encode(e.fr)});
    d.test_pairs = c.test;
    if (run.bpe_vocab && all) {
      std::set<std::string> words;
      for (const auto& e : c.train)
        for (const auto& w : text::tokenize(e.en)) words.insert(text::fold_case(w));
      d.known_source_words.assign(words.begin(), words.end());
    }
  }
  run.model.vocab_size = static_cast<int>(d.vocab.size());
  std::size_t longest = 0;
  for (const auto* split : {&d.train, &d.valid, &d.test})
    for (const auto& e : *split) longest = std::max({longest, e.src.size(), e.tgt.size() + 1});
  if (static_cast<int>(longest) > run.model.max_len) {
    throw InputError("model.max_len = " + std::to_string(run.model.max_len) + " is too small: the corpus's longest sentence needs " +
                     std::to_string(longest) + " positions (with <bos>/<eos>)");
  }
  return d;
}

LoadedModel load_model(const std::string& dir_in, backend::Ops<float>& backend) {
  namespace fs = std::filesystem;
  LoadedModel lm;
  std::string dir = resolve_data_path(dir_in);
  std::string file = dir;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) file = (fs::path(dir) / "model.ckpt").string();
  if (!fs::exists(dir, ec)) {
    throw InputError("--model " + dir_in + ": no such folder or file; give a model folder (holding model.ckpt) or a .ckpt file, e.g. data/models/translate-small");
  }
  const bool there = fs::exists(file, ec);
  if (ec == std::errc::permission_denied) {
    throw InputError("--model " + dir_in + ": permission denied (cannot look inside " + dir + "); give yourself read access (chmod u+rx)");
  }
  if (!there) {
    // A run's folder with its training state but no model.ckpt (deleted, or a run stopped before its
    // first model was written): a fresh `train` would refuse it, --resume writes model.ckpt from the
    // state (round three's item 13: the advice was to train from scratch).
    const fs::path state = fs::path(dir) / "train-state.ckpt";
    if (file != dir && fs::exists(state, ec))
      throw InputError(dir_in + ": holds train-state.ckpt but no model.ckpt; write the model from the state with `attnlab train "
                       "--config CONFIG --out " + dir + " --resume` (the run's own config), or give --model " +
                       state.string() + " to use the state as it is");
    throw InputError(dir_in + ": no trained model there (expected " + file + "); train one with `attnlab train --config data/configs/NAME.json --out DIR`");
  }
  model::Checkpoint ck = model::load_checkpoint(file);
  lm.dir = dir;
  lm.meta = ck.meta;
  try {
    if (!ck.tokenizer.is_null()) {
      lm.vocab = text::Vocab::from_bpe(text::Bpe::from_json(ck.tokenizer));
      if (lm.vocab.words() != ck.vocab)
        throw InputError("tokenizer: its tokens differ from the checkpoint's \"vocab\" (" + std::to_string(lm.vocab.size()) +
                         " against " + std::to_string(ck.vocab.size()) + " entries)");
    } else {
      lm.vocab = text::Vocab::from_json({{"format", "attnlab-vocab"}, {"version", text::Vocab::kFormatVersion}, {"tokens", ck.vocab}});
    }
  } catch (const std::exception& e) {
    throw InputError(file + ": " + e.what());
  }
  if (ck.meta.is_object() && ck.meta.contains("run_config")) {
    lm.run = run_config_from_json(ck.meta["run_config"], file + ": meta.run_config");
  }
  lm.run.model = ck.config;
  lm.run.lm = ck.config.decoder_only;
  if (ck.meta.is_object() && ck.meta.contains("known_source_words") && ck.meta["known_source_words"].is_array())
    for (const auto& w : ck.meta["known_source_words"])
      if (w.is_string()) lm.known_source_words.insert(w.get<std::string>());
  lm.net = std::make_unique<model::Transformer<float>>(ck.config, backend);
  lm.net->params.upload(ck.params);
  lm.weights = ck.params_storage;
  return lm;
}

std::string checkpoint_file(const LoadedModel& m) {
  std::error_code ec;
  return std::filesystem::is_directory(m.dir, ec) ? (std::filesystem::path(m.dir) / "model.ckpt").string() : m.dir;
}

bool focus_word_right(const text::Vocab& vocab, const corpus::Example& ex, const std::vector<int>& reference,
                      const std::vector<int>& translation) {
  if (!vocab.bpe()) {
    const int fid = vocab.id(ex.focus_fr);
    const auto count = [&](const std::vector<int>& v) { return std::count(v.begin(), v.end(), fid); };
    return count(reference) > 0 && count(translation) == count(reference);
  }
  const std::string focus_word = text::fold_case(ex.focus_fr);
  const auto count = [&](const std::vector<int>& ids) {
    std::size_t k = 0;
    for (const auto& w : text::tokenize(vocab.decode(std::vector<text::TokenId>(ids.begin(), ids.end()))))
      k += text::fold_case(w) == focus_word;
    return k;
  };
  return count(reference) > 0 && count(translation) == count(reference);
}

std::vector<std::string> unseen_words(const LoadedModel& m, std::string_view sentence) {
  std::vector<std::string> out;
  if (m.known_source_words.empty()) return out;
  for (const auto& tok : text::tokenize(sentence)) {
    const std::string w = text::fold_case(tok);
    const bool letters = std::any_of(w.begin(), w.end(), [](unsigned char ch) { return std::isalpha(ch) || ch >= 0x80; });
    if (letters && !m.known_source_words.count(w) && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  }
  return out;
}

}  // namespace attnlab::tasks
