// Lesson 1, words to vectors: why attention (path lengths), tokens, embeddings, the sinusoidal
// positional encoding and its frequencies, and the model input X = E·√d_model + PE (with a trained
// model: its own embedding rows, checked against the input its first layer reads).
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "lessons/model.hpp"
#include "lessons/shows.hpp"
#include "text/vocab.hpp"

namespace attnlab::lessons {

namespace {

MatrixItem signed_heat_item(std::string key, std::string title, core::Matrix m, std::vector<std::string> row_labels,
                            std::vector<std::string> col_labels) {
  float a = 0.0f;
  for (float v : m) a = std::max(a, std::fabs(v));
  MatrixItem it = item(std::move(key), std::move(title), std::move(m), std::move(row_labels), std::move(col_labels));
  it.heatmap = true;
  it.lo = -std::max(a, 1e-6f);
  it.hi = std::max(a, 1e-6f);
  return it;
}

// Why attention: how many steps separate two tokens in a recurrent network (information passes from
// one position to the next, one step at a time) and in self-attention (every token reads every other
// one directly). The paper's Table 1: maximum path length O(n) against O(1).
void show_why_attention(LessonContext& c) {
  const std::size_t n = c.src.tokens.size();
  core::Matrix rnn = core::Matrix::from_shape({n, n}), att = core::Matrix::from_shape({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      rnn(i, j) = static_cast<float>(i > j ? i - j : j - i);
      att(i, j) = i == j ? 0.0f : 1.0f;
    }
  MatrixItem r = item("rnn_path_length", "recurrent network: steps from token j (column) to token i (row)", rnn,
                      c.src.tokens, c.src.tokens);
  r.precision = 0;
  MatrixItem a = item("attention_path_length", "self-attention: steps from token j to token i", att,
                      c.src.tokens, c.src.tokens);
  a.precision = 0;
  c.out.matrix(r);
  c.out.matrix(a);
  c.out.line(fmt::format("From \"{}\" to \"{}\": {} steps in sequence through a recurrent network, 1 through self-attention.",
                         c.src.tokens.front(), c.src.tokens.back(), n - 1));
  c.out.line(fmt::format("A layer of self-attention computes all {} × {} = {} token pairs at once;", n, n, n * n));
  c.out.line("a recurrent layer must wait for position i − 1 before it can compute position i.");
  c.out.value("rnn_longest_path", n - 1);
  c.out.value("attention_longest_path", n > 1 ? 1 : 0);
  c.out.line("");
}

void show_tokens(LessonContext& c) {
  c.out.line(fmt::format("\"{}\" → {} tokens:", c.src.text, c.src.tokens.size()));
  for (std::size_t i = 0; i < c.src.tokens.size(); ++i)
    c.out.line(fmt::format("  position {:>2}   {:<12} vocabulary id {}", i, c.src.tokens[i], c.src.ids[i]));
  if (!c.src.unknown.empty()) {
    std::string words;
    for (const auto& w : c.src.unknown) words += (words.empty() ? "" : ", ") + w;
    c.out.line("  (<unk> stands for words outside the vocabulary: " + words + ")");
  }
  const text::Vocab& vocab = c.session.vocab();
  if (vocab.bpe()) {
    c.out.line(fmt::format("Vocabulary: {} byte-level BPE pieces ({}).", vocab.size(), c.session.vocab_name()));
    // A word the corpus never had, to show what the pieces are for.
    const std::string rare = c.text.word("rare_word").empty() ? std::string("unbelievable") : c.text.word("rare_word");
    const std::vector<std::string> pieces = vocab.labels_of(vocab.encode(rare));
    c.out.line(fmt::format("A rare word is split, never <unk> (## continues a word): {} → {}", rare, joined(pieces)));
    c.out.value("rare_word_pieces", pieces);
  } else {
    c.out.line(fmt::format("Vocabulary: {} words ({}).", vocab.size(), c.session.vocab_name()));
  }
  c.out.value("tokens", c.src.tokens);
  c.out.value("ids", c.src.ids);
  c.out.value("unknown", c.src.unknown);
  c.out.value("vocabulary_size", vocab.size());
  c.out.value("tokenizer", vocab.bpe() ? "byte-level BPE" : "words");
  c.out.line("");
}

void show_embeddings(LessonContext& c) {
  const auto dl = render::numbered_labels("d", c.d_model);
  c.out.matrix(item("embeddings",
                    c.trained() ? "E: each token's row of the model's learned embedding table (tok_emb)"
                                : "E: each token's row of the embedding table",
                    c.embeddings, c.src.tokens, dl));
  core::Matrix scaled = c.embeddings * std::sqrt(static_cast<float>(c.d_model));
  c.out.matrix(item("scaled_embeddings", fmt::format("E · √d_model  (√{} = {:.3f})", c.d_model, std::sqrt(double(c.d_model))),
                    scaled, c.src.tokens, dl));
}

void show_positional_encoding(LessonContext& c) {
  std::vector<std::string> pos;
  for (std::size_t i = 0; i < c.src.tokens.size(); ++i) pos.push_back(fmt::format("{} {}", i, c.src.tokens[i]));
  c.out.matrix(signed_heat_item("pe", "PE: sin on even columns, cos on odd columns", c.pe, pos,
                                render::numbered_labels("d", c.d_model)));
  if (c.src.tokens.size() > 1) {
    const double d = static_cast<double>(c.d_model);
    c.out.line(fmt::format("Check: PE(1, 0) = sin(1 / 10000^(0/{})) = sin(1) = {:.3f}, PE(1, 1) = cos(1) = {:.3f}, "
                           "PE(1, 2) = sin(1 / 10000^(2/{})) = {:.3f}",
                           c.d_model, c.pe(1, 0), c.pe(1, 1), c.d_model,
                           c.d_model > 2 ? c.pe(1, 2) : static_cast<float>(std::sin(1.0 / std::pow(10000.0, 2.0 / d)))));
    c.out.line("");
  }
}

void show_pe_frequencies(LessonContext& c) {
  const std::size_t pairs = (c.d_model + 1) / 2;
  core::Matrix f = core::Matrix::from_shape({pairs, 2});
  std::vector<std::string> rl;
  for (std::size_t i = 0; i < pairs; ++i) {
    const double denom = std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(c.d_model));
    f(i, 0) = static_cast<float>(1.0 / denom);
    f(i, 1) = static_cast<float>(2.0 * std::numbers::pi * denom);
    rl.push_back(fmt::format("cols {},{}", 2 * i, 2 * i + 1));
  }
  MatrixItem it = item("pe_frequencies", "each (sin, cos) pair turns at its own rate", f, rl, {"rate", "wavelength"});
  it.precision = 4;
  c.out.matrix(it);
}

void show_model_input(LessonContext& c) {
  c.out.matrix(signed_heat_item("x", "X = E · √d_model + PE  (the input to attention)", model_input(c.embeddings, c.pe),
                                c.src.tokens, render::numbered_labels("d", c.d_model)));
}

// The trained form adds the check that X is the model's own encoder input.
void show_model_input_trained(LessonContext& c) {
  show_model_input(c);
  c.out.line(fmt::format("Check: this is the model's own encoder input (largest difference {}).",
                         c.embedding_difference <= 1e-5f ? "below 1e-5" : fmt::format("{:.2g}", c.embedding_difference)));
  c.out.value("max_difference_from_model", c.embedding_difference);
  c.out.line("");
}

}  // namespace

void register_lesson_1(ShowMap& r) {
  r["why-attention"] = {show_why_attention, nullptr};
  r["tokens"] = {show_tokens, nullptr};
  r["embeddings"] = {show_embeddings, nullptr};
  r["positional-encoding"] = {show_positional_encoding, nullptr};
  r["pe-frequencies"] = {show_pe_frequencies, nullptr};
  r["model-input"] = {show_model_input, show_model_input_trained};
}

}  // namespace attnlab::lessons
