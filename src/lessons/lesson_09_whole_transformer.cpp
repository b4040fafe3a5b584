// Lesson 9, the whole transformer: residual and layer norm, the feed-forward net, an encoder and a
// decoder layer, next-token probabilities, and what context decides: the coreference pair (il/elle)
// and a word's sense. With a trained model, every number is the model's own, and what is shown as a
// computation is recomputed and checked against it.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "core/blas.hpp"
#include "lessons/model.hpp"
#include "lessons/shows.hpp"
#include "lessons/trained.hpp"
#include "lessons/transformer.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

namespace {

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

// The columns of a next-token table: the tokens the decoder should produce (the target, then
// <eos>), without repeats, by id, so a BPE piece (" garçon", with its leading space) is the piece the
// model scores, not a word spelled like its label.
void show_next_token_table(LessonContext& c, const core::Matrix& probs, const std::vector<std::string>& inputs,
                           const std::vector<std::size_t>& want_ids) {
  const text::Vocab& vocab = c.session.vocab();
  std::vector<std::size_t> ids;
  for (std::size_t id : want_ids)
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  std::vector<std::string> cl;
  for (std::size_t id : ids) cl.push_back(vocab.labels_of({static_cast<text::TokenId>(id)}).front());
  const std::size_t n = core::rows(probs);
  core::Matrix sub = core::Matrix::from_shape({n, ids.size()});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < ids.size(); ++j) sub(i, j) = probs(i, ids[j]);
  std::vector<std::string> rl;
  for (std::size_t i = 0; i < n; ++i) rl.push_back("after " + inputs[i]);
  MatrixItem it = item("next_token_probabilities", fmt::format("P(next token) for the target's tokens, of {} in the vocabulary", vocab.size()),
                       sub, rl, cl);
  it.precision = 4;
  c.out.matrix(it);
  c.out.line(fmt::format("A uniform guess would give every token 1/{} = {:.4f}.", vocab.size(), 1.0 / static_cast<double>(vocab.size())));
}

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
  std::vector<std::size_t> want(dec_in.ids.begin() + 1, dec_in.ids.end());
  want.push_back(static_cast<std::size_t>(text::Vocab::kEos));
  show_next_token_table(c, probs, dec_in.tokens, want);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t best = argmax_row(probs, i);
    c.out.line(fmt::format("  after {:<9} most likely {:<9} ({:.4f}); right one: {} ({:.4f})", dec_in.tokens[i],
                           vocab.word(static_cast<text::TokenId>(best)), probs(i, best), vocab.word(static_cast<text::TokenId>(want[i])),
                           probs(i, want[i])));
  }
  c.out.line("");
}

void show_coreference(LessonContext& c) {
  if (c.text.list("coreference").size() != 2) throw RuntimeError("data/sentences/lessons.json: lesson 9 needs a \"coreference\" pair");
  const core::AttentionWeights w = c.weights("encoder.self");
  std::vector<std::string> row_labels;
  std::vector<std::string> col_labels;
  std::size_t n_cols = 0;
  std::vector<core::AttentionTrace> traces;
  std::vector<TokenizedSentence> sents;
  for (const std::string& s : c.text.list("coreference")) {
    sents.push_back(c.encode(s, "coreference sentence"));
    core::AttentionTrace t;
    core::self_attention(c.input_for(sents.back()), w, nullptr, &t);
    traces.push_back(std::move(t));
  }
  if (sents[0].tokens.size() != sents[1].tokens.size()) throw RuntimeError("the coreference pair must have the same number of tokens");
  n_cols = sents[0].tokens.size();
  for (std::size_t j = 0; j < n_cols; ++j)
    col_labels.push_back(sents[0].tokens[j] == sents[1].tokens[j] ? sents[0].tokens[j] : sents[0].tokens[j] + "/" + sents[1].tokens[j]);
  const std::size_t f = focus_index(sents[0].tokens, c.text.word("coreference_focus"));
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
  for (const std::string& noun : c.text.list("coreference_nouns")) {
    const std::size_t j = focus_index(sents[0].tokens, noun);
    if (sents[0].tokens[j] != noun) continue;
    c.out.line(fmt::format("  \"{}\" → \"{}\" (mean of the heads): {:.3f} in {}, {:.3f} in {}", sents[0].tokens[f], noun, avg(j, 0),
                           row_labels[0], avg(j, 1), row_labels[1]));
  }
  c.out.line("");
}

void show_word_sense_trained(LessonContext& c) {
  const std::vector<std::string>& texts = c.text.list("word_sense");
  if (texts.size() < 2) throw RuntimeError("data/sentences/lessons.json: lesson 9 needs a \"word_sense\" list of at least two sentences");
  model::Transformer<float>& net = c.model->net();
  const text::Vocab& vocab = c.model->vocab();
  const auto& cfg = net.config();
  const std::size_t C = static_cast<std::size_t>(cfg.d_model), H = static_cast<std::size_t>(cfg.heads);
  const std::string& word = c.text.word("word_sense_focus");
  // For each sentence: the ambiguous word's row at the encoder input (word + position) and at its
  // output, the translation, and the word's attention row in encoder layer 0 (mean of the heads).
  std::vector<std::vector<float>> in_rows, out_rows;
  std::vector<std::string> labels;
  for (std::size_t s = 0; s < texts.size(); ++s) {
    const TokenizedSentence t = c.encode(texts[s], "word-sense sentence");
    const std::size_t f = focus_index(t.tokens, word);
    if (t.tokens[f] != word) throw RuntimeError("word-sense sentence \"" + texts[s] + "\" does not contain \"" + word + "\"");
    const std::vector<int> src = t.int_ids();
    const std::size_t m = src.size();
    const std::vector<int> own = own_translation(net, src);
    forward_one(net, src, with_bos(own), with_eos(own));
    const std::vector<float> emb = net.encoder_embedding(), mem = net.memory();
    in_rows.emplace_back(emb.begin() + static_cast<std::ptrdiff_t>(f * C), emb.begin() + static_cast<std::ptrdiff_t>((f + 1) * C));
    out_rows.emplace_back(mem.begin() + static_cast<std::ptrdiff_t>(f * C), mem.begin() + static_cast<std::ptrdiff_t>((f + 1) * C));
    const std::vector<float>& att = net.encoder_attention(cfg.encoder_layers - 1);
    core::Matrix row = core::Matrix::from_shape({1, m});
    row.fill(0.0f);
    for (std::size_t k = 0; k < H; ++k)
      for (std::size_t j = 0; j < m; ++j) row(0, j) += att[(k * m + f) * m + j] / static_cast<float>(H);
    const std::string translation = vocab.decode(own);
    c.out.line(fmt::format("{}. \"{}\" → \"{}\"", s + 1, t.text, translation));
    MatrixItem it = weights_item(fmt::format("word_sense_row_{}", s),
                                 fmt::format("what \"{}\" attends to in the last encoder layer (mean of the heads)", word), row,
                                 {word}, t.tokens);
    it.focus_cols = {word};
    c.out.matrix(it);
    c.out.value(fmt::format("translation_{}", s), translation);
    labels.push_back(fmt::format("{} {}", s + 1, s < c.text.list("word_sense_labels").size() ? c.text.list("word_sense_labels")[s] : word));
  }
  auto cosine = [](const std::vector<float>& a, const std::vector<float>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
    return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
  };
  const std::size_t n = texts.size();
  core::Matrix before = core::Matrix::from_shape({n, n}), after = core::Matrix::from_shape({n, n});
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      before(a, b) = static_cast<float>(cosine(in_rows[a], in_rows[b]));
      after(a, b) = static_cast<float>(cosine(out_rows[a], out_rows[b]));
    }
  MatrixItem bi = item("word_sense_similarity_input", fmt::format("cosine similarity of \"{}\" at the encoder input (word + position)", word),
                       before, labels, labels);
  bi.precision = 3;
  MatrixItem ai = item("word_sense_similarity_output", fmt::format("… and at the encoder output, after {} layers of attention", cfg.encoder_layers),
                       after, labels, labels);
  ai.precision = 3;
  c.out.matrix(bi);
  c.out.matrix(ai);
  // Pairs of the same sense (by the labels in lessons.json) against pairs of different senses.
  const auto& senses = c.text.list("word_sense_labels");
  if (senses.size() == n) {
    double in_same = 0, out_same = 0, in_diff = 0, out_diff = 0;
    int same = 0, diff = 0;
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b) {
        if (senses[a] == senses[b]) in_same += before(a, b), out_same += after(a, b), ++same;
        else in_diff += before(a, b), out_diff += after(a, b), ++diff;
      }
    if (same && diff) {
      in_same /= same, out_same /= same, in_diff /= diff, out_diff /= diff;
      c.out.line(fmt::format("Mean similarity, same sense: {:.3f} at the input, {:.3f} at the output ({} pairs).", in_same, out_same, same));
      c.out.line(fmt::format("Different senses: {:.3f} at the input, {:.3f} at the output ({} pairs).", in_diff, out_diff, diff));
      c.out.line(fmt::format("Context moved the different senses {:.3f} apart, the same senses {:.3f}.", in_diff - out_diff, in_same - out_same));
      c.out.value("similarity_same_sense", std::vector<double>{in_same, out_same});
      c.out.value("similarity_different_sense", std::vector<double>{in_diff, out_diff});
    }
  }
  c.out.line("");
}

// Encoder layer 0 of the trained model recomputed by the lesson from the replayed attention.
//   post-norm (the paper): H = LN1(X + A(X)),        out = LN2(H + FFN(H))
//   pre-norm:              H = X + A(LN1(X)),        out = H + FFN(LN2(H))
// `normalized` is the row normalisation (no γ, β) of the sum the first LayerNorm reads: X + A for
// post-norm, X for pre-norm; `ffn_in` is what the feed-forward net reads.
struct EncoderLayer0 {
  core::Matrix x, a, residual, ln_input, normalized, after_attn, ffn_in, hidden, ffn, output;
  NormParams ln1, ln2;
  bool pre = false;
};

EncoderLayer0 encoder_layer0(LessonContext& c) {
  const TrainedModel& tm = *c.model;
  const auto& lay = tm.net().layout().enc.at(0);
  const float eps = tm.net().config().ln_eps;
  EncoderLayer0 e;
  e.pre = tm.net().config().pre_norm;
  e.ln1 = norm_of(tm.net(), lay.ln1);
  e.ln2 = norm_of(tm.net(), lay.ln2);
  e.x = model_input(c.embeddings, c.pe);
  e.a = c.encoder_replay().trace.output;
  e.residual = add(e.x, e.a);
  e.ln_input = e.pre ? e.x : e.residual;
  e.normalized = layer_norm(e.ln_input, eps);
  e.after_attn = e.pre ? e.residual : layer_norm(e.residual, eps, &e.ln1.gain, &e.ln1.bias);
  e.ffn_in = e.pre ? layer_norm(e.after_attn, eps, &e.ln2.gain, &e.ln2.bias) : e.after_attn;
  e.ffn = feed_forward(e.ffn_in, feed_forward_of(tm.net(), lay.ffn), &e.hidden);
  e.output = e.pre ? add(e.after_attn, e.ffn) : layer_norm(add(e.after_attn, e.ffn), eps, &e.ln2.gain, &e.ln2.bias);
  return e;
}

// Each row's standard deviation, the one number that shows whether a matrix is normalised.
std::string std_range(const core::Matrix& m) {
  const core::Matrix s = row_stats(m);
  float lo = INFINITY, hi = 0.0f;
  for (std::size_t i = 0; i < core::rows(s); ++i) lo = std::min(lo, std::sqrt(s(i, 1))), hi = std::max(hi, std::sqrt(s(i, 1)));
  return fmt::format("{:.2f} to {:.2f}", lo, hi);
}

void show_residual_layernorm_trained(LessonContext& c) {
  const EncoderLayer0 e = encoder_layer0(c);
  const auto& tk = c.src.tokens;
  const auto dl = render::numbered_labels("d", c.d_model);
  if (!e.pre) {
    c.out.matrix(item("attention_output", "A = MultiHead(X): encoder layer 0's attention output (n × d_model)", e.a, tk, dl));
    c.out.matrix(item("residual", "X + A  (the residual connection)", e.residual, tk, dl));
  }
  const std::string what = e.pre ? "X" : "X + A";
  c.out.matrix(item("layer_norm", fmt::format("(x − μ) / √(σ² + ε) for each row of {}: mean 0, variance 1", what), e.normalized, tk, dl));
  c.out.side_by_side({item("stats_before", "rows of " + what, row_stats(e.ln_input), tk, {"mean", "var"}),
                      item("stats_after", "rows after normalising", row_stats(e.normalized), tk, {"mean", "var"})});
  c.out.side_by_side({item("ln1_gain", "learned gain γ of LayerNorm 1", e.ln1.gain, {"γ"}, dl),
                      item("ln1_bias", "learned bias β of LayerNorm 1", e.ln1.bias, {"β"}, dl)});
  if (!e.pre) {
    c.out.matrix(item("after_attention", "H = γ ⊙ normalised + β = LayerNorm1(X + A)", e.after_attn, tk, dl));
    return;
  }
  // Pre-norm: LayerNorm 1 is the attention's input, and the residual stream goes on unnormalised.
  c.out.matrix(item("attention_input", "LayerNorm1(X) = γ ⊙ normalised + β: what the attention reads", c.x, tk, dl));
  c.out.matrix(item("attention_output", "A = MultiHead(LayerNorm1(X)): encoder layer 0's attention output", e.a, tk, dl));
  c.out.matrix(item("after_attention", "H = X + A: the residual stream, not normalised", e.after_attn, tk, dl));
  c.out.line(fmt::format("The rows of H have standard deviations from {}: nothing rescales them here.", std_range(e.after_attn)));
  c.out.value("after_attention_std_range", std_range(e.after_attn));
}

void show_feed_forward_trained(LessonContext& c) {
  const EncoderLayer0 e = encoder_layer0(c);
  model::Transformer<float>& net = c.model->net();
  const auto& cfg = net.config();
  const auto& tk = c.src.tokens;
  const auto dl = render::numbered_labels("d", c.d_model);
  const std::size_t F = static_cast<std::size_t>(cfg.d_ff);
  const std::string in = e.pre ? "LayerNorm2(H)" : "H";
  c.out.line(fmt::format("FFN(x) = max(0, x·W1 + b1)·W2 + b2 with the model's W1: {} × {}, W2: {} × {} (d_ff = {} = {} · d_model)", c.d_model,
                         F, F, c.d_model, F, width_ratio(cfg.d_ff, cfg.d_model)));
  c.out.line("");
  if (e.pre) c.out.matrix(item("ffn_input", "LayerNorm2(H): what the feed-forward net reads (pre-norm)", e.ffn_in, tk, dl));
  c.out.matrix(item("ffn_hidden", fmt::format("hidden = max(0, {}·W1 + b1)  (n × d_ff; ReLU zeroes the negatives)", in), e.hidden, tk,
                    render::numbered_labels("f", core::cols(e.hidden))));
  std::size_t zeros = 0;
  for (float v : e.hidden) zeros += v == 0.0f;
  c.out.line(fmt::format("{:.0f} % of the hidden units are exactly 0 after the ReLU.", 100.0 * zeros / static_cast<double>(e.hidden.size())));
  c.out.line("");
  c.out.matrix(item("ffn_out", fmt::format("FFN({})  (n × d_model)", in), e.ffn, tk, dl));
  if (e.pre) c.out.matrix(item("encoder_output", "H + FFN(LayerNorm2(H)): encoder layer 0's output (no LayerNorm after the sum)", e.output, tk, dl));
  else c.out.matrix(item("encoder_output", "LayerNorm2(H + FFN(H)) with its γ and β: encoder layer 0's output", e.output, tk, dl));
  if (cfg.encoder_layers > 1) {
    // Layer 1's attention reads layer 0's output (post-norm) or LayerNorm 1 of layer 1 applied to it
    // (pre-norm): compare with the model's own forward pass.
    forward_one(net, c.src.int_ids(), {model::kBos});
    const auto v = net.attention_view(ModelBlock::EncoderSelf, 1);
    const NormParams ln = norm_of(net, net.layout().enc.at(1).ln1);
    const core::Matrix expect = e.pre ? layer_norm(e.output, cfg.ln_eps, &ln.gain, &ln.bias) : e.output;
    const float d = max_abs_difference(expect, rows_of(v.query_input.data(), 0, tk.size(), c.d_model));
    c.out.line(fmt::format("Check: the lesson's recomputation{} equals the input of the model's encoder layer 1's attention ({}).",
                           e.pre ? ", through layer 1's LayerNorm 1," : "", agreement(d)));
    c.out.value("max_difference_from_model", d);
    c.out.line("");
  }
}

void show_encoder_decoder_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const TokenizedSentence& tgt = c.target();
  const std::vector<int> tgt_in = with_bos(tgt.int_ids());
  forward_one(net, c.src.int_ids(), tgt_in, with_eos(tgt.int_ids()));
  const auto& src = c.src.tokens;
  const std::size_t n = tgt_in.size(), m = src.size(), C = c.d_model, H = c.heads;
  const std::vector<std::string> dt = prefixed("<bos>", tgt.tokens);
  const auto& cfg = net.config();
  c.out.line(fmt::format("The model's own forward pass: {} encoder and {} decoder layers, {} heads each, d_model = {}, d_ff = {}.",
                         cfg.encoder_layers, cfg.decoder_layers, cfg.heads, cfg.d_model, cfg.d_ff));
  c.out.line("");
  c.out.matrix(item("encoder_output", "encoder output M (after the last layer and the final LayerNorm)", rows_of(net.memory().data(), 0, m, C), src,
                    render::numbered_labels("d", C)));
  auto head = [&](const std::vector<float>& att, std::size_t k, std::size_t tq, std::size_t tkn) { return rows_of(att.data(), k * tq, tq, tkn); };
  std::vector<MatrixItem> self;
  for (std::size_t k = 0; k < H; ++k)
    self.push_back(weights_item(fmt::format("decoder_self_weights_{}", k), fmt::format("layer 0 head {}", k), head(net.decoder_self_attention(0), k, n, n),
                                dt, dt));
  c.out.line("Decoder masked self-attention, layer 0 (rows: decoder input tokens):");
  c.out.line("");
  c.out.side_by_side(self);
  const int last = cfg.decoder_layers - 1;
  std::vector<MatrixItem> cross;
  for (std::size_t k = 0; k < H; ++k)
    cross.push_back(weights_item(fmt::format("decoder_cross_weights_{}", k), fmt::format("layer {} head {}", last, k),
                                 head(net.decoder_cross_attention(last), k, n, m), dt, src));
  c.out.line(fmt::format("Decoder cross-attention to M, layer {} (n × m; rows: decoder input tokens):", last));
  c.out.line("");
  c.out.side_by_side(cross);
}

void show_next_token_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const text::Vocab& vocab = c.model->vocab();
  const TokenizedSentence& tgt = c.target();
  const std::vector<int> tgt_in = with_bos(tgt.int_ids());
  forward_one(net, c.src.int_ids(), tgt_in, with_eos(tgt.int_ids()));
  const std::size_t n = tgt_in.size(), V = vocab.size();
  const core::Matrix probs = rows_of(net.probabilities().data(), 0, n, V);
  // Position i predicts token i of the target (then <eos>), by id: with a BPE that is the piece with
  // its leading space (" garçon"), which is what the model scores.
  std::vector<std::size_t> want = tgt.ids;
  want.push_back(static_cast<std::size_t>(text::Vocab::kEos));
  std::vector<std::string> want_labels = tgt.tokens;
  want_labels.push_back("<eos>");
  const std::vector<std::string> ins = prefixed("<bos>", tgt.tokens);
  show_next_token_table(c, probs, ins, want);
  std::size_t right_top = 0;
  std::vector<double> right_p;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t best = argmax_row(probs, i);
    right_top += best == want[i];
    right_p.push_back(probs(i, want[i]));
    c.out.line(fmt::format("  after {:<9} most likely {:<9} ({:.4f}); right one: {} ({:.4f})", ins[i],
                           vocab.labels_of({static_cast<text::TokenId>(best)}).front(), probs(i, best), want_labels[i], probs(i, want[i])));
  }
  c.out.value("right_token_probabilities", right_p);
  c.out.value("target_ids", want);
  c.out.line("");
  // A word the vocabulary splits into pieces ("entraîne" = "entra" + "##îne") is predicted piece by
  // piece; its probability is the product of its pieces', each given the pieces before it (teacher
  // forcing: the decoder reads the right pieces, whatever it would have written).
  io::OutJson words = io::OutJson::array();
  std::size_t multi = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && want_labels[j].rfind("##", 0) == 0) ++j;
    double p = 1.0;
    std::string word, factors;
    std::vector<std::string> pieces;
    for (std::size_t k = i; k < j; ++k) {
      p *= right_p[k];
      pieces.push_back(want_labels[k]);
      word += k == i ? want_labels[k] : want_labels[k].substr(2);
      factors += fmt::format("{}{:.4f}", k == i ? "" : " × ", right_p[k]);
    }
    words.push_back({{"word", word}, {"pieces", pieces}, {"first", i}, {"probability", p}});
    if (j - i > 1) {
      ++multi;
      c.out.line(fmt::format("  \"{}\" is {} pieces ({}): P = {} = {:.4f}", word, j - i, joined(pieces), factors, p));
    }
    i = j;
  }
  if (multi == 0) c.out.line("Every word of this target is a single token, so a word's probability is its token's.");
  c.out.value("word_probabilities", words);
  // The example of the lesson text: P(next | source, a prefix of the target).
  const auto pos = std::find(tgt.tokens.begin(), tgt.tokens.end(), c.text.word("next"));
  if (!c.text.word("next").empty() && pos != tgt.tokens.end()) {
    const auto i = static_cast<std::size_t>(pos - tgt.tokens.begin());
    std::vector<std::string> prefix(tgt.tokens.begin(), pos);
    c.out.line(fmt::format("After \"{}\" the model gives \"{}\" the probability {:.4f} (given the source \"{}\").", joined(prefix),
                           c.text.word("next"), probs(i, want[i]), c.src.text));
    c.out.value("example_probability", probs(i, want[i]));
  }
  const double lowest = *std::min_element(right_p.begin(), right_p.end());
  c.out.line(fmt::format("The right token is the most likely one at {} of {} positions; the lowest probability it gets is {:.4f}.",
                         right_top, n, lowest));
  c.out.value("right_token_is_top", right_top);
  c.out.line("");
}

void show_coreference_trained(LessonContext& c) {
  if (c.text.list("coreference").size() != 2) throw RuntimeError("data/sentences/lessons.json: lesson 9 needs a \"coreference\" pair");
  model::Transformer<float>& net = c.model->net();
  const text::Vocab& vocab = c.model->vocab();
  const auto& cfg = net.config();
  const std::size_t H = static_cast<std::size_t>(cfg.heads);
  const text::TokenId il = vocab.id("il"), elle = vocab.id("elle");
  std::vector<TokenizedSentence> sents;
  for (const std::string& s : c.text.list("coreference")) sents.push_back(c.encode(s, "coreference sentence"));
  const std::size_t f = focus_index(sents[0].tokens, c.text.word("coreference_focus"));
  if (c.text.list("coreference_nouns").size() != 2)
    throw RuntimeError("data/sentences/lessons.json: lesson 9 needs \"coreference_nouns\", the two nouns the pronoun may name");
  const std::string& noun0 = c.text.list("coreference_nouns")[0];
  const std::string& noun1 = c.text.list("coreference_nouns")[1];
  const std::size_t first = focus_index(sents[0].tokens, noun0), second = focus_index(sents[0].tokens, noun1);
  const std::string last0 = sents[0].tokens[sents[0].tokens.size() - 2], last1 = sents[1].tokens[sents[1].tokens.size() - 2];
  // Encoder self-attention from the pronoun to the two nouns, for every layer and head (rows), in
  // both sentences (columns).
  const std::size_t rows_n = static_cast<std::size_t>(cfg.encoder_layers) * H;
  core::Matrix enc = core::Matrix::from_shape({rows_n, 4});  // (layer, head) × (noun 0, noun 1 in sentence 0, then 1)
  std::vector<std::string> enc_rows;
  for (int l = 0; l < cfg.encoder_layers; ++l)
    for (std::size_t k = 0; k < H; ++k) enc_rows.push_back(fmt::format("L{}h{}", l, k));
  const std::vector<std::string> ends{"…" + last0, "…" + last1};
  const std::vector<std::string> pair_rows{last0 + ":" + noun0, last0 + ":" + noun1, last1 + ":" + noun0, last1 + ":" + noun1};
  // Cross-attention while writing the pronoun: (layer, sentence) × source tokens, mean of the heads.
  std::vector<std::string> src_cols;
  for (std::size_t j = 0; j < sents[0].tokens.size(); ++j)
    src_cols.push_back(sents[0].tokens[j] == sents[1].tokens[j] ? sents[0].tokens[j] : sents[0].tokens[j] + "/" + sents[1].tokens[j]);
  if (sents[0].tokens.size() != sents[1].tokens.size()) throw RuntimeError("the coreference pair must have the same number of tokens");
  core::Matrix cross = core::Matrix(core::Matrix::shape_type{2 * static_cast<std::size_t>(cfg.decoder_layers), src_cols.size()}, 0.0f);
  std::vector<std::string> cross_rows;
  for (int l = 0; l < cfg.decoder_layers; ++l)
    for (std::size_t s = 0; s < 2; ++s) cross_rows.push_back(fmt::format("L{} {}", l, ends[s]));
  std::vector<std::string> translations;
  for (std::size_t s = 0; s < 2; ++s) {
    const std::vector<int> src = sents[s].int_ids();
    const std::size_t m = src.size();
    const std::vector<int> own = own_translation(net, src);
    translations.push_back(vocab.decode(own));
    forward_one(net, src, with_bos(own), with_eos(own));
    for (int l = 0; l < cfg.encoder_layers; ++l) {
      const std::vector<float>& att = net.encoder_attention(l);
      for (std::size_t k = 0; k < H; ++k) {
        const std::size_t r = static_cast<std::size_t>(l) * H + k;
        enc(r, 2 * s) = att[(k * m + f) * m + first];
        enc(r, 2 * s + 1) = att[(k * m + f) * m + second];
      }
    }
    c.out.line(fmt::format("\"{}\"", sents[s].text));
    c.out.line(fmt::format("  the model translates: \"{}\"", translations.back()));
    // The pronoun in its own translation: P(il) and P(elle) where it wrote it, and what the
    // decoder's cross-attention looked at in that step.
    const auto pos = std::find_if(own.begin(), own.end(), [&](int t) { return t == il || t == elle; });
    if (pos == own.end()) {
      c.out.line("  (the translation has neither il nor elle)");
      continue;
    }
    const auto i = static_cast<std::size_t>(pos - own.begin());
    const std::size_t V = vocab.size();
    const std::vector<float> probs = net.probabilities();
    const float p_il = probs[i * V + static_cast<std::size_t>(il)], p_elle = probs[i * V + static_cast<std::size_t>(elle)];
    // The prefix as text: the decoded tokens (a BPE's pieces carry their own spaces).
    const std::string prefix = vocab.decode(std::vector<int>(own.begin(), own.begin() + static_cast<std::ptrdiff_t>(i)));
    c.out.line(fmt::format("  after \"{}\": P(il) = {:.4f}, P(elle) = {:.4f}", prefix, p_il, p_elle));
    c.out.value(fmt::format("p_il_{}", s), p_il);
    c.out.value(fmt::format("p_elle_{}", s), p_elle);
    const std::size_t T = own.size() + 1;
    for (int l = 0; l < cfg.decoder_layers; ++l) {
      const std::vector<float>& att = net.decoder_cross_attention(l);
      for (std::size_t k = 0; k < H; ++k)
        for (std::size_t j = 0; j < m; ++j) cross(2 * static_cast<std::size_t>(l) + s, j) += att[(k * T + i) * m + j] / static_cast<float>(H);
    }
  }
  c.out.value("translations", translations);
  c.out.line("");
  core::Matrix enc_t = core::Matrix::from_shape({4, rows_n});
  for (std::size_t r = 0; r < rows_n; ++r)
    for (std::size_t q = 0; q < 4; ++q) enc_t(q, r) = enc(r, q);
  c.out.matrix(item("it_encoder_weights",
                    fmt::format("encoder self-attention: weight from \"{}\" on each noun, per layer L and head h", sents[0].tokens[f]),
                    enc_t, pair_rows, enc_rows));
  // What the encoder's weights from the pronoun say, measured rather than told: the right noun is
  // noun 0 in the first sentence and noun 1 in the second.
  std::size_t both_right = 0, best = 0, heaviest = 0;
  double best_shift = -INFINITY, heaviest_w = -1.0, largest_move = 0.0;
  std::vector<std::string> right_heads;
  for (std::size_t r = 0; r < rows_n; ++r) {
    if (enc(r, 0) > enc(r, 1) && enc(r, 3) > enc(r, 2)) ++both_right, right_heads.push_back(enc_rows[r]);
    // How far the head's preference (noun 0 − noun 1) moves towards noun 1 when the last word changes.
    const double shift = (enc(r, 0) - enc(r, 1)) - (enc(r, 2) - enc(r, 3));
    if (shift > best_shift) best_shift = shift, best = r;
    for (std::size_t q = 0; q < 4; ++q)
      if (enc(r, q) > heaviest_w) heaviest_w = enc(r, q), heaviest = r;
    largest_move = std::max({largest_move, std::fabs(double(enc(r, 0)) - enc(r, 2)), std::fabs(double(enc(r, 1)) - enc(r, 3))});
  }
  auto prefers = [&](std::size_t r, std::size_t s) { return enc(r, 2 * s) > enc(r, 2 * s + 1) ? noun0 : noun1; };
  c.out.line(fmt::format("Heads that put more weight on the right noun in both sentences ({} in {}, {} in {}): {} of {}{}.", noun0, ends[0],
                         noun1, ends[1], both_right, rows_n, right_heads.empty() ? "" : " (" + joined(right_heads) + ")"));
  c.out.line(fmt::format("The heaviest weight from \"{}\" on a noun: {} ({} {:.3f} and {} {:.3f} in {}; {} {:.3f} and {} {:.3f} in {}).",
                         sents[0].tokens[f], enc_rows[heaviest], noun0, enc(heaviest, 0), noun1, enc(heaviest, 1), ends[0], noun0,
                         enc(heaviest, 2), noun1, enc(heaviest, 3), ends[1]));
  c.out.line(fmt::format("The head whose preference moves most towards the right noun when the last word changes: {} (it prefers {} in {} "
                         "and {} in {}; the difference {} − {} goes from {:+.3f} to {:+.3f}).",
                         enc_rows[best], prefers(best, 0), ends[0], prefers(best, 1), ends[1], noun0, noun1, enc(best, 0) - enc(best, 1),
                         enc(best, 2) - enc(best, 3)));
  c.out.line(fmt::format("The largest change of any head's weight on either noun between the two sentences: {:.3f}.", largest_move));
  c.out.value("heads_right_in_both", right_heads);
  c.out.value("heaviest_head", enc_rows[heaviest]);
  c.out.value("most_shifting_head", enc_rows[best]);
  c.out.value("largest_weight_change", largest_move);
  c.out.line("");
  MatrixItem x = weights_item("pronoun_cross_weights", "cross-attention while writing il/elle, mean of the heads (rows: layer, sentence)",
                              cross, cross_rows, src_cols);
  // What decides il/elle: the two nouns, the pronoun and the adjective ("tired/wide").
  x.focus_cols = {noun0, noun1, c.text.word("coreference_focus")};
  for (const auto& l : src_cols)
    if (l.find('/') != std::string::npos) x.focus_cols.push_back(l);
  c.out.matrix(x);
  for (std::size_t r = 0; r < core::rows(cross); ++r) {
    const std::size_t top = argmax_row(cross, r);
    c.out.line(fmt::format("  {:<10} looks most at {:<12} ({:.1f} %)", cross_rows[r], src_cols[top], 100.0 * cross(r, top)));
  }
  c.out.line("");
}

}  // namespace

void register_lesson_9(ShowMap& r) {
  r["residual-layernorm"] = {show_residual_layernorm, show_residual_layernorm_trained};
  r["feed-forward"] = {show_feed_forward, show_feed_forward_trained};
  r["encoder-decoder"] = {show_encoder_decoder, show_encoder_decoder_trained};
  r["next-token"] = {show_next_token, show_next_token_trained};
  r["coreference"] = {show_coreference, show_coreference_trained};
  r["word-sense"] = {nullptr, show_word_sense_trained};
}

}  // namespace attnlab::lessons
