#include "model/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "backend/cpu/ops.hpp"
#include "backend/cpu/buffers.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace attnlab::model {
using namespace ::attnlab::cpu;  // interim: the model still calls the CPU ops directly

template <typename T>
Transformer<T>::Transformer(const ModelConfig& config) : cfg_(config), layout_(make_layout(config)) {
  validate(cfg_, "model");
  if (cfg_.vocab_size < 5) throw InputError("model.vocab_size: " + std::to_string(cfg_.vocab_size) + " is too small (4 special tokens + at least 1 word)");
  params.assign(layout_.total, T(0));
  grads.assign(layout_.total, T(0));
  pe_ = positional_encoding<T>(cfg_.max_len, cfg_.d_model);
}

template <typename T>
void Transformer<T>::init_params(std::uint64_t seed) {
  std::uint64_t s = seed ^ 0xA77E27106ull;
  for (const TensorInfo& t : layout_.tensors) {
    T* p = params.data() + t.offset;
    const std::string& n = t.name;
    const bool is_norm_gain = n.size() >= 2 && n.compare(n.size() - 2, 2, ".g") == 0;
    if (t.shape.size() == 1) {
      std::fill(p, p + t.size(), is_norm_gain ? T(1) : T(0));
    } else if (n == "tok_emb" || n == "src_emb" || n == "tgt_emb") {
      // N(0, 1/√C) (Box–Muller): after the ×√C scaling the embedding has unit variance, like the positions.
      const double sd = 1.0 / std::sqrt(static_cast<double>(cfg_.d_model));
      for (std::size_t i = 0; i < t.size(); ++i) {
        const double u1 = std::max(uniform01(s), 1e-300), u2 = uniform01(s);
        p[i] = static_cast<T>(sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
      }
    } else {
      // Xavier (Glorot) uniform, as torch.nn.Transformer initialises its matrices.
      const double a = std::sqrt(6.0 / (t.shape[0] + t.shape[1]));
      for (std::size_t i = 0; i < t.size(); ++i) p[i] = static_cast<T>((2.0 * uniform01(s) - 1.0) * a);
    }
  }
}

// ---- building blocks ---------------------------------------------------------------------------

template <typename T>
void Transformer<T>::ln_fwd(const NormLayout& o, const T* x, int N, LNAct& a) {
  const int C = cfg_.d_model;
  util::size_buffer(a.out, static_cast<std::size_t>(N) * C);
  util::size_buffer(a.mean, N);
  util::size_buffer(a.rstd, N);
  layernorm_forward<T>(a.out.data(), a.mean.data(), a.rstd.data(), x, P(o.g), P(o.b), N, C, static_cast<T>(cfg_.ln_eps));
}

template <typename T>
void Transformer<T>::ln_bwd(const NormLayout& o, const T* x, int N, const LNAct& a, const T* dy, T* dx) {
  layernorm_backward<T>(dx, G(o.g), G(o.b), dy, x, P(o.g), a.mean.data(), a.rstd.data(), N, cfg_.d_model);
}

template <typename T>
void Transformer<T>::attn_fwd(const AttnLayout& o, const T* xq, int Tq, const T* xkv, int Tk, const int* key_len,
                              bool causal, AttnAct& a) {
  const int B = batch_.B, C = cfg_.d_model, H = cfg_.heads;
  const std::size_t nq = static_cast<std::size_t>(B) * Tq * C, nk = static_cast<std::size_t>(B) * Tk * C;
  util::size_buffer(a.q, nq);
  util::size_buffer(a.k, nk);
  util::size_buffer(a.v, nk);
  util::size_buffer(a.ctx, nq);
  util::size_buffer(a.out, nq);
  util::size_buffer(a.att, static_cast<std::size_t>(B) * H * Tq * Tk);
  linear_forward<T>(a.q.data(), xq, P(o.wq), P(o.bq), B * Tq, C, C);
  linear_forward<T>(a.k.data(), xkv, P(o.wk), P(o.bk), B * Tk, C, C);
  linear_forward<T>(a.v.data(), xkv, P(o.wv), P(o.bv), B * Tk, C, C);
  attention_forward<T>(a.ctx.data(), a.att.data(), a.q.data(), a.k.data(), a.v.data(), key_len, causal, B, Tq, Tk, C, H);
  linear_forward<T>(a.out.data(), a.ctx.data(), P(o.wo), P(o.bo), B * Tq, C, C);
}

template <typename T>
void Transformer<T>::attn_bwd(const AttnLayout& o, const T* xq, int Tq, const T* xkv, int Tk, AttnAct& a,
                              const T* dout, T* dxq, T* dxkv) {
  const int B = batch_.B, C = cfg_.d_model, H = cfg_.heads;
  const std::size_t nq = static_cast<std::size_t>(B) * Tq * C, nk = static_cast<std::size_t>(B) * Tk * C;
  std::vector<T>&dctx = ws_dctx_, &dq = ws_dq_, &dk = ws_dk_, &dv = ws_dv_;
  util::zeroed_buffer(dctx, nq);  // keeps the capacity: no allocation after the first step
  util::zeroed_buffer(dq, nq);
  util::zeroed_buffer(dk, nk);
  util::zeroed_buffer(dv, nk);
  util::size_buffer(ws_scores_, attention_backward_scratch<T>(Tq, Tk));
  linear_backward<T>(dctx.data(), G(o.wo), G(o.bo), dout, a.ctx.data(), P(o.wo), B * Tq, C, C);
  attention_backward<T>(dq.data(), dk.data(), dv.data(), ws_scores_.data(), dctx.data(), a.att.data(), a.q.data(),
                        a.k.data(), a.v.data(), B, Tq, Tk, C, H);
  linear_backward<T>(dxq, G(o.wq), G(o.bq), dq.data(), xq, P(o.wq), B * Tq, C, C);
  linear_backward<T>(dxkv, G(o.wk), G(o.bk), dk.data(), xkv, P(o.wk), B * Tk, C, C);
  linear_backward<T>(dxkv, G(o.wv), G(o.bv), dv.data(), xkv, P(o.wv), B * Tk, C, C);
}

template <typename T>
void Transformer<T>::ffn_fwd(const FfnLayout& o, const T* x, int N, FfnAct& a) {
  const int C = cfg_.d_model, F = cfg_.d_ff;
  util::size_buffer(a.a, static_cast<std::size_t>(N) * F);
  util::size_buffer(a.out, static_cast<std::size_t>(N) * C);
  linear_forward<T>(a.a.data(), x, P(o.w1), P(o.b1), N, C, F);
  relu_forward<T>(a.a.data(), a.a.data(), a.a.size());  // in place: h > 0 exactly where ReLU(h) > 0
  linear_forward<T>(a.out.data(), a.a.data(), P(o.w2), P(o.b2), N, F, C);
}

template <typename T>
void Transformer<T>::ffn_bwd(const FfnLayout& o, const T* x, int N, const FfnAct& a, const T* dout, T* dx) {
  const int C = cfg_.d_model, F = cfg_.d_ff;
  std::vector<T>&da = ws_da_, &dh = ws_dh_;
  util::zeroed_buffer(da, static_cast<std::size_t>(N) * F);
  util::zeroed_buffer(dh, static_cast<std::size_t>(N) * F);
  linear_backward<T>(da.data(), G(o.w2), G(o.b2), dout, a.a.data(), P(o.w2), N, F, C);
  relu_backward<T>(dh.data(), da.data(), a.a.data(), dh.size());
  linear_backward<T>(dx, G(o.w1), G(o.b1), dh.data(), x, P(o.w1), N, C, F);
}

template <typename T>
void Transformer<T>::sub_fwd(Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm,
                             const T* x, int Tq, const T* mem, int Tk, const int* key_len, bool causal, bool train,
                             std::uint64_t* rng) {
  const int N = batch_.B * Tq, C = cfg_.d_model;
  const std::size_t n = static_cast<std::size_t>(N) * C;
  s.x = x;
  const T* in = x;
  if (cfg_.pre_norm) {
    ln_fwd(norm, x, N, s.ln);
    in = s.ln.out.data();
  }
  s.sub_in = in;
  const T* out = nullptr;
  if (kind == Kind::SelfAttn) {
    attn_fwd(*attn, in, Tq, in, Tq, key_len, causal, s.attn);
    out = s.attn.out.data();
  } else if (kind == Kind::CrossAttn) {
    attn_fwd(*attn, in, Tq, mem, Tk, key_len, false, s.attn);
    out = s.attn.out.data();
  } else {
    ffn_fwd(*ffn, in, N, s.ffn);
    out = s.ffn.out.data();
  }
  // Without dropout (inference, or p = 0) the sub-layer's output goes straight into the residual sum:
  // no copy and no mask of ones (dropout_forward draws no random numbers at p = 0 either).
  const float p = train ? cfg_.dropout : 0.0f;
  s.dropout = p > 0.0f;
  if (s.dropout) {
    util::size_buffer(s.mask, n);
    util::size_buffer(s.dropped, n);
    std::uint64_t dummy = 0;
    dropout_forward<T>(s.dropped.data(), s.mask.data(), out, n, p, rng ? *rng : dummy);
    out = s.dropped.data();
  }
  util::size_buffer(s.sum, n);
  add_forward<T>(s.sum.data(), x, out, n);
  if (cfg_.pre_norm) {
    s.y = s.sum.data();
  } else {
    ln_fwd(norm, s.sum.data(), N, s.ln);
    s.y = s.ln.out.data();
  }
}

template <typename T>
void Transformer<T>::sub_bwd(Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm,
                             int Tq, const T* mem, int Tk, const T* dy, T* dx, T* dmem) {
  const int N = batch_.B * Tq, C = cfg_.d_model;
  const std::size_t n = static_cast<std::size_t>(N) * C;
  std::vector<T>&dsum = ws_dsum_, &dsub = ws_dsub_, &din = ws_din_;  // reused: no allocation per step
  const T* dsum_ptr = dy;  // pre-norm: the residual sum is the output itself
  if (!cfg_.pre_norm) {
    util::zeroed_buffer(dsum, n);
    ln_bwd(norm, s.sum.data(), N, s.ln, dy, dsum.data());
    dsum_ptr = dsum.data();
  }
  accumulate<T>(dx, dsum_ptr, n);  // the residual path
  const T* dsub_ptr = dsum_ptr;    // no dropout in the forward: the sub-layer's gradient is the sum's
  if (s.dropout) {
    util::zeroed_buffer(dsub, n);
    dropout_backward<T>(dsub.data(), dsum_ptr, s.mask.data(), n);
    dsub_ptr = dsub.data();
  }
  T* din_ptr = dx;  // post-norm: the sub-layer saw x itself
  if (cfg_.pre_norm) {
    util::zeroed_buffer(din, n);
    din_ptr = din.data();
  }
  if (kind == Kind::SelfAttn) attn_bwd(*attn, s.sub_in, Tq, s.sub_in, Tq, s.attn, dsub_ptr, din_ptr, din_ptr);
  else if (kind == Kind::CrossAttn) attn_bwd(*attn, s.sub_in, Tq, mem, Tk, s.attn, dsub_ptr, din_ptr, dmem);
  else ffn_bwd(*ffn, s.sub_in, N, s.ffn, dsub_ptr, din_ptr);
  if (cfg_.pre_norm) ln_bwd(norm, s.x, N, s.ln, din.data(), dx);
}

// ---- whole model ----------------------------------------------------------------------------------

template <typename T>
T Transformer<T>::forward(const Batch& b, T smoothing, bool train, std::uint64_t* rng) {
  const int C = cfg_.d_model, V = cfg_.vocab_size;
  if (b.T < 1 || b.B < 1) throw ShapeError("forward: empty batch");
  if (b.T > cfg_.max_len || b.S > cfg_.max_len) {
    throw ShapeError("forward: sequence of " + std::to_string(std::max(b.S, b.T)) + " tokens exceeds max_len = " +
                     std::to_string(cfg_.max_len));
  }
  auto check_tokens = [&](const std::vector<int>& toks, std::size_t want, const char* name) {
    if (toks.size() != want) throw ShapeError(std::string("forward: ") + name + " has the wrong size");
    for (int t : toks)
      if (t < 0 || t >= V) throw ShapeError(std::string("forward: token id out of range in ") + name);
  };
  check_tokens(b.tgt_in, static_cast<std::size_t>(b.B) * b.T, "tgt_in");
  check_tokens(b.tgt_out, static_cast<std::size_t>(b.B) * b.T, "tgt_out");
  batch_ = b;
  smoothing_ = smoothing;
  const T scale = static_cast<T>(std::sqrt(static_cast<double>(C)));
  const float p = train ? cfg_.dropout : 0.0f;
  std::uint64_t dummy = 0;
  std::uint64_t& r = rng ? *rng : dummy;

  const T* memory = nullptr;
  if (!cfg_.decoder_only) {
    check_tokens(b.src, static_cast<std::size_t>(b.B) * b.S, "src");
    if (b.src_len.size() != static_cast<std::size_t>(b.B)) throw ShapeError("forward: src_len has the wrong size");
    for (int l : b.src_len)
      if (l < 1 || l > b.S) throw ShapeError("forward: a source length is outside [1, S]");
    const std::size_t n = static_cast<std::size_t>(b.B) * b.S * C;
    util::size_buffer(enc_emb_, n);
    util::size_buffer(enc_emb_mask_, n);
    util::size_buffer(enc_x0_, n);
    const std::size_t src_emb = cfg_.tie_embeddings ? layout_.tok_emb : layout_.src_emb;
    embedding_forward<T>(enc_emb_.data(), b.src.data(), P(src_emb), pe_.data(), b.B, b.S, C, scale);
    dropout_forward<T>(enc_x0_.data(), enc_emb_mask_.data(), enc_emb_.data(), n, p, r);
    enc_.resize(layout_.enc.size());
    const T* x = enc_x0_.data();
    for (std::size_t l = 0; l < enc_.size(); ++l) {
      const EncoderLayerLayout& L = layout_.enc[l];
      sub_fwd(enc_[l].attn, Kind::SelfAttn, &L.attn, nullptr, L.ln1, x, b.S, nullptr, 0, batch_.src_len.data(), false,
              train, rng);
      x = enc_[l].attn.y;
      sub_fwd(enc_[l].ffn, Kind::Ffn, nullptr, &L.ffn, L.ln2, x, b.S, nullptr, 0, nullptr, false, train, rng);
      x = enc_[l].ffn.y;
    }
    ln_fwd(layout_.enc_norm, x, b.B * b.S, enc_final_);
    memory = enc_final_.out.data();
  }

  const std::size_t n = static_cast<std::size_t>(b.B) * b.T * C;
  util::size_buffer(dec_emb_, n);
  util::size_buffer(dec_emb_mask_, n);
  util::size_buffer(dec_x0_, n);
  embedding_forward<T>(dec_emb_.data(), b.tgt_in.data(), P(layout_.tok_emb), pe_.data(), b.B, b.T, C, scale);
  dropout_forward<T>(dec_x0_.data(), dec_emb_mask_.data(), dec_emb_.data(), n, p, r);
  dec_.resize(layout_.dec.size());
  const T* y = dec_x0_.data();
  for (std::size_t l = 0; l < dec_.size(); ++l) {
    const DecoderLayerLayout& L = layout_.dec[l];
    sub_fwd(dec_[l].self, Kind::SelfAttn, &L.self_attn, nullptr, L.ln1, y, b.T, nullptr, 0, nullptr, true, train, rng);
    y = dec_[l].self.y;
    if (!cfg_.decoder_only) {
      sub_fwd(dec_[l].cross, Kind::CrossAttn, &L.cross_attn, nullptr, L.ln2, y, b.T, memory, b.S, batch_.src_len.data(),
              false, train, rng);
      y = dec_[l].cross.y;
    }
    sub_fwd(dec_[l].ffn, Kind::Ffn, nullptr, &L.ffn, cfg_.decoder_only ? L.ln2 : L.ln3, y, b.T, nullptr, 0, nullptr,
            false, train, rng);
    y = dec_[l].ffn.y;
  }
  const int N = b.B * b.T;
  ln_fwd(layout_.dec_norm, y, N, dec_final_);
  util::size_buffer(logits_, static_cast<std::size_t>(N) * V);
  lse_.resize(static_cast<std::size_t>(N));
  if (cfg_.tie_embeddings) {
    // logits = h · Eᵀ: the output projection reuses the embedding matrix.
    gemm<T>(false, true, N, V, C, T(1), dec_final_.out.data(), C, P(layout_.tok_emb), C, T(0), logits_.data(), V);
  } else {
    linear_forward<T>(logits_.data(), dec_final_.out.data(), P(layout_.out_proj), nullptr, N, C, V);
  }
  return cross_entropy_forward<T>(lse_.data(), logits_.data(), batch_.tgt_out.data(), N, V, smoothing, kPad, &count_);
}

template <typename T>
std::vector<T> Transformer<T>::probabilities() const {
  std::vector<T> p(logits_.size());
  if (!lse_.empty()) softmax_from_lse<T>(p.data(), logits_.data(), lse_.data(), static_cast<int>(lse_.size()), cfg_.vocab_size);
  return p;
}

template <typename T>
void Transformer<T>::backward() {
  const Batch& b = batch_;
  const int C = cfg_.d_model, V = cfg_.vocab_size, N = b.B * b.T;
  const T scale = static_cast<T>(std::sqrt(static_cast<double>(C)));
  std::fill(grads.begin(), grads.end(), T(0));

  std::vector<T>& dlogits = dlogits_;
  util::size_buffer(dlogits, static_cast<std::size_t>(N) * V);  // no zero fill: the loss's backward writes every value
  cross_entropy_backward<T>(dlogits.data(), logits_.data(), lse_.data(), b.tgt_out.data(), N, V, smoothing_, kPad,
                            count_, T(1));
  std::vector<T> dh(static_cast<std::size_t>(N) * C, T(0));
  if (cfg_.tie_embeddings) {
    gemm<T>(false, false, N, C, V, T(1), dlogits.data(), V, P(layout_.tok_emb), C, T(1), dh.data(), C);
    gemm<T>(true, false, V, C, N, T(1), dlogits.data(), V, dec_final_.out.data(), C, T(1), G(layout_.tok_emb), C);
  } else {
    linear_backward<T>(dh.data(), G(layout_.out_proj), nullptr, dlogits.data(), dec_final_.out.data(),
                       P(layout_.out_proj), N, C, V);
  }
  const T* y_last = dec_.empty() ? dec_x0_.data() : dec_.back().ffn.y;
  std::vector<T> dy(static_cast<std::size_t>(N) * C, T(0)), dprev(dy.size());
  ln_bwd(layout_.dec_norm, y_last, N, dec_final_, dh.data(), dy.data());

  std::vector<T> dmem;
  const T* memory = cfg_.decoder_only ? nullptr : enc_final_.out.data();
  if (!cfg_.decoder_only) dmem.assign(static_cast<std::size_t>(b.B) * b.S * C, T(0));
  auto step_back = [&](Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm, int Tq,
                       const T* mem, int Tk, T* dm) {
    std::fill(dprev.begin(), dprev.end(), T(0));
    sub_bwd(s, kind, attn, ffn, norm, Tq, mem, Tk, dy.data(), dprev.data(), dm);
    std::swap(dy, dprev);
  };
  for (std::size_t l = dec_.size(); l-- > 0;) {
    const DecoderLayerLayout& L = layout_.dec[l];
    step_back(dec_[l].ffn, Kind::Ffn, nullptr, &L.ffn, cfg_.decoder_only ? L.ln2 : L.ln3, b.T, nullptr, 0, nullptr);
    if (!cfg_.decoder_only)
      step_back(dec_[l].cross, Kind::CrossAttn, &L.cross_attn, nullptr, L.ln2, b.T, memory, b.S, dmem.data());
    step_back(dec_[l].self, Kind::SelfAttn, &L.self_attn, nullptr, L.ln1, b.T, nullptr, 0, nullptr);
  }
  std::vector<T> demb(dy.size(), T(0));
  dropout_backward<T>(demb.data(), dy.data(), dec_emb_mask_.data(), demb.size());
  embedding_backward<T>(G(layout_.tok_emb), demb.data(), b.tgt_in.data(), b.B, b.T, C, scale);

  if (cfg_.decoder_only) return;
  const int NS = b.B * b.S;
  const T* x_last = enc_.empty() ? enc_x0_.data() : enc_.back().ffn.y;
  dy.assign(static_cast<std::size_t>(NS) * C, T(0));
  dprev.assign(dy.size(), T(0));
  ln_bwd(layout_.enc_norm, x_last, NS, enc_final_, dmem.data(), dy.data());
  for (std::size_t l = enc_.size(); l-- > 0;) {
    const EncoderLayerLayout& L = layout_.enc[l];
    step_back(enc_[l].ffn, Kind::Ffn, nullptr, &L.ffn, L.ln2, b.S, nullptr, 0, nullptr);
    step_back(enc_[l].attn, Kind::SelfAttn, &L.attn, nullptr, L.ln1, b.S, nullptr, 0, nullptr);
  }
  demb.assign(dy.size(), T(0));
  dropout_backward<T>(demb.data(), dy.data(), enc_emb_mask_.data(), demb.size());
  embedding_backward<T>(G(cfg_.tie_embeddings ? layout_.tok_emb : layout_.src_emb), demb.data(), b.src.data(), b.B, b.S,
                        C, scale);
}

template <typename T>
const std::vector<T>& Transformer<T>::encoder_attention(int layer) const {
  return enc_.at(static_cast<std::size_t>(layer)).attn.attn.att;
}
template <typename T>
const std::vector<T>& Transformer<T>::decoder_self_attention(int layer) const {
  return dec_.at(static_cast<std::size_t>(layer)).self.attn.att;
}
template <typename T>
const std::vector<T>& Transformer<T>::decoder_cross_attention(int layer) const {
  return dec_.at(static_cast<std::size_t>(layer)).cross.attn.att;
}

template <typename T>
typename Transformer<T>::AttentionView Transformer<T>::attention_view(Block block, int layer) const {
  AttentionView v;
  v.B = batch_.B;
  const auto l = static_cast<std::size_t>(layer);
  if (block == Block::EncoderSelf) {
    if (cfg_.decoder_only || l >= enc_.size()) throw ShapeError("attention_view: no encoder layer " + std::to_string(layer));
    const Sub& s = enc_[l].attn;
    v.query_input = v.kv_input = s.sub_in;
    v.Tq = v.Tk = batch_.S;
    v.weights = &s.attn.att;
    v.output = &s.attn.out;
    v.params = layout_.enc[l].attn;
  } else if (block == Block::DecoderSelf) {
    if (l >= dec_.size()) throw ShapeError("attention_view: no decoder layer " + std::to_string(layer));
    const Sub& s = dec_[l].self;
    v.query_input = v.kv_input = s.sub_in;
    v.Tq = v.Tk = batch_.T;
    v.weights = &s.attn.att;
    v.output = &s.attn.out;
    v.params = layout_.dec[l].self_attn;
  } else {
    if (cfg_.decoder_only || l >= dec_.size()) throw ShapeError("attention_view: no cross-attention in layer " + std::to_string(layer));
    const Sub& s = dec_[l].cross;
    v.query_input = s.sub_in;
    v.kv_input = enc_final_.out.data();
    v.Tq = batch_.T;
    v.Tk = batch_.S;
    v.weights = &s.attn.att;
    v.output = &s.attn.out;
    v.params = layout_.dec[l].cross_attn;
  }
  return v;
}

// ---- incremental decoding ---------------------------------------------------------------------------

template <typename T>
void Transformer<T>::start_decoding(const std::vector<int>& src, int beams) {
  const int C = cfg_.d_model;
  if (beams < 1) throw ShapeError("start_decoding: beams must be at least 1");
  beams_ = beams;
  step_ = 0;
  dec_cache_.assign(layout_.dec.size(), CacheLayer{});
  for (auto& c : dec_cache_) {
    c.k.assign(static_cast<std::size_t>(beams) * cfg_.max_len * C, T(0));
    c.v.assign(c.k.size(), T(0));
  }
  src_len_ = 0;
  if (cfg_.decoder_only) return;
  if (src.empty()) throw ShapeError("start_decoding: empty source");
  // Run the encoder alone (a one-sentence batch with a dummy one-token target).
  Batch b;
  b.B = 1;
  b.S = static_cast<int>(src.size());
  b.T = 1;
  b.src = src;
  b.src_len = {b.S};
  b.tgt_in = {kBos};
  b.tgt_out = {kPad};
  forward(b, T(0), false, nullptr);
  src_len_ = b.S;
  for (std::size_t l = 0; l < layout_.dec.size(); ++l) {
    const AttnLayout& o = layout_.dec[l].cross_attn;
    CacheLayer& c = dec_cache_[l];
    c.cross_k.resize(static_cast<std::size_t>(b.S) * C);
    c.cross_v.resize(c.cross_k.size());
    linear_forward<T>(c.cross_k.data(), enc_final_.out.data(), P(o.wk), P(o.bk), b.S, C, C);
    linear_forward<T>(c.cross_v.data(), enc_final_.out.data(), P(o.wv), P(o.bv), b.S, C, C);
    c.cross_att.assign(static_cast<std::size_t>(beams) * cfg_.heads * b.S, T(0));
  }
}

template <typename T>
void Transformer<T>::step_attention(const AttnLayout& o, const T* x, CacheLayer& c, bool cross, std::vector<T>& out) {
  const int K = beams_, C = cfg_.d_model, H = cfg_.heads;
  std::vector<T> q(static_cast<std::size_t>(K) * C), ctx(q.size());
  linear_forward<T>(q.data(), x, P(o.wq), P(o.bq), K, C, C);
  const std::size_t stride = static_cast<std::size_t>(cfg_.max_len) * C;
  if (!cross) {
    std::vector<T> kt(q.size()), vt(q.size());
    linear_forward<T>(kt.data(), x, P(o.wk), P(o.bk), K, C, C);
    linear_forward<T>(vt.data(), x, P(o.wv), P(o.bv), K, C, C);
    for (int i = 0; i < K; ++i) {
      std::copy_n(kt.data() + static_cast<std::size_t>(i) * C, C, c.k.data() + i * stride + static_cast<std::size_t>(step_) * C);
      std::copy_n(vt.data() + static_cast<std::size_t>(i) * C, C, c.v.data() + i * stride + static_cast<std::size_t>(step_) * C);
    }
  }
  const int Tk = cross ? src_len_ : step_ + 1;
  std::vector<T> att(static_cast<std::size_t>(H) * Tk);
  for (int i = 0; i < K; ++i) {
    const T* keys = cross ? c.cross_k.data() : c.k.data() + i * stride;
    const T* vals = cross ? c.cross_v.data() : c.v.data() + i * stride;
    attention_forward<T>(ctx.data() + static_cast<std::size_t>(i) * C, att.data(), q.data() + static_cast<std::size_t>(i) * C,
                         keys, vals, nullptr, false, 1, 1, Tk, C, H);
    if (cross) std::copy(att.begin(), att.end(), c.cross_att.begin() + static_cast<std::ptrdiff_t>(i) * H * Tk);
  }
  out.resize(q.size());
  linear_forward<T>(out.data(), ctx.data(), P(o.wo), P(o.bo), K, C, C);
}

template <typename T>
const std::vector<T>& Transformer<T>::decode_step(const std::vector<int>& tokens) {
  const int K = beams_, C = cfg_.d_model, V = cfg_.vocab_size;
  if (static_cast<int>(tokens.size()) != K) throw ShapeError("decode_step: one token per hypothesis expected");
  if (step_ >= cfg_.max_len) throw ShapeError("decode_step: reached max_len = " + std::to_string(cfg_.max_len));
  for (int t : tokens)
    if (t < 0 || t >= V) throw ShapeError("decode_step: token id out of range");
  const std::size_t n = static_cast<std::size_t>(K) * C;
  const T scale = static_cast<T>(std::sqrt(static_cast<double>(C)));
  std::vector<T> x(n), in(n), sub(n), mean(K), rstd(K);
  const T eps = static_cast<T>(cfg_.ln_eps);
  for (int i = 0; i < K; ++i) {
    const T* e = P(layout_.tok_emb) + static_cast<std::size_t>(tokens[i]) * C;
    const T* pe = pe_.data() + static_cast<std::size_t>(step_) * C;
    for (int c = 0; c < C; ++c) x[static_cast<std::size_t>(i) * C + c] = e[c] * scale + pe[c];
  }
  auto residual = [&](const NormLayout& norm, auto&& fn) {
    const T* src = x.data();
    if (cfg_.pre_norm) {
      layernorm_forward<T>(in.data(), mean.data(), rstd.data(), x.data(), P(norm.g), P(norm.b), K, C, eps);
      src = in.data();
    }
    fn(src, sub);
    for (std::size_t i = 0; i < n; ++i) x[i] += sub[i];
    if (!cfg_.pre_norm) {
      layernorm_forward<T>(in.data(), mean.data(), rstd.data(), x.data(), P(norm.g), P(norm.b), K, C, eps);
      std::copy(in.begin(), in.end(), x.begin());
    }
  };
  for (std::size_t l = 0; l < layout_.dec.size(); ++l) {
    const DecoderLayerLayout& L = layout_.dec[l];
    CacheLayer& cache = dec_cache_[l];
    residual(L.ln1, [&](const T* s, std::vector<T>& out) { step_attention(L.self_attn, s, cache, false, out); });
    if (!cfg_.decoder_only)
      residual(L.ln2, [&](const T* s, std::vector<T>& out) { step_attention(L.cross_attn, s, cache, true, out); });
    residual(cfg_.decoder_only ? L.ln2 : L.ln3, [&](const T* s, std::vector<T>& out) {
      const FfnLayout& f = L.ffn;
      std::vector<T> h(static_cast<std::size_t>(K) * cfg_.d_ff);
      linear_forward<T>(h.data(), s, P(f.w1), P(f.b1), K, C, cfg_.d_ff);
      relu_forward<T>(h.data(), h.data(), h.size());
      out.resize(n);
      linear_forward<T>(out.data(), h.data(), P(f.w2), P(f.b2), K, cfg_.d_ff, C);
    });
  }
  layernorm_forward<T>(in.data(), mean.data(), rstd.data(), x.data(), P(layout_.dec_norm.g), P(layout_.dec_norm.b), K, C,
                       eps);
  step_logits_.resize(static_cast<std::size_t>(K) * V);
  if (cfg_.tie_embeddings) {
    gemm<T>(false, true, K, V, C, T(1), in.data(), C, P(layout_.tok_emb), C, T(0), step_logits_.data(), V);
  } else {
    linear_forward<T>(step_logits_.data(), in.data(), P(layout_.out_proj), nullptr, K, C, V);
  }
  ++step_;
  return step_logits_;
}

template <typename T>
void Transformer<T>::reorder_cache(const std::vector<int>& order) {
  if (static_cast<int>(order.size()) != beams_) throw ShapeError("reorder_cache: one index per hypothesis expected");
  const std::size_t stride = static_cast<std::size_t>(cfg_.max_len) * cfg_.d_model;
  const std::size_t used = static_cast<std::size_t>(step_) * cfg_.d_model;
  const std::size_t att_stride = static_cast<std::size_t>(cfg_.heads) * src_len_;
  for (auto& c : dec_cache_) {
    std::vector<T> k(c.k.size()), v(c.v.size()), ca(c.cross_att.size());
    for (int i = 0; i < beams_; ++i) {
      const int from = order[i];
      if (from < 0 || from >= beams_) throw ShapeError("reorder_cache: index out of range");
      std::copy_n(c.k.data() + from * stride, used, k.data() + i * stride);
      std::copy_n(c.v.data() + from * stride, used, v.data() + i * stride);
      if (att_stride) std::copy_n(c.cross_att.data() + from * att_stride, att_stride, ca.data() + i * att_stride);
    }
    c.k.swap(k);
    c.v.swap(v);
    c.cross_att.swap(ca);
  }
}

template class Transformer<float>;
template class Transformer<double>;

}  // namespace attnlab::model
