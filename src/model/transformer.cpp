#include "model/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "backend/positional.hpp"  // a host-side table, uploaded once
#include "util/error.hpp"
#include "util/rng.hpp"

namespace attnlab::model {

std::vector<float> positional_encoding(int n, int C) { return backend::positional_encoding<float>(n, C); }

namespace {
// How the backward's ops treat the parameters' gradients: written, not added to. Each weight matrix,
// bias and norm gain is used once in a forward, so exactly one op of the backward produces its
// gradient, and backward() need not zero `grads` first (which, with the products then reading it
// back, would be 8 bytes a parameter a step). The embedding tables are the exception (backward()).
constexpr backend::GradMode kParams = backend::GradMode::Write;
}  // namespace

template <typename T>
Transformer<T>::Transformer(const ModelConfig& config, backend::Ops<T>& backend)
    : be_(backend), cfg_(config), layout_(make_layout(config)) {
  validate(cfg_, "model");
  if (cfg_.vocab_size < 5) throw InputError("model.vocab_size: " + std::to_string(cfg_.vocab_size) + " is too small (4 special tokens + at least 1 word)");
  zeroed(params, layout_.total);
  zeroed(grads, layout_.total);
  sized(pe_, 0);
  pe_.upload(backend::positional_encoding<T>(cfg_.max_len, cfg_.d_model));
}

template <typename T>
void Transformer<T>::init_params(std::uint64_t seed) {
  std::uint64_t s = seed ^ 0xA77E27106ull;
  std::vector<T> host(layout_.total, T(0));
  for (const TensorInfo& t : layout_.tensors) {
    T* p = host.data() + t.offset;
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
  params.upload(host);
}

// ---- buffers and seeds ---------------------------------------------------------------------------

template <typename T>
T* Transformer<T>::sized(Buf& b, std::size_t n) const {
  b.bind(be_);
  b.resize(n);
  return b.data();
}

template <typename T>
T* Transformer<T>::zeroed(Buf& b, std::size_t n) const {
  sized(b, n);
  b.zero();
  return b.data();
}

// Each dropout site of a training forward gets its own seed: splitmix64 of (the forward's base + the
// site's number), so sites never share a mask and the whole forward advanced the caller's state once.
template <typename T>
std::uint64_t Transformer<T>::next_dropout_seed() {
  std::uint64_t state = dropout_base_ + static_cast<std::uint64_t>(dropout_site_++);
  return splitmix64(state);
}

// ---- building blocks ---------------------------------------------------------------------------

template <typename T>
void Transformer<T>::ln_fwd(const NormLayout& o, const T* x, int N, LNAct& a) {
  const int C = cfg_.d_model;
  be_.layernorm_forward(sized(a.out, static_cast<std::size_t>(N) * C), sized(a.mean, N), sized(a.rstd, N), x, P(o.g),
                        P(o.b), N, C, static_cast<T>(cfg_.ln_eps));
}

template <typename T>
void Transformer<T>::ln_bwd(const NormLayout& o, const T* x, int N, const LNAct& a, const T* dy, T* dx,
                            backend::GradMode mode) {
  // γ's and β's gradients written: each norm's backward runs once per backward (kParams).
  be_.layernorm_backward(dx, G(o.g), G(o.b), dy, x, P(o.g), a.mean.data(), a.rstd.data(), N, cfg_.d_model, mode,
                         kParams);
}

template <typename T>
backend::AttentionShape Transformer<T>::attn_shape(const AttnAct& a) const {
  backend::AttentionShape s;
  s.B = batch_.B;
  s.Tq = a.Tq;
  s.Tk = a.Tk;
  s.C = cfg_.d_model;
  s.H = cfg_.heads;
  s.key_len = a.masked ? src_len_dev_ : nullptr;
  s.causal = a.causal;
  return s;
}

template <typename T>
void Transformer<T>::attn_fwd(const AttnLayout& o, const T* xq, int Tq, const T* xkv, int Tk, bool masked, bool causal,
                              AttnAct& a) {
  const int B = batch_.B, C = cfg_.d_model, H = cfg_.heads;
  const std::size_t nq = static_cast<std::size_t>(B) * Tq * C, nk = static_cast<std::size_t>(B) * Tk * C;
  a.Tq = Tq;
  a.Tk = Tk;
  a.masked = masked;
  a.causal = causal;
  be_.linear_forward(sized(a.q, nq), xq, P(o.wq), P(o.bq), B * Tq, C, C);
  be_.linear_forward(sized(a.k, nk), xkv, P(o.wk), P(o.bk), B * Tk, C, C);
  be_.linear_forward(sized(a.v, nk), xkv, P(o.wv), P(o.bv), B * Tk, C, C);
  be_.attention_forward(sized(a.ctx, nq), sized(a.lse, static_cast<std::size_t>(B) * H * Tq), a.q.data(), a.k.data(),
                        a.v.data(), attn_shape(a));
  be_.linear_forward(sized(a.out, nq), a.ctx.data(), P(o.wo), P(o.bo), B * Tq, C, C);
}

template <typename T>
void Transformer<T>::attn_bwd(const AttnLayout& o, const T* xq, const T* xkv, AttnAct& a, const T* dout, T* dxq,
                              T* dxkv, backend::GradMode q_mode) {
  const int B = batch_.B, C = cfg_.d_model, Tq = a.Tq, Tk = a.Tk;
  const std::size_t nq = static_cast<std::size_t>(B) * Tq * C, nk = static_cast<std::size_t>(B) * Tk * C;
  // Scratch kept between steps (nothing allocated after the first), each written before it is read:
  // dctx by the output projection's backward, dq, dk, dv by the attention's (no zero fill).
  T* dctx = sized(ws_dctx_, nq);
  T* dq = sized(ws_dq_, nq);
  T* dk = sized(ws_dk_, nk);
  T* dv = sized(ws_dv_, nk);
  be_.linear_backward(dctx, G(o.wo), G(o.bo), dout, a.ctx.data(), P(o.wo), B * Tq, C, C, backend::GradMode::Write,
                      kParams);
  be_.attention_backward(dq, dk, dv, dctx, a.ctx.data(), a.lse.data(), a.q.data(), a.k.data(), a.v.data(), attn_shape(a),
                         backend::GradMode::Write);
  // Q first: where dxq is fresh (q_mode Write) and is dxkv too (self-attention), K and V add to it.
  be_.linear_backward(dxq, G(o.wq), G(o.bq), dq, xq, P(o.wq), B * Tq, C, C, q_mode, kParams);
  be_.linear_backward(dxkv, G(o.wk), G(o.bk), dk, xkv, P(o.wk), B * Tk, C, C, backend::GradMode::Add, kParams);
  be_.linear_backward(dxkv, G(o.wv), G(o.bv), dv, xkv, P(o.wv), B * Tk, C, C, backend::GradMode::Add, kParams);
}

template <typename T>
void Transformer<T>::ffn_fwd(const FfnLayout& o, const T* x, int N, FfnAct& a) {
  const int C = cfg_.d_model, F = cfg_.d_ff;
  const std::size_t nf = static_cast<std::size_t>(N) * F;
  T* h = sized(a.a, nf);
  // ReLU applied as the product is stored: h > 0 exactly where the pre-activation was, all its
  // backward needs.
  be_.linear_forward(h, x, P(o.w1), P(o.b1), N, C, F, backend::Activation::Relu);
  be_.linear_forward(sized(a.out, static_cast<std::size_t>(N) * C), h, P(o.w2), P(o.b2), N, F, C);
}

template <typename T>
void Transformer<T>::ffn_bwd(const FfnLayout& o, const T* x, int N, const FfnAct& a, const T* dout, T* dx,
                             backend::GradMode mode) {
  const int C = cfg_.d_model, F = cfg_.d_ff;
  const std::size_t nf = static_cast<std::size_t>(N) * F;
  T* da = sized(ws_da_, nf);  // both written, not accumulated: no zero fill
  T* dh = sized(ws_dh_, nf);
  be_.linear_backward(da, G(o.w2), G(o.b2), dout, a.a.data(), P(o.w2), N, F, C, backend::GradMode::Write, kParams);
  be_.relu_backward(dh, da, a.a.data(), nf, backend::GradMode::Write);
  be_.linear_backward(dx, G(o.w1), G(o.b1), dh, x, P(o.w1), N, C, F, mode, kParams);
}

template <typename T>
void Transformer<T>::sub_fwd(Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm,
                             const T* x, int Tq, const T* mem, int Tk, bool masked, bool causal, float p) {
  const int N = batch_.B * Tq, C = cfg_.d_model;
  const std::size_t n = static_cast<std::size_t>(N) * C;
  s.x = x;
  if (bf16_ && kind == Kind::Ffn) {
    ffn_sub_fwd16(s, *ffn, norm, x, N, p);
    return;
  }
  if (bf16_) {
    attn_sub_fwd16(s, kind, *attn, norm, x, Tq, kind == Kind::CrossAttn ? Tk : Tq, masked,
                   kind == Kind::CrossAttn ? false : causal, p);
    return;
  }
  const T* in = x;
  if (cfg_.pre_norm) {
    ln_fwd(norm, x, N, s.ln);
    in = s.ln.out.data();
  }
  s.sub_in = in;
  const T* out = nullptr;
  if (kind == Kind::SelfAttn) {
    attn_fwd(*attn, in, Tq, in, Tq, masked, causal, s.attn);
    out = s.attn.out.data();
  } else if (kind == Kind::CrossAttn) {
    attn_fwd(*attn, in, Tq, mem, Tk, masked, false, s.attn);
    out = s.attn.out.data();
  } else {
    ffn_fwd(*ffn, in, N, s.ffn);
    out = s.ffn.out.data();
  }
  // sum = x + dropout(out) in one pass: the mask is not stored (the backward draws it again from the
  // seed). Without dropout (inference, or p = 0) the output goes straight into the residual sum.
  s.p = p;
  if (p > 0.0f) {
    s.seed = next_dropout_seed();
    be_.dropout_forward(sized(s.sum, n), out, x, n, p, s.seed);
  } else {
    be_.add_forward(sized(s.sum, n), x, out, n);
  }
  sub_output(s, norm, N);
}

// The sub-layer's output from its residual sum: the sum itself (pre-norm), or its norm (post-norm).
// Post-norm at bf16 with a next sub-layer named (next_in16_), the norm also writes its output in bf16
// there, in the same pass: the next sub_input16 then has its input without a rounding pass.
template <typename T>
void Transformer<T>::sub_output(Sub& s, const NormLayout& norm, int N) {
  if (cfg_.pre_norm) {
    s.y = s.sum.data();
  } else if (bf16_ && next_in16_) {
    const int C = cfg_.d_model;
    const std::size_t n = static_cast<std::size_t>(N) * C;
    be_.layernorm_forward_bf16(sized16(*next_in16_, n), sized(s.ln.out, n), sized(s.ln.mean, N), sized(s.ln.rstd, N),
                               s.sum.data(), P(norm.g), P(norm.b), N, C, static_cast<T>(cfg_.ln_eps));
    s.y = s.ln.out.data();
    in16_ready_ = {s.y, next_in16_};
  } else {
    ln_fwd(norm, s.sum.data(), N, s.ln);
    s.y = s.ln.out.data();
  }
}

template <typename T>
void Transformer<T>::sub_bwd(Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm,
                             int Tq, const T* mem, const T* dy, T* dx, T* dmem) {
  const int N = batch_.B * Tq, C = cfg_.d_model;
  const std::size_t n = static_cast<std::size_t>(N) * C;
  using backend::GradMode;
  // The gradient of the residual sum: pre-norm, the output itself (dy, which is dx); post-norm, the
  // norm's backward, written straight into dx. Either way no copy: the residual path's share of dx is
  // already where dx is built.
  const T* dsum = dy;
  if (!cfg_.pre_norm) {
    ln_bwd(norm, s.sum.data(), N, s.ln, dy, dx, GradMode::Write);
    dsum = dx;
  }
  if (bf16_ && kind == Kind::Ffn) {
    ffn_sub_bwd16(s, *ffn, norm, N, dsum, dx);
    return;
  }
  if (bf16_) {
    attn_sub_bwd16(s, kind, *attn, norm, Tq, dsum, dx, dmem);
    return;
  }
  const T* dsub = dsum;  // no dropout in the forward: the sub-layer's gradient is the sum's
  if (s.p > 0.0f) {
    T* d = sized(ws_dsub_, n);
    be_.dropout_backward(d, dsum, n, s.p, s.seed, GradMode::Write);
    dsub = d;
  }
  // Post-norm: the sub-layer saw x itself, so its gradient adds to dx. Without dropout dsub is dx: safe,
  // because attn_bwd and ffn_bwd read their dout only in their first product, before anything adds to
  // dx. Pre-norm: the sub-layer saw LN(x); its gradient goes to a fresh buffer, written first, then
  // through the norm, which adds it to dx in place (dx is dy; the sub-layer is done with dy).
  T* din = cfg_.pre_norm ? sized(ws_din_, n) : dx;
  const GradMode mode = cfg_.pre_norm ? GradMode::Write : GradMode::Add;
  if (kind == Kind::SelfAttn) attn_bwd(*attn, s.sub_in, s.sub_in, s.attn, dsub, din, din, mode);
  else if (kind == Kind::CrossAttn) attn_bwd(*attn, s.sub_in, mem, s.attn, dsub, din, dmem, mode);
  else ffn_bwd(*ffn, s.sub_in, N, s.ffn, dsub, din, mode);
  if (cfg_.pre_norm) ln_bwd(norm, s.x, N, s.ln, din, dx, GradMode::Add);
}

template <typename T>
const backend::Bf16* Transformer<T>::weights16(backend::Buffer<backend::Bf16>& b, std::size_t off, std::size_t n) {
  if (params16_now_) return params16_now_ + off;
  be_.to_bf16(sized16(b, n), P(off), n);
  return b.data();
}

template <typename T>
void Transformer<T>::adamw_step(T* m, T* v, const std::uint8_t* decay_mask, const backend::AdamStep& h) {
  if (be_.matmul_precision() != backend::MatmulPrecision::Bf16) {
    params16_fresh_ = false;
    be_.adamw_step(params.data(), grads.data(), m, v, decay_mask, params.size(), h);
    return;
  }
  be_.adamw_step_bf16(params.data(), sized16(params16_, params.size()), grads.data(), m, v, decay_mask,
                      params.size(), h);
  params16_fresh_ = true;
}

// A bf16 sub-layer's input from the residual stream x: pre-norm, the norm writes it in bf16 only (the
// sub-layer is its one reader); post-norm, x itself (float32, the previous norm's output) rounded once:
// already in dst when that norm wrote it there (sub_output), else rounded here (a stack's first
// sub-layer, whose input is the embedding).
template <typename T>
const backend::Bf16* Transformer<T>::sub_input16(Sub& s, const NormLayout& norm, const T* x, int N,
                                                 backend::Buffer<backend::Bf16>& dst) {
  const int C = cfg_.d_model;
  backend::Bf16* in = sized16(dst, static_cast<std::size_t>(N) * C);
  if (cfg_.pre_norm) {
    be_.layernorm_forward_bf16(in, nullptr, sized(s.ln.mean, N), sized(s.ln.rstd, N), x, P(norm.g), P(norm.b), N, C,
                               static_cast<T>(cfg_.ln_eps));
  } else if (in16_ready_.x != x || in16_ready_.dst != &dst) {
    be_.to_bf16(in, x, static_cast<std::size_t>(N) * C);
  }
  in16_ready_ = {};
  s.x = x;
  s.sub_in = nullptr;  // not a float32 buffer here: dst holds it
  return in;
}

// The residual sum x + dropout(out) from a bf16 sub-layer output (float32 sum; without dropout
// dropout's p = 0, every element kept, ×1 exact), then the sub-layer's output.
template <typename T>
void Transformer<T>::sub_residual16(Sub& s, const NormLayout& norm, const backend::Bf16* out, int N, float p) {
  const std::size_t n = static_cast<std::size_t>(N) * cfg_.d_model;
  s.p = p;
  if (p > 0.0f) s.seed = next_dropout_seed();
  be_.dropout_forward_bf16(sized(s.sum, n), out, s.x, n, p, s.seed);
  sub_output(s, norm, N);
}

// The feed-forward sub-layer with bf16 activations: the same ops as sub_fwd's, on bf16 buffers, between
// sub_input16 and sub_residual16.
template <typename T>
void Transformer<T>::ffn_sub_fwd16(Sub& s, const FfnLayout& o, const NormLayout& norm, const T* x, int N, float p) {
  const int C = cfg_.d_model, F = cfg_.d_ff;
  const std::size_t n = static_cast<std::size_t>(N) * C, nf = static_cast<std::size_t>(N) * F;
  FfnAct& a = s.ffn;
  const backend::Bf16* in = sub_input16(s, norm, x, N, a.in16);
  a.w1 = weights16(a.w1_16, o.w1, static_cast<std::size_t>(C) * F);
  a.w2 = weights16(a.w2_16, o.w2, static_cast<std::size_t>(F) * C);
  be_.linear_forward_bf16(sized16(a.a16, nf), in, a.w1, P(o.b1), N, C, F, backend::Activation::Relu);
  be_.linear_forward_bf16(sized16(a.out16, n), a.a16.data(), a.w2, P(o.b2), N, F, C);
  sub_residual16(s, norm, a.out16.data(), N, p);
}

// Its backward from dsum (the residual sum's gradient, float32): dout, da and dh in bf16; dx as in
// sub_bwd (pre-norm: the norm's backward adds into it from the bf16 gradient of its output;
// post-norm: the first product adds into it in float32).
template <typename T>
void Transformer<T>::ffn_sub_bwd16(Sub& s, const FfnLayout& o, const NormLayout& norm, int N, const T* dsum, T* dx) {
  using backend::GradMode;
  const int C = cfg_.d_model, F = cfg_.d_ff;
  const std::size_t n = static_cast<std::size_t>(N) * C, nf = static_cast<std::size_t>(N) * F;
  const FfnAct& a = s.ffn;
  backend::Bf16* dout = sized16(ws_dout16_, n);
  backend::Bf16* da = sized16(ws_da16_, nf);
  backend::Bf16* dh = sized16(ws_dh16_, nf);
  be_.dropout_backward_bf16(dout, dsum, n, s.p, s.seed, GradMode::Write);
  be_.linear_backward_bf16(da, G(o.w2), G(o.b2), dout, a.a16.data(), a.w2, N, F, C, GradMode::Write, kParams);
  be_.relu_backward_bf16(dh, da, a.a16.data(), nf, GradMode::Write);
  if (cfg_.pre_norm) {
    backend::Bf16* din = sized16(ws_din16_, n);
    be_.linear_backward_bf16(din, G(o.w1), G(o.b1), dh, a.in16.data(), a.w1, N, C, F, GradMode::Write, kParams);
    be_.layernorm_backward_bf16(dx, G(norm.g), G(norm.b), din, s.x, P(norm.g), s.ln.mean.data(), s.ln.rstd.data(), N,
                                C, GradMode::Add, kParams);
  } else {
    be_.linear_backward_bf16(dx, G(o.w1), G(o.b1), dh, a.in16.data(), a.w1, N, C, F, GradMode::Add, kParams);
  }
}

// An attention sub-layer with bf16 activations: sub_fwd's ops on bf16 buffers, as ffn_sub_fwd16 does
// for the feed-forward block. The shape's strides are the packed ones of the float32 path.
template <typename T>
void Transformer<T>::attn_sub_fwd16(Sub& s, Kind kind, const AttnLayout& o, const NormLayout& norm, const T* x, int Tq,
                                    int Tk, bool masked, bool causal, float p) {
  const int B = batch_.B, C = cfg_.d_model, H = cfg_.heads, N = B * Tq, Nk = B * Tk;
  const std::size_t n = static_cast<std::size_t>(N) * C, nk = static_cast<std::size_t>(Nk) * C,
                    nw = static_cast<std::size_t>(C) * C;
  AttnAct& a = s.attn;
  a.Tq = Tq;
  a.Tk = Tk;
  a.masked = masked;
  a.causal = causal;
  const backend::Bf16* in = sub_input16(s, norm, x, N, a.in16);
  const backend::Bf16* kv_in = kind == Kind::CrossAttn ? mem16_.data() : in;
  a.wq = weights16(a.wq_16, o.wq, nw);
  a.wk = weights16(a.wk_16, o.wk, nw);
  a.wv = weights16(a.wv_16, o.wv, nw);
  a.wo = weights16(a.wo_16, o.wo, nw);
  be_.linear_forward_bf16(sized16(a.q16, n), in, a.wq, P(o.bq), N, C, C);
  be_.linear_forward_bf16(sized16(a.k16, nk), kv_in, a.wk, P(o.bk), Nk, C, C);
  be_.linear_forward_bf16(sized16(a.v16, nk), kv_in, a.wv, P(o.bv), Nk, C, C);
  be_.attention_forward_bf16(sized16(a.ctx16, n), sized(a.lse, static_cast<std::size_t>(B) * H * Tq), a.q16.data(),
                             a.k16.data(), a.v16.data(), attn_shape(a));
  be_.linear_forward_bf16(sized16(a.out16, n), a.ctx16.data(), a.wo, P(o.bo), N, C, C);
  sub_residual16(s, norm, a.out16.data(), N, p);
}

// Its backward from dsum: dout, dctx, dq, dk and dv in bf16; the input's gradient float32 (pre-norm a
// fresh buffer through the norm's backward, post-norm added into dx), so that the Q, K and V products'
// three shares add up in float32 and are not rounded after each; cross-attention's K and V shares add
// into dmem.
template <typename T>
void Transformer<T>::attn_sub_bwd16(Sub& s, Kind kind, const AttnLayout& o, const NormLayout& norm, int Tq,
                                    const T* dsum, T* dx, T* dmem) {
  using backend::GradMode;
  const AttnAct& a = s.attn;
  const int B = batch_.B, C = cfg_.d_model, N = B * Tq, Nk = B * a.Tk;
  const std::size_t n = static_cast<std::size_t>(N) * C, nk = static_cast<std::size_t>(Nk) * C;
  backend::Bf16* dout = sized16(ws_dout16_, n);
  backend::Bf16* dctx = sized16(ws_dctx16_, n);
  backend::Bf16* dq = sized16(ws_dq16_, n);
  backend::Bf16* dk = sized16(ws_dk16_, nk);
  backend::Bf16* dv = sized16(ws_dv16_, nk);
  be_.dropout_backward_bf16(dout, dsum, n, s.p, s.seed, GradMode::Write);
  be_.linear_backward_bf16(dctx, G(o.wo), G(o.bo), dout, a.ctx16.data(), a.wo, N, C, C, GradMode::Write, kParams);
  be_.attention_backward_bf16(dq, dk, dv, dctx, a.ctx16.data(), a.lse.data(), a.q16.data(), a.k16.data(),
                              a.v16.data(), attn_shape(a), GradMode::Write);
  // Post-norm: dsum is dx, already read (into dout) before anything adds to it.
  T* din = cfg_.pre_norm ? sized(ws_din_, n) : dx;
  T* dkv = kind == Kind::CrossAttn ? dmem : din;
  const backend::Bf16* kv_in = kind == Kind::CrossAttn ? mem16_.data() : a.in16.data();
  be_.linear_backward_bf16(din, G(o.wq), G(o.bq), dq, a.in16.data(), a.wq, N, C, C,
                           cfg_.pre_norm ? GradMode::Write : GradMode::Add, kParams);
  be_.linear_backward_bf16(dkv, G(o.wk), G(o.bk), dk, kv_in, a.wk, Nk, C, C, GradMode::Add, kParams);
  be_.linear_backward_bf16(dkv, G(o.wv), G(o.bv), dv, kv_in, a.wv, Nk, C, C, GradMode::Add, kParams);
  if (cfg_.pre_norm) ln_bwd(norm, s.x, N, s.ln, din, dx, GradMode::Add);
}

// ---- whole model ----------------------------------------------------------------------------------

template <typename T>
T Transformer<T>::forward(const Batch& b, T smoothing, bool train, std::uint64_t* rng) {
  forward_queued(b, smoothing, train, rng);
  return loss();
}

template <typename T>
std::size_t Transformer<T>::queued_rows(const char* who) const {
  const std::size_t N = batch_.tgt_out.size();
  if (readback_.size() != N + 2) throw RuntimeError(std::string("Transformer::") + who + ": no forward yet");
  return N;
}

template <typename T>
T Transformer<T>::loss_of(const std::vector<double>& rows) const {
  const std::vector<int>& targets = batch_.tgt_out;
  return static_cast<T>(backend::row_loss_mean(rows.data(), targets.data(), targets.size(), kPad, nullptr));
}

template <typename T>
T Transformer<T>::loss() const {
  return loss_of(readback_.download(0, queued_rows("loss")));
}

template <typename T>
const double* Transformer<T>::clip_gradients(double max_norm) {
  const std::size_t N = queued_rows("clip_gradients");
  double* r = readback_.data();
  be_.clip_factor(r + N, r + N + 1, grads.data(), grads.size(), max_norm, r, N);
  clipped_ = true;
  return r + N + 1;
}

template <typename T>
typename Transformer<T>::StepReadback Transformer<T>::read_step() const {
  const std::size_t N = queued_rows("read_step");
  if (!clipped_) throw RuntimeError("Transformer::read_step: no clip_gradients since the forward");
  const std::vector<double> r = readback_.download();
  StepReadback s;
  s.loss = loss_of(r);  // its first N values
  s.grad_norm = r[N];
  s.grad_scale = r[N + 1];
  return s;
}

template <typename T>
void Transformer<T>::forward_queued(const Batch& b, T smoothing, bool train, std::uint64_t* rng) {
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
  if (!cfg_.decoder_only) {
    check_tokens(b.src, static_cast<std::size_t>(b.B) * b.S, "src");
    if (b.src_len.size() != static_cast<std::size_t>(b.B)) throw ShapeError("forward: src_len has the wrong size");
    for (int l : b.src_len)
      if (l < 1 || l > b.S) throw ShapeError("forward: a source length is outside [1, S]");
  }
  batch_ = b;
  readback_.resize(0);  // loss() refuses until this forward has queued its rows
  clipped_ = false;     // and read_step() until clip_gradients has written the norm and the factor
  // The loss's backward divides by the rows counted: known from the batch, so nothing waits for it.
  count_ = static_cast<int>(std::count_if(b.tgt_out.begin(), b.tgt_out.end(), [](int t) { return t != kPad; }));
  smoothing_ = smoothing;
  bf16_ = be_.matmul_precision() == backend::MatmulPrecision::Bf16;
  // The optimizer's bf16 copy serves this forward (and its backward) only: see adamw_step.
  params16_now_ = bf16_ && params16_fresh_ && params16_.size() == params.size() ? params16_.data() : nullptr;
  params16_fresh_ = false;
  const T scale = static_cast<T>(std::sqrt(static_cast<double>(C)));
  const float p = train ? cfg_.dropout : 0.0f;
  dropout_site_ = 0;
  if (p > 0.0f) dropout_base_ = rng ? splitmix64(*rng) : 0;
  emb_p_ = p;
  ids_host_.clear();
  for (const std::vector<int>* part : {&b.tgt_in, &b.tgt_out, &b.src, &b.src_len})
    ids_host_.insert(ids_host_.end(), part->begin(), part->end());
  ids_dev_.bind(be_);
  ids_dev_.upload(ids_host_);
  tgt_in_dev_ = ids_dev_.data();
  tgt_out_dev_ = tgt_in_dev_ + b.tgt_in.size();
  src_dev_ = tgt_out_dev_ + b.tgt_out.size();
  src_len_dev_ = src_dev_ + b.src.size();
  in16_ready_ = {};  // nothing left over from a forward that an error cut short

  const T* memory = nullptr;
  if (!cfg_.decoder_only) {
    const std::size_t n = static_cast<std::size_t>(b.B) * b.S * C;
    const std::size_t src_emb = cfg_.tie_embeddings ? layout_.tok_emb : layout_.src_emb;
    be_.embedding_forward(sized(enc_emb_, n), src_dev_, P(src_emb), pe_.data(), b.B, b.S, C, scale);
    // Without dropout the embedding is the first layer's input itself: no copy, no mask of ones.
    if (emb_dropout()) {
      enc_emb_seed_ = next_dropout_seed();
      be_.dropout_forward(sized(enc_x0_, n), enc_emb_.data(), nullptr, n, p, enc_emb_seed_);
    }
    const T* x = first_input(enc_emb_, enc_x0_);
    enc_.resize(layout_.enc.size());
    for (std::size_t l = 0; l < enc_.size(); ++l) {
      const EncoderLayerLayout& L = layout_.enc[l];
      next_in16_ = &enc_[l].ffn.ffn.in16;
      sub_fwd(enc_[l].attn, Kind::SelfAttn, &L.attn, nullptr, L.ln1, x, b.S, nullptr, 0, true, false, p);
      x = enc_[l].attn.y;
      next_in16_ = l + 1 < enc_.size() ? &enc_[l + 1].attn.attn.in16 : nullptr;
      sub_fwd(enc_[l].ffn, Kind::Ffn, nullptr, &L.ffn, L.ln2, x, b.S, nullptr, 0, false, false, p);
      x = enc_[l].ffn.y;
    }
    next_in16_ = nullptr;
    const int NS = b.B * b.S;
    if (bf16_) {
      // Every cross-attention reads the memory through its K and V products: the norm writes it in
      // bf16 too, in the same pass (the float32 one is what memory() and decoding's cache read).
      be_.layernorm_forward_bf16(sized16(mem16_, n), sized(enc_final_.out, n), sized(enc_final_.mean, NS),
                                 sized(enc_final_.rstd, NS), x, P(layout_.enc_norm.g), P(layout_.enc_norm.b), NS, C,
                                 static_cast<T>(cfg_.ln_eps));
    } else {
      ln_fwd(layout_.enc_norm, x, NS, enc_final_);
    }
    memory = enc_final_.out.data();
  }

  const std::size_t n = static_cast<std::size_t>(b.B) * b.T * C;
  be_.embedding_forward(sized(dec_emb_, n), tgt_in_dev_, P(layout_.tok_emb), pe_.data(), b.B, b.T, C, scale);
  if (emb_dropout()) {
    dec_emb_seed_ = next_dropout_seed();
    be_.dropout_forward(sized(dec_x0_, n), dec_emb_.data(), nullptr, n, p, dec_emb_seed_);
  }
  const T* y = first_input(dec_emb_, dec_x0_);
  dec_.resize(layout_.dec.size());
  for (std::size_t l = 0; l < dec_.size(); ++l) {
    const DecoderLayerLayout& L = layout_.dec[l];
    next_in16_ = cfg_.decoder_only ? &dec_[l].ffn.ffn.in16 : &dec_[l].cross.attn.in16;
    sub_fwd(dec_[l].self, Kind::SelfAttn, &L.self_attn, nullptr, L.ln1, y, b.T, nullptr, 0, false, true, p);
    y = dec_[l].self.y;
    if (!cfg_.decoder_only) {
      next_in16_ = &dec_[l].ffn.ffn.in16;
      sub_fwd(dec_[l].cross, Kind::CrossAttn, &L.cross_attn, nullptr, L.ln2, y, b.T, memory, b.S, true, false, p);
      y = dec_[l].cross.y;
    }
    next_in16_ = l + 1 < dec_.size() ? &dec_[l + 1].self.attn.in16 : nullptr;
    sub_fwd(dec_[l].ffn, Kind::Ffn, nullptr, &L.ffn, cfg_.decoder_only ? L.ln2 : L.ln3, y, b.T, nullptr, 0, false,
            false, p);
    y = dec_[l].ffn.y;
  }
  next_in16_ = nullptr;
  const int N = b.B * b.T;
  if (bf16_) {
    // The logits are the largest activation (N × V: 1.6 GB a step for GPT-2 small at 8 × 1024 in
    // float32), written by the product and read by the loss's forward, its backward (which writes
    // their gradient) and the two backward products: stored in bf16, each of those moves half the
    // bytes. The weights' bf16 copy is the optimizer's, or rounded here (V × C read, half that written).
    const std::size_t nh = static_cast<std::size_t>(N) * C, nw = static_cast<std::size_t>(V) * C;
    const std::size_t w_off = cfg_.tie_embeddings ? layout_.tok_emb : layout_.out_proj;
    be_.layernorm_forward_bf16(sized16(h16_, nh), nullptr, sized(dec_final_.mean, N), sized(dec_final_.rstd, N), y,
                               P(layout_.dec_norm.g), P(layout_.dec_norm.b), N, C, static_cast<T>(cfg_.ln_eps));
    head_w16_ = weights16(w16_, w_off, nw);
    backend::Bf16* logits16 = sized16(logits16_, static_cast<std::size_t>(N) * V);
    if (cfg_.tie_embeddings) {
      be_.gemm_bf16(false, true, N, V, C, T(1), h16_.data(), C, head_w16_, C, T(0), logits16, V);
    } else {
      be_.linear_forward_bf16(logits16, h16_.data(), head_w16_, nullptr, N, C, V);
    }
    be_.cross_entropy_forward_bf16(sized(lse_, N), rows_of_loss(N), logits16, tgt_out_dev_, N, V, smoothing, kPad);
    return;
  }
  ln_fwd(layout_.dec_norm, y, N, dec_final_);
  T* logits = sized(logits_, static_cast<std::size_t>(N) * V);
  if (cfg_.tie_embeddings) {
    // logits = h · Eᵀ: the output projection reuses the embedding matrix.
    be_.gemm(false, true, N, V, C, T(1), dec_final_.out.data(), C, P(layout_.tok_emb), C, T(0), logits, V);
  } else {
    be_.linear_forward(logits, dec_final_.out.data(), P(layout_.out_proj), nullptr, N, C, V);
  }
  be_.cross_entropy_forward(sized(lse_, N), rows_of_loss(N), logits, tgt_out_dev_, N, V, smoothing, kPad);
}

template <typename T>
double* Transformer<T>::rows_of_loss(int N) {
  readback_.bind(be_);
  readback_.resize(static_cast<std::size_t>(N) + 2);
  return readback_.data();
}

template <typename T>
backend::Bf16* Transformer<T>::sized16(backend::Buffer<backend::Bf16>& b, std::size_t n) const {
  b.bind(be_);
  b.resize(n);
  return b.data();
}

template <typename T>
std::vector<T> Transformer<T>::logits() const {
  return bf16_ ? widened(logits16_) : logits_.download();
}

template <typename T>
std::vector<T> Transformer<T>::probabilities() const {
  const std::size_t n = bf16_ ? logits16_.size() : logits_.size();
  if (lse_.empty()) return std::vector<T>(n);
  Buf p, wide;
  sized(p, n);
  const T* logits = logits_.data();
  if (bf16_) {
    be_.from_bf16(sized(wide, n), logits16_.data(), n);
    logits = wide.data();
  }
  be_.softmax_from_lse(p.data(), logits, lse_.data(), static_cast<int>(lse_.size()), cfg_.vocab_size);
  return p.download();
}

template <typename T>
void Transformer<T>::backward() {
  const Batch& b = batch_;
  const int C = cfg_.d_model, V = cfg_.vocab_size, N = b.B * b.T;
  const T scale = static_cast<T>(std::sqrt(static_cast<double>(C)));
  // No zero fill of grads: every parameter's gradient is written by the one op that produces it
  // (kParams), except the embedding tables', which embedding_backward adds into, row by token: tied,
  // the table's gradient is first written by the output projection's product below (beta = 0);
  // untied, the tables alone are zeroed. Activation gradients, likewise, are written by the first op
  // that produces them (GradMode::Write, a gemm with beta = 0, a copy).
  if (!cfg_.tie_embeddings) {
    be_.zero(G(layout_.tok_emb), static_cast<std::size_t>(V) * C * sizeof(T));
    if (!cfg_.decoder_only) be_.zero(G(layout_.src_emb), static_cast<std::size_t>(V) * C * sizeof(T));
  }

  const std::size_t nt = static_cast<std::size_t>(N) * C;
  T* dh = sized(ws_dh_out_, nt);
  if (bf16_) {
    // The forward's bf16 head: dlogits in bf16 (written by the loss's backward), dh and the weights'
    // gradient in float32 from the bf16 operands.
    backend::Bf16* dlogits16 = sized16(dlogits16_, static_cast<std::size_t>(N) * V);
    be_.cross_entropy_backward_bf16(dlogits16, logits16_.data(), lse_.data(), tgt_out_dev_, N, V, smoothing_,
                                    kPad, count_, T(1));
    if (cfg_.tie_embeddings) {
      be_.gemm_bf16(false, false, N, C, V, T(1), dlogits16, V, head_w16_, C, T(0), dh, C);
      be_.gemm_bf16(true, false, V, C, N, T(1), dlogits16, V, h16_.data(), C, T(0), G(layout_.tok_emb), C);
    } else {
      be_.linear_backward_bf16(dh, G(layout_.out_proj), nullptr, dlogits16, h16_.data(), head_w16_, N, C, V,
                               backend::GradMode::Write, kParams);
    }
  } else {
    // No zero fill: the loss's backward writes every value.
    T* dlogits = sized(dlogits_, static_cast<std::size_t>(N) * V);
    be_.cross_entropy_backward(dlogits, logits_.data(), lse_.data(), tgt_out_dev_, N, V, smoothing_, kPad,
                               count_, T(1));
    if (cfg_.tie_embeddings) {
      be_.gemm(false, false, N, C, V, T(1), dlogits, V, P(layout_.tok_emb), C, T(0), dh, C);
      be_.gemm(true, false, V, C, N, T(1), dlogits, V, dec_final_.out.data(), C, T(0), G(layout_.tok_emb), C);
    } else {
      be_.linear_backward(dh, G(layout_.out_proj), nullptr, dlogits, dec_final_.out.data(), P(layout_.out_proj), N, C,
                          V, backend::GradMode::Write, kParams);
    }
  }
  const T* y_last = dec_.empty() ? first_input(dec_emb_, dec_x0_) : dec_.back().ffn.y;
  sized(ws_dy_, nt);
  if (!cfg_.pre_norm) sized(ws_dprev_, nt);  // pre-norm's sub-layers update ws_dy_ in place
  ln_bwd(layout_.dec_norm, y_last, N, dec_final_, dh, ws_dy_.data(), backend::GradMode::Write);

  const T* memory = cfg_.decoder_only ? nullptr : enc_final_.out.data();
  T* dmem = cfg_.decoder_only ? nullptr : zeroed(ws_dmem_, static_cast<std::size_t>(b.B) * b.S * C);
  auto step_back = [&](Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm, int Tq,
                       const T* mem, T* dm) {
    // Pre-norm updates ws_dy_ in place; post-norm writes ws_dprev_, which then becomes ws_dy_.
    sub_bwd(s, kind, attn, ffn, norm, Tq, mem, ws_dy_.data(), cfg_.pre_norm ? ws_dy_.data() : ws_dprev_.data(), dm);
    if (!cfg_.pre_norm) std::swap(ws_dy_, ws_dprev_);
  };
  for (std::size_t l = dec_.size(); l-- > 0;) {
    const DecoderLayerLayout& L = layout_.dec[l];
    step_back(dec_[l].ffn, Kind::Ffn, nullptr, &L.ffn, cfg_.decoder_only ? L.ln2 : L.ln3, b.T, nullptr, nullptr);
    if (!cfg_.decoder_only) step_back(dec_[l].cross, Kind::CrossAttn, &L.cross_attn, nullptr, L.ln2, b.T, memory, dmem);
    step_back(dec_[l].self, Kind::SelfAttn, &L.self_attn, nullptr, L.ln1, b.T, nullptr, nullptr);
  }
  // The embedding's gradient: through its dropout (the same mask, drawn again), or (no dropout) the
  // first layer's itself.
  const T* demb = ws_dy_.data();
  if (emb_dropout()) {
    T* d = sized(ws_demb_, nt);
    be_.dropout_backward(d, ws_dy_.data(), nt, emb_p_, dec_emb_seed_, backend::GradMode::Write);
    demb = d;
  }
  be_.embedding_backward(G(layout_.tok_emb), demb, tgt_in_dev_, b.B, b.T, C, V, scale);

  if (cfg_.decoder_only) return;
  const int NS = b.B * b.S;
  const std::size_t ns = static_cast<std::size_t>(NS) * C;
  const T* x_last = enc_.empty() ? first_input(enc_emb_, enc_x0_) : enc_.back().ffn.y;
  sized(ws_dy_, ns);
  if (!cfg_.pre_norm) sized(ws_dprev_, ns);
  ln_bwd(layout_.enc_norm, x_last, NS, enc_final_, dmem, ws_dy_.data(), backend::GradMode::Write);
  for (std::size_t l = enc_.size(); l-- > 0;) {
    const EncoderLayerLayout& L = layout_.enc[l];
    step_back(enc_[l].ffn, Kind::Ffn, nullptr, &L.ffn, L.ln2, b.S, nullptr, nullptr);
    step_back(enc_[l].attn, Kind::SelfAttn, &L.attn, nullptr, L.ln1, b.S, nullptr, nullptr);
  }
  demb = ws_dy_.data();
  if (emb_dropout()) {
    T* d = sized(ws_demb_, ns);
    be_.dropout_backward(d, ws_dy_.data(), ns, emb_p_, enc_emb_seed_, backend::GradMode::Write);
    demb = d;
  }
  be_.embedding_backward(G(cfg_.tie_embeddings ? layout_.tok_emb : layout_.src_emb), demb, src_dev_, b.B, b.S, C,
                         V, scale);
}

// ---- what the lessons look at -------------------------------------------------------------------

template <typename T>
std::vector<T> Transformer<T>::widened(const backend::Buffer<backend::Bf16>& b) const {
  Buf wide;
  be_.from_bf16(sized(wide, b.size()), b.data(), b.size());
  return wide.download();
}

// After a bf16 forward: the weights from the widened bf16 q and k (the values its products read).
template <typename T>
std::vector<T> Transformer<T>::weights_of(const AttnAct& a) const {
  Buf att, wq, wk;
  sized(att, static_cast<std::size_t>(batch_.B) * cfg_.heads * a.Tq * a.Tk);
  const T* q = a.q.data();
  const T* k = a.k.data();
  if (bf16_) {
    be_.from_bf16(sized(wq, a.q16.size()), a.q16.data(), a.q16.size());
    be_.from_bf16(sized(wk, a.k16.size()), a.k16.data(), a.k16.size());
    q = wq.data();
    k = wk.data();
  }
  be_.attention_weights(att.data(), a.lse.data(), q, k, attn_shape(a));
  return att.download();
}

template <typename T>
std::vector<T> Transformer<T>::encoder_attention(int layer) const {
  return weights_of(enc_.at(static_cast<std::size_t>(layer)).attn.attn);
}
template <typename T>
std::vector<T> Transformer<T>::decoder_self_attention(int layer) const {
  return weights_of(dec_.at(static_cast<std::size_t>(layer)).self.attn);
}
template <typename T>
std::vector<T> Transformer<T>::decoder_cross_attention(int layer) const {
  return weights_of(dec_.at(static_cast<std::size_t>(layer)).cross.attn);
}

template <typename T>
const typename Transformer<T>::AttnAct& Transformer<T>::attn_act(Block block, int layer, const char* what) const {
  const auto l = static_cast<std::size_t>(layer);
  if (block == Block::EncoderSelf) {
    if (cfg_.decoder_only || l >= enc_.size()) throw ShapeError(std::string(what) + ": no encoder layer " + std::to_string(layer));
    return enc_[l].attn.attn;
  }
  if (l >= dec_.size() || (block == Block::DecoderCross && cfg_.decoder_only))
    throw ShapeError(std::string(what) + ": no such decoder block in layer " + std::to_string(layer));
  return block == Block::DecoderSelf ? dec_[l].self.attn : dec_[l].cross.attn;
}

template <typename T>
std::vector<T> Transformer<T>::attention_context(Block block, int layer) const {
  const AttnAct* a = &attn_act(block, layer, "attention_context");
  if (bf16_) return widened(a->ctx16);
  std::vector<T> host(static_cast<std::size_t>(batch_.B) * static_cast<std::size_t>(a->Tq) * static_cast<std::size_t>(cfg_.d_model));
  if (!host.empty()) be_.download(host.data(), a->ctx.data(), host.size() * sizeof(T));
  return host;
}

template <typename T>
typename Transformer<T>::AttentionView Transformer<T>::attention_view(Block block, int layer) const {
  AttentionView v;
  v.B = batch_.B;
  const auto l = static_cast<std::size_t>(layer);
  const std::size_t C = static_cast<std::size_t>(cfg_.d_model);
  auto rows = [&](const T* p, int T_) {
    std::vector<T> host(static_cast<std::size_t>(batch_.B) * T_ * C);
    if (!host.empty()) be_.download(host.data(), p, host.size() * sizeof(T));
    return host;
  };
  const Sub* s = nullptr;
  if (block == Block::EncoderSelf) {
    if (cfg_.decoder_only || l >= enc_.size()) throw ShapeError("attention_view: no encoder layer " + std::to_string(layer));
    s = &enc_[l].attn;
    v.params = layout_.enc[l].attn;
  } else if (block == Block::DecoderSelf) {
    if (l >= dec_.size()) throw ShapeError("attention_view: no decoder layer " + std::to_string(layer));
    s = &dec_[l].self;
    v.params = layout_.dec[l].self_attn;
  } else {
    if (cfg_.decoder_only || l >= dec_.size()) throw ShapeError("attention_view: no cross-attention in layer " + std::to_string(layer));
    s = &dec_[l].cross;
    v.params = layout_.dec[l].cross_attn;
  }
  v.Tq = s->attn.Tq;
  v.Tk = s->attn.Tk;
  // After a bf16 forward the sub-layer's input and output are bf16 buffers: widened.
  v.query_input = bf16_ ? widened(s->attn.in16) : rows(s->sub_in, v.Tq);
  if (block != Block::DecoderCross) v.kv_input = v.query_input;
  else v.kv_input = bf16_ ? widened(mem16_) : enc_final_.out.download();
  v.weights = weights_of(s->attn);
  v.output = bf16_ ? widened(s->attn.out16) : s->attn.out.download();
  return v;
}

template <typename T>
typename Transformer<T>::QueriesKeys Transformer<T>::attention_queries_keys(Block block, int layer) const {
  const AttnAct* a = &attn_act(block, layer, "attention_queries_keys");
  QueriesKeys r;
  r.B = batch_.B;
  r.Tq = a->Tq;
  r.Tk = a->Tk;
  const std::size_t C = static_cast<std::size_t>(cfg_.d_model);
  auto host = [&](const Buf& b, std::size_t n) {
    std::vector<T> h(n);
    if (n) be_.download(h.data(), b.data(), n * sizeof(T));
    return h;
  };
  const std::size_t nq = static_cast<std::size_t>(r.B) * r.Tq * C, nk = static_cast<std::size_t>(r.B) * r.Tk * C;
  if (bf16_) {
    r.q = widened(a->q16);
    r.k = widened(a->k16);
    r.q.resize(nq);
    r.k.resize(nk);
  } else {
    r.q = host(a->q, nq);
    r.k = host(a->k, nk);
  }
  return r;
}

// ---- incremental decoding ---------------------------------------------------------------------------

template <typename T>
void Transformer<T>::start_decoding(const std::vector<int>& src, int beams) {
  const int C = cfg_.d_model;
  if (beams < 1) throw ShapeError("start_decoding: beams must be at least 1");
  beams_ = beams;
  step_ = 0;
  dec_cache_.resize(layout_.dec.size());
  for (auto& c : dec_cache_) {
    zeroed(c.k, static_cast<std::size_t>(beams) * cfg_.max_len * C);
    zeroed(c.v, c.k.size());
    c.cross_q.resize(0);  // no cross-attention step yet
    c.cross_lse.resize(0);
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
    const std::size_t n = static_cast<std::size_t>(b.S) * C;
    be_.linear_forward(sized(c.cross_k, n), enc_final_.out.data(), P(o.wk), P(o.bk), b.S, C, C);
    be_.linear_forward(sized(c.cross_v, n), enc_final_.out.data(), P(o.wv), P(o.bv), b.S, C, C);
  }
}

template <typename T>
void Transformer<T>::step_attention(const AttnLayout& o, const T* x, CacheLayer& c, bool cross, T* out) {
  const int K = beams_, C = cfg_.d_model, H = cfg_.heads;
  const std::size_t n = static_cast<std::size_t>(K) * C;
  T* q = sized(step_q_, n);
  be_.linear_forward(q, x, P(o.wq), P(o.bq), K, C, C);
  const std::size_t stride = static_cast<std::size_t>(cfg_.max_len) * C;
  if (!cross) {
    // This position's key and value of every hypothesis, appended to its cache row.
    T* kt = sized(step_kt_, n);
    T* vt = sized(step_vt_, n);
    be_.linear_forward(kt, x, P(o.wk), P(o.bk), K, C, C);
    be_.linear_forward(vt, x, P(o.wv), P(o.bv), K, C, C);
    for (int i = 0; i < K; ++i) {
      const std::size_t at = i * stride + static_cast<std::size_t>(step_) * C;
      be_.copy(c.k.data() + at, kt + static_cast<std::size_t>(i) * C, C * sizeof(T));
      be_.copy(c.v.data() + at, vt + static_cast<std::size_t>(i) * C, C * sizeof(T));
    }
  }
  // One query per hypothesis against its own cache row (self) or the shared source keys (cross:
  // batch stride 0), read in place.
  backend::AttentionShape s;
  s.B = K;
  s.Tq = 1;
  s.Tk = cross ? src_len_ : step_ + 1;
  s.C = C;
  s.H = H;
  s.k_batch = s.v_batch = cross ? 0 : static_cast<std::int64_t>(stride);
  T* ctx = sized(step_ctx_, n);
  T* lse = sized(step_lse_, static_cast<std::size_t>(K) * H);
  be_.attention_forward(ctx, lse, q, cross ? c.cross_k.data() : c.k.data(), cross ? c.cross_v.data() : c.v.data(), s);
  if (cross) {  // kept so that step_cross_attention can recompute this step's weights
    be_.copy(sized(c.cross_q, n), q, n * sizeof(T));
    be_.copy(sized(c.cross_lse, static_cast<std::size_t>(K) * H), lse, static_cast<std::size_t>(K) * H * sizeof(T));
  }
  be_.linear_forward(out, ctx, P(o.wo), P(o.bo), K, C, C);
}

template <typename T>
std::vector<T> Transformer<T>::step_cross_attention(int layer) const {
  const CacheLayer& c = dec_cache_.at(static_cast<std::size_t>(layer));
  if (c.cross_q.empty() || src_len_ == 0) return {};
  backend::AttentionShape s;
  s.B = beams_;
  s.Tq = 1;
  s.Tk = src_len_;
  s.C = cfg_.d_model;
  s.H = cfg_.heads;
  s.k_batch = s.v_batch = 0;
  Buf att;
  sized(att, static_cast<std::size_t>(beams_) * cfg_.heads * src_len_);
  be_.attention_weights(att.data(), c.cross_lse.data(), c.cross_q.data(), c.cross_k.data(), s);
  return att.download();
}

template <typename T>
const std::vector<T>& Transformer<T>::decode_step(const std::vector<int>& tokens) {
  const int K = beams_, C = cfg_.d_model, V = cfg_.vocab_size, F = cfg_.d_ff;
  if (static_cast<int>(tokens.size()) != K) throw ShapeError("decode_step: one token per hypothesis expected");
  if (step_ >= cfg_.max_len) throw ShapeError("decode_step: reached max_len = " + std::to_string(cfg_.max_len));
  for (int t : tokens)
    if (t < 0 || t >= V) throw ShapeError("decode_step: token id out of range");
  const std::size_t n = static_cast<std::size_t>(K) * C;
  const T scale = static_cast<T>(std::sqrt(static_cast<double>(C)));
  const T eps = static_cast<T>(cfg_.ln_eps);
  step_tokens_.bind(be_);
  step_tokens_.upload(tokens);
  T* x = sized(step_x_, n);
  T* in = sized(step_in_, n);
  T* sub = sized(step_sub_, n);
  T* mean = sized(step_mean_, K);
  T* rstd = sized(step_rstd_, K);
  // Each hypothesis's token at position step_ (one row of positions: pe from row step_ on).
  be_.embedding_forward(x, step_tokens_.data(), P(layout_.tok_emb), pe_.data() + static_cast<std::size_t>(step_) * C, K,
                        1, C, scale);
  auto residual = [&](const NormLayout& norm, auto&& fn) {
    const T* src = x;
    if (cfg_.pre_norm) {
      be_.layernorm_forward(in, mean, rstd, x, P(norm.g), P(norm.b), K, C, eps);
      src = in;
    }
    fn(src, sub);
    be_.accumulate(x, sub, n);
    if (!cfg_.pre_norm) {
      be_.layernorm_forward(in, mean, rstd, x, P(norm.g), P(norm.b), K, C, eps);
      be_.copy(x, in, n * sizeof(T));
    }
  };
  for (std::size_t l = 0; l < layout_.dec.size(); ++l) {
    const DecoderLayerLayout& L = layout_.dec[l];
    CacheLayer& cache = dec_cache_[l];
    residual(L.ln1, [&](const T* s, T* out) { step_attention(L.self_attn, s, cache, false, out); });
    if (!cfg_.decoder_only) residual(L.ln2, [&](const T* s, T* out) { step_attention(L.cross_attn, s, cache, true, out); });
    residual(cfg_.decoder_only ? L.ln2 : L.ln3, [&](const T* s, T* out) {
      const FfnLayout& f = L.ffn;
      const std::size_t nf = static_cast<std::size_t>(K) * F;
      T* h = sized(step_h_, nf);
      be_.linear_forward(h, s, P(f.w1), P(f.b1), K, C, F, backend::Activation::Relu);
      be_.linear_forward(out, h, P(f.w2), P(f.b2), K, F, C);
    });
  }
  be_.layernorm_forward(in, mean, rstd, x, P(layout_.dec_norm.g), P(layout_.dec_norm.b), K, C, eps);
  T* logits = sized(step_logits_dev_, static_cast<std::size_t>(K) * V);
  if (cfg_.tie_embeddings) {
    // The logits of a few rows against the whole (tied) embedding, V × C, in slices of columns: one
    // product over all V makes OpenBLAS pack the V × C matrix at every step (a third of a translation's
    // time on the 2-core machines, most of it copying), while slices small enough for its small-matrix
    // kernel (m·n·k ≤ 64³) read it in place, about 3 times faster. Each logit is the same dot product
    // either way; only the kernel, and so the rounding of the last bit, can differ.
    const int slice = std::max(64, (64 * 64 * 64) / std::max(1, K * C));
    for (int v0 = 0; v0 < V; v0 += slice)
      be_.gemm(false, true, K, std::min(slice, V - v0), C, T(1), in, C, P(layout_.tok_emb) + static_cast<std::size_t>(v0) * C, C, T(0),
               logits + v0, V);
  } else {
    be_.linear_forward(logits, in, P(layout_.out_proj), nullptr, K, C, V);
  }
  step_logits_ = step_logits_dev_.download();
  ++step_;
  return step_logits_;
}

template <typename T>
void Transformer<T>::reorder_cache(const std::vector<int>& order) {
  if (static_cast<int>(order.size()) != beams_) throw ShapeError("reorder_cache: one index per hypothesis expected");
  for (int from : order)
    if (from < 0 || from >= beams_) throw ShapeError("reorder_cache: index out of range");
  const int C = cfg_.d_model, H = cfg_.heads;
  const std::size_t stride = static_cast<std::size_t>(cfg_.max_len) * C;
  const std::size_t used = static_cast<std::size_t>(step_) * C;
  bool same = true;
  for (int i = 0; i < beams_; ++i) same = same && order[static_cast<std::size_t>(i)] == i;
  if (same) return;  // every hypothesis stays where it is
  // Only the rows in use move (the first `count` of each hypothesis's `row`), through scratch kept
  // between steps: a whole max_len cache copied, and a buffer allocated, at every step was a twentieth
  // of a translation's time.
  auto permute = [&](Buf& b, std::size_t row, std::size_t count) {
    if (b.empty() || count == 0) return;
    T* scratch = sized(reorder_scratch_, static_cast<std::size_t>(beams_) * count);
    for (int i = 0; i < beams_; ++i) be_.copy(scratch + i * count, b.data() + i * row, count * sizeof(T));
    for (int i = 0; i < beams_; ++i)
      be_.copy(b.data() + i * row, scratch + static_cast<std::size_t>(order[i]) * count, count * sizeof(T));
  };
  for (auto& c : dec_cache_) {
    permute(c.k, stride, used);
    permute(c.v, stride, used);
    // The last step's cross-attention queries and lse follow their hypotheses, so that
    // step_cross_attention(l) describes hypothesis i's own last step.
    permute(c.cross_q, static_cast<std::size_t>(C), static_cast<std::size_t>(C));
    permute(c.cross_lse, static_cast<std::size_t>(H), static_cast<std::size_t>(H));
  }
}

template class Transformer<float>;
template class Transformer<double>;

}  // namespace attnlab::model
