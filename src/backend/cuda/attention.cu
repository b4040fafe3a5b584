// Fused attention (see attention.hpp). Three kernels, each a block of 4 warps:
//
//   forward    one block per (batch, head, tile of 16 queries); each warp owns 4 query rows. Keys
//              come in tiles of 32 through shared memory, one key per lane for the scores (lane j
//              computes q_i · k_j over d), then the online softmax per row: with m the running max
//              and l the running normaliser,  m' = max(m, max_j s_j),  l ← l·e^(m−m') + Σ_j e^(s_j−m'),
//              o ← o·e^(m−m') + Σ_j e^(s_j−m')·v_j  (lane c owns the output columns c, c+32, c+64, c+96).
//              At the end o ← o / l and lse = m + log l.
//   dK, dV     one block per (batch, head, tile of 32 keys), looping over the queries in rounds of 4
//              (one per warp): each warp recomputes p_ij = exp(s_ij − lse_i) and
//              ds_ij = p_ij·(dout_i·v_j − D_i) for its query and the 32 keys; then all 128 threads add
//              Σ_i p_ij·dout_i to dV_j and Σ_i ds_ij·q_i to dK_j, each thread owning 32 fixed elements of
//              the 32 × d tile in registers, so no two threads (or blocks) write the same element.
//   dQ         one block per (batch, head, tile of 8 queries), like the forward: dq_i += Σ_j ds_ij·k_j.
//
// Shared-memory tiles that lanes read one row each (lane j reads row j) have a padded row stride of
// 129 floats, so the 32 lanes hit 32 different banks. Static shared memory stays under 48 KB.
#include "backend/cuda/attention.hpp"

#include <cmath>
#include <string>

#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"

namespace attnlab::cuda {

namespace {

using detail::kFullMask;
using detail::kWarpSize;

constexpr int kMaxD = kAttentionMaxHead;  // 128
constexpr int kKeys = kWarpSize;          // keys per tile: one per lane
constexpr int kPad = kMaxD + 1;           // padded row stride of per-lane-row tiles
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kWarpSize;
constexpr int kColsPerLane = kMaxD / kWarpSize;  // 4 output columns per lane (c = lane + 32·t)

constexpr int kFwdRowsPerWarp = 4;
constexpr int kFwdRows = kWarps * kFwdRowsPerWarp;  // 16 queries per forward block
constexpr int kDqRowsPerWarp = 2;
constexpr int kDqRows = kWarps * kDqRowsPerWarp;    // 8 queries per dQ block
constexpr int kDkvPerThread = kKeys * kMaxD / kThreads;  // 32 elements of the 32 × d tile per thread

static_assert(kMaxD % kWarpSize == 0, "head width must be a multiple of the warp size");
static_assert(kKeys * kMaxD == kThreads * kDkvPerThread, "the dK/dV tile must split evenly over the threads");

// Geometry shared by the kernels: where head h of batch b starts in q/out (Tq rows) and k/v (Tk rows).
struct Head {
  int b, h, d;
  std::size_t qbase, kbase;  // element offsets of row 0, column h·d
  int valid;                 // keys visible at all: min(key_len[b], Tk), at least 0
};

__device__ __forceinline__ Head head_of(int bh, const int* key_len, int Tq, int Tk, int C, int H) {
  Head g;
  g.b = bh / H;
  g.h = bh % H;
  g.d = C / H;
  g.qbase = static_cast<std::size_t>(g.b) * Tq * C + static_cast<std::size_t>(g.h) * g.d;
  g.kbase = static_cast<std::size_t>(g.b) * Tk * C + static_cast<std::size_t>(g.h) * g.d;
  const int kl = key_len ? key_len[g.b] : Tk;
  g.valid = kl < 0 ? 0 : (kl < Tk ? kl : Tk);
  return g;
}

// Keys [0, limit) are visible to query i.
__device__ __forceinline__ int visible_limit(int i, int valid, bool causal) {
  return causal ? min(valid, i + 1) : valid;
}

// Loads keys [j0, j0 + cols) of one head into a kKeys-row tile with row stride `stride` (zeros beyond
// cols, so nothing uninitialised is ever read).
__device__ __forceinline__ void load_tile(float* tile, int stride, const float* src, std::size_t base, int j0, int cols,
                                          int d, int C) {
  for (int e = threadIdx.x; e < kKeys * d; e += blockDim.x) {
    const int j = e / d, c = e % d;
    tile[j * stride + c] = j < cols ? src[base + static_cast<std::size_t>(j0 + j) * C + c] : 0.0f;
  }
}

// a · b over the head width, one lane's dot product (a broadcast row against the lane's own tile row).
__device__ __forceinline__ float dot(const float* a, const float* b, int d) {
  float acc = 0.0f;
  for (int c = 0; c < d; ++c) acc += a[c] * b[c];
  return acc;
}

// acc[t] += Σ_{j < n} w_j · tile[j·stride + c] for this lane's columns c = lane + 32·t, where w_j is lane
// j's value of w (a weight or a score gradient per key). Every lane of the warp must call it.
__device__ __forceinline__ void add_weighted_rows(float (&acc)[kColsPerLane], float w, int n, const float* tile,
                                                  int stride, int d, int lane) {
  for (int j = 0; j < n; ++j) {
    const float wj = __shfl_sync(kFullMask, w, j);
#pragma unroll
    for (int t = 0; t < kColsPerLane; ++t) {
      const int c = lane + kWarpSize * t;
      if (c < d) acc[t] += wj * tile[j * stride + c];
    }
  }
}

// ---- forward --------------------------------------------------------------------------------------

__global__ void __launch_bounds__(kThreads)
    attention_forward_kernel(float* __restrict__ out, float* __restrict__ lse, const float* __restrict__ q,
                             const float* __restrict__ k, const float* __restrict__ v,
                             const int* __restrict__ key_len, bool causal, int Tq, int Tk, int C, int H, int qblocks,
                             float scale) {
  __shared__ float Qs[kFwdRows * kMaxD];
  __shared__ float Ks[kKeys * kPad];
  __shared__ float Vs[kKeys * kMaxD];  // read by column (lane c), so no padding needed
  const int bh = blockIdx.x / qblocks, i0 = (blockIdx.x % qblocks) * kFwdRows;
  const Head g = head_of(bh, key_len, Tq, Tk, C, H);
  const int d = g.d, rows = min(kFwdRows, Tq - i0);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  for (int e = threadIdx.x; e < kFwdRows * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    Qs[r * kMaxD + c] = r < rows ? q[g.qbase + static_cast<std::size_t>(i0 + r) * C + c] : 0.0f;
  }
  float m[kFwdRowsPerWarp], l[kFwdRowsPerWarp], o[kFwdRowsPerWarp][kColsPerLane];
#pragma unroll
  for (int rr = 0; rr < kFwdRowsPerWarp; ++rr) {
    m[rr] = -INFINITY;
    l[rr] = 0.0f;
#pragma unroll
    for (int t = 0; t < kColsPerLane; ++t) o[rr][t] = 0.0f;
  }

  // Keys beyond `valid`, and (causal) beyond the block's last query, are hidden from every row.
  const int kend = causal ? min(g.valid, min(Tk, i0 + rows)) : g.valid;
  for (int j0 = 0; j0 < kend; j0 += kKeys) {
    const int cols = min(kKeys, kend - j0);
    __syncthreads();  // the previous tile is consumed (and, the first time, Qs is complete)
    load_tile(Ks, kPad, k, g.kbase, j0, cols, d, C);
    load_tile(Vs, kMaxD, v, g.kbase, j0, cols, d, C);
    __syncthreads();
#pragma unroll
    for (int rr = 0; rr < kFwdRowsPerWarp; ++rr) {
      const int r = warp * kFwdRowsPerWarp + rr;
      if (r >= rows) continue;  // uniform over the warp
      const int vis = min(cols, visible_limit(i0 + r, g.valid, causal) - j0);
      if (vis <= 0) continue;   // uniform over the warp
      const float s = lane < vis ? dot(Qs + r * kMaxD, Ks + lane * kPad, d) * scale : -INFINITY;
      const float mx = fmaxf(m[rr], detail::warp_max(s));  // finite: at least one lane is visible
      const float corr = expf(m[rr] - mx);                 // 0 on the row's first tile (m = −inf)
      const float p = lane < vis ? expf(s - mx) : 0.0f;
      l[rr] = l[rr] * corr + detail::warp_sum(p);
      m[rr] = mx;
#pragma unroll
      for (int t = 0; t < kColsPerLane; ++t) o[rr][t] *= corr;
      add_weighted_rows(o[rr], p, vis, Vs, kMaxD, d, lane);
    }
  }

#pragma unroll
  for (int rr = 0; rr < kFwdRowsPerWarp; ++rr) {
    const int r = warp * kFwdRowsPerWarp + rr;
    if (r >= rows) continue;
    const int i = i0 + r;
    const bool any = l[rr] > 0.0f;  // false for a row with no visible key: zeros and lse = −inf
    const float inv = any ? 1.0f / l[rr] : 0.0f;
    float* orow = out + g.qbase + static_cast<std::size_t>(i) * C;
#pragma unroll
    for (int t = 0; t < kColsPerLane; ++t) {
      const int c = lane + kWarpSize * t;
      if (c < d) orow[c] = any ? o[rr][t] * inv : 0.0f;
    }
    if (lane == 0) lse[static_cast<std::size_t>(bh) * Tq + i] = any ? m[rr] + logf(l[rr]) : -INFINITY;
  }
}

// ---- backward: dK and dV ----------------------------------------------------------------------------

__global__ void __launch_bounds__(kThreads)
    attention_backward_dkdv_kernel(float* __restrict__ dk, float* __restrict__ dv, const float* __restrict__ dout,
                                   const float* __restrict__ out, const float* __restrict__ lse,
                                   const float* __restrict__ q, const float* __restrict__ k,
                                   const float* __restrict__ v, const int* __restrict__ key_len, bool causal, int Tq,
                                   int Tk, int C, int H, int kblocks, float scale) {
  __shared__ float Ks[kKeys * kPad];
  __shared__ float Vs[kKeys * kPad];
  __shared__ float Qs[kWarps * kMaxD];  // this round's query rows, one per warp
  __shared__ float Gs[kWarps * kMaxD];  // and their output gradients
  __shared__ float Ps[kWarps * kKeys];  // p_ij of this round
  __shared__ float Ss[kWarps * kKeys];  // ds_ij of this round
  const int bh = blockIdx.x / kblocks, j0 = (blockIdx.x % kblocks) * kKeys;
  const Head g = head_of(bh, key_len, Tq, Tk, C, H);
  const int d = g.d, cols = min(kKeys, Tk - j0);
  if (j0 >= g.valid) return;  // keys no query sees: nothing to add (uniform over the block)
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  load_tile(Ks, kPad, k, g.kbase, j0, cols, d, C);
  load_tile(Vs, kPad, v, g.kbase, j0, cols, d, C);
  __syncthreads();  // the key tile is complete before any lane reads another thread's row

  float acc_k[kDkvPerThread], acc_v[kDkvPerThread];
#pragma unroll
  for (int u = 0; u < kDkvPerThread; ++u) acc_k[u] = acc_v[u] = 0.0f;

  const float* lse_bh = lse + static_cast<std::size_t>(bh) * Tq;
  // Causal: query i sees key j only if j ≤ i, so queries before j0 see none of this tile.
  for (int ib = causal ? j0 : 0; ib < Tq; ib += kWarps) {
    const int i = ib + warp;
    float p = 0.0f, ds = 0.0f;
    float* qs = Qs + warp * kMaxD;
    float* gs = Gs + warp * kMaxD;
    if (i < Tq) {  // uniform over the warp
      const std::size_t row = g.qbase + static_cast<std::size_t>(i) * C;
      float dsum = 0.0f;
      for (int c = lane; c < d; c += kWarpSize) {
        const float gc = dout[row + c];
        qs[c] = q[row + c];
        gs[c] = gc;
        dsum += gc * out[row + c];
      }
      const float D = detail::warp_sum(dsum);  // D_i = dout_i · out_i
      __syncwarp();                            // qs, gs written by all lanes before any lane reads them
      const int vis = min(cols, visible_limit(i, g.valid, causal) - j0);
      if (lane < vis) {
        p = expf(dot(qs, Ks + lane * kPad, d) * scale - lse_bh[i]);
        ds = p * (dot(gs, Vs + lane * kPad, d) - D);
      }
    } else {
      for (int c = lane; c < d; c += kWarpSize) qs[c] = gs[c] = 0.0f;  // rows past Tq add nothing
    }
    Ps[warp * kKeys + lane] = p;
    Ss[warp * kKeys + lane] = ds;
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kDkvPerThread; ++u) {
      const int e = threadIdx.x + kThreads * u;
      if (e < kKeys * d) {
        const int j = e / d, c = e % d;
        float sv = 0.0f, sk = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
          sv += Ps[w * kKeys + j] * Gs[w * kMaxD + c];
          sk += Ss[w * kKeys + j] * Qs[w * kMaxD + c];
        }
        acc_v[u] += sv;
        acc_k[u] += sk;
      }
    }
    __syncthreads();  // before the next round overwrites Qs, Gs, Ps, Ss
  }

#pragma unroll
  for (int u = 0; u < kDkvPerThread; ++u) {
    const int e = threadIdx.x + kThreads * u;
    if (e < kKeys * d) {
      const int j = e / d, c = e % d;
      if (j < cols) {
        const std::size_t at = g.kbase + static_cast<std::size_t>(j0 + j) * C + c;
        dv[at] += acc_v[u];
        dk[at] += scale * acc_k[u];
      }
    }
  }
}

// ---- backward: dQ -----------------------------------------------------------------------------------

__global__ void __launch_bounds__(kThreads)
    attention_backward_dq_kernel(float* __restrict__ dq, const float* __restrict__ dout, const float* __restrict__ out,
                                 const float* __restrict__ lse, const float* __restrict__ q,
                                 const float* __restrict__ k, const float* __restrict__ v,
                                 const int* __restrict__ key_len, bool causal, int Tq, int Tk, int C, int H,
                                 int qblocks, float scale) {
  __shared__ float Qs[kDqRows * kMaxD];
  __shared__ float Gs[kDqRows * kMaxD];
  __shared__ float Ks[kKeys * kPad];
  __shared__ float Vs[kKeys * kPad];
  const int bh = blockIdx.x / qblocks, i0 = (blockIdx.x % qblocks) * kDqRows;
  const Head g = head_of(bh, key_len, Tq, Tk, C, H);
  const int d = g.d, rows = min(kDqRows, Tq - i0);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  for (int e = threadIdx.x; e < kDqRows * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    const std::size_t at = g.qbase + static_cast<std::size_t>(i0 + r) * C + c;
    Qs[r * kMaxD + c] = r < rows ? q[at] : 0.0f;
    Gs[r * kMaxD + c] = r < rows ? dout[at] : 0.0f;
  }
  float D[kDqRowsPerWarp], L[kDqRowsPerWarp], acc[kDqRowsPerWarp][kColsPerLane];
#pragma unroll
  for (int rr = 0; rr < kDqRowsPerWarp; ++rr) {
    const int r = warp * kDqRowsPerWarp + rr;
    float s = 0.0f;
    if (r < rows) {
      const std::size_t row = g.qbase + static_cast<std::size_t>(i0 + r) * C;
      for (int c = lane; c < d; c += kWarpSize) s += dout[row + c] * out[row + c];
    }
    D[rr] = detail::warp_sum(s);
    L[rr] = r < rows ? lse[static_cast<std::size_t>(bh) * Tq + i0 + r] : 0.0f;
#pragma unroll
    for (int t = 0; t < kColsPerLane; ++t) acc[rr][t] = 0.0f;
  }

  const int kend = causal ? min(g.valid, min(Tk, i0 + rows)) : g.valid;
  for (int j0 = 0; j0 < kend; j0 += kKeys) {
    const int cols = min(kKeys, kend - j0);
    __syncthreads();
    load_tile(Ks, kPad, k, g.kbase, j0, cols, d, C);
    load_tile(Vs, kPad, v, g.kbase, j0, cols, d, C);
    __syncthreads();
#pragma unroll
    for (int rr = 0; rr < kDqRowsPerWarp; ++rr) {
      const int r = warp * kDqRowsPerWarp + rr;
      if (r >= rows) continue;
      const int vis = min(cols, visible_limit(i0 + r, g.valid, causal) - j0);
      if (vis <= 0) continue;
      float ds = 0.0f;
      if (lane < vis) {
        const float p = expf(dot(Qs + r * kMaxD, Ks + lane * kPad, d) * scale - L[rr]);
        ds = p * (dot(Gs + r * kMaxD, Vs + lane * kPad, d) - D[rr]);
      }
      add_weighted_rows(acc[rr], ds, vis, Ks, kPad, d, lane);
    }
  }

#pragma unroll
  for (int rr = 0; rr < kDqRowsPerWarp; ++rr) {
    const int r = warp * kDqRowsPerWarp + rr;
    if (r >= rows) continue;
    float* drow = dq + g.qbase + static_cast<std::size_t>(i0 + r) * C;
#pragma unroll
    for (int t = 0; t < kColsPerLane; ++t) {
      const int c = lane + kWarpSize * t;
      if (c < d) drow[c] += scale * acc[rr][t];
    }
  }
}

void check_shape(const char* what, int B, int Tq, int Tk, int C, int H) {
  auto bad = [&](const std::string& why) {
    throw ShapeError(std::string(what) + ": " + why + " (B = " + std::to_string(B) + ", Tq = " + std::to_string(Tq) +
                     ", Tk = " + std::to_string(Tk) + ", C = " + std::to_string(C) + ", H = " + std::to_string(H) + ")");
  };
  if (B < 0 || Tq < 0 || Tk < 0) bad("negative size");
  if (C < 1 || H < 1 || C % H != 0) bad("H must divide C");
  if (C / H > kMaxD) bad("head width d = C / H = " + std::to_string(C / H) + " is above " + std::to_string(kMaxD));
}

}  // namespace

void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v, const int* key_len,
                       bool causal, int B, int Tq, int Tk, int C, int H, Stream stream) {
  check_shape("cuda::attention_forward", B, Tq, Tk, C, H);
  if (B == 0 || Tq == 0) return;
  const int qblocks = (Tq + kFwdRows - 1) / kFwdRows;
  const long long blocks = static_cast<long long>(B) * H * qblocks;
  if (blocks > 0x7fffffffLL) throw ShapeError("cuda::attention_forward: too many query tiles for one grid");
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(C / H)));  // the CPU's rounding
  ATTNLAB_LAUNCH(attention_forward_kernel, static_cast<unsigned>(blocks), kThreads, 0, stream)(out, lse, q, k, v, key_len, causal,
                                                                                   Tq, Tk, C, H, qblocks, scale);
  CUDA_CHECK_LAUNCH();
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                        const float* q, const float* k, const float* v, const int* key_len, bool causal, int B,
                        int Tq, int Tk, int C, int H, Stream stream) {
  check_shape("cuda::attention_backward", B, Tq, Tk, C, H);
  if (B == 0 || Tq == 0 || Tk == 0) return;  // no query, or no key: every gradient is zero
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(C / H)));
  const int kblocks = (Tk + kKeys - 1) / kKeys;
  const long long kv_blocks = static_cast<long long>(B) * H * kblocks;
  const int qblocks = (Tq + kDqRows - 1) / kDqRows;
  const long long q_blocks = static_cast<long long>(B) * H * qblocks;
  if (kv_blocks > 0x7fffffffLL || q_blocks > 0x7fffffffLL)
    throw ShapeError("cuda::attention_backward: too many tiles for one grid");
  ATTNLAB_LAUNCH(attention_backward_dkdv_kernel, static_cast<unsigned>(kv_blocks), kThreads, 0, stream)(
      dk, dv, dout, out, lse, q, k, v, key_len, causal, Tq, Tk, C, H, kblocks, scale);
  CUDA_CHECK_LAUNCH();
  ATTNLAB_LAUNCH(attention_backward_dq_kernel, static_cast<unsigned>(q_blocks), kThreads, 0, stream)(
      dq, dout, out, lse, q, k, v, key_len, causal, Tq, Tk, C, H, qblocks, scale);
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
