// Lesson 6, masking: the causal mask (with a trained language model: its own causal
// self-attention, replayed through the core), padding masks in a batch, and a fully masked row.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "core/mask.hpp"
#include "lessons/shows.hpp"
#include "lessons/trained.hpp"

namespace attnlab::lessons {

namespace {

core::Matrix mask_matrix(const core::Mask& m) {
  core::Matrix out = core::Matrix::from_shape({core::rows(m), core::cols(m)});
  for (std::size_t i = 0; i < core::rows(m); ++i)
    for (std::size_t j = 0; j < core::cols(m); ++j) out(i, j) = m(i, j);
  return out;
}

MatrixItem mask_item(std::string key, std::string title, const core::Mask& m, std::vector<std::string> rl, std::vector<std::string> cl) {
  MatrixItem it = item(std::move(key), std::move(title), mask_matrix(m), std::move(rl), std::move(cl));
  it.precision = 0;
  return it;
}

// Head 0 of `w` on input x with an optional mask, through the core.
core::HeadTrace head0(const core::Matrix& x, const core::AttentionWeights& w, const core::Mask* mask) {
  core::HeadTrace t;
  const core::HeadWeights& h = w.heads[0];
  auto b = [](const std::optional<core::Matrix>& m) { return m ? &*m : nullptr; };
  core::scaled_dot_product_attention(core::project(x, h.w_q, b(h.b_q)), core::project(x, h.w_k, b(h.b_k)), core::project(x, h.w_v, b(h.b_v)), mask, &t);
  return t;
}

std::string join_tokens(const std::vector<std::size_t>& rows_, const std::vector<std::string>& tokens) {
  std::string s;
  for (std::size_t i : rows_) s += (s.empty() ? "" : ", ") + fmt::format("{} ({})", i, tokens[i]);
  return s;
}

void show_causal(LessonContext& c) {
  const core::AttentionWeights w = c.weights("decoder.self");
  const TokenizedSentence second = c.encode(c.text.word("second"), "second sentence");
  bool first = true;
  for (const TokenizedSentence* s : std::vector<const TokenizedSentence*>{&c.src, &second}) {
    const auto& tk = s->tokens;
    const core::Mask mask = core::causal_mask(tk.size());
    const core::HeadTrace t = head0(c.input_for(*s), w, &mask);
    c.out.line(fmt::format("\"{}\"", s->text));
    c.out.line("");
    if (first) {
      c.out.matrix(mask_item("causal_mask", "causal mask (1 = may attend: key j ≤ query i)", mask, tk, tk));
      MatrixItem m = item("masked", "masked = scaled scores with −inf above the diagonal", t.masked, tk, tk);
      m.masked = true;
      c.out.matrix(m);
    }
    c.out.matrix(weights_item(first ? "weights" : "weights_second", "weights under the causal mask", t.weights, tk, tk));
    first = false;
  }
}

void show_padding(LessonContext& c) {
  const core::AttentionWeights w = c.weights("encoder.self");
  // With a trained model the batch is the lesson's padding pair (words the model knows).
  const bool pair = c.trained() && c.text.list("padding").size() == 2;
  const TokenizedSentence first = pair ? c.encode(c.text.list("padding")[0], "padding sentence") : c.src;
  const TokenizedSentence second = c.encode(pair ? c.text.list("padding")[1] : c.text.word("second"), pair ? "padding sentence" : "second sentence");
  const std::vector<const TokenizedSentence*> batch{&first, &second};
  std::size_t T = 0;
  std::vector<std::size_t> lengths;
  for (const auto* s : batch) {
    lengths.push_back(s->tokens.size());
    T = std::max(T, s->tokens.size());
  }
  const std::vector<core::Mask> masks = core::padding_masks(lengths, T);
  c.out.line(fmt::format("A batch of {} sentences of lengths {} and {}, padded to T = {} with <pad>.", batch.size(), lengths[0],
                         lengths[1], T));
  c.out.line("");
  c.out.value("lengths", lengths);
  for (std::size_t b = 0; b < batch.size(); ++b) {
    TokenizedSentence padded = *batch[b];
    while (padded.tokens.size() < T) {
      padded.tokens.push_back("<pad>");
      padded.ids.push_back(static_cast<std::size_t>(text::Vocab::kPad));
    }
    const auto& tk = padded.tokens;
    const core::HeadTrace t = head0(c.input_for(padded), w, &masks[b]);
    c.out.side_by_side({mask_item(fmt::format("padding_mask_{}", b), fmt::format("sentence {}: padding mask", b), masks[b], tk, tk),
                        weights_item(fmt::format("weights_{}", b), fmt::format("sentence {}: weights", b), t.weights, tk, tk)});
    if (!t.fully_masked_rows.empty()) {
      c.out.line(fmt::format("Fully masked rows (padding queries): {}. Their weights are all 0, not NaN, and their context is 0.",
                             join_tokens(t.fully_masked_rows, tk)));
      c.out.value(fmt::format("fully_masked_rows_{}", b), t.fully_masked_rows);
      c.out.line("");
    }
  }
}

void show_fully_masked(LessonContext& c) {
  const float ninf = -std::numeric_limits<float>::infinity();
  core::Matrix row = core::Matrix::from_shape({1, 4});
  for (std::size_t j = 0; j < 4; ++j) row(0, j) = ninf;
  core::Matrix naive = core::Matrix::from_shape({1, 4});
  float sum = 0.0f;
  for (std::size_t j = 0; j < 4; ++j) sum += std::exp(row(0, j));          // 0
  for (std::size_t j = 0; j < 4; ++j) naive(0, j) = std::exp(row(0, j)) / sum;  // 0 / 0 = NaN
  std::vector<std::size_t> empty;
  const core::Matrix w = core::softmax_rows(row, &empty);
  const std::vector<std::string> rl{"row"}, cl = render::numbered_labels("k", 4);
  MatrixItem r = item("masked_row", "a fully masked row of scores", row, rl, cl);
  r.masked = true;
  c.out.matrix(r);
  MatrixItem n = item("naive_weights", "naive: exp(−inf) / Σ exp(−inf) = 0 / 0", naive, rl, cl);
  n.broken_demo = true;
  c.out.matrix(n);
  c.out.matrix(weights_item("weights", "attnlab's softmax: all zeros, and the row is reported", w, rl, cl));
  c.out.line(fmt::format("The softmax reported the fully masked row(s): {}", empty.empty() ? std::string("none") : std::to_string(empty[0])));
  c.out.line("");
}

bool show_causal_trained(LessonContext& c) {
  const TrainedModel* lm = c.session.language_model();
  if (!lm) return false;
  std::vector<std::string> sentences = c.text.list("causal").size() == 2 ? c.text.list("causal") : std::vector<std::string>{c.text.sentence, c.text.word("second")};
  // The learner's own sentence, as given, alone.
  if (c.session.options().sentence) sentences = {*c.session.options().sentence};
  bool first = true;
  for (const std::string& text : sentences) {
    TokenizedSentence s = encode(text, lm->vocab(), "causal sentence");
    c.session.warn_unknown(s.unknown, "causal sentence", "the vocabulary of " + lm->label);
    // The language model reads <bos> + the sentence; the attention input of layer 0 is LN1 of the
    // embeddings (pre-norm), which is what attention_view's query input holds.
    const std::vector<int> ids = with_bos(s.int_ids());
    forward_one(lm->net(), {}, ids);
    const std::size_t n = ids.size();
    const Replay r = replay_attention(lm->net(), ModelBlock::DecoderSelf, 0, n, n);
    const core::HeadTrace& t = r.trace.heads[0];
    const std::vector<std::string> tk = prefixed("<bos>", s.tokens);
    c.out.line(fmt::format("\"{}\" as the language model reads it: <bos> {}", s.text, joined(s.tokens)));
    c.out.line("");
    if (first) {
      const core::Mask mask = core::causal_mask(n);
      c.out.matrix(mask_item("causal_mask", "causal mask (1 = may attend: key j ≤ query i)", mask, tk, tk));
      MatrixItem m = item("masked", "masked = scaled scores (layer 0, head 0) with −inf above the diagonal", t.masked, tk, tk);
      m.masked = true;
      c.out.matrix(m);
    }
    c.out.matrix(weights_item(first ? "weights" : "weights_second", "weights under the causal mask (layer 0, head 0)", t.weights, tk, tk));
    std::vector<MatrixItem> heads;
    for (std::size_t h = 1; h < r.trace.heads.size(); ++h)
      heads.push_back(weights_item(fmt::format("{}weights_head_{}", first ? "" : "second_", h), fmt::format("head {}", h),
                                   r.trace.heads[h].weights, tk, tk));
    c.out.side_by_side(heads);
    c.out.line(fmt::format("Check: recomputing this attention step by step, as the lessons do, from the model's weights gives the model's own layer 0 self-attention ({}).", agreement(r.max_difference)));
    c.out.value(first ? "max_difference_from_model" : "max_difference_from_model_second", r.max_difference);
    c.out.line("");
    first = false;
  }
  return true;
}

}  // namespace

void register_lesson_6(ShowMap& r) {
  r["causal"] = {show_causal, [](LessonContext& c) {
                   // Without a language model, the translation model's decoder self-attention instead.
                   if (!show_causal_trained(c)) show_causal(c);
                 }};
  r["padding"] = {show_padding, nullptr};
  r["fully-masked"] = {show_fully_masked, nullptr};
}

}  // namespace attnlab::lessons
