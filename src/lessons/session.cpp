#include "lessons/session.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "io/json_text.hpp"
#include "util/paths.hpp"
#include "lessons/model.hpp"
#include "lessons/shows.hpp"
#include "model/decode.hpp"
#include "tasks/confidence.hpp"
#include "tasks/translation.hpp"
#include "render/prompt.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

// ---- context ------------------------------------------------------------------------

TokenizedSentence LessonContext::encode(const std::string& sentence, const std::string& what) {
  TokenizedSentence t = lessons::encode(sentence, session.vocab(), what);
  session.warn_unknown(t.unknown, what, session.vocab_name());
  if (what != "--target") session.warn_unseen(sentence, what);
  return t;
}

namespace {

// The token-embedding rows of `ids` (the encoder's table when the model has untied embeddings).
core::Matrix embedding_rows(const TrainedModel& m, const std::vector<std::size_t>& ids) {
  const auto C = static_cast<std::size_t>(m.d_model());
  const auto& layout = m.net().layout();
  const std::size_t table = m.net().config().tie_embeddings || m.net().config().decoder_only ? layout.tok_emb : layout.src_emb;
  core::Matrix e = core::Matrix::from_shape({ids.size(), C});
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::vector<float> row = m.net().params.download(table + ids[i] * C, C);
    for (std::size_t j = 0; j < C; ++j) e(i, j) = row[j];
  }
  return e;
}

}  // namespace

core::Matrix LessonContext::input_for(const TokenizedSentence& s) const {
  if (model) return model_input(embedding_rows(*model, s.ids), positional_encoding(s.tokens.size(), d_model));
  return model_input(embed(s.tokens, d_model, seed), positional_encoding(s.tokens.size(), d_model));
}

core::AttentionWeights LessonContext::weights(const std::string& name) const {
  if (model) {
    const auto& layout = model->net().layout();
    if (name == "encoder.self") return replay_->w;
    if (name == "decoder.self") return attention_weights_of(model->net(), layout.dec.at(0).self_attn);
    if (name == "decoder.cross") return attention_weights_of(model->net(), layout.dec.at(0).cross_attn);
    throw RuntimeError("no attention block '" + name + "' in the trained model");
  }
  if (session.weights_problem()) return session.weights_problem()->weights;
  return random_attention_weights(d_model, heads, seed, name);
}

const core::AttentionTrace& LessonContext::self_trace() {
  if (model) return replay_->trace;
  if (!trace_) {
    trace_.emplace();
    core::self_attention(x, weights("encoder.self"), nullptr, &*trace_);
  }
  return *trace_;
}

const TokenizedSentence& LessonContext::target() {
  if (target_) return *target_;
  if (text.target_is_translation) {
    if (!model) {
      throw InputError("--target: this lesson pairs your --sentence with a French target sentence, and without a trained "
                       "model there is no translation of it to use; give --target \"...\" as well");
    }
    // The model's own translation, decoded as `attnlab translate` decodes (beam 4, loops blocked), so
    // the alignments and probabilities shown belong to the learner's sentence, not to the lesson's
    // default pair.
    const model::DecodeOptions d = tasks::learner_decode();
    const model::Hypothesis h = model::translate(model->net(), src.int_ids(), d);
    if (h.tokens.empty()) {
      throw InputError("--target: the model translates your --sentence as an empty sentence; give --target \"...\"");
    }
    // As `attnlab translate` writes it: words joined for a word vocabulary, pieces decoded for a BPE.
    text.target = model->vocab().decode(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
    text.target_is_translation = false;
    out.line(fmt::format("Target: \"{}\", the model's own translation of your sentence (give --target to choose another).",
                         text.target));
    // As `attnlab translate` judges it (tasks/confidence.hpp): what follows shows the attention of this
    // translation, so a likely wrong one is said before the learner reads meaning into it.
    const tasks::Verdict verdict = tasks::judge_translation(model->m, text.sentence, static_cast<int>(src.int_ids().size()), h, d,
                                                            tasks::load_calibration(model->m));
    if (verdict.unsure)
      out.line("Unsure: this translation is likely wrong (" + tasks::reasons_text(verdict) +
               "); the attention below is that of a wrong translation.");
    out.line("");
    out.value("target_source", "the model's translation of --sentence");
    out.value("unsure", verdict.unsure);
    out.value("unsure_why", verdict.why_json());
  }
  target_ = encode(text.target, "--target");
  return *target_;
}

// ---- session ------------------------------------------------------------------------

namespace {

// True when one of the lesson's steps runs the computation `name` (a "<!-- show: name -->" block).
bool shows(const LessonDoc& doc, std::string_view name) {
  return std::any_of(doc.steps.begin(), doc.steps.end(), [&](const Step& st) {
    return std::any_of(st.blocks.begin(), st.blocks.end(), [&](const Block& b) { return b.kind == Block::Kind::Show && b.text == name; });
  });
}

constexpr const char* kSentencesFile = "data/sentences/lessons.json";

// One layer of lessons.json over `base`: "sentence" and "target" by name, every other key by the
// type of its value (a string, or a list of strings), so a lesson's new datum needs no code here.
LessonSentences read_sentences(const nlohmann::json& j, LessonSentences base, const std::string& where) {
  if (!j.is_object()) throw RuntimeError(kSentencesFile + (": " + where) + ": expected an object, got " + std::string(j.type_name()));
  for (const auto& [key, v] : j.items()) {
    if (key.rfind('_', 0) == 0) continue;  // "_comment"
    if (v.is_string()) {
      const std::string text = v.get<std::string>();
      if (key == "sentence") base.sentence = text;
      else if (key == "target") base.target = text;
      else base.words[key] = text;
    } else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_string(); })) {
      base.lists[key] = v.get<std::vector<std::string>>();
    } else {
      throw RuntimeError(kSentencesFile + (": " + where) + "." + key + ": expected a string or a list of strings, got " + v.dump());
    }
  }
  return base;
}

}  // namespace

Session::Session(const LessonOptions& opts, bool tour) : opts_(opts), tour_(tour) {
  root_ = project_root();
  lessons_ = load_lessons(root_);
  if (lessons_.empty()) throw RuntimeError("no lessons found under " + (root_ / "lessons").string());
  vocab_ = load_word_list(root_ / "data" / "vocab.txt");

  const auto file = root_ / "data" / "sentences" / "lessons.json";
  try {
    const nlohmann::json j = io::parse_json_bounded(io::read_text_file(file.string(), 1u << 20));
    const LessonSentences base = read_sentences(j.at("default"), {}, "default");
    defaults_["default"] = base;
    tour_sentences_ = read_sentences(j.at("tour"), {}, "tour");
    for (const auto& [k, v] : j.at("lessons").items()) defaults_[k] = read_sentences(v, base, "lessons." + k);
    if (j.contains("trained"))
      for (const auto& [k, v] : j.at("trained").items()) trained_defaults_[k] = v;
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(file.string() + ": " + io::json_error_text(e));
  }

  // Which weights: a trained model unless --random, or --d-model / --heads / --weights ask for a
  // shape or weights of their own (a trained model fixes d_model and h).
  std::vector<std::string> shape_flags;
  if (opts_.d_model) shape_flags.push_back("--d-model");
  if (opts_.heads) shape_flags.push_back("--heads");
  if (!opts_.weights_file.empty()) shape_flags.push_back("--weights");
  const std::optional<std::string> default_dir =
      opts_.model_dir.empty() ? find_default_model(tasks::kDefaultTranslateModel) : std::optional<std::string>(opts_.model_dir);
  const std::string label = opts_.model_dir.empty() ? std::string(tasks::kDefaultTranslateModel) : opts_.model_dir;
  if (opts_.random) {
    random_reason_ = "--random";
  } else if (!shape_flags.empty()) {
    std::string flags;
    for (std::size_t i = 0; i < shape_flags.size(); ++i)
      flags += (i == 0 ? "" : i + 1 == shape_flags.size() ? " and " : ", ") + shape_flags[i];
    if (default_dir) random_reason_ = flags + " given, and a trained model fixes d_model and h, so " + label + " is not used";
  } else if (default_dir) {
    model_ = load_trained_model(*default_dir, label);
    if (model_->net().config().decoder_only) {
      throw InputError("--model " + label + ": a decoder-only language model; the lessons need an encoder–decoder "
                       "(translation) model such as " + tasks::kDefaultTranslateModel);
    }
  } else {
    random_reason_ = std::string("no trained model at ") + tasks::kDefaultTranslateModel;
  }

  if (!opts_.weights_file.empty()) {
    weights_ = io::load_problem(opts_.weights_file);
    const std::size_t d = weights_->d_model(), h = weights_->weights.heads.size();
    if (opts_.d_model && *opts_.d_model != d) {
      throw InputError(fmt::format("--d-model {} disagrees with --weights {}, whose d_model is {}", *opts_.d_model,
                                   opts_.weights_file, d));
    }
    if (opts_.heads && *opts_.heads != h) {
      throw InputError(fmt::format("--heads {} disagrees with --weights {}, which has {} head{}", *opts_.heads,
                                   opts_.weights_file, h, h == 1 ? "" : "s"));
    }
  }
  if (!model_) {
    const std::size_t d = weights_ ? weights_->d_model() : opts_.d_model.value_or(kDefaultDModel);
    const std::size_t h = weights_ ? weights_->weights.heads.size() : opts_.heads.value_or(kDefaultHeads);
    if (d < 2 || d > kMaxDModel) throw InputError(fmt::format("--d-model {} is out of range; use 2 to {}", d, kMaxDModel));
    if (h < 1 || h > kMaxHeads) throw InputError(fmt::format("--heads {} is out of range; use 1 to {}", h, kMaxHeads));
    if (!weights_ && d % h != 0) {
      throw InputError(fmt::format("--heads {} does not divide --d-model {}: each head gets d_model / h columns, "
                                   "so choose h among the divisors of {}",
                                   h, d, d));
    }
  }
  if (opts_.sentence) encode(*opts_.sentence, vocab(), "--sentence");  // fail early, before any output
  if (opts_.target) encode(*opts_.target, vocab(), "--target");
}

std::string Session::vocab_name() const {
  return model_ ? fmt::format("the vocabulary of {}", model_->label) : std::string("data/vocab.txt");
}

const TrainedModel* Session::language_model() {
  if (!model_) return nullptr;
  if (!lm_tried_) {
    lm_tried_ = true;
    if (const auto dir = find_default_model(tasks::kDefaultLmModel)) {
      lm_ = load_trained_model(*dir, tasks::kDefaultLmModel);
      if (!lm_->net().config().decoder_only) lm_.reset();
    }
  }
  return lm_ ? &*lm_ : nullptr;
}

LessonSentences Session::sentences_for(int number) const {
  LessonSentences s = defaults_.at("default");
  const std::string key = std::to_string(number);
  if (auto it = defaults_.find(key); it != defaults_.end()) s = it->second;
  if (model_)
    if (auto it = trained_defaults_.find(key); it != trained_defaults_.end()) s = read_sentences(it->second, s, "trained." + key);
  if (tour_) {  // the tour's one sentence, with what belongs to it (its target, its focus word)
    const LessonSentences& t = tour_sentences_;
    if (!t.sentence.empty()) s.sentence = t.sentence;
    if (!t.target.empty()) s.target = t.target;
    for (const auto& [k, v] : t.words) s.words[k] = v;
    for (const auto& [k, v] : t.lists) s.lists[k] = v;
  }
  if (opts_.sentence) s.sentence = *opts_.sentence;
  if (opts_.target) s.target = *opts_.target;
  else if (opts_.sentence) s.target_is_translation = true;  // the default target was the default sentence's
  return s;
}

const std::string& LessonSentences::word(const std::string& key) const {
  static const std::string none;
  const auto it = words.find(key);
  return it == words.end() ? none : it->second;
}

const std::vector<std::string>& LessonSentences::list(const std::string& key) const {
  static const std::vector<std::string> none;
  const auto it = lists.find(key);
  return it == lists.end() ? none : it->second;
}

void run_show(const Show& show, LessonContext& c) {
  const ShowFn& form = c.trained() && show.trained ? show.trained : show.random;
  if (form) form(c);
}

std::string Session::not_yet_warned(const std::vector<std::string>& words) {
  std::string fresh;
  for (const std::string& w : words)
    if (warned_.insert(w).second) fresh += (fresh.empty() ? "" : ", ") + ("\"" + w + "\"");
  return fresh;
}

void Session::warn_unknown(const std::vector<std::string>& words, const std::string& what, const std::string& vocab_name) {
  const std::string fresh = not_yet_warned(words);
  if (!fresh.empty()) {
    std::cout.flush();
    std::fprintf(stderr, "attnlab: warning: %s: not in %s, read as <unk>: %s\n", what.c_str(), vocab_name.c_str(),
                 fresh.c_str());
  }
}

void Session::warn_unseen(const std::string& sentence, const std::string& what) {
  if (!model_) return;
  const std::string fresh = not_yet_warned(tasks::unseen_words(model_->m, sentence));
  if (!fresh.empty()) {
    std::cout.flush();
    std::fprintf(stderr, "attnlab: warning: %s: outside what %s learned: %s never occurred in its training sentences; what it "
                 "shows for them is a guess\n", what.c_str(), model_->label.c_str(), fresh.c_str());
  }
}

std::string Session::weights_line(const LessonDoc& doc) {
  if (model_) {
    std::string line = fmt::format("Weights: trained model {} ({}).", model_->label, model_->description);
    // What it was trained on, and so what lies outside it.
    if (model_->vocab().bpe())
      line += fmt::format("\nIt learned from attnlab's generated English→French corpus (docs/corpus.md) in {} byte-level "
                          "BPE pieces shared by both languages (## marks a piece that continues a word): every word has "
                          "pieces, but a word it never read whole is a guess, and sentences unlike the corpus's may come "
                          "out wrong.",
                          model_->vocab().size());
    else
      line += fmt::format("\nIt learned from attnlab's generated English→French corpus ({} words, docs/corpus.md): other "
                          "words are read as <unk>, and sentences unlike the corpus's may come out wrong.",
                          model_->vocab().size());
    if (shows(doc, "causal")) {
      if (const TrainedModel* lm = language_model()) {
        line += fmt::format("\nCausal self-attention: the language model {} ({}).", lm->label, lm->description);
        if (lm->vocab().bpe())  // what it read, and so how far to trust it
          line += "\nIt read real English (the Brown corpus of 1961 American prose, WordNet's example sentences and "
                  "Jane Austen's novels; docs/english-corpus.md) in byte-level BPE pieces, so any text has tokens "
                  "(## marks a piece that continues a word); modern or technical words are split into small pieces "
                  "it knows less well.";
      }
      else
        line += fmt::format("\nCausal self-attention: no language model at {}, so the translation model's decoder "
                            "self-attention (layer 0) is shown instead.",
                            tasks::kDefaultLmModel);
    }
    return line;
  }
  const std::string why = random_reason_.empty() ? "" : "; " + random_reason_;
  if (weights_) {
    return fmt::format("Weights: W_Q, W_K, W_V{} from {}; embeddings and the other layers seeded random (--seed {}{}).",
                       weights_->weights.w_o ? ", W_O" : "", opts_.weights_file, opts_.seed, why);
  }
  return fmt::format("Weights: seeded random (--seed {}{}), so the patterns are not learned.", opts_.seed, why);
}

namespace {

std::string norm_name(const model::ModelConfig& cfg) { return cfg.pre_norm ? "pre-norm" : "post-norm"; }

void add_model_facts(std::map<std::string, std::string>& f, const std::string& prefix, const TrainedModel& m) {
  const auto& cfg = m.net().config();
  f[prefix + "model"] = std::filesystem::path(m.label).filename().string();
  f[prefix + "model_dir"] = m.label;
  f[prefix + "encoder_layers"] = std::to_string(cfg.decoder_only ? 0 : cfg.encoder_layers);
  f[prefix + "decoder_layers"] = std::to_string(cfg.decoder_layers);
  f[prefix + "heads"] = std::to_string(cfg.heads);
  f[prefix + "d_model"] = std::to_string(cfg.d_model);
  f[prefix + "d_k"] = std::to_string(cfg.d_model / std::max(cfg.heads, 1));
  f[prefix + "d_ff"] = std::to_string(cfg.d_ff);
  f[prefix + "d_ff_ratio"] = width_ratio(cfg.d_ff, cfg.d_model);
  f[prefix + "norm"] = norm_name(cfg);
  f[prefix + "vocab_size"] = std::to_string(m.vocab().size());
  f[prefix + "tokens"] = m.vocab().bpe() ? "byte-level BPE pieces" : "words";
  f[prefix + "tokenizer"] = m.vocab().bpe() ? "bpe" : "words";
  f[prefix + "present"] = "yes";
}

// Replaces each {{key}} of `text` by facts[key]; an unknown key is the lesson author's mistake.
std::string fill_facts(const std::string& text, const std::map<std::string, std::string>& facts, const LessonDoc& doc, int line) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const std::size_t close = text.find("}}", open);
    if (close == std::string::npos) throw RuntimeError(fmt::format("{}:{}: '{{{{' without '}}}}'", doc.file.string(), line));
    const std::string key = text.substr(open + 2, close - open - 2);
    const auto it = facts.find(key);
    if (it == facts.end()) {
      std::string known;
      for (const auto& [k, v] : facts) known += (known.empty() ? "" : ", ") + k;
      throw RuntimeError(fmt::format("{}:{}: no fact '{}' for this model (the facts are: {})", doc.file.string(), line, key, known));
    }
    out += text.substr(pos, open - pos) + it->second;
    pos = close + 2;
  }
  return out + text.substr(pos);
}

// Whether a block's <!-- trained key=value --> condition holds for the model that runs.
bool condition_holds(const Block& b, const std::map<std::string, std::string>& facts, const LessonDoc& doc) {
  if (b.condition.empty()) return true;
  const std::size_t eq = b.condition.find('=');
  const std::string key = b.condition.substr(0, eq), value = b.condition.substr(eq + 1);
  const auto it = facts.find(key);
  if (it != facts.end()) return it->second == value;
  // The language model's facts (lm_…) are absent when it is: its prose is then not shown.
  if (key.rfind("lm_", 0) == 0 && facts.count("lm_present") && facts.at("lm_present") == "no") return false;
  throw RuntimeError(fmt::format("{}:{}: no fact '{}' to test in '{}'", doc.file.string(), b.line, key, b.condition));
}

}  // namespace

bool Session::run(const LessonDoc& doc, Output& out, const std::function<bool()>& pause) {
  const auto& registry = show_registry();
  for (const Step& st : doc.steps)
    for (const Block& b : st.blocks)
      if (b.kind == Block::Kind::Show && !registry.count(b.text)) {
        throw RuntimeError(doc.file.string() + ":" + std::to_string(b.line) + ": unknown computation '" + b.text + "'");
      }

  LessonContext ctx{*this, doc, out};
  ctx.seed = opts_.seed;
  ctx.text = sentences_for(doc.number);
  ctx.model = model();
  std::size_t d_k = 0, d_v = 0;
  if (ctx.model) {
    // The true input of encoder layer 0's self-attention, and that block replayed through the core.
    model::Transformer<float>& net = model_->net();
    ctx.d_model = static_cast<std::size_t>(model_->d_model());
    ctx.heads = static_cast<std::size_t>(model_->heads());
    // In lesson 6 the sentence is read by the language model (the causal step, which warns about its
    // own vocabulary); the translation model's reading of it is only the header's token count, so a
    // sentence outside the translation corpus draws no <unk> warning there.
    const bool lm_reads_sentence = shows(doc, "causal") && language_model() != nullptr;
    ctx.src = lm_reads_sentence ? lessons::encode(ctx.text.sentence, vocab(), "--sentence") : ctx.encode(ctx.text.sentence, "--sentence");
    const std::size_t n = ctx.src.tokens.size();
    forward_one(net, ctx.src.int_ids(), {model::kBos});
    ctx.embeddings = embedding_rows(*model_, ctx.src.ids);
    ctx.pe = positional_encoding(n, ctx.d_model);
    ctx.embedding_difference =
        max_abs_difference(model_input(ctx.embeddings, ctx.pe), rows_of(net.encoder_embedding().data(), 0, n, ctx.d_model));
    ctx.replay_ = replay_attention(net, model::Transformer<float>::Block::EncoderSelf, 0, n, n);
    ctx.x = ctx.replay_->x;
    d_k = d_v = ctx.d_model / ctx.heads;
  } else {
    ctx.d_model = weights_ ? weights_->d_model() : opts_.d_model.value_or(kDefaultDModel);
    ctx.heads = weights_ ? weights_->weights.heads.size() : opts_.heads.value_or(kDefaultHeads);
    ctx.src = ctx.encode(ctx.text.sentence, "--sentence");
    ctx.embeddings = embed(ctx.src.tokens, ctx.d_model, ctx.seed);
    ctx.pe = positional_encoding(ctx.src.tokens.size(), ctx.d_model);
    ctx.x = model_input(ctx.embeddings, ctx.pe);
    d_k = weights_ ? core::cols(weights_->weights.heads[0].w_q) : ctx.d_model / ctx.heads;
    d_v = weights_ ? core::cols(weights_->weights.heads[0].w_v) : ctx.d_model / ctx.heads;
  }

  if (ctx.model) {
    add_model_facts(ctx.facts, "", *ctx.model);
    if (shows(doc, "causal")) {
      if (const TrainedModel* lm = language_model()) add_model_facts(ctx.facts, "lm_", *lm);
      else ctx.facts["lm_present"] = "no";  // the translation model's decoder stands in (weights_line says so)
    }
  } else {
    // The lessons' untrained model: one layer of each kind, the paper's post-norm, d_ff = 4 · d_model.
    ctx.facts = {{"model", "seeded random"}, {"encoder_layers", "1"}, {"decoder_layers", "1"},
                 {"heads", std::to_string(ctx.heads)}, {"d_model", std::to_string(ctx.d_model)},
                 {"d_k", std::to_string(d_k)}, {"d_ff", std::to_string(4 * ctx.d_model)}, {"d_ff_ratio", "4"},
                 {"norm", "post-norm"}, {"vocab_size", std::to_string(vocab().size())}, {"tokens", "words"},
                 {"tokenizer", "words"}, {"present", "yes"}};
  }

  io::OutJson settings = io::OutJson::object();
  settings["sentence"] = ctx.text.sentence;
  settings["tokens"] = ctx.src.tokens;
  settings["d_model"] = ctx.d_model;
  settings["heads"] = ctx.heads;
  settings["d_k"] = d_k;
  settings["d_v"] = d_v;
  settings["seed"] = ctx.seed;
  settings["trained"] = ctx.trained();
  settings["facts"] = ctx.facts;
  settings["ids"] = ctx.src.ids;
  if (ctx.model) {
    settings["weights"] = "trained model " + model_->label;
    settings["model"] = {{"dir", model_->label}, {"description", model_->description}};
  } else {
    settings["weights"] = weights_ ? opts_.weights_file : std::string("seeded random");
  }
  const std::string status = weights_line(doc) +
                             fmt::format("\nSentence: \"{}\" ({} tokens); d_model = {}, h = {}, d_k = {}, d_v = {}.",
                                         ctx.text.sentence, ctx.src.tokens.size(), ctx.d_model, ctx.heads, d_k, d_v);
  out.begin_lesson(doc, settings, status);
  const bool trained = ctx.trained();
  const auto shown = [&](const Block& b) { return b.shown_with(trained) && condition_holds(b, ctx.facts, doc); };
  for (const Block& b : doc.intro)
    if (b.kind == Block::Kind::Text && shown(b)) out.prose(fill_facts(b.text, ctx.facts, doc, b.line));
  for (std::size_t i = 0; i < doc.steps.size(); ++i) {
    const Step& st = doc.steps[i];
    out.begin_step(i, doc.steps.size(), st.title);
    for (const Block& b : st.blocks) {
      if (!shown(b)) continue;
      if (b.kind == Block::Kind::Text) {
        out.prose(fill_facts(b.text, ctx.facts, doc, b.line));
      } else {
        out.begin_show(b.text);
        run_show(registry.at(b.text), ctx);
        out.end_show();
      }
    }
    // Each step reaches a pipe or a file as it is done (`attnlab tour | less` printed nothing for 24 s,
    // the standard library buffering everything up to lesson 4).
    std::cout.flush();
    if (i + 1 < doc.steps.size() && pause && !pause()) {
      out.end_lesson();
      return false;
    }
  }
  // Point at the lesson's exercises: implementing the stage is where it sticks.
  if (!doc.exercises.empty()) {
    // Short lines: lesson prose is not re-wrapped to the terminal.
    std::string text = "**Your turn.** Implement this lesson's stage yourself: `attnlab check`\ngrades it and names "
                       "the classic mistake.\n";
    for (const auto& e : doc.exercises)
      text += fmt::format("\n- `attnlab check {}`: {}\n  ({}, about {} min; `attnlab hint {}` when stuck)", e.slug, e.title,
                          e.difficulty, e.minutes, e.slug);
    out.prose(text);
  }
  out.end_lesson();
  return true;
}

// ---- interaction -------------------------------------------------------------------

bool interactive(const LessonOptions& opts) {
  return opts.format == "text" && !opts.no_pause && render::stdin_and_stdout_are_terminals();
}

bool pause_for_key(bool color) {
  // The end of input (-1) stops, as q does: nobody is left to press Enter.
  const int key = render::wait_for_key("[Enter] next step   [q] quit ", color);
  return key >= 0 && key != 'q' && key != 'Q';
}

}  // namespace attnlab::lessons
