// Lesson 8, cross-attention: decoder queries over encoder keys and values, with random weights or
// replayed from the trained translation model on a teacher-forced sentence pair (and all its heads).
#include <algorithm>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "lessons/shows.hpp"
#include "lessons/trained.hpp"

namespace attnlab::lessons {

namespace {

core::Matrix mean_of(const std::vector<core::Matrix>& ms) {
  core::Matrix avg = core::Matrix(ms[0].shape(), 0.0f);
  for (const core::Matrix& m : ms) avg += m / static_cast<float>(ms.size());
  return avg;
}

std::vector<core::Matrix> head_weights(const core::AttentionTrace& t) {
  std::vector<core::Matrix> out;
  for (const core::HeadTrace& h : t.heads) out.push_back(h.weights);
  return out;
}

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

// Lesson 8's pair run through the model, teacher forced, and the cross-attention of its first and last
// decoder layers replayed: what both of its steps show.
struct CrossAttentionPair {
  std::size_t n = 0, m = 0;            // decoder positions (target + <bos>), source tokens
  std::vector<std::string> rl;         // row labels: the word each decoder position is about to write
  int last = 0;                        // the last decoder layer
  Replay r0, rl_;                      // layer 0 and the last layer
};

CrossAttentionPair run_cross_attention(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const TokenizedSentence& tgt = c.target();
  const std::vector<int> tgt_in = with_bos(tgt.int_ids());
  forward_one(net, c.src.int_ids(), tgt_in, with_eos(tgt.int_ids()));
  CrossAttentionPair p;
  p.n = tgt_in.size();
  p.m = c.src.tokens.size();
  // Row i holds the query of decoder position i, which reads tgt_in[i] and is about to write the
  // next word: label each row with the word it writes.
  p.rl = tgt.tokens;
  p.rl.push_back("<eos>");
  p.last = net.config().decoder_layers - 1;
  p.r0 = replay_attention(net, ModelBlock::DecoderCross, 0, p.n, p.m);
  p.rl_ = replay_attention(net, ModelBlock::DecoderCross, p.last, p.n, p.m);
  return p;
}

void show_cross_attention_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const TokenizedSentence& tgt = c.target();
  const auto& src = c.src.tokens;
  const CrossAttentionPair p = run_cross_attention(c);
  const std::size_t n = p.n, m = p.m;
  const std::vector<std::string>& rl = p.rl;
  const Replay &r0 = p.r0, &rl_ = p.rl_;
  const core::HeadTrace& h = r0.trace.heads[0];
  c.out.line(fmt::format("Decoder (queries): <bos> {}  (n = {}, teacher forced: it reads the target shifted right by one).",
                         joined(tgt.tokens), n));
  c.out.line(fmt::format("Encoder output M (keys, values): \"{}\" after {} encoder layers, m = {}.", c.src.text,
                         net.config().encoder_layers, m));
  c.out.line("Each row is labelled with the word the decoder is about to write at that position.");
  c.out.line("");
  c.out.matrix(item("q", fmt::format("Q = Y · W_Q + b_Q  (layer 0, head 0; Y is the decoder stream: n × d_k = {} × {})", n, core::cols(h.q)),
                    h.q, rl, render::numbered_labels("q", core::cols(h.q))));
  c.out.side_by_side({item("k", fmt::format("K = M · W_K + b_K  ({} × {})", m, core::cols(h.k)), h.k, src, render::numbered_labels("k", core::cols(h.k))),
                      item("v", fmt::format("V = M · W_V + b_V  ({} × {})", m, core::cols(h.v)), h.v, src, render::numbered_labels("v", core::cols(h.v)))});
  c.out.matrix(item("scaled", fmt::format("Q · Kᵀ / √d_k  (n × m = {} × {})", n, m), h.scaled, rl, src));
  c.out.matrix(weights_item("weights", fmt::format("alignment, layer 0 head 0 (n × m = {} × {}), each row sums to 1", n, m), h.weights, rl, src));
  c.out.matrix(item("context", "context = weights · V  (one row per decoder position)", h.context, rl, render::numbered_labels("v", core::cols(h.context))));
  c.out.line(fmt::format("Check: recomputing this attention step by step, as the lessons do, from the model's weights gives the model's own cross-attention ({}).",
                         agreement(std::max(r0.max_difference, rl_.max_difference))));
  c.out.value("max_difference_from_model", std::max(r0.max_difference, rl_.max_difference));
  c.out.line("");
}

// Step 2 of lesson 8 ("Reading the alignment"): every head of the first and the last decoder layer,
// their mean and each target word's strongest source word, then the model's own translation.
void show_cross_attention_heads_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const auto& src = c.src.tokens;
  const std::vector<int> own = own_translation(net, c.src.int_ids());
  const CrossAttentionPair p = run_cross_attention(c);
  const std::size_t n = p.n;
  const std::vector<std::string>& rl = p.rl;
  const int last = p.last;
  const Replay &r0 = p.r0, &rl_ = p.rl_;
  for (const auto* r : {&r0, &rl_}) {
    const int layer = r == &r0 ? 0 : last;
    if (r == &rl_ && last == 0) break;
    std::vector<MatrixItem> heads;
    for (std::size_t k = 0; k < r->trace.heads.size(); ++k)
      heads.push_back(weights_item(fmt::format("layer_{}_head_{}", layer, k), fmt::format("layer {} head {}", layer, k),
                                   r->trace.heads[k].weights, rl, src));
    c.out.side_by_side(heads);
    const core::Matrix avg = mean_of(head_weights(r->trace));
    c.out.matrix(weights_item(fmt::format("layer_{}_mean", layer), fmt::format("layer {}: mean of the {} heads", layer, r->trace.heads.size()),
                              avg, rl, src));
    c.out.line(fmt::format("Layer {}, mean of the heads: the source word each target word looks at most", layer));
    std::vector<std::string> argmax;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t best = argmax_row(avg, i);
      argmax.push_back(src[best]);
      c.out.line(fmt::format("  {:<10} → {:<10} ({:.1f} %)", rl[i], src[best], 100.0 * avg(i, best)));
    }
    c.out.value(fmt::format("layer_{}_argmax", layer), argmax);
    c.out.line("");
  }
  const std::string own_text = c.model->vocab().decode(own);
  c.out.line(fmt::format("The model's own translation of \"{}\" (greedy): \"{}\"", c.src.text, own_text));
  c.out.value("translation", own_text);
  c.out.line("");
}

}  // namespace

void register_lesson_8(ShowMap& r) {
  r["cross-attention"] = {show_cross_attention, show_cross_attention_trained};
  r["cross-attention-heads"] = {nullptr, show_cross_attention_heads_trained};
}

}  // namespace attnlab::lessons
