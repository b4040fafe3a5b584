#include "lessons/session.hpp"

#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "lessons/data_dir.hpp"
#include "lessons/model.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

// ---- context ------------------------------------------------------------------------

TokenizedSentence LessonContext::encode(const std::string& sentence, const std::string& what) {
  TokenizedSentence t = lessons::encode(sentence, session.vocab(), what);
  session.warn_unknown(t.unknown, what);
  return t;
}

Matrix LessonContext::input_for(const TokenizedSentence& s) const {
  return model_input(embed(s.tokens, d_model, seed), positional_encoding(s.tokens.size(), d_model));
}

AttentionWeights LessonContext::weights(const std::string& name) const {
  if (session.weights_problem()) return session.weights_problem()->weights;
  return random_attention_weights(d_model, heads, seed, name);
}

const AttentionTrace& LessonContext::self_trace() {
  if (!trace_) {
    trace_.emplace();
    self_attention(x, weights("encoder.self"), nullptr, &*trace_);
  }
  return *trace_;
}

const TokenizedSentence& LessonContext::target() {
  if (!target_) target_ = encode(text.target, "--target");
  return *target_;
}

// ---- session ------------------------------------------------------------------------

namespace {

LessonSentences read_sentences(const nlohmann::json& j, LessonSentences base) {
  auto str = [&](const char* key, std::string& into) {
    if (j.contains(key)) into = j.at(key).get<std::string>();
  };
  str("sentence", base.sentence);
  str("target", base.target);
  str("focus", base.focus);
  str("second", base.second);
  str("coreference_focus", base.coreference_focus);
  if (j.contains("coreference")) base.coreference = j.at("coreference").get<std::vector<std::string>>();
  return base;
}

}  // namespace

Session::Session(const LessonOptions& opts, bool tour) : opts_(opts), tour_(tour) {
  root_ = data_root();
  lessons_ = load_lessons(root_);
  if (lessons_.empty()) throw RuntimeError("no lessons found under " + (root_ / "lessons").string());
  vocab_ = Vocabulary::load(root_ / "data" / "vocab.txt");

  const auto file = root_ / "data" / "sentences" / "lessons.json";
  try {
    const nlohmann::json j = nlohmann::json::parse(read_text_file(file.string(), 1u << 20));
    const LessonSentences base = read_sentences(j.at("default"), {});
    defaults_["default"] = base;
    defaults_["tour"] = read_sentences(j.at("tour"), base);
    for (const auto& [k, v] : j.at("lessons").items()) defaults_[k] = read_sentences(v, base);
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(file.string() + ": " + e.what());
  }

  if (!opts_.weights_file.empty()) {
    weights_ = load_problem(opts_.weights_file);
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
  const std::size_t d = weights_ ? weights_->d_model() : opts_.d_model.value_or(kDefaultDModel);
  const std::size_t h = weights_ ? weights_->weights.heads.size() : opts_.heads.value_or(kDefaultHeads);
  if (d < 2 || d > kMaxDModel) throw InputError(fmt::format("--d-model {} is out of range; use 2 to {}", d, kMaxDModel));
  if (h < 1 || h > kMaxHeads) throw InputError(fmt::format("--heads {} is out of range; use 1 to {}", h, kMaxHeads));
  if (!weights_ && d % h != 0) {
    throw InputError(fmt::format("--heads {} does not divide --d-model {}: each head gets d_model / h columns, "
                                 "so choose h among the divisors of {}",
                                 h, d, d));
  }
  if (opts_.sentence) encode(*opts_.sentence, vocab_, "--sentence");  // fail early, before any output
  if (opts_.target) encode(*opts_.target, vocab_, "--target");
}

LessonSentences Session::sentences_for(int number) const {
  LessonSentences s = defaults_.at("default");
  if (auto it = defaults_.find(std::to_string(number)); it != defaults_.end()) s = it->second;
  if (tour_) {
    const LessonSentences& t = defaults_.at("tour");
    s.sentence = t.sentence;
    s.target = t.target;
    s.focus = t.focus;
  }
  if (opts_.sentence) s.sentence = *opts_.sentence;
  if (opts_.target) s.target = *opts_.target;
  return s;
}

void Session::warn_unknown(const std::vector<std::string>& words, const std::string& what) {
  std::string fresh;
  for (const std::string& w : words)
    if (warned_.insert(w).second) fresh += (fresh.empty() ? "" : ", ") + ("\"" + w + "\"");
  if (!fresh.empty()) {
    std::cout.flush();
    std::fprintf(stderr, "attnlab: warning: %s: not in the vocabulary (data/vocab.txt), read as <unk>: %s\n",
                 what.c_str(), fresh.c_str());
  }
}

bool Session::run(const LessonDoc& doc, Output& out, const std::function<bool()>& pause) {
  const auto& registry = show_registry();
  for (const Step& st : doc.steps)
    for (const Block& b : st.blocks)
      if (b.kind == Block::Kind::Show && !registry.count(b.text)) {
        throw RuntimeError(doc.file.string() + ":" + std::to_string(b.line) + ": unknown computation '" + b.text + "'");
      }

  LessonContext ctx{*this, doc, out};
  ctx.d_model = weights_ ? weights_->d_model() : opts_.d_model.value_or(kDefaultDModel);
  ctx.heads = weights_ ? weights_->weights.heads.size() : opts_.heads.value_or(kDefaultHeads);
  ctx.seed = opts_.seed;
  ctx.text = sentences_for(doc.number);
  ctx.src = ctx.encode(ctx.text.sentence, "--sentence");
  ctx.embeddings = embed(ctx.src.tokens, ctx.d_model, ctx.seed);
  ctx.pe = positional_encoding(ctx.src.tokens.size(), ctx.d_model);
  ctx.x = model_input(ctx.embeddings, ctx.pe);

  const std::size_t d_k = weights_ ? cols(weights_->weights.heads[0].w_q) : ctx.d_model / ctx.heads;
  const std::size_t d_v = weights_ ? cols(weights_->weights.heads[0].w_v) : ctx.d_model / ctx.heads;
  OutJson settings = OutJson::object();
  settings["sentence"] = ctx.text.sentence;
  settings["tokens"] = ctx.src.tokens;
  settings["d_model"] = ctx.d_model;
  settings["heads"] = ctx.heads;
  settings["d_k"] = d_k;
  settings["d_v"] = d_v;
  settings["seed"] = ctx.seed;
  settings["weights"] = weights_ ? opts_.weights_file : std::string("seeded random");
  const std::string status =
      (weights_ ? fmt::format("Weights: W_Q, W_K, W_V{} from {}; embeddings and the other layers seeded random (--seed {}).",
                              weights_->weights.w_o ? ", W_O" : "", opts_.weights_file, ctx.seed)
                : fmt::format("Weights: seeded random (--seed {}), no trained model yet, so the patterns are not learned.",
                              ctx.seed)) +
      fmt::format("\nSentence: \"{}\" ({} tokens); d_model = {}, h = {}, d_k = {}, d_v = {}.", ctx.text.sentence,
                  ctx.src.tokens.size(), ctx.d_model, ctx.heads, d_k, d_v);
  out.begin_lesson(doc, settings, status);
  for (const Block& b : doc.intro)
    if (b.kind == Block::Kind::Text) out.prose(b.text);
  for (std::size_t i = 0; i < doc.steps.size(); ++i) {
    const Step& st = doc.steps[i];
    out.begin_step(i, doc.steps.size(), st.title);
    for (const Block& b : st.blocks) {
      if (b.kind == Block::Kind::Text) {
        out.prose(b.text);
      } else {
        out.begin_show(b.text);
        registry.at(b.text)(ctx);
        out.end_show();
      }
    }
    if (i + 1 < doc.steps.size() && pause && !pause()) {
      out.end_lesson();
      return false;
    }
  }
  out.end_lesson();
  return true;
}

// ---- interaction -------------------------------------------------------------------

bool interactive(const LessonOptions& opts) {
  return opts.format == "text" && !opts.no_pause && ::isatty(STDIN_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1;
}

bool pause_for_key(bool color) {
  const char* prompt = "[Enter] next step   [q] quit ";
  if (color) std::cout << "\x1b[7m" << prompt << "\x1b[0m";
  else std::cout << prompt;
  std::cout.flush();

  termios old{};
  const bool raw = ::tcgetattr(STDIN_FILENO, &old) == 0;
  if (raw) {
    termios t = old;
    t.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    ::tcsetattr(STDIN_FILENO, TCSANOW, &t);
  }
  char c = 0;
  ssize_t got = 0;
  do {
    got = ::read(STDIN_FILENO, &c, 1);
  } while (got < 0 && errno == EINTR);
  if (raw) ::tcsetattr(STDIN_FILENO, TCSANOW, &old);

  if (color) std::cout << "\r\x1b[2K";
  else std::cout << '\n';
  std::cout << '\n';
  std::cout.flush();
  return got == 1 && c != 'q' && c != 'Q';
}

}  // namespace attnlab::lessons
