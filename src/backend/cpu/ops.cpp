#include "backend/cpu/ops.hpp"

#include "backend/cpu/profile.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/dropout_hash.hpp"
#include "util/blas.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

namespace attnlab::cpu {

template <>
void gemm<float>(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc) {
  prof::Scope prof_scope(prof::Op::Matmul);
  if (m == 0 || n == 0) return;
  blas::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <>
void gemm<double>(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
                  int ldb, double beta, double* c, int ldc) {
  prof::Scope prof_scope(prof::Op::Matmul);
  if (m == 0 || n == 0) return;
  blas::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

namespace {

// exp for the softmaxes' hot loops (attention: B·H·Tq·Tk values per block; the loss: N·V, 75M for
// Transformer-base, twice per step). glibc's expf is a call per element that the compiler cannot
// vectorise, so floats use Cephes' expf written branch-free: n = round(x·log₂e), r = x − n·ln2 (in
// two parts for accuracy), exp(r) by a degree-6 polynomial, times 2ⁿ built in the exponent bits.
// Relative error about 2e-7 (a couple of float ulps); below −87.3 the result is 0 (float underflow).
// Always inlined into the loops below, which target_clones compiles for AVX-512, AVX2 and plain
// x86-64, picking one at load time.
__attribute__((always_inline)) inline float fast_expf(float x) {
  const float v = x > 88.0f ? 88.0f : x;  // (a NaN stays NaN)
  // round(v·log₂e) by the 1.5·2²³ trick (adding it pushes the fraction out of the mantissa): plain
  // arithmetic, where floor() would be a call in the generic clone and keep the loop scalar.
  const float fx = (v * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (v - fx * 0.693359375f) + fx * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int e = static_cast<int>(fx > -127.0f ? fx : -127.0f) + 127;  // clamped so the shift stays defined
  float scale;
  const std::uint32_t bits = static_cast<std::uint32_t>(e) << 23;
  std::memcpy(&scale, &bits, sizeof scale);
  return v < -87.3f ? 0.0f : p * scale;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void exp_inplace_f32(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = fast_expf(x[i]);
}

inline void exp_inplace(float* x, std::size_t n) { exp_inplace_f32(x, n); }
inline void exp_inplace(double* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);  // double: the gradient checks, exact libm
}

// The loss's hot loop, fused so that each value is touched once, in the widest vector unit (the
// default x86-64 build has only SSE2 for plain loops). The `omp simd` reductions (-fopenmp-simd, no
// OpenMP runtime) let the compiler keep one partial sum per vector lane; a hand-interleaved array of
// 16 sums is not vectorised by GCC 12 at all. n is a chunk, not a row, so each float lane adds only
// a few hundred terms before the sum goes on in double.
__attribute__((target_clones("avx512f", "avx2", "default"))) void shifted_exp_sums_f32(const float* z, std::size_t n,
                                                                                     float shift, double* sum_shifted,
                                                                                     double* sum_exp) {
  float sa = 0.0f, se = 0.0f;
#pragma omp simd reduction(+ : sa, se)
  for (std::size_t i = 0; i < n; ++i) {
    const float t = z[i] - shift;
    sa += t;
    se += fast_expf(t);
  }
  *sum_shifted += static_cast<double>(sa);
  *sum_exp += static_cast<double>(se);
}
void shifted_exp_sums(const float* z, std::size_t n, float shift, double* sum_shifted, double* sum_exp) {
  shifted_exp_sums_f32(z, n, shift, sum_shifted, sum_exp);
}
void shifted_exp_sums(const double* z, std::size_t n, double shift, double* sum_shifted, double* sum_exp) {
  for (std::size_t i = 0; i < n; ++i) {
    *sum_shifted += z[i] - shift;
    *sum_exp += std::exp(z[i] - shift);
  }
}

// d = (exp(z − lse) − uniform) · g: the loss's gradient, one pass (d may be z).
__attribute__((target_clones("avx512f", "avx2", "default"))) void loss_grad_f32(float* d, const float* z, std::size_t n,
                                                                              float lse, float uniform, float g) {
  for (std::size_t i = 0; i < n; ++i) d[i] = (fast_expf(z[i] - lse) - uniform) * g;
}
void loss_grad(float* d, const float* z, std::size_t n, float lse, float uniform, float g) {
  loss_grad_f32(d, z, n, lse, uniform, g);
}
void loss_grad(double* d, const double* z, std::size_t n, double lse, double uniform, double g) {
  for (std::size_t i = 0; i < n; ++i) d[i] = (std::exp(z[i] - lse) - uniform) * g;
}

// max z (n ≥ 1) in the widest vector unit; max is exact, so the clone cannot change the result.
__attribute__((target_clones("avx512f", "avx2", "default"))) float max_f32(const float* x, std::size_t n) {
  float m = x[0];
#pragma omp simd reduction(max : m)
  for (std::size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// Σ x with one partial sum per vector lane (`omp simd`, as above), added up in double.
template <typename T>
double sum_of(const T* x, std::size_t n) {
  T acc = T(0);
#pragma omp simd reduction(+ : acc)
  for (std::size_t i = 0; i < n; ++i) acc += x[i];
  return static_cast<double>(acc);
}

// max x (n ≥ 1), vectorised (max is exact: the result is that of a plain loop).
template <typename T>
T max_of(const T* x, std::size_t n) {
  T m = x[0];
#pragma omp simd reduction(max : m)
  for (std::size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}
// Floats take the target_clones build above (the loss's rows, the tiled attention's tiles).
inline float max_of(const float* x, std::size_t n) { return max_f32(x, n); }

// Element-wise loops run on every thread in chunks of at least this many values (below it the wake-up
// costs more than it saves).
constexpr std::size_t kElementChunk = 1 << 15;

// Calls fn(begin, end) on [0, n) split across the pool (backend/cpu/parallel.hpp).
template <class F>
void par_range(std::size_t n, std::size_t min_chunk, F&& fn) {
  cpu::parallel_for(n, min_chunk, [&](std::size_t b, std::size_t e) { fn(b, e); });
}

// Work items 0 … items−1 dealt round-robin to `slots` workers, each with its own scratch index
// (slot), so per-thread buffers need no locking; round-robin evens out causal masks, whose later
// query blocks have more keys.
template <class F>
void for_each_slot(int slots, int items, F&& fn) {
  cpu::parallel_for(static_cast<std::size_t>(slots), 1, [&](std::size_t s0, std::size_t s1) {
    for (std::size_t s = s0; s < s1; ++s)
      for (int it = static_cast<int>(s); it < items; it += slots) fn(static_cast<int>(s), it);
  });
}

// The tiled attention backward's dQ is summed in this many fixed groups of key blocks (see there): a
// constant, not the thread count, so that the result does not depend on the thread count.
constexpr int kDqGroups = 8;

// Threads for per-head attention work, and whether it is worth waking them: B·H·Tq·Tk·d_k multiply-adds.
int attention_slots(int B, int H, int Tq, int Tk, int hs) {
  const double work = static_cast<double>(B) * H * Tq * Tk * hs;
  return work < 262144.0 ? 1 : std::max(1, std::min(cpu::threads(), B * H));
}

}  // namespace

template <typename T>
void embedding_forward(T* out, const int* tokens, const T* wte, const T* pe, int B, int Tn, int C, T scale) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  par_range(static_cast<std::size_t>(B) * Tn, 64, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      const int t = static_cast<int>(r % static_cast<std::size_t>(Tn));
      T* o = out + r * C;
      const T* e = wte + static_cast<std::size_t>(tokens[r]) * C;
      const T* p = pe + static_cast<std::size_t>(t) * C;
      for (int c = 0; c < C; ++c) o[c] = e[c] * scale + p[c];
    }
  });
}

template <typename T>
void embedding_backward(T* dwte, const T* dout, const int* tokens, int B, int Tn, int C, T scale) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  for (int r = 0; r < B * Tn; ++r) {
    T* d = dwte + static_cast<std::size_t>(tokens[r]) * C;
    const T* g = dout + static_cast<std::size_t>(r) * C;
    for (int c = 0; c < C; ++c) d[c] += g[c] * scale;
  }
}

template <typename T>
void linear_forward(T* out, const T* inp, const T* w, const T* bias, int N, int IC, int OC) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  if (bias) {
    par_range(static_cast<std::size_t>(N), 16, [&](std::size_t r0, std::size_t r1) {
      for (std::size_t r = r0; r < r1; ++r) std::copy(bias, bias + OC, out + r * OC);
    });
  }
  gemm<T>(false, false, N, OC, IC, T(1), inp, IC, w, OC, bias ? T(1) : T(0), out, OC);
}

template <typename T>
void linear_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int IC, int OC,
                     backend::GradMode dinp_mode, backend::GradMode param_mode) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  // BLAS does not read C when beta = 0: Write is a store, whatever the buffer held.
  const T dinp_beta = dinp_mode == backend::GradMode::Add ? T(1) : T(0);
  const bool add_params = param_mode == backend::GradMode::Add;
  if (dinp) gemm<T>(false, true, N, IC, OC, T(1), dout, OC, w, OC, dinp_beta, dinp, IC);
  if (dw) {
    if (N == 0 && !add_params)  // a product over no rows, stored: zeros (not left to BLAS's k = 0 case)
      std::fill(dw, dw + static_cast<std::size_t>(IC) * OC, T(0));
    else
      gemm<T>(true, false, IC, OC, N, T(1), inp, IC, dout, OC, add_params ? T(1) : T(0), dw, OC);
  }
  if (dbias) {
    // Column sums split by columns, rows in order: the same additions in the same order on any thread count.
    par_range(static_cast<std::size_t>(OC), 64, [&](std::size_t c0, std::size_t c1) {
      if (!add_params) std::fill(dbias + c0, dbias + c1, T(0));
      for (int r = 0; r < N; ++r) {
        const T* g = dout + static_cast<std::size_t>(r) * OC;
        for (std::size_t c = c0; c < c1; ++c) dbias[c] += g[c];
      }
    });
  }
}

template <typename T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* gamma, const T* beta, int N, int C, T eps) {
  prof::Scope prof_scope(prof::Op::LayerNorm);
  par_range(static_cast<std::size_t>(N), 16, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      const T* x = inp + r * C;
      T* o = out + r * C;
      // Two passes (mean, then the centred squares: no cancellation as in E[x²] − E[x]²), each with one
      // partial sum per vector lane in T, then double. For float that is sums of C/16 (AVX-512) or
      // C/4 (SSE2) terms in float, which at C = 512 loses nothing visible against a double
      // accumulation (the unit tests compare with the double model).
      const double m = sum_of(x, static_cast<std::size_t>(C)) / C;
      const T mt = static_cast<T>(m);
      T sq = T(0);
#pragma omp simd reduction(+ : sq)
      for (int c = 0; c < C; ++c) sq += (x[c] - mt) * (x[c] - mt);
      const double var = static_cast<double>(sq) / C;  // biased variance, as in torch.nn.LayerNorm
      const double rs = 1.0 / std::sqrt(var + static_cast<double>(eps));
      const T rst = static_cast<T>(rs);
      for (int c = 0; c < C; ++c) o[c] = (x[c] - mt) * rst * gamma[c] + beta[c];
      mean[r] = mt;
      rstd[r] = rst;
    }
  });
}

template <typename T>
void layernorm_backward(T* dinp, T* dgamma, T* dbeta, const T* dout, const T* inp, const T* gamma, const T* mean,
                        const T* rstd, int N, int C, backend::GradMode mode, backend::GradMode param_mode) {
  const bool add = mode == backend::GradMode::Add;
  prof::Scope prof_scope(prof::Op::LayerNorm);
  // dx row by row (rows are independent) ...
  par_range(static_cast<std::size_t>(N), 16, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      const T* x = inp + r * C;
      const T* g = dout + r * C;
      T* dx = dinp + r * C;
      const T mu = mean[r], rs = rstd[r];
      // With x̂ = (x − μ)·rstd and dx̂ = dout ⊙ γ:
      //   dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ⊙ x̂)).
      // Both sums with one partial sum per vector lane (as in the forward).
      T a1 = T(0), a2 = T(0);
#pragma omp simd reduction(+ : a1, a2)
      for (int c = 0; c < C; ++c) {
        const T xhat = (x[c] - mu) * rs;
        const T dxhat = g[c] * gamma[c];
        a1 += dxhat;
        a2 += dxhat * xhat;
      }
      const T m1 = static_cast<T>(static_cast<double>(a1) / C), m2 = static_cast<T>(static_cast<double>(a2) / C);
      for (int c = 0; c < C; ++c) {
        const T xhat = (x[c] - mu) * rs;
        const T d = rs * (g[c] * gamma[c] - m1 - xhat * m2);
        dx[c] = add ? dx[c] + d : d;
      }
    }
  });
  // ... and γ, β's gradients summed over rows, split by columns so every sum keeps the row order.
  par_range(static_cast<std::size_t>(C), 64, [&](std::size_t c0, std::size_t c1) {
    if (param_mode == backend::GradMode::Write) {  // then summed into, in the same order as under Add
      std::fill(dgamma + c0, dgamma + c1, T(0));
      std::fill(dbeta + c0, dbeta + c1, T(0));
    }
    for (int r = 0; r < N; ++r) {
      const T* x = inp + static_cast<std::size_t>(r) * C;
      const T* g = dout + static_cast<std::size_t>(r) * C;
      const T mu = mean[r], rs = rstd[r];
      for (std::size_t c = c0; c < c1; ++c) {
        const T xhat = (x[c] - mu) * rs;
        dgamma[c] += g[c] * xhat;
        dbeta[c] += g[c];
      }
    }
  });
}

template <typename T>
void relu_forward(T* out, const T* inp, std::size_t n) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  par_range(n, kElementChunk, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) out[i] = inp[i] > T(0) ? inp[i] : T(0);
  });
}

template <typename T>
void relu_backward(T* dinp, const T* dout, const T* inp, std::size_t n, backend::GradMode mode) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  const bool add = mode == backend::GradMode::Add;
  par_range(n, kElementChunk, [&](std::size_t b, std::size_t e) {
    if (add) {
      for (std::size_t i = b; i < e; ++i) dinp[i] += inp[i] > T(0) ? dout[i] : T(0);
    } else {
      for (std::size_t i = b; i < e; ++i) dinp[i] = inp[i] > T(0) ? dout[i] : T(0);
    }
  });
}

template <typename T>
void add_forward(T* out, const T* a, const T* b, std::size_t n) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  par_range(n, kElementChunk, [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) out[i] = a[i] + b[i];
  });
}

template <typename T>
void accumulate(T* dst, const T* src, std::size_t n) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  par_range(n, kElementChunk, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) dst[i] += src[i];
  });
}

namespace {

// One head's masked softmax over its scores a (Tq × Tk), in place, as attention_forward computes it:
// subtract the row maximum, exponentiate, divide by the sum. lse (Tq, may be null) receives
// max + log(sum), or −inf for a row with no visible key (whose weights are all zero).
template <typename T>
void masked_softmax_rows(T* a, T* lse, int Tq, int Tk, int valid, bool causal) {
  for (int i = 0; i < Tq; ++i) {
    T* row = a + static_cast<std::size_t>(i) * Tk;
    const int visible = std::min(valid, causal ? i + 1 : Tk);
    if (visible <= 0) {
      std::fill(row, row + Tk, T(0));
      if (lse) lse[i] = -std::numeric_limits<T>::infinity();
      continue;
    }
    T mx = row[0];
    for (int j = 1; j < visible; ++j) mx = std::max(mx, row[j]);
    for (int j = 0; j < visible; ++j) row[j] -= mx;
    exp_inplace(row, static_cast<std::size_t>(visible));
    T sum = 0;
    for (int j = 0; j < visible; ++j) sum += row[j];
    if (lse) lse[i] = static_cast<T>(static_cast<double>(mx) + std::log(static_cast<double>(sum)));
    const T inv = T(1) / sum;
    for (int j = 0; j < visible; ++j) row[j] *= inv;
    std::fill(row + visible, row + Tk, T(0));
  }
}

// Softmax backward of one head, in place: d (Tq × Tk) holds datt on entry and dscores on exit,
// dscores = att ⊙ (datt − rowsum(att ⊙ datt)), which is zero wherever att is (masked keys).
template <typename T>
void softmax_backward_rows(const T* att, T* d, int Tq, int Tk) {
  for (int i = 0; i < Tq; ++i) {
    const T* ar = att + static_cast<std::size_t>(i) * Tk;
    T* dr = d + static_cast<std::size_t>(i) * Tk;
    T dot = 0;
    for (int j = 0; j < Tk; ++j) dot += ar[j] * dr[j];
    for (int j = 0; j < Tk; ++j) dr[j] = ar[j] * (dr[j] - dot);
  }
}

}  // namespace

template <typename T>
void attention_forward(T* out, T* att, const T* q, const T* k, const T* v, const int* key_len, bool causal, int B,
                       int Tq, int Tk, int C, int H) {
  prof::Scope prof_scope(prof::Op::Softmax);
  const int hs = C / H;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  // One (batch, head) pair per work item. Its products are small (Tq × Tk × hs), so each thread runs
  // its own pairs with single-threaded sgemm rather than both threads sharing every small product.
  auto one_head = [&](int bh) {
    const int b = bh / H, h = bh % H;
    const int valid = key_len ? key_len[b] : Tk;
    T* a = att + static_cast<std::size_t>(bh) * Tq * Tk;
    const T* qb = q + static_cast<std::size_t>(b) * Tq * C + h * hs;
    const T* kb = k + static_cast<std::size_t>(b) * Tk * C + h * hs;
    const T* vb = v + static_cast<std::size_t>(b) * Tk * C + h * hs;
    // scores = Q_bh · K_bhᵀ / √hs, straight into the attention buffer.
    gemm<T>(false, true, Tq, Tk, hs, scale, qb, C, kb, C, T(0), a, Tk);
    masked_softmax_rows(a, static_cast<T*>(nullptr), Tq, Tk, valid, causal);
    gemm<T>(false, false, Tq, hs, Tk, T(1), a, Tk, vb, C, T(0), out + static_cast<std::size_t>(b) * Tq * C + h * hs, C);
  };
  const int slots = attention_slots(B, H, Tq, Tk, hs);
  // Single-threaded sgemm per head on every path: OpenBLAS's own threading can round differently
  // (its Haswell kernel does), and results must not depend on the thread count (docs/performance.md).
  cpu::BlasSerial serial;
  if (slots == 1) {
    for (int bh = 0; bh < B * H; ++bh) one_head(bh);
    return;
  }
  for_each_slot(slots, B * H, [&](int, int bh) { one_head(bh); });
}

template <typename T>
std::size_t attention_backward_scratch(int Tq, int Tk) {
  return static_cast<std::size_t>(std::max(1, cpu::threads())) * Tq * Tk;
}

template <typename T>
void attention_backward(T* dq, T* dk, T* dv, T* scratch, const T* dout, const T* att, const T* q, const T* k,
                        const T* v, int B, int Tq, int Tk, int C, int H) {
  prof::Scope prof_scope(prof::Op::Softmax);
  const int hs = C / H;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  // Each (batch, head) pair writes only its own column block of dq, dk, dv: no two items collide.
  auto one_head = [&](int slot, int bh) {
    const int b = bh / H, h = bh % H;
    T* sc = scratch + static_cast<std::size_t>(slot) * Tq * Tk;
    const T* a = att + static_cast<std::size_t>(bh) * Tq * Tk;
    const std::size_t qo = static_cast<std::size_t>(b) * Tq * C + h * hs;
    const std::size_t ko = static_cast<std::size_t>(b) * Tk * C + h * hs;
    // dV += attᵀ · dout;   datt = dout · Vᵀ
    gemm<T>(true, false, Tk, hs, Tq, T(1), a, Tk, dout + qo, C, T(1), dv + ko, C);
    gemm<T>(false, true, Tq, Tk, hs, T(1), dout + qo, C, v + ko, C, T(0), sc, Tk);
    softmax_backward_rows(a, sc, Tq, Tk);
    // scores = scale · Q·Kᵀ, so dQ += scale · dscores · K and dK += scale · dscoresᵀ · Q.
    gemm<T>(false, false, Tq, hs, Tk, scale, sc, Tk, k + ko, C, T(1), dq + qo, C);
    gemm<T>(true, false, Tk, hs, Tq, scale, sc, Tk, q + qo, C, T(1), dk + ko, C);
  };
  const int slots = attention_slots(B, H, Tq, Tk, hs);
  // Single-threaded sgemm per head on every path: OpenBLAS's own threading can round differently
  // (its Haswell kernel does), and results must not depend on the thread count (docs/performance.md).
  cpu::BlasSerial serial;
  if (slots == 1) {
    for (int bh = 0; bh < B * H; ++bh) one_head(0, bh);
    return;
  }
  for_each_slot(slots, B * H, one_head);
}

namespace {

struct HeadPtrs {
  std::size_t q, k, v, o;
};
inline HeadPtrs head_offsets(const backend::AttentionShape& s, int b, int h) {
  const std::size_t col = static_cast<std::size_t>(h) * static_cast<std::size_t>(s.C / s.H);
  return {static_cast<std::size_t>(b * s.q_batch) + col, static_cast<std::size_t>(b * s.k_batch) + col,
          static_cast<std::size_t>(b * s.v_batch) + col, static_cast<std::size_t>(b * s.o_batch) + col};
}

// The weights of head (b, h) into a (Tq × Tk): scale · Q·Kᵀ, then the masked softmax.
template <typename T>
void head_weights(T* a, T* lse, const T* q, const T* k, const backend::AttentionShape& s, int b, int h) {
  const int hs = s.C / s.H;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  const HeadPtrs o = head_offsets(s, b, h);
  gemm<T>(false, true, s.Tq, s.Tk, hs, scale, q + o.q, static_cast<int>(s.ldq), k + o.k, static_cast<int>(s.ldk),
          T(0), a, s.Tk);
  masked_softmax_rows(a, lse, s.Tq, s.Tk, s.key_len ? s.key_len[b] : s.Tk, s.causal);
}

void check_attention_shape(const backend::AttentionShape& s) {
  if (s.B < 1 || s.Tq < 1 || s.Tk < 1 || s.H < 1 || s.C < s.H || s.C % s.H != 0)
    throw ShapeError("attention: B, Tq, Tk, H must be ≥ 1 and C a multiple of H (B = " + std::to_string(s.B) +
                     ", Tq = " + std::to_string(s.Tq) + ", Tk = " + std::to_string(s.Tk) + ", C = " +
                     std::to_string(s.C) + ", H = " + std::to_string(s.H) + ")");
}

}  // namespace

template <typename T>
std::size_t attention_lse_scratch(int Tq, int Tk) {
  return static_cast<std::size_t>(std::max(1, cpu::threads())) * 2 * static_cast<std::size_t>(Tq) * Tk;
}

template <typename T>
void attention_forward_lse(T* out, T* lse, T* scratch, const T* q, const T* k, const T* v,
                           const backend::AttentionShape& shape) {
  prof::Scope prof_scope(prof::Op::Softmax);
  const backend::AttentionShape s = shape.resolved();
  check_attention_shape(s);
  const int H = s.H, hs = s.C / H;
  const std::size_t tile = static_cast<std::size_t>(s.Tq) * s.Tk;
  auto one_head = [&](int slot, int bh) {
    const int b = bh / H, h = bh % H;
    T* a = scratch + static_cast<std::size_t>(slot) * 2 * tile;
    head_weights(a, lse + static_cast<std::size_t>(bh) * s.Tq, q, k, s, b, h);
    const HeadPtrs o = head_offsets(s, b, h);
    gemm<T>(false, false, s.Tq, hs, s.Tk, T(1), a, s.Tk, v + o.v, static_cast<int>(s.ldv), T(0), out + o.o,
            static_cast<int>(s.ldo));
  };
  // Single-threaded sgemm per head, as in attention_forward: results must not depend on the thread count.
  cpu::BlasSerial serial;
  const int slots = attention_slots(s.B, H, s.Tq, s.Tk, hs);
  if (slots == 1) {
    for (int bh = 0; bh < s.B * H; ++bh) one_head(0, bh);
    return;
  }
  for_each_slot(slots, s.B * H, one_head);
}

template <typename T>
void attention_backward_lse(T* dq, T* dk, T* dv, T* scratch, const T* dout, const T* q, const T* k, const T* v,
                            const backend::AttentionShape& shape) {
  prof::Scope prof_scope(prof::Op::Softmax);
  const backend::AttentionShape s = shape.resolved();
  check_attention_shape(s);
  const int H = s.H, hs = s.C / H;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  const std::size_t tile = static_cast<std::size_t>(s.Tq) * s.Tk;
  const int ldq = static_cast<int>(s.ldq), ldk = static_cast<int>(s.ldk), ldv = static_cast<int>(s.ldv),
            ldo = static_cast<int>(s.ldo);
  auto one_head = [&](int slot, int bh) {
    const int b = bh / H, h = bh % H;
    T* a = scratch + static_cast<std::size_t>(slot) * 2 * tile;
    T* sc = a + tile;
    head_weights(a, static_cast<T*>(nullptr), q, k, s, b, h);
    const HeadPtrs o = head_offsets(s, b, h);
    // dV += attᵀ · dout;   datt = dout · Vᵀ   (a null gradient is not wanted: skipped)
    if (dv) gemm<T>(true, false, s.Tk, hs, s.Tq, T(1), a, s.Tk, dout + o.o, ldo, T(1), dv + o.v, ldv);
    if (!dq && !dk) return;
    gemm<T>(false, true, s.Tq, s.Tk, hs, T(1), dout + o.o, ldo, v + o.v, ldv, T(0), sc, s.Tk);
    softmax_backward_rows(a, sc, s.Tq, s.Tk);
    // scores = scale · Q·Kᵀ, so dQ += scale · dscores · K and dK += scale · dscoresᵀ · Q.
    if (dq) gemm<T>(false, false, s.Tq, hs, s.Tk, scale, sc, s.Tk, k + o.k, ldk, T(1), dq + o.q, ldq);
    if (dk) gemm<T>(true, false, s.Tk, hs, s.Tq, scale, sc, s.Tk, q + o.q, ldq, T(1), dk + o.k, ldk);
  };
  cpu::BlasSerial serial;
  // Heads write disjoint column blocks of dq, dk, dv, unless batches share K or V (stride 0): then
  // several items add into the same block, so they run one after another, in order.
  const bool shared = s.k_batch == 0 || s.v_batch == 0 || s.q_batch == 0;
  const int slots = shared ? 1 : attention_slots(s.B, H, s.Tq, s.Tk, hs);
  if (slots == 1) {
    for (int bh = 0; bh < s.B * H; ++bh) one_head(0, bh);
    return;
  }
  for_each_slot(slots, s.B * H, one_head);
}

template <typename T>
void attention_weights_recompute(T* att, const T* q, const T* k, const backend::AttentionShape& shape) {
  const backend::AttentionShape s = shape.resolved();
  check_attention_shape(s);
  const std::size_t tile = static_cast<std::size_t>(s.Tq) * s.Tk;
  cpu::BlasSerial serial;
  for (int bh = 0; bh < s.B * s.H; ++bh) head_weights(att + bh * tile, static_cast<T*>(nullptr), q, k, s, bh / s.H, bh % s.H);
}

template <typename T>
void dropout_forward_hashed(T* out, const T* inp, const T* residual, std::size_t n, float p, std::uint64_t seed) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  const auto [keep_scale, threshold] = backend::dropout_params<T>("dropout_forward", p);
  par_range(n, kElementChunk, [&, keep_scale = keep_scale, threshold = threshold](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      // The product on its own, then the sum: what the two separate ops computed, and what the CUDA
      // kernel computes (__fmul_rn keeps nvcc from fusing them into one rounding).
      const T dropped = inp[i] * (backend::dropout_keep(seed, i, threshold) ? keep_scale : T(0));
      out[i] = residual ? residual[i] + dropped : dropped;
    }
  });
}

template <typename T>
void dropout_backward_hashed(T* dinp, const T* dout, std::size_t n, float p, std::uint64_t seed,
                             backend::GradMode mode) {
  prof::Scope prof_scope(prof::Op::Elementwise);
  const auto [keep_scale, threshold] = backend::dropout_params<T>("dropout_backward", p);
  const bool add = mode == backend::GradMode::Add;
  par_range(n, kElementChunk, [&, keep_scale = keep_scale, threshold = threshold](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      const T g = dout[i] * (backend::dropout_keep(seed, i, threshold) ? keep_scale : T(0));
      dinp[i] = add ? dinp[i] + g : g;
    }
  });
}

template <typename T>
void adamw_step(T* params, const T* grads, T* m, T* v, const std::uint8_t* decay_mask, std::size_t n,
                const backend::AdamStep& h) {
  prof::Scope prof_scope(prof::Op::Optimizer);
  const double b1 = h.beta1, b2 = h.beta2;
  // Bias corrections undo the zero initialisation of the moments in the first steps.
  const double c1 = 1.0 - std::pow(b1, static_cast<double>(h.step));
  const double c2 = 1.0 - std::pow(b2, static_cast<double>(h.step));
  const T lr_f = static_cast<T>(h.lr);
  const T step_size = static_cast<T>(h.lr / c1);
  const T inv_sqrt_c2 = static_cast<T>(1.0 / std::sqrt(c2));
  const T fb1 = h.beta1, fb2 = h.beta2, eps = h.eps, wd = h.weight_decay;
  const float factor = h.grad_scale_at ? static_cast<float>(*h.grad_scale_at) : h.grad_scale;
  if (std::isnan(factor)) return;  // clip_factor's sign of a step to skip (backend::AdamStep)
  const T gs = static_cast<T>(factor);
  for (std::size_t i = 0; i < n; ++i) {
    const T g = grads[i] * gs;
    m[i] = fb1 * m[i] + (T(1) - fb1) * g;
    v[i] = fb2 * v[i] + (T(1) - fb2) * g * g;
    if (wd > T(0) && (!decay_mask || decay_mask[i])) params[i] -= lr_f * wd * params[i];
    params[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_c2 + eps);
  }
}

template <typename T>
double sum_squares(const T* x, std::size_t n) {
  prof::Scope prof_scope(prof::Op::Optimizer);
  double sq = 0.0;
  for (std::size_t i = 0; i < n; ++i) sq += static_cast<double>(x[i]) * x[i];
  return sq;
}

template <typename T>
std::size_t attention_tiled_workspace(int block_q, int block_k) {
  return static_cast<std::size_t>(std::max(1, cpu::threads())) *
         (static_cast<std::size_t>(block_q) * block_k + 2 * static_cast<std::size_t>(block_q));
}

template <typename T>
void attention_forward_tiled(T* out, T* lse, T* work, const T* q, const T* k, const T* v, const int* key_len,
                             bool causal, int B, int Tq, int Tk, int C, int H, int block_q, int block_k) {
  prof::Scope prof_scope(prof::Op::Softmax);
  const int hs = C / H;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  const T neg_inf = -std::numeric_limits<T>::infinity();
  const std::size_t per_slot = static_cast<std::size_t>(block_q) * block_k + 2 * static_cast<std::size_t>(block_q);
  const int qblocks = (Tq + block_q - 1) / block_q;
  // One work item per (batch, head, query block): each writes its own output rows and log-sum-exps.
  auto one_block = [&](int slot, int item) {
    const int bh = item / qblocks, i0 = (item % qblocks) * block_q;
    const int b = bh / H, h = bh % H;
    T* s = work + static_cast<std::size_t>(slot) * per_slot;  // block_q × block_k scores, then weights
    T* m = s + static_cast<std::size_t>(block_q) * block_k;    // running maximum per query row
    T* l = m + block_q;                                        // running normaliser per query row
    const int valid = key_len ? std::min(key_len[b], Tk) : Tk;
    const T* qb = q + static_cast<std::size_t>(b) * Tq * C + h * hs;
    const T* kb = k + static_cast<std::size_t>(b) * Tk * C + h * hs;
    const T* vb = v + static_cast<std::size_t>(b) * Tk * C + h * hs;
    T* ob = out + static_cast<std::size_t>(b) * Tq * C + h * hs;
    T* lb = lse + static_cast<std::size_t>(bh) * Tq;
    const int rows = std::min(block_q, Tq - i0);
    for (int r = 0; r < rows; ++r) {
      std::fill(ob + static_cast<std::size_t>(i0 + r) * C, ob + static_cast<std::size_t>(i0 + r) * C + hs, T(0));
      m[r] = neg_inf;
      l[r] = T(0);
    }
    // Keys beyond `valid`, and (causal) beyond the block's last query, are hidden from every row.
    const int kend = std::min(valid, causal ? std::min(Tk, i0 + rows) : Tk);
    for (int j0 = 0; j0 < kend; j0 += block_k) {
      const int cols = std::min(block_k, kend - j0);
      gemm<T>(false, true, rows, cols, hs, scale, qb + static_cast<std::size_t>(i0) * C, C,
              kb + static_cast<std::size_t>(j0) * C, C, T(0), s, block_k);
      for (int r = 0; r < rows; ++r) {
        T* row = s + static_cast<std::size_t>(r) * block_k;
        const int i = i0 + r;
        // Visible keys of this row inside the tile: [j0, j0 + vis).
        const int vis = std::min(cols, (causal ? std::min(valid, i + 1) : valid) - j0);
        if (vis <= 0) {
          std::fill(row, row + cols, T(0));
          continue;
        }
        // Vectorised max and sum: the tile is the hot loop of this path.
        const T mx = std::max(m[r], max_of(row, static_cast<std::size_t>(vis)));
        const T corr = std::exp(m[r] - mx);  // exp(−inf) = 0 on the row's first visible tile
        for (int j = 0; j < vis; ++j) row[j] -= mx;
        exp_inplace(row, static_cast<std::size_t>(vis));
        const T sum = static_cast<T>(sum_of(row, static_cast<std::size_t>(vis)));
        std::fill(row + vis, row + cols, T(0));
        l[r] = l[r] * corr + sum;
        m[r] = mx;
        if (corr != T(1)) {
          T* o = ob + static_cast<std::size_t>(i) * C;
          for (int c = 0; c < hs; ++c) o[c] *= corr;
        }
      }
      gemm<T>(false, false, rows, hs, cols, T(1), s, block_k, vb + static_cast<std::size_t>(j0) * C, C, T(1),
              ob + static_cast<std::size_t>(i0) * C, C);
    }
    for (int r = 0; r < rows; ++r) {
      T* o = ob + static_cast<std::size_t>(i0 + r) * C;
      if (l[r] > T(0)) {
        const T inv = T(1) / l[r];
        for (int c = 0; c < hs; ++c) o[c] *= inv;
        lb[i0 + r] = m[r] + std::log(l[r]);
      } else {
        lb[i0 + r] = neg_inf;  // no visible key: the output row stays zero
      }
    }
  };
  const int items = B * H * qblocks;
  const int slots = std::max(1, std::min(cpu::threads(), items));
  cpu::BlasSerial serial;  // as in attention_forward: the same sgemm threading for any thread count
  if (slots == 1) {
    for (int it = 0; it < items; ++it) one_block(0, it);
    return;
  }
  for_each_slot(slots, items, one_block);
}

template <typename T>
std::size_t attention_tiled_backward_workspace(int block_q, int block_k, int Tq, int hs) {
  return static_cast<std::size_t>(kDqGroups) * Tq * hs +
         static_cast<std::size_t>(std::max(1, cpu::threads())) *
             (2 * static_cast<std::size_t>(block_q) * block_k + static_cast<std::size_t>(block_q));
}

template <typename T>
void attention_backward_tiled(T* dq, T* dk, T* dv, T* work, const T* dout, const T* out, const T* lse, const T* q,
                              const T* k, const T* v, const int* key_len, bool causal, int B, int Tq, int Tk, int C,
                              int H, int block_q, int block_k) {
  prof::Scope prof_scope(prof::Op::Softmax);
  const int hs = C / H;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  const std::size_t per_slot = 2 * static_cast<std::size_t>(block_q) * block_k + static_cast<std::size_t>(block_q);
  const std::size_t per_group = static_cast<std::size_t>(Tq) * hs;
  const int kblocks = (Tk + block_k - 1) / block_k;
  const int groups = std::max(1, std::min(kDqGroups, kblocks));
  const int slots = std::max(1, std::min(cpu::threads(), groups));
  T* group_dq = work;                                                // groups × Tq × hs
  T* slot_tiles = work + static_cast<std::size_t>(kDqGroups) * per_group;  // slots × per_slot
  // FlashAttention-2's order: each key block of a (batch, head) owns its rows of dK and dV and loops
  // over every query block. dQ gets contributions from every key block, so the key blocks are dealt
  // into a fixed number of groups (kDqGroups, or fewer when there are fewer blocks), group g taking
  // blocks g, g + groups, …; each group gathers its dQ in its own Tq × hs buffer, in block order, and
  // the buffers are added to dq in group order once the (batch, head) is done. Threads take whole
  // groups, so the sums are the same, in the same order, on any number of threads.
  auto one_block = [&](int slot, int bh, int kb, T* dqs) {
    const int j0 = kb * block_k;
    const int b = bh / H, h = bh % H;
    T* p = slot_tiles + static_cast<std::size_t>(slot) * per_slot;  // block_q × block_k weights
    T* dp = p + static_cast<std::size_t>(block_q) * block_k;        // block_q × block_k, then dscores
    T* d = dp + static_cast<std::size_t>(block_q) * block_k;        // D_i = dout_i · out_i
    const int valid = key_len ? std::min(key_len[b], Tk) : Tk;
    const std::size_t qo = static_cast<std::size_t>(b) * Tq * C + h * hs;
    const std::size_t ko = static_cast<std::size_t>(b) * Tk * C + h * hs;
    const T* lb = lse + static_cast<std::size_t>(bh) * Tq;
    const int cols = std::min(block_k, Tk - j0);
    for (int i0 = 0; i0 < Tq; i0 += block_q) {
      const int rows = std::min(block_q, Tq - i0);
      // Keys visible to some row of this query block: [0, kend).
      const int kend = std::min(valid, causal ? std::min(Tk, i0 + rows) : Tk);
      const int kc = std::min(cols, kend - j0);
      if (kc <= 0) continue;
      for (int r = 0; r < rows; ++r) {
        const T* g = dout + qo + static_cast<std::size_t>(i0 + r) * C;
        const T* o = out + qo + static_cast<std::size_t>(i0 + r) * C;
        T acc = 0;
        for (int c = 0; c < hs; ++c) acc += g[c] * o[c];
        d[r] = acc;
      }
      // P = exp(scale · Q·Kᵀ − lse), zero where hidden.
      gemm<T>(false, true, rows, kc, hs, scale, q + qo + static_cast<std::size_t>(i0) * C, C,
              k + ko + static_cast<std::size_t>(j0) * C, C, T(0), p, block_k);
      for (int r = 0; r < rows; ++r) {
        T* row = p + static_cast<std::size_t>(r) * block_k;
        const int i = i0 + r;
        const int vis = std::max(0, std::min(kc, (causal ? std::min(valid, i + 1) : valid) - j0));
        for (int j = 0; j < vis; ++j) row[j] -= lb[i];
        exp_inplace(row, static_cast<std::size_t>(vis));
        std::fill(row + vis, row + kc, T(0));
      }
      // dV += Pᵀ · dout;  dP = dout · Vᵀ;  dS = P ⊙ (dP − D)
      gemm<T>(true, false, kc, hs, rows, T(1), p, block_k, dout + qo + static_cast<std::size_t>(i0) * C, C, T(1),
              dv + ko + static_cast<std::size_t>(j0) * C, C);
      gemm<T>(false, true, rows, kc, hs, T(1), dout + qo + static_cast<std::size_t>(i0) * C, C,
              v + ko + static_cast<std::size_t>(j0) * C, C, T(0), dp, block_k);
      for (int r = 0; r < rows; ++r) {
        const T* pr = p + static_cast<std::size_t>(r) * block_k;
        T* dr = dp + static_cast<std::size_t>(r) * block_k;
        for (int j = 0; j < kc; ++j) dr[j] = pr[j] * (dr[j] - d[r]);
      }
      gemm<T>(false, false, rows, hs, kc, scale, dp, block_k, k + ko + static_cast<std::size_t>(j0) * C, C, T(1),
              dqs + static_cast<std::size_t>(i0) * hs, hs);
      gemm<T>(true, false, kc, hs, rows, scale, dp, block_k, q + qo + static_cast<std::size_t>(i0) * C, C, T(1),
              dk + ko + static_cast<std::size_t>(j0) * C, C);
    }
  };
  std::optional<cpu::BlasSerial> serial;
  if (slots > 1) serial.emplace();
  for (int bh = 0; bh < B * H; ++bh) {
    std::fill(group_dq, group_dq + static_cast<std::size_t>(groups) * per_group, T(0));
    auto one_group = [&](int slot, int g) {
      for (int kb = g; kb < kblocks; kb += groups) one_block(slot, bh, kb, group_dq + static_cast<std::size_t>(g) * per_group);
    };
    if (slots == 1) {
      for (int g = 0; g < groups; ++g) one_group(0, g);
    } else {
      for_each_slot(slots, groups, one_group);
    }
    const int b = bh / H, h = bh % H;
    T* dqb = dq + static_cast<std::size_t>(b) * Tq * C + h * hs;
    for (int g = 0; g < groups; ++g) {
      const T* part = group_dq + static_cast<std::size_t>(g) * per_group;
      for (int i = 0; i < Tq; ++i)
        for (int c = 0; c < hs; ++c) dqb[static_cast<std::size_t>(i) * C + c] += part[static_cast<std::size_t>(i) * hs + c];
    }
  }
}

// The loss's rows are summed in chunks this long, so that float partial sums stay short (a
// Transformer-base row is 37000 values).
constexpr int kLossChunk = 2048;

template <typename T>
void cross_entropy_rows(T* lse, double* row_loss, const T* logits, const int* targets, int N, int V, T smoothing,
                        int ignore_index) {
  prof::Scope prof_scope(prof::Op::Loss);
  // Rows in parallel, each row's loss kept apart and added up afterwards in row order
  // (backend::row_loss_mean), so the total is the same sum, in the same order, on any number of threads.
  par_range(static_cast<std::size_t>(N), 4, [&](std::size_t r0, std::size_t r1) {
  for (std::size_t r = r0; r < r1; ++r) {
    const T* z = logits + static_cast<std::size_t>(r) * V;
    // Two reads of the row and no write: the maximum (from memory), then Σ(z − max) and Σ exp(z − max)
    // in one fused pass while the row is still in L2. Chunks keep the float partial sums short.
    const T mx = max_of(z, static_cast<std::size_t>(V));
    double sum = 0.0, sum_shifted = 0.0;
    for (int c0 = 0; c0 < V; c0 += kLossChunk)
      shifted_exp_sums(z + c0, static_cast<std::size_t>(std::min(kLossChunk, V - c0)), mx, &sum_shifted, &sum);
    const double log_sum = std::log(sum);
    lse[r] = static_cast<T>(static_cast<double>(mx) + log_sum);
    row_loss[r] = 0.0;
    if (targets[r] == ignore_index) continue;
    // Σ_c log p_c = Σ_c (z_c − max) − V·log Σ, needed for the label-smoothing term.
    const double sum_logp = sum_shifted - static_cast<double>(V) * log_sum;
    const double logp_t = static_cast<double>(z[targets[r]] - mx) - log_sum;
    const double eps = static_cast<double>(smoothing);
    row_loss[r] = -(1.0 - eps) * logp_t - eps / V * sum_logp;
  }
  });
}

template <typename T>
T cross_entropy_forward(T* lse, const T* logits, const int* targets, int N, int V, T smoothing, int ignore_index,
                        int* count) {
  std::vector<double> row_loss(static_cast<std::size_t>(N));
  cross_entropy_rows<T>(lse, row_loss.data(), logits, targets, N, V, smoothing, ignore_index);
  return static_cast<T>(backend::row_loss_mean(row_loss.data(), targets, row_loss.size(), ignore_index, count));
}

template <typename T>
void cross_entropy_backward(T* dlogits, const T* logits, const T* lse, const int* targets, int N, int V,
                            T smoothing, int ignore_index, int count, T dloss) {
  prof::Scope prof_scope(prof::Op::Loss);
  const T g = count > 0 ? dloss / static_cast<T>(count) : T(0);
  const T uniform = smoothing / static_cast<T>(V);
  par_range(static_cast<std::size_t>(N), 4, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      T* d = dlogits + r * V;
      if (count == 0 || targets[r] == ignore_index) {
        std::fill(d, d + V, T(0));
        continue;
      }
      loss_grad(d, logits + r * V, static_cast<std::size_t>(V), lse[r], uniform, g);  // (in place when d is z)
      d[targets[r]] -= (T(1) - smoothing) * g;
    }
  });
}

template <typename T>
void softmax_from_lse(T* probs, const T* logits, const T* lse, int N, int V) {
  par_range(static_cast<std::size_t>(N), 4, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      T* p = probs + r * V;
      const T* z = logits + r * V;
      for (int c = 0; c < V; ++c) p[c] = z[c] - lse[r];
      exp_inplace(p, static_cast<std::size_t>(V));
    }
  });
}

#define ATTNLAB_INSTANTIATE(T)                                                                                   \
  template void embedding_forward<T>(T*, const int*, const T*, const T*, int, int, int, T);                     \
  template void embedding_backward<T>(T*, const T*, const int*, int, int, int, T);                              \
  template void linear_forward<T>(T*, const T*, const T*, const T*, int, int, int);                             \
  template void linear_backward<T>(T*, T*, T*, const T*, const T*, const T*, int, int, int, backend::GradMode,      \
                                   backend::GradMode);                                                          \
  template void layernorm_forward<T>(T*, T*, T*, const T*, const T*, const T*, int, int, T);                    \
  template void layernorm_backward<T>(T*, T*, T*, const T*, const T*, const T*, const T*, const T*, int, int,          \
                                      backend::GradMode, backend::GradMode);  \
  template void relu_forward<T>(T*, const T*, std::size_t);                                                     \
  template void relu_backward<T>(T*, const T*, const T*, std::size_t, backend::GradMode);                                          \
  template void add_forward<T>(T*, const T*, const T*, std::size_t);                                            \
  template void accumulate<T>(T*, const T*, std::size_t);                                                       \
  template void attention_forward<T>(T*, T*, const T*, const T*, const T*, const int*, bool, int, int, int, int, \
                                     int);                                                                       \
  template void attention_backward<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*, const T*, int, int, \
                                      int, int, int);                                                            \
  template std::size_t attention_tiled_workspace<T>(int, int);                                                  \
  template void attention_forward_tiled<T>(T*, T*, T*, const T*, const T*, const T*, const int*, bool, int, int, int, \
                                           int, int, int, int);                                                 \
  template std::size_t attention_backward_scratch<T>(int, int);                                                 \
  template std::size_t attention_tiled_backward_workspace<T>(int, int, int, int);                                        \
  template void attention_backward_tiled<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*, const T*,    \
                                            const T*, const int*, bool, int, int, int, int, int, int, int);     \
  template void cross_entropy_rows<T>(T*, double*, const T*, const int*, int, int, T, int);                    \
  template T cross_entropy_forward<T>(T*, const T*, const int*, int, int, T, int, int*);                        \
  template void cross_entropy_backward<T>(T*, const T*, const T*, const int*, int, int, T, int, int, T);        \
  template void softmax_from_lse<T>(T*, const T*, const T*, int, int);                                          \
  template std::size_t attention_lse_scratch<T>(int, int);                                                      \
  template void attention_forward_lse<T>(T*, T*, T*, const T*, const T*, const T*, const backend::AttentionShape&); \
  template void attention_backward_lse<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*,                 \
                                          const backend::AttentionShape&);                                       \
  template void attention_weights_recompute<T>(T*, const T*, const T*, const backend::AttentionShape&);          \
  template void dropout_forward_hashed<T>(T*, const T*, const T*, std::size_t, float, std::uint64_t);           \
  template void dropout_backward_hashed<T>(T*, const T*, std::size_t, float, std::uint64_t, backend::GradMode); \
  template void adamw_step<T>(T*, const T*, T*, T*, const std::uint8_t*, std::size_t, const backend::AdamStep&); \
  template double sum_squares<T>(const T*, std::size_t);

ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)

}  // namespace attnlab::cpu
