#include "backend/cpu/cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "backend/clip_scale.hpp"
#include "backend/cpu/buffers.hpp"
#include "backend/cpu/ops.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/cpu/profile.hpp"
#include "util/error.hpp"

namespace attnlab::backend {
namespace {

// Copies the B × Tn rows of C values of an attention operand laid out with row stride ld and batch
// stride batch (AttentionShape::resolved) into a packed B·Tn × C buffer, and back (assigning or
// adding). A batch stride of 0 (one K/V shared by every batch) is read B times and, when adding,
// summed over the batches.
template <typename T>
const T* packed(std::vector<T>& dst, const T* src, int B, int Tn, int C, std::int64_t ld, std::int64_t batch) {
  dst.resize(static_cast<std::size_t>(B) * Tn * C);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tn; ++t)
      std::memcpy(dst.data() + (static_cast<std::size_t>(b) * Tn + t) * C, src + b * batch + t * ld, C * sizeof(T));
  return dst.data();
}
template <typename T>
void unpack(T* dst, const std::vector<T>& src, int B, int Tn, int C, std::int64_t ld, std::int64_t batch, bool add) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tn; ++t) {
      const T* from = src.data() + (static_cast<std::size_t>(b) * Tn + t) * C;
      T* to = dst + b * batch + t * ld;
      for (int c = 0; c < C; ++c) to[c] = add ? to[c] + from[c] : from[c];
    }
}

// Zeroes the B × Tn rows of C values of an attention gradient (strides as packed); null: nothing.
template <typename T>
void zero_rows(T* dst, int B, int Tn, int C, std::int64_t ld, std::int64_t batch) {
  if (!dst) return;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tn; ++t) std::fill_n(dst + b * batch + t * ld, C, T(0));
}

template <typename T>
class CpuBackend final : public Ops<T> {
 public:
  explicit CpuBackend(CpuAttention attention = CpuAttention::Lse, int block_q = 0, int block_k = 0)
      : Ops<T>(name_of(attention, block_q, block_k), true), attention_(attention), block_q_(block_q), block_k_(block_k) {
    if (attention == CpuAttention::Tiled && (block_q < 1 || block_k < 1))
      throw ShapeError("make_cpu_backend: tiled attention needs tile sizes of at least 1 (block_q " +
                       std::to_string(block_q) + ", block_k " + std::to_string(block_k) + ")");
  }
  static std::string name_of(CpuAttention attention, int block_q, int block_k) {
    switch (attention) {
      case CpuAttention::StoredWeights: return "cpu (stored weights)";
      case CpuAttention::Tiled: return "cpu (tiled " + std::to_string(block_q) + "x" + std::to_string(block_k) + ")";
      case CpuAttention::Lse: break;
    }
    return "cpu";
  }

  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    // 64-byte alignment for the vector loops; blocks of 4 MiB and more start on a 2 MiB boundary so
    // that all of them can be huge pages (backend/cpu/buffers.hpp says why that pays).
    const std::size_t align = bytes >= (std::size_t{4} << 20) ? (std::size_t{2} << 20) : 64;
    void* p = nullptr;
    if (posix_memalign(&p, align, bytes) != 0) throw std::bad_alloc();
    cpu::advise_huge_pages(p, bytes);
    return p;
  }
  void release(void* p) noexcept override { std::free(p); }
  void upload(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }
  void download(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes && dst != src) std::memmove(dst, src, bytes);
  }
  void zero(void* p, std::size_t bytes) override {
    if (bytes) std::memset(p, 0, bytes);
  }
  void synchronize() override {}

  void gemm(bool ta, bool tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c,
            int ldc) override {
    cpu::gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void embedding_forward(T* out, const int* tokens, const T* wte, const T* pe, int B, int Tn, int C, T scale) override {
    cpu::embedding_forward<T>(out, tokens, wte, pe, B, Tn, C, scale);
  }
  void embedding_backward(T* dwte, const T* dout, const int* tokens, int B, int Tn, int C, int, T scale) override {
    cpu::embedding_backward<T>(dwte, dout, tokens, B, Tn, C, scale);  // one thread, token order: deterministic
  }
  void linear_forward(T* out, const T* inp, const T* w, const T* bias, int N, int IC, int OC,
                      Activation act = Activation::None) override {
    cpu::linear_forward<T>(out, inp, w, bias, N, IC, OC);
    // BLAS has no epilogue: ReLU is a pass of its own here, the same comparison as relu_forward.
    if (act == Activation::Relu) cpu::relu_forward<T>(out, out, static_cast<std::size_t>(N) * OC);
  }
  void linear_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int IC, int OC,
                       GradMode dinp_mode = GradMode::Add, GradMode param_mode = GradMode::Add) override {
    cpu::linear_backward<T>(dinp, dw, dbias, dout, inp, w, N, IC, OC, dinp_mode, param_mode);
  }
  void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* gamma, const T* beta, int N, int C,
                         T eps) override {
    cpu::layernorm_forward<T>(out, mean, rstd, inp, gamma, beta, N, C, eps);
  }
  void layernorm_backward(T* dinp, T* dgamma, T* dbeta, const T* dout, const T* inp, const T* gamma, const T* mean,
                          const T* rstd, int N, int C, GradMode mode = GradMode::Add,
                          GradMode param_mode = GradMode::Add) override {
    cpu::layernorm_backward<T>(dinp, dgamma, dbeta, dout, inp, gamma, mean, rstd, N, C, mode, param_mode);
  }
  void elementwise(Elementwise op, T* out, const T* a, const T* b, std::size_t n, T s) override {
    switch (op) {
      case Elementwise::Relu: cpu::relu_forward<T>(out, a, n); return;
      case Elementwise::Add: cpu::add_forward<T>(out, a, b, n); return;
      case Elementwise::Accumulate: cpu::accumulate<T>(out, a, n); return;
      case Elementwise::Scale: {
        cpu::prof::Scope prof_scope(cpu::prof::Op::Optimizer);
        for (std::size_t i = 0; i < n; ++i) out[i] *= s;
        return;
      }
    }
  }
  void relu_backward(T* dinp, const T* dout, const T* x, std::size_t n, GradMode mode = GradMode::Add) override {
    cpu::relu_backward<T>(dinp, dout, x, n, mode);
  }
  void clip_factor(double* norm, double* scale, const T* x, std::size_t n, double max_norm, const double* check,
                   std::size_t n_check) override {
    *norm = std::sqrt(cpu::sum_squares<T>(x, n));
    bool finite = std::isfinite(*norm);
    for (std::size_t i = 0; i < n_check; ++i) finite = finite && std::isfinite(check[i]);
    *scale = finite ? static_cast<double>(clip_scale(*norm, max_norm)) : std::numeric_limits<double>::quiet_NaN();
  }
  void dropout_forward(T* out, const T* inp, const T* residual, std::size_t n, float p,
                       std::uint64_t seed) override {
    cpu::dropout_forward_hashed<T>(out, inp, residual, n, p, seed);
  }
  void dropout_backward(T* dinp, const T* dout, std::size_t n, float p, std::uint64_t seed,
                        GradMode mode = GradMode::Add) override {
    cpu::dropout_backward_hashed<T>(dinp, dout, n, p, seed, mode);
  }
  void attention_forward(T* out, T* lse, const T* q, const T* k, const T* v, const AttentionShape& s) override {
    cpu::size_buffer(scratch_, cpu::attention_lse_scratch<T>(s.Tq, s.Tk));
    if (attention_ == CpuAttention::Lse) {
      cpu::attention_forward_lse<T>(out, lse, scratch_.data(), q, k, v, s);
      return;
    }
    const AttentionShape r = s.resolved();
    const T* pq = packed(q_, q, s.B, s.Tq, s.C, r.ldq, r.q_batch);
    const T* pk = packed(k_, k, s.B, s.Tk, s.C, r.ldk, r.k_batch);
    const T* pv = packed(v_, v, s.B, s.Tk, s.C, r.ldv, r.v_batch);
    out_.resize(static_cast<std::size_t>(s.B) * s.Tq * s.C);
    if (attention_ == CpuAttention::Tiled) {
      cpu::size_buffer(work_, cpu::attention_tiled_workspace<T>(block_q_, block_k_));
      cpu::attention_forward_tiled<T>(out_.data(), lse, work_.data(), pq, pk, pv, s.key_len, s.causal, s.B, s.Tq,
                                      s.Tk, s.C, s.H, block_q_, block_k_);
    } else {
      // The lse from the contract's path (the stored-weights forward has none), the output from its own.
      std::vector<T> ignored(static_cast<std::size_t>(r.ldo) * s.Tq + static_cast<std::size_t>(r.o_batch) * s.B);
      cpu::attention_forward_lse<T>(ignored.data(), lse, scratch_.data(), q, k, v, s);
      att_.resize(static_cast<std::size_t>(s.B) * s.H * s.Tq * s.Tk);
      cpu::attention_forward<T>(out_.data(), att_.data(), pq, pk, pv, s.key_len, s.causal, s.B, s.Tq, s.Tk, s.C, s.H);
    }
    unpack(out, out_, s.B, s.Tq, s.C, r.ldo, r.o_batch, false);
  }
  void attention_backward(T* dq, T* dk, T* dv, const T* dout, const T* out, const T* lse, const T* q, const T* k,
                          const T* v, const AttentionShape& s, GradMode mode = GradMode::Add) override {
    const AttentionShape r = s.resolved();
    // The CPU's kernels accumulate: Write zeroes the rows first (0 + g rounds to g, so the result is
    // what a store would give; with a batch stride of 0 the batches' gradients are still summed).
    if (mode == GradMode::Write) {
      zero_rows(dq, s.B, s.Tq, s.C, r.ldq, r.q_batch);
      zero_rows(dk, s.B, s.Tk, s.C, r.ldk, r.k_batch);
      zero_rows(dv, s.B, s.Tk, s.C, r.ldv, r.v_batch);
    }
    if (attention_ == CpuAttention::Lse) {
      // The CPU recomputes each head's weights exactly as its forward did (backend/cpu/ops.hpp), so it
      // needs neither the output nor the lse: the results equal those of a stored weight matrix.
      cpu::size_buffer(scratch_, cpu::attention_lse_scratch<T>(s.Tq, s.Tk));
      cpu::attention_backward_lse<T>(dq, dk, dv, scratch_.data(), dout, q, k, v, s);
      return;
    }
    const T* pq = packed(q_, q, s.B, s.Tq, s.C, r.ldq, r.q_batch);
    const T* pk = packed(k_, k, s.B, s.Tk, s.C, r.ldk, r.k_batch);
    const T* pv = packed(v_, v, s.B, s.Tk, s.C, r.ldv, r.v_batch);
    const T* pdout = packed(dout_, dout, s.B, s.Tq, s.C, r.ldo, r.o_batch);
    dq_.assign(q_.size(), T(0));
    dk_.assign(k_.size(), T(0));
    dv_.assign(v_.size(), T(0));
    if (attention_ == CpuAttention::Tiled) {
      const T* pout = packed(out_, out, s.B, s.Tq, s.C, r.ldo, r.o_batch);
      cpu::size_buffer(work_, cpu::attention_tiled_backward_workspace<T>(block_q_, block_k_, s.Tq, s.C / s.H));
      cpu::attention_backward_tiled<T>(dq_.data(), dk_.data(), dv_.data(), work_.data(), pdout, pout, lse, pq, pk, pv,
                                       s.key_len, s.causal, s.B, s.Tq, s.Tk, s.C, s.H, block_q_, block_k_);
    } else {
      // The weights again, as the lessons' forward computes them, then the backward that reads them.
      out_.resize(q_.size());
      att_.resize(static_cast<std::size_t>(s.B) * s.H * s.Tq * s.Tk);
      cpu::attention_forward<T>(out_.data(), att_.data(), pq, pk, pv, s.key_len, s.causal, s.B, s.Tq, s.Tk, s.C, s.H);
      cpu::size_buffer(scratch_, cpu::attention_backward_scratch<T>(s.Tq, s.Tk));
      cpu::attention_backward<T>(dq_.data(), dk_.data(), dv_.data(), scratch_.data(), pdout, att_.data(), pq, pk, pv,
                                 s.B, s.Tq, s.Tk, s.C, s.H);
    }
    unpack(dq, dq_, s.B, s.Tq, s.C, r.ldq, r.q_batch, true);
    unpack(dk, dk_, s.B, s.Tk, s.C, r.ldk, r.k_batch, true);
    unpack(dv, dv_, s.B, s.Tk, s.C, r.ldv, r.v_batch, true);
  }
  void attention_weights(T* att, const T*, const T* q, const T* k, const AttentionShape& s) override {
    cpu::attention_weights_recompute<T>(att, q, k, s);
  }
  void cross_entropy_forward(T* lse, double* row_loss, const T* logits, const int* targets, int N, int V,
                             T smoothing, int ignore_index) override {
    cpu::cross_entropy_rows<T>(lse, row_loss, logits, targets, N, V, smoothing, ignore_index);
  }
  void cross_entropy_backward(T* dlogits, const T* logits, const T* lse, const int* targets, int N, int V, T smoothing,
                              int ignore_index, int count, T dloss) override {
    cpu::cross_entropy_backward<T>(dlogits, logits, lse, targets, N, V, smoothing, ignore_index, count, dloss);
  }
  void softmax_from_lse(T* probs, const T* logits, const T* lse, int N, int V) override {
    cpu::softmax_from_lse<T>(probs, logits, lse, N, V);
  }
  void adamw_step(T* params, const T* grads, T* m, T* v, const std::uint8_t* decay_mask, std::size_t n,
                  const AdamStep& h) override {
    cpu::adamw_step<T>(params, grads, m, v, decay_mask, n, h);
  }
  // The bf16 ops other than these are Ops' reference implementations: widen, the T op, round.
  void to_bf16(Bf16* dst, const T* src, std::size_t n) override { backend::to_bf16(dst, src, n); }
  void from_bf16(T* dst, const Bf16* src, std::size_t n) override { backend::from_bf16(dst, src, n); }

 private:
  std::vector<T> scratch_;  // attention's per-thread score tiles, kept between calls
  // The other two attention paths (make_cpu_backend): packed copies of the operands and results.
  CpuAttention attention_;
  int block_q_, block_k_;
  std::vector<T> q_, k_, v_, out_, dout_, dq_, dk_, dv_, att_, work_;
};

}  // namespace

template <typename T>
Ops<T>& cpu_backend() {
  static CpuBackend<T> instance;
  return instance;
}

template Ops<float>& cpu_backend<float>();
template Ops<double>& cpu_backend<double>();

template <typename T>
std::unique_ptr<Ops<T>> make_cpu_backend(CpuAttention attention, int block_q, int block_k) {
  return std::make_unique<CpuBackend<T>>(attention, block_q, block_k);
}
template std::unique_ptr<Ops<float>> make_cpu_backend<float>(CpuAttention, int, int);
template std::unique_ptr<Ops<double>> make_cpu_backend<double>(CpuAttention, int, int);

}  // namespace attnlab::backend
