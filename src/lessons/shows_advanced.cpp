// Computations for lessons 6–9: masking, multi-head attention, cross-attention and the whole
// transformer. Attention always runs through the core (core/attention.hpp, core/mask.hpp); layer
// norm and the feed-forward net come from lessons/transformer.hpp.
#include <algorithm>
#include <cmath>
#include <array>
#include <limits>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "core/blas.hpp"
#include "core/mask.hpp"
#include "lessons/model.hpp"
#include "lessons/shows.hpp"
#include "lessons/transformer.hpp"
#include "io/problem.hpp"
#include "model/probes.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace attnlab::lessons {

static core::Matrix mask_matrix(const core::Mask& m) {
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

// A transposed weight row (keys down, one column per sentence): a [0, 1] heatmap, but its columns,
// not its rows, sum to 1, so it is not marked as a weight matrix.
MatrixItem column_weights_item(std::string key, std::string title, core::Matrix m, std::vector<std::string> rl, std::vector<std::string> cl) {
  MatrixItem it = item(std::move(key), std::move(title), std::move(m), std::move(rl), std::move(cl));
  it.heatmap = true;
  return it;
}

core::Matrix row_stats(const core::Matrix& x) {
  core::Matrix s = core::Matrix::from_shape({core::rows(x), 2});
  for (std::size_t i = 0; i < core::rows(x); ++i) {
    double mean = 0.0, var = 0.0;
    for (std::size_t j = 0; j < core::cols(x); ++j) mean += x(i, j);
    mean /= static_cast<double>(core::cols(x));
    for (std::size_t j = 0; j < core::cols(x); ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
    s(i, 0) = static_cast<float>(mean);
    s(i, 1) = static_cast<float>(var / static_cast<double>(core::cols(x)));
  }
  return s;
}

void show_next_token_table(LessonContext& c, const core::Matrix& probs, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& want) {
  const text::Vocab& vocab = c.session.vocab();
  // Columns: the words the decoder should produce (the target, then <eos>), without repeats.
  std::vector<std::string> cl;
  for (const auto& w : want)
    if (std::find(cl.begin(), cl.end(), w) == cl.end()) cl.push_back(w);
  const std::size_t n = core::rows(probs);
  core::Matrix sub = core::Matrix::from_shape({n, cl.size()});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < cl.size(); ++j) sub(i, j) = probs(i, static_cast<std::size_t>(vocab.id(cl[j])));
  std::vector<std::string> rl;
  for (std::size_t i = 0; i < n; ++i) rl.push_back("after " + inputs[i]);
  MatrixItem it = item("next_token_probabilities", fmt::format("P(next word) for the target's words, out of {} in the vocabulary", vocab.size()),
                       sub, rl, cl);
  it.precision = 4;
  c.out.matrix(it);
  c.out.line(fmt::format("A uniform guess would give every word 1/{} = {:.4f}.", vocab.size(), 1.0 / static_cast<double>(vocab.size())));
}

std::string agreement(float d) { return d <= 1e-5f ? "largest difference below 1e-5" : fmt::format("largest difference {:.2g}", d); }

namespace {

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

// ---- lesson 6 -------------------------------------------------------------------------

void show_causal(LessonContext& c) {
  const core::AttentionWeights w = c.weights("decoder.self");
  const TokenizedSentence second = c.encode(c.text.second, "second sentence");
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
  const bool pair = c.trained() && c.text.padding.size() == 2;
  const TokenizedSentence first = pair ? c.encode(c.text.padding[0], "padding sentence") : c.src;
  const TokenizedSentence second = c.encode(pair ? c.text.padding[1] : c.text.second, pair ? "padding sentence" : "second sentence");
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
  c.out.matrix(weights_item("weights", "the core's softmax_rows: all zeros, and the row is reported", w, rl, cl));
  c.out.line(fmt::format("softmax_rows reported fully masked row(s): {}", empty.empty() ? std::string("none") : std::to_string(empty[0])));
  c.out.line("");
}

// ---- lesson 7 -------------------------------------------------------------------------

void show_heads(LessonContext& c) {
  const core::AttentionTrace& t = c.self_trace();
  const auto& tk = c.src.tokens;
  const std::size_t h = t.heads.size(), d_k = core::cols(t.heads[0].q);
  // The packed view: all heads' queries side by side are X · [W_Q⁰ | W_Q¹ | …].
  std::vector<core::Matrix> qs;
  std::vector<std::string> cl;
  for (std::size_t i = 0; i < h; ++i) {
    qs.push_back(t.heads[i].q);
    for (std::size_t j = 0; j < d_k; ++j) cl.push_back(fmt::format("h{}.{}", i, j));
  }
  c.out.matrix(item("q_all", fmt::format("all queries side by side: head i owns columns [i·{}, (i+1)·{})", d_k, d_k),
                    core::merge_heads(qs), tk, cl));
  std::vector<MatrixItem> ws;
  for (std::size_t i = 0; i < h; ++i) ws.push_back(weights_item(fmt::format("weights_{}", i), fmt::format("head {}", i), t.heads[i].weights, tk, tk));
  c.out.side_by_side(ws);
}

void show_concat_output(LessonContext& c) {
  const core::AttentionTrace& t = c.self_trace();
  const core::AttentionWeights w = c.weights("encoder.self");
  const auto& tk = c.src.tokens;
  const std::size_t h = t.heads.size(), d_v = core::cols(t.heads[0].v);
  std::vector<MatrixItem> ctx;
  for (std::size_t i = 0; i < h; ++i)
    ctx.push_back(item(fmt::format("context_{}", i), fmt::format("context of head {}", i), t.heads[i].context, tk, render::numbered_labels("v", d_v)));
  c.out.side_by_side(ctx);
  std::vector<std::string> cl;
  for (std::size_t i = 0; i < h; ++i)
    for (std::size_t j = 0; j < d_v; ++j) cl.push_back(fmt::format("h{}.{}", i, j));
  c.out.matrix(item("concat", h == 1 ? std::string("concat = context_0 (one head)")
                                      : fmt::format("concat = [context_0 | {}context_{}]  (n × h·d_v)", h > 2 ? "… | " : "", h - 1),
                    t.concat, tk, cl));
  if (w.w_o) {
    c.out.matrix(item("w_o", "W_O  (h·d_v × d_model)", *w.w_o, cl, render::numbered_labels("d", core::cols(*w.w_o))));
    if (w.b_o) c.out.matrix(item("b_o", "b_O  (1 × d_model, added to every row)", *w.b_o, {"b_O"}, render::numbered_labels("d", core::cols(*w.b_o))));
    c.out.matrix(item("output", w.b_o ? "output = concat · W_O + b_O  (n × d_model)" : "output = concat · W_O  (n × d_model)", t.output,
                      tk, render::numbered_labels("d", core::cols(t.output))));
    if (c.trained()) {
      const float diff = c.encoder_replay().max_difference;
      c.out.line(fmt::format("Check: the core's output equals the model's own encoder layer 0 attention output ({}).", agreement(diff)));
      c.out.value("max_difference_from_model", diff);
      c.out.line("");
    }
  } else {
    c.out.line("The --weights file has no w_o, so the output is the concatenation itself.");
  }
}

void show_parameter_count(LessonContext& c) {
  const core::AttentionWeights w = c.weights("encoder.self");
  const std::size_t d = c.d_model;
  // Biases (a trained model has them) count once per output column: h·d_k = d_model either way.
  const bool biases = w.heads[0].b_q.has_value();
  auto count = [biases](const core::AttentionWeights& a) {
    std::array<double, 5> n{};
    for (const core::HeadWeights& hw : a.heads) {
      n[0] += static_cast<double>(hw.w_q.size());
      n[1] += static_cast<double>(hw.w_k.size());
      n[2] += static_cast<double>(hw.w_v.size());
      if (biases) n[4] += 3.0 * static_cast<double>(core::cols(hw.w_q));
    }
    n[3] = a.w_o ? static_cast<double>(a.w_o->size()) : 0.0;
    if (biases && a.w_o) n[4] += static_cast<double>(core::cols(*a.w_o));
    n[4] += n[0] + n[1] + n[2] + n[3];
    return n;
  };
  const auto many = count(w);
  const auto one = count(random_attention_weights(d, 1, c.seed, "one-wide-head"));
  if (biases) {
    c.out.line(fmt::format("The totals include the biases b_Q, b_K, b_V and b_O: d_model = {} numbers each", d));
    c.out.line("(512 in the base model), with one head or many.");
  }
  // The paper's base model: d_model = 512, h = 8, d_k = d_v = 64 (arithmetic only, no matrices).
  const double base_h = 8.0 * 512 * 64, base_o = 8.0 * 64 * 512;  // each of W_Q, W_K, W_V; W_O
  core::Matrix table = core::Matrix::from_shape({3, 5});
  for (std::size_t j = 0; j < 5; ++j) {
    table(0, j) = static_cast<float>(many[j]);
    table(1, j) = static_cast<float>(one[j]);
  }
  for (std::size_t j = 0; j < 3; ++j) table(2, j) = static_cast<float>(base_h);
  table(2, 3) = static_cast<float>(base_o);
  // The same convention as the rows above: with biases, the base row counts its 4 × 512 too.
  table(2, 4) = static_cast<float>(3 * base_h + base_o + (biases ? 4.0 * 512 : 0.0));
  const std::size_t d_k = core::cols(w.heads[0].w_q);
  MatrixItem it = item("parameters", "parameters of one attention layer",
                       table,
                       {fmt::format("{} × d_k {}", w.heads.size(), d_k), fmt::format("1 × d_k {}", d), "base 8 × 64"},
                       {"W_Q", "W_K", "W_V", "W_O", "total"});
  it.precision = 0;
  c.out.matrix(it);
  c.out.line(fmt::format("{} heads: {} parameters; one head of width d_model = {}: {} parameters{}", w.heads.size(),
                         static_cast<long long>(many[4]), d, static_cast<long long>(one[4]),
                         many[4] == one[4] ? " (the same)." : "."));
  c.out.line("");
  c.out.value("parameters_multi_head", many[4]);
  c.out.value("parameters_single_head", one[4]);
}

// ---- lesson 7: one token, two heads ------------------------------------------------------

// A worked example with one token, X = [1, 2, 3, 4], and two heads (data/examples/
// one_token_x1234_two_heads.json): its one score per head softmaxes to a weight of exactly 1, so
// each head's output is its V row, X · W_V, whatever W_Q and W_K are.
void show_one_token_heads(LessonContext& c) {
  const std::string file = "data/examples/one_token_x1234_two_heads.json";
  const io::Problem p = io::load_problem(resolve_data_path(file));
  core::AttentionTrace t;
  core::self_attention(p.x, p.weights, nullptr, &t);
  c.out.line(fmt::format("X = [1, 2, 3, 4], {} heads of width {} ({}):", t.heads.size(), core::cols(t.heads[0].v),
                         file.substr(file.rfind('/') + 1)));
  std::vector<MatrixItem> items;
  for (std::size_t h = 0; h < t.heads.size(); ++h) {
    const core::HeadTrace& ht = t.heads[h];
    c.out.line(fmt::format("  head {}: weight {:.4f} (scaled score {:.4f}); V = [{:.2f}, {:.2f}]; output [{:.2f}, {:.2f}]", h,
                           ht.weights(0, 0), ht.scaled(0, 0), ht.v(0, 0), ht.v(0, 1), ht.context(0, 0), ht.context(0, 1)));
    c.out.value(fmt::format("head_{}_weight", h), ht.weights(0, 0));
    c.out.value(fmt::format("head_{}_output", h), std::vector<float>{ht.context(0, 0), ht.context(0, 1)});
    c.out.value(fmt::format("head_{}_v", h), std::vector<float>{ht.v(0, 0), ht.v(0, 1)});
  }
  c.out.matrix(item("one_token_concat", "concat = [head 0 | head 1]", t.concat, p.tokens, render::numbered_labels("c", core::cols(t.concat))));
  c.out.line("Each head's weight is exactly 1 and its output is its V row, X · W_V. Head outputs");
  c.out.line("that are assumed, such as [0.5, 1.2] and [-0.4, 2.3], are right only if X · W_V gives them.");
  c.out.line("");
}

// ---- lesson 8 -------------------------------------------------------------------------

void show_cross_attention(LessonContext& c) {
  const TokenizedSentence& tgt = c.target();
  const auto& src = c.src.tokens;
  const auto& tt = tgt.tokens;
  const core::Matrix memory = c.x;              // the encoder side (here: its input X, see the lesson text)
  const core::Matrix y = c.input_for(tgt);      // the decoder side
  core::AttentionTrace t;
  core::cross_attention(y, memory, c.weights("decoder.cross"), nullptr, &t);
  const core::HeadTrace& h = t.heads[0];
  const std::size_t n = tt.size(), m = src.size();
  c.out.line(fmt::format("Decoder (queries): \"{}\", n = {}.  Encoder (keys, values): \"{}\", m = {}.", tgt.text, n, c.src.text, m));
  c.out.line("");
  c.out.matrix(item("q", fmt::format("Q = Y · W_Q  (from the decoder: n × d_k = {} × {})", n, core::cols(h.q)), h.q, tt, render::numbered_labels("q", core::cols(h.q))));
  c.out.side_by_side({item("k", fmt::format("K = M · W_K  ({} × {})", m, core::cols(h.k)), h.k, src, render::numbered_labels("k", core::cols(h.k))),
                      item("v", fmt::format("V = M · W_V  ({} × {})", m, core::cols(h.v)), h.v, src, render::numbered_labels("v", core::cols(h.v)))});
  c.out.matrix(item("scaled", fmt::format("Q · Kᵀ / √d_k  (n × m = {} × {})", n, m), h.scaled, tt, src));
  c.out.matrix(weights_item("weights", fmt::format("alignment: weights (n × m = {} × {}), each row sums to 1", n, m), h.weights, tt, src));
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < m; ++j)
      if (h.weights(i, j) > h.weights(i, best)) best = j;
    c.out.line(fmt::format("  {:<10} looks most at {:<10} ({:.1f} %)", tt[i], src[best], 100.0 * h.weights(i, best)));
  }
  c.out.line("");
  c.out.matrix(item("context", "context = weights · V  (one row per decoder token)", h.context, tt, render::numbered_labels("v", core::cols(h.context))));
}

// ---- lesson 9 -------------------------------------------------------------------------

// Lesson 9 adds attention outputs to their inputs, which needs them to be d_model wide.
void require_model_width(const core::AttentionWeights& w, std::size_t d_model) {
  const std::size_t out = w.w_o ? core::cols(*w.w_o) : w.heads.size() * core::cols(w.heads[0].w_v);
  if (out != d_model) {
    throw InputError(fmt::format("lesson 9 adds each attention output to its input, so it needs an output of width d_model = {}; "
                                 "the --weights file gives {} (add a \"w_o\" of shape h·d_v × d_model)",
                                 d_model, out));
  }
}


void show_residual_layernorm(LessonContext& c) {
  require_model_width(c.weights("encoder.self"), c.d_model);
  const auto& tk = c.src.tokens;
  const auto dl = render::numbered_labels("d", c.d_model);
  const core::Matrix& a = c.self_trace().output;
  const core::Matrix r = add(c.x, a);
  const core::Matrix n = layer_norm(r);
  c.out.matrix(item("attention_output", "A = MultiHead(X)  (n × d_model)", a, tk, dl));
  c.out.matrix(item("residual", "X + A  (the residual connection)", r, tk, dl));
  c.out.matrix(item("layer_norm", "LayerNorm(X + A): each row rescaled to mean 0, variance 1", n, tk, dl));
  c.out.side_by_side({item("stats_before", "rows of X + A", row_stats(r), tk, {"mean", "var"}),
                      item("stats_after", "rows after LayerNorm", row_stats(n), tk, {"mean", "var"})});
}

void show_feed_forward(LessonContext& c) {
  require_model_width(c.weights("encoder.self"), c.d_model);
  const auto& tk = c.src.tokens;
  const auto dl = render::numbered_labels("d", c.d_model);
  const core::Matrix h1 = layer_norm(add(c.x, c.self_trace().output));
  const FeedForward f = random_feed_forward(c.d_model, 4 * c.d_model, c.seed, "encoder.ffn");
  core::Matrix hidden;
  const core::Matrix y = feed_forward(h1, f, &hidden);
  c.out.line(fmt::format("FFN(x) = max(0, x·W1 + b1)·W2 + b2 with W1: {} × {}, W2: {} × {} (d_ff = 4·d_model)", c.d_model, 4 * c.d_model,
                         4 * c.d_model, c.d_model));
  c.out.line("");
  c.out.matrix(item("ffn_hidden", "hidden = max(0, H·W1 + b1)  (n × d_ff; ReLU zeroes the negatives)", hidden, tk,
                    render::numbered_labels("f", core::cols(hidden))));
  c.out.matrix(item("ffn_out", "FFN(H)  (n × d_model)", y, tk, dl));
  c.out.matrix(item("encoder_output", "LayerNorm(H + FFN(H)): the encoder layer's output", layer_norm(add(h1, y)), tk, dl));
}

struct TinyModel {
  EncoderLayer enc;
  DecoderLayer dec;
};

TinyModel tiny_model(LessonContext& c) {
  TinyModel m;
  m.enc.self = c.weights("encoder.self");
  m.enc.ffn = random_feed_forward(c.d_model, 4 * c.d_model, c.seed, "encoder.ffn");
  m.dec.self = c.weights("decoder.self");
  m.dec.cross = c.weights("decoder.cross");
  m.dec.ffn = random_feed_forward(c.d_model, 4 * c.d_model, c.seed, "decoder.ffn");
  require_model_width(m.enc.self, c.d_model);
  return m;
}

// The decoder reads "<bos> w1 … wk" and at position i predicts w(i+1) (then <eos>).
TokenizedSentence decoder_input(const TokenizedSentence& tgt, const text::Vocab& v) {
  TokenizedSentence d;
  d.text = "<bos> " + tgt.text;
  d.tokens.push_back("<bos>");
  d.ids.push_back(static_cast<std::size_t>(v.id("<bos>")));
  for (std::size_t i = 0; i < tgt.tokens.size(); ++i) {
    d.tokens.push_back(tgt.tokens[i]);
    d.ids.push_back(tgt.ids[i]);
  }
  return d;
}

void show_encoder_decoder(LessonContext& c) {
  const TinyModel model = tiny_model(c);
  const TokenizedSentence dec_in = decoder_input(c.target(), c.session.vocab());
  const auto& src = c.src.tokens;
  const auto& dt = dec_in.tokens;
  const auto dl = render::numbered_labels("d", c.d_model);
  LayerTrace et, dtr;
  const core::Matrix memory = encoder_layer(c.x, model.enc, &et);
  const core::Matrix out = decoder_layer(c.input_for(dec_in), memory, model.dec, &dtr);
  c.out.matrix(item("encoder_output", "encoder output M (one layer)", memory, src, dl));
  c.out.matrix(weights_item("decoder_self_weights", "decoder masked self-attention, head 0", dtr.self.heads[0].weights, dt, dt));
  c.out.matrix(weights_item("decoder_cross_weights", "decoder cross-attention to M, head 0 (n × m)", dtr.cross.heads[0].weights, dt, src));
  c.out.matrix(item("decoder_output", "decoder output (one layer)", out, dt, dl));
}

void show_next_token(LessonContext& c) {
  const TinyModel model = tiny_model(c);
  const text::Vocab& vocab = c.session.vocab();
  const TokenizedSentence& tgt = c.target();
  const TokenizedSentence dec_in = decoder_input(tgt, vocab);
  const core::Matrix memory = encoder_layer(c.x, model.enc);
  const core::Matrix out = decoder_layer(c.input_for(dec_in), memory, model.dec);
  // Output layer tied to the embedding table, as in the paper: logits = out · Eᵀ over the vocabulary.
  const core::Matrix table = embed(vocab.words(), c.d_model, c.seed);
  const core::Matrix probs = core::softmax_rows(core::matmul(out, table, core::Trans::No, core::Trans::Yes));
  const std::size_t n = dec_in.tokens.size();
  std::vector<std::string> want;
  for (std::size_t i = 1; i < n; ++i) want.push_back(dec_in.tokens[i]);
  want.push_back("<eos>");
  show_next_token_table(c, probs, dec_in.tokens, want);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < core::cols(probs); ++j)
      if (probs(i, j) > probs(i, best)) best = j;
    const std::string& right = want[i];
    c.out.line(fmt::format("  after {:<10} most likely: {:<10} ({:.4f}); the right word {:<10} gets {:.4f}", dec_in.tokens[i],
                           vocab.word(best), probs(i, best), right, probs(i, vocab.id(right))));
  }
  c.out.line("");
}

void show_coreference(LessonContext& c) {
  if (c.text.coreference.size() != 2) throw RuntimeError("data/sentences/lessons.json: lesson 9 needs a \"coreference\" pair");
  const core::AttentionWeights w = c.weights("encoder.self");
  std::vector<std::string> row_labels;
  std::vector<std::string> col_labels;
  std::size_t n_cols = 0;
  std::vector<core::AttentionTrace> traces;
  std::vector<TokenizedSentence> sents;
  for (const std::string& s : c.text.coreference) {
    sents.push_back(c.encode(s, "coreference sentence"));
    core::AttentionTrace t;
    core::self_attention(c.input_for(sents.back()), w, nullptr, &t);
    traces.push_back(std::move(t));
  }
  if (sents[0].tokens.size() != sents[1].tokens.size()) throw RuntimeError("the coreference pair must have the same number of tokens");
  n_cols = sents[0].tokens.size();
  for (std::size_t j = 0; j < n_cols; ++j)
    col_labels.push_back(sents[0].tokens[j] == sents[1].tokens[j] ? sents[0].tokens[j] : sents[0].tokens[j] + "/" + sents[1].tokens[j]);
  const std::size_t f = focus_index(sents[0].tokens, c.text.coreference_focus);
  for (const auto& s : sents) row_labels.push_back("…" + s.tokens[s.tokens.size() - 2]);
  const std::size_t h = traces[0].heads.size();
  // Keys as rows and the two sentences as columns: two narrow columns fit any terminal.
  core::Matrix avg = core::Matrix::from_shape({n_cols, 2});
  avg.fill(0.0f);
  std::vector<MatrixItem> per_head_items;
  for (std::size_t k = 0; k < h; ++k) {
    core::Matrix m = core::Matrix::from_shape({n_cols, 2});
    for (std::size_t s = 0; s < 2; ++s)
      for (std::size_t j = 0; j < n_cols; ++j) {
        m(j, s) = traces[s].heads[k].weights(f, j);
        avg(j, s) += m(j, s) / static_cast<float>(h);
      }
    per_head_items.push_back(column_weights_item(fmt::format("it_weights_head_{}", k), fmt::format("head {}", k), m, col_labels, row_labels));
  }
  per_head_items.push_back(column_weights_item("it_weights_mean", fmt::format("mean of {} heads", h), avg, col_labels, row_labels));
  c.out.line(fmt::format("The row of \"{}\" (position {}) in each sentence, one column per sentence:", sents[0].tokens[f], f));
  c.out.line("");
  c.out.side_by_side(per_head_items);
  for (const std::string& noun : c.text.coreference_nouns) {
    const std::size_t j = focus_index(sents[0].tokens, noun);
    if (sents[0].tokens[j] != noun) continue;
    c.out.line(fmt::format("  \"{}\" → \"{}\" (mean of the heads): {:.3f} in {}, {:.3f} in {}", sents[0].tokens[f], noun, avg(j, 0),
                           row_labels[0], avg(j, 1), row_labels[1]));
  }
  c.out.line("");
}

// Lesson 10 with random weights: the probes on the lesson sentence's random heads, for comparison.
void show_head_probes_random(LessonContext& c) {
  const core::AttentionTrace& t = c.self_trace();
  const std::size_t n = c.src.tokens.size();
  core::Matrix m = core::Matrix::from_shape({t.heads.size(), 4});
  std::vector<std::string> rows;
  for (std::size_t h = 0; h < t.heads.size(); ++h) {
    model::ProbeSums s;
    s.add_self_attention(t.heads[h].weights.data(), n, false);
    rows.push_back(fmt::format("head {}", h));
    m(h, 0) = static_cast<float>(s.mean(s.previous, s.previous_n));
    m(h, 1) = static_cast<float>(s.mean(s.self, s.self_n));
    m(h, 2) = static_cast<float>(s.mean(s.next, s.next_n));
    m(h, 3) = static_cast<float>(s.mean(s.first, s.first_n));
  }
  MatrixItem it = item("head_probes", "the probes on this sentence's random heads", m, rows, {"previous", "self", "next", "first"});
  it.precision = 2;
  c.out.matrix(it);
  c.out.line(fmt::format("With {} tokens, a head that spreads evenly puts 1/{} = {:.2f} on each key.", n, n, 1.0 / double(n)));
  c.out.line("");
}

}  // namespace

void register_advanced_shows(std::map<std::string, Show>& r) {
  r["causal"] = {show_causal, [](LessonContext& c) {
                   // Without a language model, the translation model's decoder self-attention instead.
                   if (!show_causal_trained(c)) show_causal(c);
                 }};
  r["padding"] = {show_padding, nullptr};
  r["fully-masked"] = {show_fully_masked, nullptr};
  r["heads"] = {show_heads, nullptr};
  r["concat-output"] = {show_concat_output, nullptr};
  r["parameter-count"] = {show_parameter_count, nullptr};
  r["one-token-heads"] = {show_one_token_heads, nullptr};
  // Lesson 10 measures a trained model; with random weights, the same probes on the lesson
  // sentence's random heads, for comparison.
  r["head-probes"] = {show_head_probes_random, show_head_probes_trained};
  // With random weights there are no learned heads, relations, alignments or senses to read; the
  // steps' text says so.
  r["head-relations"] = {nullptr, show_head_relations_trained};
  r["head-ablation"] = {nullptr, show_head_ablation_trained};
  r["cross-attention"] = {show_cross_attention, show_cross_attention_trained};
  r["cross-attention-heads"] = {nullptr, show_cross_attention_heads_trained};
  r["residual-layernorm"] = {show_residual_layernorm, show_residual_layernorm_trained};
  r["feed-forward"] = {show_feed_forward, show_feed_forward_trained};
  r["encoder-decoder"] = {show_encoder_decoder, show_encoder_decoder_trained};
  r["next-token"] = {show_next_token, show_next_token_trained};
  r["coreference"] = {show_coreference, show_coreference_trained};
  r["word-sense"] = {nullptr, show_word_sense_trained};
}

}  // namespace attnlab::lessons
