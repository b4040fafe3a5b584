#include "model/probes.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "util/error.hpp"
#include "util/rng.hpp"

namespace attnlab::model {

std::string block_name(HeadBlock b) {
  switch (b) {
    case HeadBlock::Encoder: return "enc";
    case HeadBlock::Decoder: return "dec";
    case HeadBlock::Cross: return "cross";
  }
  return "?";
}

void ProbeSums::add_self_attention(const float* a, std::size_t t, bool causal) {
  for (std::size_t i = 0; i < t; ++i) {
    const float* row = a + i * t;
    self += row[i];
    ++self_n;
    if (i >= 1) {
      previous += row[i - 1];
      ++previous_n;
      first += row[0];
      ++first_n;
    }
    if (!causal && i + 1 < t) {
      next += row[i + 1];
      ++next_n;
    }
  }
}

std::vector<HeadScores> self_attention_heads(const ModelConfig& c) {
  std::vector<HeadScores> out;
  if (!c.decoder_only)
    for (int l = 0; l < c.encoder_layers; ++l)
      for (int h = 0; h < c.heads; ++h) out.push_back({HeadBlock::Encoder, l, h, {}});
  for (int l = 0; l < c.decoder_layers; ++l)
    for (int h = 0; h < c.heads; ++h) out.push_back({HeadBlock::Decoder, l, h, {}});
  return out;
}

void add_last_forward(const Transformer<float>& net, std::vector<HeadScores>& scores) {
  int cached_layer = -1;
  HeadBlock cached_block = HeadBlock::Cross;
  std::vector<float> att;
  std::size_t t = 0;
  for (HeadScores& s : scores) {
    if (s.block == HeadBlock::Cross) continue;
    if (s.layer != cached_layer || s.block != cached_block) {
      att = s.block == HeadBlock::Encoder ? net.encoder_attention(s.layer) : net.decoder_self_attention(s.layer);
      const std::size_t per_head = att.size() / static_cast<std::size_t>(net.config().heads);
      t = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(per_head))));
      if (t * t != per_head) throw RuntimeError("add_last_forward: expects the attention of one sentence (batch of 1)");
      cached_layer = s.layer;
      cached_block = s.block;
    }
    s.sums.add_self_attention(att.data() + static_cast<std::size_t>(s.head) * t * t, t, s.block == HeadBlock::Decoder);
  }
}

void add_examples(Transformer<float>& net, const std::vector<Example>& data, std::size_t n, std::vector<HeadScores>& scores,
                  const std::function<void(std::size_t)>& after_each) {
  n = std::min(n, data.size());
  for (std::size_t i = 0; i < n; ++i) {
    net.forward(make_batch(data, {i}, net.config().decoder_only), 0.0f, false, nullptr);
    add_last_forward(net, scores);
    if (after_each) after_each(i);
  }
}

void add_induction(Transformer<float>& net, std::vector<HeadScores>& scores, int sequences, int length, int first_id,
                   std::uint64_t seed) {
  const ModelConfig& c = net.config();
  if (!c.decoder_only) throw InputError("the induction probe needs a decoder-only language model");
  if (length < 2 || 1 + 2 * length > c.max_len)
    throw InputError("the induction probe's sequences (2 × " + std::to_string(length) + " + 1 tokens) do not fit max_len " +
                     std::to_string(c.max_len));
  if (c.vocab_size - first_id < length) throw InputError("the vocabulary is too small for the induction probe");
  std::uint64_t state = seed;
  const std::size_t T = static_cast<std::size_t>(1 + 2 * length);
  for (int s = 0; s < sequences; ++s) {
    // `length` distinct ids, by a partial Fisher–Yates shuffle of [first_id, V).
    std::vector<int> pool(static_cast<std::size_t>(c.vocab_size - first_id));
    std::iota(pool.begin(), pool.end(), first_id);
    for (int k = 0; k < length; ++k) {
      const std::size_t j = static_cast<std::size_t>(k) + static_cast<std::size_t>(splitmix64(state) % (pool.size() - static_cast<std::size_t>(k)));
      std::swap(pool[static_cast<std::size_t>(k)], pool[j]);
    }
    Batch b;
    b.B = 1;
    b.tgt_in.push_back(kBos);
    for (int rep = 0; rep < 2; ++rep)
      for (int k = 0; k < length; ++k) b.tgt_in.push_back(pool[static_cast<std::size_t>(k)]);
    b.T = static_cast<int>(b.tgt_in.size());
    b.tgt_out.assign(b.tgt_in.size(), kPad);
    net.forward(b, 0.0f, false, nullptr);
    for (int l = 0; l < c.decoder_layers; ++l) {
      const std::vector<float> att = net.decoder_self_attention(l);
      for (HeadScores& hs : scores) {
        if (hs.block != HeadBlock::Decoder || hs.layer != l) continue;
        const float* a = att.data() + static_cast<std::size_t>(hs.head) * T * T;
        // Query p = 1 + length + k holds token k of the second copy; position 2 + k holds the token
        // after its first occurrence.
        for (int k = 0; k + 1 < length; ++k) {
          const std::size_t p = static_cast<std::size_t>(1 + length + k), q = static_cast<std::size_t>(2 + k);
          hs.sums.induction += a[p * T + q];
          ++hs.sums.induction_n;
        }
      }
    }
  }
}

void RelationSums::add(const float* row, std::size_t S, const std::vector<std::size_t>& keys) {
  if (keys.empty() || S == 0) return;
  std::size_t best = 0;
  for (std::size_t k = 1; k < S; ++k)
    if (row[k] > row[best]) best = k;
  double m = 0;
  bool hit = false;
  for (std::size_t k : keys) {
    if (k >= S) continue;
    m += row[k];
    hit = hit || k == best;
  }
  mass += m;
  chance += static_cast<double>(keys.size()) / static_cast<double>(S);
  hits += hit;
  ++n;
}

std::vector<HeadMeans> head_means_for(const ModelConfig& c) {
  std::vector<HeadMeans> out;
  const std::vector<double> zeros(static_cast<std::size_t>(c.d_model), 0.0);
  if (!c.decoder_only)
    for (int l = 0; l < c.encoder_layers; ++l) out.push_back({HeadBlock::Encoder, l, zeros, 0});
  for (int l = 0; l < c.decoder_layers; ++l) {
    out.push_back({HeadBlock::Decoder, l, zeros, 0});
    if (!c.decoder_only) out.push_back({HeadBlock::Cross, l, zeros, 0});
  }
  return out;
}

void add_last_forward(const Transformer<float>& net, std::vector<HeadMeans>& means) {
  using B = Transformer<float>::Block;
  const std::size_t C = static_cast<std::size_t>(net.config().d_model);
  for (HeadMeans& m : means) {
    const B b = m.block == HeadBlock::Encoder ? B::EncoderSelf : m.block == HeadBlock::Decoder ? B::DecoderSelf : B::DecoderCross;
    const std::vector<float> ctx = net.attention_context(b, m.layer);
    for (std::size_t r = 0; r < ctx.size() / C; ++r)
      for (std::size_t j = 0; j < C; ++j) m.sum[j] += ctx[r * C + j];
    m.rows += ctx.size() / C;
  }
}

namespace {

// The parameters of one attention block, after checking that the model has it (exit 2 otherwise).
const AttnLayout& attention_block(const Transformer<float>& net, HeadBlock block, int layer, int head) {
  const ModelConfig& c = net.config();
  const ParamLayout& lay = net.layout();
  if (head < 0 || head >= c.heads) throw InputError("--ablate: head " + std::to_string(head) + " is out of range (0 to " + std::to_string(c.heads - 1) + ")");
  const AttnLayout* a = nullptr;
  if (block == HeadBlock::Encoder) {
    if (c.decoder_only || layer < 0 || layer >= c.encoder_layers) throw InputError("--ablate: no encoder layer " + std::to_string(layer));
    a = &lay.enc[static_cast<std::size_t>(layer)].attn;
  } else {
    if (layer < 0 || layer >= c.decoder_layers) throw InputError("--ablate: no decoder layer " + std::to_string(layer));
    if (block == HeadBlock::Cross && c.decoder_only) throw InputError("--ablate: a decoder-only model has no cross-attention");
    a = block == HeadBlock::Decoder ? &lay.dec[static_cast<std::size_t>(layer)].self_attn : &lay.dec[static_cast<std::size_t>(layer)].cross_attn;
  }
  return *a;
}

}  // namespace

std::vector<float> ablate_head(const Transformer<float>& net, const std::vector<float>& params, HeadBlock block, int layer,
                               int head) {
  const ModelConfig& c = net.config();
  const AttnLayout* a = &attention_block(net, block, layer, head);
  // W_O is C × C in the row-vector convention output = concat · W_O: row r reads column r of the
  // concatenation, and head h owns columns [h·d_v, (h+1)·d_v).
  const std::size_t C = static_cast<std::size_t>(c.d_model), dv = C / static_cast<std::size_t>(c.heads);
  std::vector<float> out = params;
  for (std::size_t r = static_cast<std::size_t>(head) * dv; r < static_cast<std::size_t>(head + 1) * dv; ++r)
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(a->wo + r * C), out.begin() + static_cast<std::ptrdiff_t>(a->wo + (r + 1) * C), 0.0f);
  return out;
}

std::vector<float> mean_ablate_head(const Transformer<float>& net, const std::vector<float>& params, HeadBlock block, int layer,
                                    int head, const std::vector<HeadMeans>& means) {
  const ModelConfig& c = net.config();
  const AttnLayout& a = attention_block(net, block, layer, head);
  const HeadMeans* m = nullptr;
  for (const HeadMeans& h : means)
    if (h.block == block && h.layer == layer) m = &h;
  if (!m || m->rows == 0) throw InputError("mean ablation: no mean recorded for " + block_name(block) + "." + std::to_string(layer));
  const std::size_t C = static_cast<std::size_t>(c.d_model), dv = C / static_cast<std::size_t>(c.heads);
  std::vector<float> out = params;
  // b_O += Σ_r mean[r] · W_O[r, :] over the head's rows r, computed in double from the original W_O.
  std::vector<double> shift(C, 0.0);
  for (std::size_t r = static_cast<std::size_t>(head) * dv; r < static_cast<std::size_t>(head + 1) * dv; ++r) {
    const double mean = m->sum[r] / static_cast<double>(m->rows);
    for (std::size_t j = 0; j < C; ++j) shift[j] += mean * params[a.wo + r * C + j];
  }
  for (std::size_t j = 0; j < C; ++j) out[a.bo + j] = static_cast<float>(params[a.bo + j] + shift[j]);
  for (std::size_t r = static_cast<std::size_t>(head) * dv; r < static_cast<std::size_t>(head + 1) * dv; ++r)
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(a.wo + r * C), out.begin() + static_cast<std::ptrdiff_t>(a.wo + (r + 1) * C), 0.0f);
  return out;
}

}  // namespace attnlab::model
