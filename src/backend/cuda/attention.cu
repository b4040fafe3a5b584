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
//   weights    one warp per query row, lane j computing exp(s_ij − lse_i) for keys j, j + 32, …
//              straight from global memory (a lessons-only op: no tiles).
//   forward, bf16 tensor cores (attention_forward_bf16): FlashAttention-2's loop with Q·Kᵀ and P·V
//              on tensor cores, in two kernels: with S and O in registers through PTX mma.sync for
//              d = 32, 64, 128, and with wmma tiles (S and O in shared memory) for the other
//              multiples of 16; see their own comments below.
//   dK/dV and dQ, bf16 tensor cores (attention_backward_bf16): the same two kernels' work with the
//              five products on tensor cores, as wmma tiles or (d = 32, 64) mma.sync with S, dP and
//              the gradients in registers; see their comments below.
//
// Rows are found through a Layout (the resolved backend::AttentionShape): row r of batch b of q starts
// at q + b·qb + r·ldq, and so on for k, v and out; the gradients share the strides of their inputs.
//
// Shared-memory tiles that lanes read one row each (lane j reads row j) have a padded row stride of
// 129 floats, so the 32 lanes hit 32 different banks. Static shared memory stays under 48 KB.
#include "backend/cuda/attention.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <cuda_bf16.h>
#include <mma.h>

#include "backend/cuda/bf16.cuh"
#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"
#include "backend/cuda/tensor_core.cuh"

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

// Sizes and strides (elements) of one call: backend::AttentionShape with its defaults filled in.
struct Layout {
  int Tq, Tk, C, H;
  long long ldq, ldk, ldv, ldo;  // row strides of q (and dq), k (dk), v (dv), out (and dout)
  long long qb, kb, vb, ob;      // batch strides of the same (kb = vb = 0: one K/V for every batch)
};

// Geometry shared by the kernels: where head h of batch b starts in q, k, v and out.
struct Head {
  int b, h, d;
  long long q, k, v, o;  // element offsets of row 0, column h·d
  int valid;             // keys visible at all: min(key_len[b], Tk), at least 0
};

__device__ __forceinline__ Head head_of(int bh, const int* key_len, const Layout& L) {
  Head g;
  g.b = bh / L.H;
  g.h = bh % L.H;
  g.d = L.C / L.H;
  const long long col = static_cast<long long>(g.h) * g.d;
  g.q = g.b * L.qb + col;
  g.k = g.b * L.kb + col;
  g.v = g.b * L.vb + col;
  g.o = g.b * L.ob + col;
  const int kl = key_len ? key_len[g.b] : L.Tk;
  g.valid = kl < 0 ? 0 : (kl < L.Tk ? kl : L.Tk);
  return g;
}

// Keys [0, limit) are visible to query i.
__device__ __forceinline__ int visible_limit(int i, int valid, bool causal) {
  return causal ? min(valid, i + 1) : valid;
}

// Loads keys [j0, j0 + cols) of one head (rows ld apart from base) into a kKeys-row tile with row
// stride `stride` (zeros beyond cols, so nothing uninitialised is ever read).
__device__ __forceinline__ void load_tile(float* tile, int stride, const float* src, long long base, long long ld,
                                          int j0, int cols, int d) {
  for (int e = threadIdx.x; e < kKeys * d; e += blockDim.x) {
    const int j = e / d, c = e % d;
    tile[j * stride + c] = j < cols ? src[base + (j0 + j) * ld + c] : 0.0f;
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
                             const int* __restrict__ key_len, bool causal, Layout L, int qblocks, float scale) {
  __shared__ float Qs[kFwdRows * kMaxD];
  __shared__ float Ks[kKeys * kPad];
  __shared__ float Vs[kKeys * kMaxD];  // read by column (lane c), so no padding needed
  const int Tq = L.Tq, Tk = L.Tk;
  const int bh = blockIdx.x / qblocks, i0 = (blockIdx.x % qblocks) * kFwdRows;
  const Head g = head_of(bh, key_len, L);
  const int d = g.d, rows = min(kFwdRows, Tq - i0);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  for (int e = threadIdx.x; e < kFwdRows * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    Qs[r * kMaxD + c] = r < rows ? q[g.q + (i0 + r) * L.ldq + c] : 0.0f;
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
    load_tile(Ks, kPad, k, g.k, L.ldk, j0, cols, d);
    load_tile(Vs, kMaxD, v, g.v, L.ldv, j0, cols, d);
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
    float* orow = out + g.o + i * L.ldo;
#pragma unroll
    for (int t = 0; t < kColsPerLane; ++t) {
      const int c = lane + kWarpSize * t;
      if (c < d) orow[c] = any ? o[rr][t] * inv : 0.0f;
    }
    if (lane == 0) lse[static_cast<std::size_t>(bh) * Tq + i] = any ? m[rr] + logf(l[rr]) : -INFINITY;
  }
}

// ---- backward: dK and dV ----------------------------------------------------------------------------

// GradMode::Write: the rows [j0, j0 + n) of this head's dK and dV, which no query sees, stored as
// zeros by the block that owns them (it adds nothing to them under Add). G: float32 or bf16 storage.
template <typename G>
__device__ void store_zero_key_rows(G* dk, G* dv, const Head& g, const Layout& L, int j0, int n) {
  for (int e = threadIdx.x; e < n * g.d; e += blockDim.x) {
    const long long j = j0 + e / g.d;
    const int c = e % g.d;
    if (dv) detail::store(dv + g.v + j * L.ldv + c, 0.0f);
    if (dk) detail::store(dk + g.k + j * L.ldk + c, 0.0f);
  }
}

// Whether a dK/dV block of `rows` keys from j0 has nothing to compute: no query sees its keys (j0 at
// or past the valid ones), so there is nothing to add, and under GradMode::Write zeros to store, which
// this does. Uniform over the block, so the block may return at once (before any barrier).
template <typename G>
__device__ __forceinline__ bool unseen_key_block(G* dk, G* dv, const Head& g, const Layout& L, int j0, int rows,
                                                 bool add) {
  if (j0 < g.valid) return false;
  if (!add) store_zero_key_rows(dk, dv, g, L, j0, min(rows, L.Tk - j0));
  return true;
}

__global__ void __launch_bounds__(kThreads)
    attention_backward_dkdv_kernel(float* __restrict__ dk, float* __restrict__ dv, const float* __restrict__ dout,
                                   const float* __restrict__ out, const float* __restrict__ lse,
                                   const float* __restrict__ q, const float* __restrict__ k,
                                   const float* __restrict__ v, const int* __restrict__ key_len, bool causal, Layout L,
                                   int kblocks, float scale, bool add) {
  __shared__ float Ks[kKeys * kPad];
  __shared__ float Vs[kKeys * kPad];
  __shared__ float Qs[kWarps * kMaxD];  // this round's query rows, one per warp
  __shared__ float Gs[kWarps * kMaxD];  // and their output gradients
  __shared__ float Ps[kWarps * kKeys];  // p_ij of this round
  __shared__ float Ss[kWarps * kKeys];  // ds_ij of this round
  const int Tq = L.Tq, Tk = L.Tk;
  const int bh = blockIdx.x / kblocks, j0 = (blockIdx.x % kblocks) * kKeys;
  const Head g = head_of(bh, key_len, L);
  const int d = g.d, cols = min(kKeys, Tk - j0);
  if (unseen_key_block(dk, dv, g, L, j0, kKeys, add)) return;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  load_tile(Ks, kPad, k, g.k, L.ldk, j0, cols, d);
  load_tile(Vs, kPad, v, g.v, L.ldv, j0, cols, d);
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
      const long long qrow = g.q + i * L.ldq, orow = g.o + i * L.ldo;
      float dsum = 0.0f;
      for (int c = lane; c < d; c += kWarpSize) {
        const float gc = dout[orow + c];
        qs[c] = q[qrow + c];
        gs[c] = gc;
        dsum += gc * out[orow + c];
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
      if (j < cols) {  // a null dk or dv is not wanted (uniform over the grid)
        // Keys past g.valid in this tile: p = 0 for every query, so their acc is 0 and stored as such.
        if (dv) detail::put_grad(dv[g.v + (j0 + j) * L.ldv + c], acc_v[u], add);
        if (dk) detail::put_grad(dk[g.k + (j0 + j) * L.ldk + c], scale * acc_k[u], add);
      }
    }
  }
}

// ---- backward: dQ -----------------------------------------------------------------------------------

__global__ void __launch_bounds__(kThreads)
    attention_backward_dq_kernel(float* __restrict__ dq, const float* __restrict__ dout, const float* __restrict__ out,
                                 const float* __restrict__ lse, const float* __restrict__ q,
                                 const float* __restrict__ k, const float* __restrict__ v,
                                 const int* __restrict__ key_len, bool causal, Layout L, int qblocks, float scale,
                                 bool add) {
  __shared__ float Qs[kDqRows * kMaxD];
  __shared__ float Gs[kDqRows * kMaxD];
  __shared__ float Ks[kKeys * kPad];
  __shared__ float Vs[kKeys * kPad];
  const int Tq = L.Tq, Tk = L.Tk;
  const int bh = blockIdx.x / qblocks, i0 = (blockIdx.x % qblocks) * kDqRows;
  const Head g = head_of(bh, key_len, L);
  const int d = g.d, rows = min(kDqRows, Tq - i0);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  for (int e = threadIdx.x; e < kDqRows * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    Qs[r * kMaxD + c] = r < rows ? q[g.q + (i0 + r) * L.ldq + c] : 0.0f;
    Gs[r * kMaxD + c] = r < rows ? dout[g.o + (i0 + r) * L.ldo + c] : 0.0f;
  }
  float D[kDqRowsPerWarp], lse_r[kDqRowsPerWarp], acc[kDqRowsPerWarp][kColsPerLane];
#pragma unroll
  for (int rr = 0; rr < kDqRowsPerWarp; ++rr) {
    const int r = warp * kDqRowsPerWarp + rr;
    float s = 0.0f;
    if (r < rows) {
      const long long row = g.o + (i0 + r) * L.ldo;
      for (int c = lane; c < d; c += kWarpSize) s += dout[row + c] * out[row + c];
    }
    D[rr] = detail::warp_sum(s);
    lse_r[rr] = r < rows ? lse[static_cast<std::size_t>(bh) * Tq + i0 + r] : 0.0f;
#pragma unroll
    for (int t = 0; t < kColsPerLane; ++t) acc[rr][t] = 0.0f;
  }

  const int kend = causal ? min(g.valid, min(Tk, i0 + rows)) : g.valid;
  for (int j0 = 0; j0 < kend; j0 += kKeys) {
    const int cols = min(kKeys, kend - j0);
    __syncthreads();
    load_tile(Ks, kPad, k, g.k, L.ldk, j0, cols, d);
    load_tile(Vs, kPad, v, g.v, L.ldv, j0, cols, d);
    __syncthreads();
#pragma unroll
    for (int rr = 0; rr < kDqRowsPerWarp; ++rr) {
      const int r = warp * kDqRowsPerWarp + rr;
      if (r >= rows) continue;
      const int vis = min(cols, visible_limit(i0 + r, g.valid, causal) - j0);
      if (vis <= 0) continue;
      float ds = 0.0f;
      if (lane < vis) {
        const float p = expf(dot(Qs + r * kMaxD, Ks + lane * kPad, d) * scale - lse_r[rr]);
        ds = p * (dot(Gs + r * kMaxD, Vs + lane * kPad, d) - D[rr]);
      }
      add_weighted_rows(acc[rr], ds, vis, Ks, kPad, d, lane);
    }
  }

#pragma unroll
  for (int rr = 0; rr < kDqRowsPerWarp; ++rr) {
    const int r = warp * kDqRowsPerWarp + rr;
    if (r >= rows) continue;
    float* drow = dq + g.q + (i0 + r) * L.ldq;
#pragma unroll
    for (int t = 0; t < kColsPerLane; ++t) {
      const int c = lane + kWarpSize * t;
      if (c < d) detail::put_grad(drow[c], scale * acc[rr][t], add);  // 0 for a row that sees no key
    }
  }
}

// ---- the weights, for the lessons ------------------------------------------------------------------

constexpr int kWeightRows = kWarps;  // query rows per block: one per warp

__global__ void __launch_bounds__(kThreads)
    attention_weights_kernel(float* __restrict__ att, const float* __restrict__ lse, const float* __restrict__ q,
                             const float* __restrict__ k, const int* __restrict__ key_len, bool causal, Layout L,
                             int qblocks, float scale) {
  const int bh = blockIdx.x / qblocks;
  const int i = (blockIdx.x % qblocks) * kWeightRows + static_cast<int>(threadIdx.x) / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  if (i >= L.Tq) return;  // uniform over the warp; no barrier follows
  const Head g = head_of(bh, key_len, L);
  const int limit = visible_limit(i, g.valid, causal);
  const float lse_i = lse[static_cast<long long>(bh) * L.Tq + i];
  const float* qrow = q + g.q + i * L.ldq;
  float* arow = att + (static_cast<long long>(bh) * L.Tq + i) * L.Tk;
  for (int j = lane; j < L.Tk; j += kWarpSize)
    arow[j] = j < limit ? expf(dot(qrow, k + g.k + j * L.ldk, g.d) * scale - lse_i) : 0.0f;
}

// ---- forward on tensor cores (bf16) -----------------------------------------------------------------
// FlashAttention-2's loop with both products on tensor cores (wmma 16 × 16 × 16, bf16 inputs, float
// accumulators). A block of 4 warps owns 64 queries of one (batch, head), 16 per warp; keys and
// values come 64 at a time, rounded to bf16 as they are staged in shared memory. Per key tile, warp w:
//   S_w (16 × 64, float) = Q_w · K_tileᵀ            tensor cores, stored to the warp's S in shared memory
//   online softmax on S_w in float, lanes 2r and 2r+1 owning row r (32 columns each): m' = max(m, s),
//   P = e^(s − m') rounded to bf16 into the warp's P, l ← l·e^(m − m') + Σ P (the float values), and
//   the row of O in shared memory scaled by e^(m − m')
//   O_w (16 × d, float) += P · V_tile               tensor cores, O loaded from and stored back to shared
// O stays in shared memory (not registers) because a wmma accumulator's element-to-lane mapping is
// unspecified, so its rows cannot be rescaled in place. m, l, lse and O are float32 throughout; only
// the products' inputs (Q, K, V, P) are bf16. Head width d: a multiple of 16, at most 128.
namespace tc {
constexpr int kEdge = 16;                            // the wmma tile edge
constexpr int kRowsPerWarp = kEdge;
constexpr int kRows = kWarps * kRowsPerWarp;         // 64 queries per block
constexpr int kTileKeys = 64;                        // keys per tile
constexpr int kSld = kTileKeys + 4;                  // S row stride, floats (a multiple of 4: 16 bytes)
constexpr int kPld = kTileKeys + 8;                  // P row stride, bf16 (a multiple of 8: 16 bytes)
constexpr int kAlign = 128;                          // the shared base is rounded up to this

// Byte offsets of the shared arrays for head width d. Every fragment pointer the kernel forms is
// then 32-byte aligned (wmma's requirement): row blocks of 16 rows and column blocks of 16 elements.
struct Smem {
  int ldh, ldo;                        // row strides: Q/K/V tiles (bf16), O (float)
  std::size_t q, k, v, s, p, o, bytes;  // bytes: the total, alignment slack included
};
__host__ __device__ inline Smem smem_for(int d) {
  Smem m;
  m.ldh = d + 8;
  m.ldo = d + 4;
  m.q = 0;
  m.k = m.q + static_cast<std::size_t>(kRows) * m.ldh * 2;
  m.v = m.k + static_cast<std::size_t>(kTileKeys) * m.ldh * 2;
  m.s = m.v + static_cast<std::size_t>(kTileKeys) * m.ldh * 2;
  m.p = m.s + static_cast<std::size_t>(kWarps) * kRowsPerWarp * kSld * 4;
  m.o = m.p + static_cast<std::size_t>(kWarps) * kRowsPerWarp * kPld * 2;
  m.bytes = m.o + static_cast<std::size_t>(kWarps) * kRowsPerWarp * m.ldo * 4 + kAlign;
  return m;
}
}  // namespace tc

__global__ void __launch_bounds__(kThreads)
    attention_forward_bf16_kernel(float* __restrict__ out, float* __restrict__ lse, const float* __restrict__ q,
                                  const float* __restrict__ k, const float* __restrict__ v,
                                  const int* __restrict__ key_len, bool causal, Layout L, int qblocks, float scale) {
  namespace wmma = nvcuda::wmma;
  using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major>;
  using FragAcc = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
  const int Tq = L.Tq, Tk = L.Tk;
  const int bh = blockIdx.x / qblocks, i0 = (blockIdx.x % qblocks) * tc::kRows;
  const Head g = head_of(bh, key_len, L);
  const int d = g.d, rows = min(tc::kRows, Tq - i0), dt = d / tc::kEdge;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const tc::Smem sm = tc::smem_for(d);
  unsigned char* base = detail::dynamic_shared<unsigned char>();
  base += (tc::kAlign - reinterpret_cast<std::uintptr_t>(base) % tc::kAlign) % tc::kAlign;
  __nv_bfloat16* Qs = reinterpret_cast<__nv_bfloat16*>(base + sm.q);
  __nv_bfloat16* Ks = reinterpret_cast<__nv_bfloat16*>(base + sm.k);
  __nv_bfloat16* Vs = reinterpret_cast<__nv_bfloat16*>(base + sm.v);
  float* Sw = reinterpret_cast<float*>(base + sm.s) + warp * tc::kRowsPerWarp * tc::kSld;
  __nv_bfloat16* Pw = reinterpret_cast<__nv_bfloat16*>(base + sm.p) + warp * tc::kRowsPerWarp * tc::kPld;
  float* Ow = reinterpret_cast<float*>(base + sm.o) + warp * tc::kRowsPerWarp * sm.ldo;

  for (int e = threadIdx.x; e < tc::kRows * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    Qs[r * sm.ldh + c] = __float2bfloat16_rn(r < rows ? q[g.q + (i0 + r) * L.ldq + c] : 0.0f);
  }
  for (int e = lane; e < tc::kRowsPerWarp * d; e += kWarpSize) Ow[(e / d) * sm.ldo + e % d] = 0.0f;
  // This lane's query row and half of the columns (of S and P: 32 keys; of O: d/2 columns).
  const int rl = lane / 2, half = lane % 2;
  const int i = i0 + warp * tc::kRowsPerWarp + rl;
  const int limit = i < Tq ? visible_limit(i, g.valid, causal) : 0;
  const int o0 = half * (d / 2), o1 = o0 + d / 2;
  float m = -INFINITY, l = 0.0f;

  // Keys beyond `valid`, and (causal) beyond the block's last query, are hidden from every row.
  const int kend = causal ? min(g.valid, min(Tk, i0 + rows)) : g.valid;
  for (int j0 = 0; j0 < kend; j0 += tc::kTileKeys) {
    const int cols = min(tc::kTileKeys, kend - j0);
    const int ktiles = (cols + tc::kEdge - 1) / tc::kEdge;  // the 16-key blocks holding any key
    __syncthreads();  // the previous K/V tile is consumed (the first time: Qs and Ow are written)
    for (int e = threadIdx.x; e < tc::kTileKeys * d; e += blockDim.x) {
      const int j = e / d, c = e % d;
      const bool in = j < cols;
      Ks[j * sm.ldh + c] = __float2bfloat16_rn(in ? k[g.k + (j0 + j) * L.ldk + c] : 0.0f);
      Vs[j * sm.ldh + c] = __float2bfloat16_rn(in ? v[g.v + (j0 + j) * L.ldv + c] : 0.0f);
    }
    __syncthreads();

    // S_w = Q_w · K_tileᵀ: K's rows, read column-major, are Kᵀ's columns.
    for (int jt = 0; jt < ktiles; ++jt) {
      FragAcc acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int kk = 0; kk < dt; ++kk) {
        FragA a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
        wmma::load_matrix_sync(a, Qs + warp * tc::kRowsPerWarp * sm.ldh + kk * tc::kEdge, sm.ldh);
        wmma::load_matrix_sync(b, Ks + jt * tc::kEdge * sm.ldh + kk * tc::kEdge, sm.ldh);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(Sw + jt * tc::kEdge, acc, tc::kSld, wmma::mem_row_major);
    }
    __syncwarp();  // S_w complete before the lanes read its rows

    const int vis = min(cols, limit - j0);  // the row's visible keys in this tile (≤ 0: none)
    const float* srow = Sw + rl * tc::kSld;
    float mx = -INFINITY;
    for (int c = half * 32; c < half * 32 + 32; ++c)
      if (c < vis) mx = fmaxf(mx, srow[c] * scale);
    mx = fmaxf(m, fmaxf(mx, __shfl_xor_sync(kFullMask, mx, 1)));
    const float corr = m == -INFINITY ? 0.0f : expf(m - mx);  // O and l are still 0 while m = −inf
    float sum = 0.0f;
    __nv_bfloat16* prow = Pw + rl * tc::kPld;
    for (int c = half * 32; c < half * 32 + 32; ++c) {
      const float p = c < vis ? expf(srow[c] * scale - mx) : 0.0f;
      sum += p;
      prow[c] = __float2bfloat16_rn(p);
    }
    l = l * corr + sum + __shfl_xor_sync(kFullMask, sum, 1);
    m = mx;
    float* orow = Ow + rl * sm.ldo;
    for (int c = o0; c < o1; ++c) orow[c] *= corr;
    __syncwarp();  // P_w and the rescaled O_w complete before the tensor cores read them

    // O_w += P_w · V_tile, one 16-column block of O at a time.
    for (int ct = 0; ct < dt; ++ct) {
      FragAcc acc;
      wmma::load_matrix_sync(acc, Ow + ct * tc::kEdge, sm.ldo, wmma::mem_row_major);
      for (int kt = 0; kt < ktiles; ++kt) {
        FragA a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
        wmma::load_matrix_sync(a, Pw + kt * tc::kEdge, tc::kPld);
        wmma::load_matrix_sync(b, Vs + kt * tc::kEdge * sm.ldh + ct * tc::kEdge, sm.ldh);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(Ow + ct * tc::kEdge, acc, sm.ldo, wmma::mem_row_major);
    }
    __syncwarp();  // O_w stored before the next tile's rescale (or the final read)
  }

  if (i < Tq) {
    const bool any = l > 0.0f;  // false for a row with no visible key: zeros and lse = −inf
    const float inv = any ? 1.0f / l : 0.0f;
    const float* orow = Ow + rl * sm.ldo;
    float* dst = out + g.o + static_cast<long long>(i) * L.ldo;
    for (int c = o0; c < o1; ++c) dst[c] = any ? orow[c] * inv : 0.0f;
    if (half == 0) lse[static_cast<std::size_t>(bh) * Tq + i] = any ? m + logf(l) : -INFINITY;
  }
}

// ---- forward on tensor cores, tiles in registers (bf16; head widths 32, 64, 128) ---------------------
// FlashAttention-2's forward with its accumulators in registers, through PTX's mma.sync m16n8k16
// (tensor_core.cuh), whose fragment layout is documented: a thread knows which rows and columns of S
// and O it holds, so it rescales its rows of O in place and hands its S values, exponentiated and
// rounded to bf16, straight to P·V as the A operand. Nothing but the staged K and V tiles goes
// through shared memory. attention_forward_bf16 uses it for d = 32, 64 and 128 (the wmma kernel above
// for the other multiples of 16).
//   block   W warps; warp w owns RT tiles of 16 queries (16·RT rows), and within a tile thread
//           (g = lane / 4, t = lane % 4) owns rows g and g + 8: their Q fragments (bf16, loaded once),
//           running max m and normaliser l, and O columns 8n + 2t, 8n + 2t + 1 for every n.
//   per key tile (64 keys, staged as bf16: K row-major, V transposed, so that both products' B
//           fragments are one 32-bit shared load per register, 32 distinct banks with 8 bf16 of padding)
//           S = Q·Kᵀ (16 × 64 per row tile, 8 × D/16 mma), scaled by log2(e)/√d; masked keys −∞; the
//           row max over the row's 4 threads by two shuffles; P = 2^(S − m'); l ← l·2^(m − m') + Σ P
//           (each thread its own share, added across the 4 at the end); O ← O·2^(m − m') + P·V
//           (4 × D/8 mma per row tile).
//   end     O / l stored (two floats per store when the layout allows), lse = m·ln 2 + ln l.
// Each B fragment read from shared memory feeds RT products, one per row tile: at one 256-byte fragment
// per product, shared memory (128 bytes a cycle per SM) would hold the tensor cores to half speed, so
// for d ≤ 64 a warp owns two row tiles (4 warps, 128 queries per block, 168 to 247 registers); d = 128
// has the registers for one (8 warps, 128 queries). ATTNLAB_BF16_ATTENTION=rf1 runs one row tile per
// warp at every width, to time the two against each other on a GPU.
// Warps whose queries see no key of a tile (causal attention's upper triangle, rows past Tq) skip it
// between the block's barriers; 16-key steps past the warp's last visible key are skipped too.
namespace rf {
constexpr int kTileKeys = 64;
constexpr int kPad = 8;  // bf16 per row: a row stride of D + 8 (or 72) bf16 puts lanes (g, t) on 32 banks
template <int D>
struct Tile {
  static constexpr int ldk = D + kPad;          // a row-major tile: 64 rows (keys or queries) of D, bf16
  static constexpr int ldv = kTileKeys + kPad;  // a transposed tile: D rows (columns) of 64 keys or queries
  static_assert(D % 16 == 0 && ldk % 2 == 0 && ldv % 2 == 0, "bf16 pairs must not straddle rows");
};

// Four floats of row r, columns c … c + 3, of a head's rows (ld apart from src + base); zeros past
// `valid` rows.
__device__ __forceinline__ void load4(float (&x)[4], const float* src, long long base, long long ld, int r, int c,
                                      int valid, bool vec) {
  x[0] = x[1] = x[2] = x[3] = 0.0f;
  if (r >= valid) return;
  const float* p = src + base + static_cast<long long>(r) * ld + c;
  if (vec) detail::load_float4(x, p);
  else x[0] = p[0], x[1] = p[1], x[2] = p[2], x[3] = p[3];
}
// The same from bf16 storage (raw bits), widened: 8-byte loads when vec.
__device__ __forceinline__ void load4(float (&x)[4], const std::uint16_t* src, long long base, long long ld, int r,
                                      int c, int valid, bool vec) {
  x[0] = x[1] = x[2] = x[3] = 0.0f;
  if (r >= valid) return;
  const std::uint16_t* p = src + base + static_cast<long long>(r) * ld + c;
  if (vec) detail::load_bf16x4(x, p);
  else x[0] = detail::load(p), x[1] = detail::load(p + 1), x[2] = detail::load(p + 2), x[3] = detail::load(p + 3);
}

// Two adjacent outputs: float32, or rounded to bf16; one store of both when vec (aligned).
__device__ __forceinline__ void store2(float* p, float x0, float x1, bool vec) {
  if (vec) detail::store_float2(p, x0, x1);
  else p[0] = x0, p[1] = x1;
}
__device__ __forceinline__ void store2(std::uint16_t* p, float x0, float x1, bool vec) {
  if (vec) detail::store_bf16x2(p, x0, x1);
  else detail::store(p, x0), detail::store(p + 1, x1);
}

// A fragments of rows r0 … r0 + 15 of a head (16 × D, bf16 pairs along the width), straight from
// global memory (S: float32 or bf16 storage); zeros past `valid` rows. Thread (g, t) reads its own
// elements only.
template <int D, typename S>
__device__ __forceinline__ void load_a(std::uint32_t (&a)[D / 16][4], const S* src, long long base, long long ld,
                                       int r0, int valid, int g, int t) {
  auto x = [&](int r, int c) { return r < valid ? detail::load(src + base + static_cast<long long>(r) * ld + c) : 0.0f; };
#pragma unroll
  for (int st = 0; st < D / 16; ++st) {
    const int c = 16 * st + 2 * t;
    a[st][0] = detail::pack_bf16x2(x(r0 + g, c), x(r0 + g, c + 1));
    a[st][1] = detail::pack_bf16x2(x(r0 + g + 8, c), x(r0 + g + 8, c + 1));
    a[st][2] = detail::pack_bf16x2(x(r0 + g, c + 8), x(r0 + g, c + 9));
    a[st][3] = detail::pack_bf16x2(x(r0 + g + 8, c + 8), x(r0 + g + 8, c + 9));
  }
}

// Rows r0 … r0 + 63 of a head as bf16 pairs, row-major (row stride Tile<D>::ldk bf16), zeros past
// `valid` rows: a thread per (row, 4 columns), consecutive threads along a row. For B fragments
// whose pairs run along the head width (Kᵀ in S = Q·Kᵀ, Vᵀ in dP = dO·Vᵀ).
template <int D, int NT, typename S>
__device__ __forceinline__ void stage_rows(std::uint32_t* dst, const S* src, long long base, long long ld, int r0,
                                           int valid, bool vec) {
  for (int e = threadIdx.x; e < kTileKeys * (D / 4); e += NT) {
    const int r = e / (D / 4), c = 4 * (e % (D / 4));
    float x[4];
    load4(x, src, base, ld, r0 + r, c, valid, vec);
    dst[(r * Tile<D>::ldk + c) / 2] = detail::pack_bf16x2(x[0], x[1]);
    dst[(r * Tile<D>::ldk + c) / 2 + 1] = detail::pack_bf16x2(x[2], x[3]);
  }
}

// The same 64 rows transposed (D rows of 64, row stride Tile<D>::ldv bf16): a thread per (pair of
// rows, 4 columns), consecutive threads along the rows, so each of its four word stores lands on 32
// consecutive words. For B fragments whose pairs run along the rows (V in O = P·V, K in dQ = dS·K).
template <int D, int NT, typename S>
__device__ __forceinline__ void stage_cols(std::uint32_t* dst, const S* src, long long base, long long ld, int r0,
                                           int valid, bool vec) {
  for (int e = threadIdx.x; e < (kTileKeys / 2) * (D / 4); e += NT) {
    const int rp = e % (kTileKeys / 2), c = 4 * (e / (kTileKeys / 2)), r = 2 * rp;
    float x0[4], x1[4];
    load4(x0, src, base, ld, r0 + r, c, valid, vec);
    load4(x1, src, base, ld, r0 + r + 1, c, valid, vec);
#pragma unroll
    for (int u = 0; u < 4; ++u) dst[((c + u) * Tile<D>::ldv + r) / 2] = detail::pack_bf16x2(x0[u], x1[u]);
  }
}

// The two products of every register-tile kernel, for RT 16-row tiles of A at once (the forward's
// warps own two, the backward's one): each B fragment read from shared memory feeds RT products.
//
// acc[rt][n] (16 × 64 in 8 column blocks) = A[rt] (16 × D, fragments) · Bᵀ, B a row-major tile of 64
// rows (stage_rows): column block n is B's rows 8n … 8n + 7. Column blocks at or past `cols` are 0.
template <int D, int RT>
__device__ __forceinline__ void product_abt(float (&acc)[RT][8][4], const std::uint32_t (&a)[RT][D / 16][4],
                                            const std::uint32_t* b_tile, int cols, int g, int t) {
#pragma unroll
  for (int n = 0; n < 8; ++n) {
#pragma unroll
    for (int rt = 0; rt < RT; ++rt) acc[rt][n][0] = acc[rt][n][1] = acc[rt][n][2] = acc[rt][n][3] = 0.0f;
    if (8 * n >= cols) continue;
    const std::uint32_t* brow = b_tile + ((8 * n + g) * Tile<D>::ldk + 2 * t) / 2;
#pragma unroll
    for (int st = 0; st < D / 16; ++st) {
      const std::uint32_t b[2] = {brow[8 * st], brow[8 * st + 4]};  // B[8n + g][16st + 2t (+ 8)]
#pragma unroll
      for (int rt = 0; rt < RT; ++rt) detail::mma_bf16_16816(acc[rt][n], a[rt][st], b);
    }
  }
}

// acc[rt][n] (16 × D in D/8 column blocks) += X[rt] (16 × 64, from 8 column blocks of float values,
// rounded to bf16 here: an accumulator of product_abt is exactly the A fragment of its 16 columns) · Y,
// Y a transposed tile (stage_cols) of 64 rows: Y's column 8n + g is the tile's row. 16-row steps of Y
// at or past `cols` are skipped (X is 0 there).
template <int D, int RT>
__device__ __forceinline__ void accumulate_xy(float (&acc)[RT][D / 8][4], const float (&x)[RT][8][4],
                                              const std::uint32_t* y_t, int cols, int g, int t) {
#pragma unroll
  for (int kt = 0; kt < kTileKeys / 16; ++kt) {
    if (16 * kt >= cols) continue;
    std::uint32_t a[RT][4];
#pragma unroll
    for (int rt = 0; rt < RT; ++rt) {
      a[rt][0] = detail::pack_bf16x2(x[rt][2 * kt][0], x[rt][2 * kt][1]);
      a[rt][1] = detail::pack_bf16x2(x[rt][2 * kt][2], x[rt][2 * kt][3]);
      a[rt][2] = detail::pack_bf16x2(x[rt][2 * kt + 1][0], x[rt][2 * kt + 1][1]);
      a[rt][3] = detail::pack_bf16x2(x[rt][2 * kt + 1][2], x[rt][2 * kt + 1][3]);
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const std::uint32_t* yrow = y_t + ((8 * n + g) * Tile<D>::ldv + 16 * kt + 2 * t) / 2;
      const std::uint32_t b[2] = {yrow[0], yrow[4]};  // Y[16kt + 2t (+ 8)][8n + g]
#pragma unroll
      for (int rt = 0; rt < RT; ++rt) detail::mma_bf16_16816(acc[rt][n], a[rt], b);
    }
  }
}
}  // namespace rf

// S: how q, k and v are stored, O: how out is (float32, or bf16 raw bits: the bf16 storage op, which
// reads and writes the 16 bits; the arithmetic is the same, since the products round to bf16 anyway).
template <int D, int RT, int W, typename S, typename O>
__global__ void __launch_bounds__(W * kWarpSize, 1)
    attention_forward_bf16_rf_kernel(O* __restrict__ out, float* __restrict__ lse, const S* __restrict__ q,
                                     const S* __restrict__ k, const S* __restrict__ v,
                                     const int* __restrict__ key_len, bool causal, Layout L, int qblocks,
                                     float scale_log2, bool vec_kv, bool vec_o) {
  using T = rf::Tile<D>;
  constexpr int kThreadsW = W * kWarpSize;
  constexpr int kWarpRows = 16 * RT;          // queries per warp
  constexpr int kBlockRows = W * kWarpRows;   // queries per block
  constexpr int kSteps = D / 16;              // 16-wide k steps of Q·Kᵀ
  constexpr int kOut = D / 8;                 // 8-wide column blocks of O
  constexpr int kN = rf::kTileKeys / 8;       // 8-key column blocks of S
  // K and Vᵀ as bf16 pairs in 32-bit words (the fragments' register format).
  __shared__ std::uint32_t Ks[rf::kTileKeys * T::ldk / 2];
  __shared__ std::uint32_t Vt[D * T::ldv / 2];
  const int Tq = L.Tq, Tk = L.Tk;
  const int bh = blockIdx.x / qblocks, i0 = (blockIdx.x % qblocks) * kBlockRows;
  const Head h = head_of(bh, key_len, L);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, g = lane / 4, t = lane % 4;
  const int w0 = i0 + warp * kWarpRows;
  // Row tile rt: this thread's rows w0 + 16rt + g (half 0) and + 8 (half 1); row index [rt][half].
  int row[RT][2], lim[RT][2];
#pragma unroll
  for (int rt = 0; rt < RT; ++rt)
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      row[rt][hf] = w0 + 16 * rt + 8 * hf + g;
      lim[rt][hf] = row[rt][hf] < Tq ? visible_limit(row[rt][hf], h.valid, causal) : 0;
    }
  const int wlast = min(Tq, w0 + kWarpRows) - 1;  // the warp's last query (limits grow with i)
  const int wlim = wlast >= w0 ? visible_limit(wlast, h.valid, causal) : 0;

  std::uint32_t qa[RT][kSteps][4];
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) rf::load_a<D>(qa[rt], q, h.q, L.ldq, w0 + 16 * rt, Tq, g, t);
  float o[RT][kOut][4], m[RT][2], l[RT][2];
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int n = 0; n < kOut; ++n) o[rt][n][0] = o[rt][n][1] = o[rt][n][2] = o[rt][n][3] = 0.0f;
    m[rt][0] = m[rt][1] = -INFINITY;
    l[rt][0] = l[rt][1] = 0.0f;
  }

  const int rows = min(kBlockRows, Tq - i0);
  const int kend = causal ? min(h.valid, min(Tk, i0 + rows)) : h.valid;  // keys any row of the block sees
  for (int j0 = 0; j0 < kend; j0 += rf::kTileKeys) {
    const int cols = min(rf::kTileKeys, kend - j0);
    __syncthreads();  // every warp is done with the previous tile
    rf::stage_rows<D, kThreadsW>(Ks, k, h.k, L.ldk, j0, j0 + cols, vec_kv);
    rf::stage_cols<D, kThreadsW>(Vt, v, h.v, L.ldv, j0, j0 + cols, vec_kv);
    __syncthreads();
    if (j0 >= wlim) continue;  // no query of this warp sees a key of this tile (warp-uniform)
    const int wcols = min(cols, wlim - j0);  // this tile's keys that some query of the warp sees

    float s[RT][kN][4];
    rf::product_abt<D, RT>(s, qa, Ks, wcols, g, t);  // S = Q·Kᵀ

    // Online softmax in base 2; this thread's columns of the tile are 8n + 2t and 8n + 2t + 1, and
    // s[rt][n][2·hf + e] belongs to row[rt][hf].
#pragma unroll
    for (int rt = 0; rt < RT; ++rt)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        float mx = m[rt][hf];
#pragma unroll
        for (int n = 0; n < kN; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float& x = s[rt][n][2 * hf + e];
            x = j0 + 8 * n + 2 * t + e < lim[rt][hf] ? x * scale_log2 : -INFINITY;
            mx = fmaxf(mx, x);
          }
        mx = fmaxf(mx, __shfl_xor_sync(kFullMask, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(kFullMask, mx, 2));
        // While a row has seen no key, m = −∞ and O, l are 0: the factor is 0, not 2^(−∞ + ∞).
        const float corr = m[rt][hf] == -INFINITY ? 0.0f : exp2f(m[rt][hf] - mx);
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < kN; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float& x = s[rt][n][2 * hf + e];
            x = x == -INFINITY ? 0.0f : exp2f(x - mx);
            sum += x;
          }
        l[rt][hf] = l[rt][hf] * corr + sum;
        m[rt][hf] = mx;
#pragma unroll
        for (int n = 0; n < kOut; ++n) o[rt][n][2 * hf] *= corr, o[rt][n][2 * hf + 1] *= corr;
      }

    rf::accumulate_xy<D, RT>(o, s, Vt, wcols, g, t);  // O += P·V
  }

  constexpr float kLn2 = 0.693147180559945309f;
#pragma unroll
  for (int rt = 0; rt < RT; ++rt)
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      float lr = l[rt][hf];
      lr += __shfl_xor_sync(kFullMask, lr, 1);
      lr += __shfl_xor_sync(kFullMask, lr, 2);
      const int r = row[rt][hf];
      if (r >= Tq) continue;
      const bool any = lr > 0.0f;  // false for a row with no visible key: zeros and lse = −inf
      const float inv = any ? 1.0f / lr : 0.0f;
      O* dst = out + h.o + static_cast<long long>(r) * L.ldo + 2 * t;
#pragma unroll
      for (int n = 0; n < kOut; ++n) rf::store2(dst + 8 * n, o[rt][n][2 * hf] * inv, o[rt][n][2 * hf + 1] * inv, vec_o);
      if (t == 0) lse[static_cast<std::size_t>(bh) * Tq + r] = any ? m[rt][hf] * kLn2 + logf(lr) : -INFINITY;
    }
}

// ---- backward on tensor cores (bf16) ----------------------------------------------------------------
// FlashAttention-2's backward with its five products on tensor cores, in two kernels like the float32
// path (no atomics, results repeat bit for bit). Both recompute P = e^(s − lse) from bf16 Q and K and
// take D_i = dout_i · out_i in float32 from memory; dS = P ⊙ (dP − D), rounded to bf16 for its products.
//   dK/dV   a block owns 64 keys of one (batch, head), 16 per warp, and walks the query tiles (64 rows):
//           Sᵀ_w = K_w·Q_tileᵀ and dPᵀ_w = V_w·dO_tileᵀ (16 × 64 each), then dV_w += Pᵀ_w·dO_tile and
//           dK_w += dSᵀ_w·Q_tile, accumulated in float32 in shared memory;
//   dQ      a block owns 64 queries, 16 per warp, and walks the key tiles: S_w = Q_w·K_tileᵀ and
//           dP_w = dO_w·V_tileᵀ, then dQ_w += dS_w·K_tile.
// Lanes 2r and 2r+1 own row r of the warp's 16 (32 of the tile's 64 columns each) for the element-wise
// steps, keeping their 32 values of P in registers between the two products. Head width d: a multiple
// of 16, at most 64 (the shared memory: 108 KB per dK/dV block at d = 64).
namespace tcb {
constexpr int kMaxD = 64;
struct Smem {
  int ldh, ldo;
  std::size_t a, b, c, e, stats, s, p, acc1, acc2, bytes;  // four bf16 tiles, lse and D, S/dP, P or dS, two accumulators
};
__host__ __device__ inline Smem smem_for(int d, bool two_acc) {
  Smem m;
  m.ldh = d + 8;
  m.ldo = d + 4;
  const std::size_t tile = static_cast<std::size_t>(tc::kRows) * m.ldh * 2;  // 64 rows of bf16
  m.a = 0;
  m.b = m.a + tile;
  m.c = m.b + tile;
  m.e = m.c + tile;
  m.stats = m.e + tile;                                      // lse[64], D[64]
  m.s = m.stats + 2 * tc::kRows * 4;
  m.p = m.s + static_cast<std::size_t>(kWarps) * tc::kEdge * tc::kSld * 4;
  m.acc1 = m.p + static_cast<std::size_t>(kWarps) * tc::kEdge * tc::kPld * 2 * (two_acc ? 2 : 1);  // (P and) dS
  m.acc2 = m.acc1 + static_cast<std::size_t>(kWarps) * tc::kEdge * m.ldo * 4;
  m.bytes = (two_acc ? m.acc2 + static_cast<std::size_t>(kWarps) * tc::kEdge * m.ldo * 4 : m.acc2) + tc::kAlign;
  return m;
}

__device__ __forceinline__ unsigned char* aligned_base() {
  unsigned char* base = detail::dynamic_shared<unsigned char>();
  return base + (tc::kAlign - reinterpret_cast<std::uintptr_t>(base) % tc::kAlign) % tc::kAlign;
}

// Rows [r0, r0 + 64) of one head (ld apart from `base`) as bf16, zero past `valid_rows`.
__device__ __forceinline__ void stage(__nv_bfloat16* dst, int ldh, const float* src, long long base, long long ld,
                                      int r0, int valid_rows, int d) {
  for (int e = threadIdx.x; e < tc::kRows * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    dst[r * ldh + c] = __float2bfloat16_rn(r < valid_rows ? src[base + (r0 + r) * ld + c] : 0.0f);
  }
}

// lse_i · lse_mul and D_i = dout_i · out_i (float32, from memory) for the 64 query rows from i0; zeros
// past Tq. A warp per row; blockDim.x must be kWarps warps. S: float32 or bf16 storage (widened).
template <typename S>
__device__ __forceinline__ void stage_stats(float* lse_s, float* D_s, const float* lse_bh, const S* dout, const S* out,
                                            long long orow0, long long ldo, int i0, int rows, int d,
                                            float lse_mul = 1.0f) {
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  for (int r = warp; r < tc::kRows; r += kWarps) {
    float acc = 0.0f;
    if (r < rows)
      for (int c = lane; c < d; c += kWarpSize) {
        const long long at = orow0 + (i0 + r) * ldo + c;
        acc += detail::load(dout + at) * detail::load(out + at);
      }
    acc = detail::warp_sum(acc);
    if (lane == 0) {
      D_s[r] = acc;
      lse_s[r] = r < rows ? lse_bh[i0 + r] * lse_mul : 0.0f;
    }
  }
}

// C_w (16 × 64, float, into `dst` with row stride tc::kSld) = A_w (16 × d, rows of `a`) · B_tileᵀ (B's
// 64 rows, read column-major), skipping the 16-column blocks at or past `ntiles`.
__device__ __forceinline__ void product_abt(float* dst, const __nv_bfloat16* a, const __nv_bfloat16* b, int ldh, int dt,
                                            int ntiles) {
  namespace wmma = nvcuda::wmma;
  for (int jt = 0; jt < ntiles; ++jt) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < dt; ++kk) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
      wmma::load_matrix_sync(fa, a + kk * tc::kEdge, ldh);
      wmma::load_matrix_sync(fb, b + jt * tc::kEdge * ldh + kk * tc::kEdge, ldh);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(dst + jt * tc::kEdge, acc, tc::kSld, wmma::mem_row_major);
  }
}

// acc_w (16 × d, float, row stride ldo, in shared memory) += X_w (16 × 64 bf16, row stride tc::kPld) ·
// Y_tile (64 × d bf16, row stride ldh), over the 16-row blocks of Y below `ntiles`.
__device__ __forceinline__ void accumulate_xy(float* acc_w, int ldo, const __nv_bfloat16* x, const __nv_bfloat16* y,
                                              int ldh, int dt, int ntiles) {
  namespace wmma = nvcuda::wmma;
  for (int ct = 0; ct < dt; ++ct) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(acc, acc_w + ct * tc::kEdge, ldo, wmma::mem_row_major);
    for (int kt = 0; kt < ntiles; ++kt) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
      wmma::load_matrix_sync(fa, x + kt * tc::kEdge, tc::kPld);
      wmma::load_matrix_sync(fb, y + kt * tc::kEdge * ldh + ct * tc::kEdge, ldh);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(acc_w + ct * tc::kEdge, acc, ldo, wmma::mem_row_major);
  }
}
}  // namespace tcb

__global__ void __launch_bounds__(kThreads)
    attention_backward_dkdv_bf16_kernel(float* __restrict__ dk, float* __restrict__ dv, const float* __restrict__ dout,
                                        const float* __restrict__ out, const float* __restrict__ lse,
                                        const float* __restrict__ q, const float* __restrict__ k,
                                        const float* __restrict__ v, const int* __restrict__ key_len, bool causal,
                                        Layout L, int kblocks, float scale, bool add) {
  const int Tq = L.Tq;
  const int bh = blockIdx.x / kblocks, j0 = (blockIdx.x % kblocks) * tc::kRows;
  const Head g = head_of(bh, key_len, L);
  if (unseen_key_block(dk, dv, g, L, j0, tc::kRows, add)) return;
  const int d = g.d, dt = d / tc::kEdge, cols = min(tc::kRows, g.valid - j0);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const tcb::Smem sm = tcb::smem_for(d, true);
  unsigned char* base = tcb::aligned_base();
  __nv_bfloat16* Ks = reinterpret_cast<__nv_bfloat16*>(base + sm.a);
  __nv_bfloat16* Vs = reinterpret_cast<__nv_bfloat16*>(base + sm.b);
  __nv_bfloat16* Qs = reinterpret_cast<__nv_bfloat16*>(base + sm.c);
  __nv_bfloat16* Gs = reinterpret_cast<__nv_bfloat16*>(base + sm.e);
  float* lse_s = reinterpret_cast<float*>(base + sm.stats);
  float* D_s = lse_s + tc::kRows;
  float* Sw = reinterpret_cast<float*>(base + sm.s) + warp * tc::kEdge * tc::kSld;
  __nv_bfloat16* Pw = reinterpret_cast<__nv_bfloat16*>(base + sm.p) + warp * tc::kEdge * tc::kPld;
  __nv_bfloat16* DSw = Pw + kWarps * tc::kEdge * tc::kPld;
  float* dKw = reinterpret_cast<float*>(base + sm.acc1) + warp * tc::kEdge * sm.ldo;
  float* dVw = reinterpret_cast<float*>(base + sm.acc2) + warp * tc::kEdge * sm.ldo;

  tcb::stage(Ks, sm.ldh, k, g.k, L.ldk, j0, cols, d);
  tcb::stage(Vs, sm.ldh, v, g.v, L.ldv, j0, cols, d);
  for (int e = lane; e < tc::kEdge * d; e += kWarpSize) dKw[(e / d) * sm.ldo + e % d] = dVw[(e / d) * sm.ldo + e % d] = 0.0f;
  const int rl = lane / 2, half = lane % 2;
  const int j = j0 + warp * tc::kEdge + rl;  // this lane's key
  const float* lse_bh = lse + static_cast<std::size_t>(bh) * Tq;
  float pr[32];

  // Causal: query i sees key j only if j ≤ i, so the query tiles before j0 see none of these keys.
  for (int i0 = causal ? j0 : 0; i0 < Tq; i0 += tc::kRows) {
    const int rows = min(tc::kRows, Tq - i0), qtiles = (rows + tc::kEdge - 1) / tc::kEdge;
    __syncthreads();  // the previous query tile is consumed (the first time: K, V and the accumulators are written)
    tcb::stage(Qs, sm.ldh, q, g.q, L.ldq, i0, rows, d);
    tcb::stage(Gs, sm.ldh, dout, g.o, L.ldo, i0, rows, d);
    tcb::stage_stats(lse_s, D_s, lse_bh, dout, out, g.o, L.ldo, i0, rows, d);
    __syncthreads();

    tcb::product_abt(Sw, Ks + warp * tc::kEdge * sm.ldh, Qs, sm.ldh, dt, qtiles);  // Sᵀ_w: keys × queries
    __syncwarp();
    for (int t = 0; t < 32; ++t) {
      const int c = half * 32 + t, i = i0 + c;
      const bool vis = c < rows && j < g.valid && j < j0 + cols && (!causal || j <= i);
      pr[t] = vis ? expf(Sw[rl * tc::kSld + c] * scale - lse_s[c]) : 0.0f;
      Pw[rl * tc::kPld + c] = __float2bfloat16_rn(pr[t]);
    }
    __syncwarp();  // Sᵀ read before dPᵀ overwrites it (not shown needed by the emulator: its stores wait for the warp)
    tcb::product_abt(Sw, Vs + warp * tc::kEdge * sm.ldh, Gs, sm.ldh, dt, qtiles);  // dPᵀ_w
    __syncwarp();
    for (int t = 0; t < 32; ++t) {
      const int c = half * 32 + t;
      DSw[rl * tc::kPld + c] = __float2bfloat16_rn(pr[t] == 0.0f ? 0.0f : pr[t] * (Sw[rl * tc::kSld + c] - D_s[c]));
    }
    __syncwarp();  // Pᵀ and dSᵀ complete before the products read them (the emulator's dV store would hide its absence)
    tcb::accumulate_xy(dVw, sm.ldo, Pw, Gs, sm.ldh, dt, qtiles);
    tcb::accumulate_xy(dKw, sm.ldo, DSw, Qs, sm.ldh, dt, qtiles);
  }  // (the next tile starts with a __syncthreads)

  __syncwarp();  // the accumulators stored (or, if no query tile ran, zeroed) by every lane before the rows are read
  if (j < j0 + cols) {  // a null dk or dv is not wanted (uniform over the grid)
    for (int c = half * (d / 2); c < (half + 1) * (d / 2); ++c) {
      if (dv) detail::put_grad(dv[g.v + static_cast<long long>(j) * L.ldv + c], dVw[rl * sm.ldo + c], add);
      if (dk) detail::put_grad(dk[g.k + static_cast<long long>(j) * L.ldk + c], scale * dKw[rl * sm.ldo + c], add);
    }
  }
  // The keys of this tile past g.valid, which no query sees.
  if (!add) store_zero_key_rows(dk, dv, g, L, j0 + cols, min(tc::kRows, L.Tk - j0) - cols);
}

__global__ void __launch_bounds__(kThreads)
    attention_backward_dq_bf16_kernel(float* __restrict__ dq, const float* __restrict__ dout, const float* __restrict__ out,
                                      const float* __restrict__ lse, const float* __restrict__ q,
                                      const float* __restrict__ k, const float* __restrict__ v,
                                      const int* __restrict__ key_len, bool causal, Layout L, int qblocks, float scale,
                                      bool add) {
  const int Tq = L.Tq, Tk = L.Tk;
  const int bh = blockIdx.x / qblocks, i0 = (blockIdx.x % qblocks) * tc::kRows;
  const Head g = head_of(bh, key_len, L);
  const int d = g.d, dt = d / tc::kEdge, rows = min(tc::kRows, Tq - i0);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const tcb::Smem sm = tcb::smem_for(d, false);
  unsigned char* base = tcb::aligned_base();
  __nv_bfloat16* Qs = reinterpret_cast<__nv_bfloat16*>(base + sm.a);
  __nv_bfloat16* Gs = reinterpret_cast<__nv_bfloat16*>(base + sm.b);
  __nv_bfloat16* Ks = reinterpret_cast<__nv_bfloat16*>(base + sm.c);
  __nv_bfloat16* Vs = reinterpret_cast<__nv_bfloat16*>(base + sm.e);
  float* lse_s = reinterpret_cast<float*>(base + sm.stats);
  float* D_s = lse_s + tc::kRows;
  float* Sw = reinterpret_cast<float*>(base + sm.s) + warp * tc::kEdge * tc::kSld;
  __nv_bfloat16* DSw = reinterpret_cast<__nv_bfloat16*>(base + sm.p) + warp * tc::kEdge * tc::kPld;
  float* dQw = reinterpret_cast<float*>(base + sm.acc1) + warp * tc::kEdge * sm.ldo;

  tcb::stage(Qs, sm.ldh, q, g.q, L.ldq, i0, rows, d);
  tcb::stage(Gs, sm.ldh, dout, g.o, L.ldo, i0, rows, d);
  tcb::stage_stats(lse_s, D_s, lse + static_cast<std::size_t>(bh) * Tq, dout, out, g.o, L.ldo, i0, rows, d);
  for (int e = lane; e < tc::kEdge * d; e += kWarpSize) dQw[(e / d) * sm.ldo + e % d] = 0.0f;
  const int rl = lane / 2, half = lane % 2, r = warp * tc::kEdge + rl;  // this lane's query row in the tile
  const int i = i0 + r;
  const int limit = i < Tq ? visible_limit(i, g.valid, causal) : 0;
  float pr[32];

  const int kend = causal ? min(g.valid, min(Tk, i0 + rows)) : g.valid;
  for (int j0 = 0; j0 < kend; j0 += tc::kRows) {
    const int cols = min(tc::kRows, kend - j0), ktiles = (cols + tc::kEdge - 1) / tc::kEdge;
    __syncthreads();  // the previous key tile is consumed (the first time: Q, dO, the stats and dQ_w are written)
    tcb::stage(Ks, sm.ldh, k, g.k, L.ldk, j0, cols, d);
    tcb::stage(Vs, sm.ldh, v, g.v, L.ldv, j0, cols, d);
    __syncthreads();

    tcb::product_abt(Sw, Qs + warp * tc::kEdge * sm.ldh, Ks, sm.ldh, dt, ktiles);  // S_w
    __syncwarp();
    for (int t = 0; t < 32; ++t) {
      const int c = half * 32 + t;
      pr[t] = j0 + c < limit && c < cols ? expf(Sw[rl * tc::kSld + c] * scale - lse_s[r]) : 0.0f;
    }
    __syncwarp();  // S read before dP overwrites it (not shown needed by the emulator: its stores wait for the warp)
    tcb::product_abt(Sw, Gs + warp * tc::kEdge * sm.ldh, Vs, sm.ldh, dt, ktiles);  // dP_w
    __syncwarp();  // dP stored before the lanes read it
    for (int t = 0; t < 32; ++t) {
      const int c = half * 32 + t;
      DSw[rl * tc::kPld + c] = __float2bfloat16_rn(pr[t] == 0.0f ? 0.0f : pr[t] * (Sw[rl * tc::kSld + c] - D_s[r]));
    }
    __syncwarp();  // dS complete before the product reads it
    tcb::accumulate_xy(dQw, sm.ldo, DSw, Ks, sm.ldh, dt, ktiles);
  }

  __syncwarp();  // likewise
  if (i < Tq)
    for (int c = half * (d / 2); c < (half + 1) * (d / 2); ++c)  // 0 for a row that sees no key
      detail::put_grad(dq[g.q + static_cast<long long>(i) * L.ldq + c], scale * dQw[rl * sm.ldo + c], add);
}

// ---- backward on tensor cores, tiles in registers (bf16; head widths 32 and 64) ---------------------
// FlashAttention-2's backward as the wmma kernels above do it (the same two kernels, no atomics, the
// same bf16 roundings: Q, K, V, dO, P and dS), with the products through mma.sync so that S, dP and
// the gradient accumulators stay in registers; only the bf16 tiles the B operands are read from go
// through shared memory, row-major for products whose pairs run along the head width and transposed
// for those whose pairs run along the tile (rf::stage_rows, rf::stage_cols). 4 warps, 16 rows each.
//   dK/dV   a block owns 64 keys, a warp 16 (rows g, g + 8 of its thread), with K_w and V_w as A
//           fragments in registers; per tile of 64 queries: Sᵀ = K_w·Qᵀ and dPᵀ = V_w·dOᵀ (16 × 64),
//           Pᵀ = 2^(Sᵀ·log2(e)/√d − lse·log2(e)), dSᵀ = Pᵀ ⊙ (dPᵀ − D), then dV_w += Pᵀ·dO and
//           dK_w += dSᵀ·Q with Pᵀ and dSᵀ rounded into A fragments in place.
//   dQ      a block owns 64 queries, with Q_w and dO_w as A fragments; per tile of 64 keys: S = Q_w·Kᵀ,
//           dP = dO_w·Vᵀ, P and dS, then dQ_w += dS·K.
// D_i = dout_i · out_i in float32 from memory, as in the wmma kernels.
namespace rfb {
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kWarpSize;
constexpr int kRows = 64;  // keys (dK/dV) or queries (dQ) per block, 16 per warp
constexpr float kLog2e = 1.4426950408889634f;
static_assert(kRows == tc::kRows && kWarps == ::attnlab::cuda::kWarps, "tcb::stage_stats's tile and block shape");

// D_r = dout_r · out_r for row r of a head, by the 4 threads of a group (each a quarter of the width,
// then two shuffles); 0 past `valid`. Every lane of the warp must call it.
template <int D, typename S>
__device__ __forceinline__ float row_dot(const S* dout, const S* out, long long base, long long ld, int r, int valid,
                                         int t) {
  float acc = 0.0f;
  if (r < valid)
    for (int c = t; c < D; c += 4) {
      const long long at = base + static_cast<long long>(r) * ld + c;
      acc += detail::load(dout + at) * detail::load(out + at);
    }
  acc += __shfl_xor_sync(kFullMask, acc, 1);
  acc += __shfl_xor_sync(kFullMask, acc, 2);
  return acc;
}

// Rows r0 + 8·hf + g (hf = 0, 1) of a 16-row accumulator, times `mul`, into a gradient under
// GradMode (add or store), in float32 or bf16 storage (G).
template <int D, typename G>
__device__ __forceinline__ void put_rows(G* dst, long long base, long long ld, const float (&acc)[D / 8][4], int r0,
                                         int valid, float mul, bool add, int g, int t) {
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int r = r0 + 8 * hf + g;
    if (r >= valid) continue;
    G* row = dst + base + static_cast<long long>(r) * ld + 2 * t;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      detail::put_grad_to(row + 8 * n, mul * acc[n][2 * hf], add);
      detail::put_grad_to(row + 8 * n + 1, mul * acc[n][2 * hf + 1], add);
    }
  }
}
}  // namespace rfb

// S: how q, k, v, out and dout are stored, G: how the gradients are (float32, or bf16 raw bits: the
// bf16 storage op; the arithmetic is the same, as in the forward).
template <int D, typename S, typename G>
__global__ void __launch_bounds__(rfb::kThreads, 1)
    attention_backward_dkdv_bf16_rf_kernel(G* __restrict__ dk, G* __restrict__ dv, const S* __restrict__ dout,
                                           const S* __restrict__ out, const float* __restrict__ lse,
                                           const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                                           const int* __restrict__ key_len, bool causal, Layout L, int kblocks,
                                           float scale, bool add, bool vec) {
  using T = rf::Tile<D>;
  __shared__ std::uint32_t Qs[rfb::kRows * T::ldk / 2], Gs[rfb::kRows * T::ldk / 2];  // Q, dO row-major
  __shared__ std::uint32_t Qt[D * T::ldv / 2], Gt[D * T::ldv / 2];                    // Q, dO transposed
  __shared__ float lse2_s[rfb::kRows], D_s[rfb::kRows];                               // lse·log2(e), D
  const int Tq = L.Tq;
  const int bh = blockIdx.x / kblocks, j0 = (blockIdx.x % kblocks) * rfb::kRows;
  const Head h = head_of(bh, key_len, L);
  if (unseen_key_block(dk, dv, h, L, j0, rfb::kRows, add)) return;
  const int cols = min(rfb::kRows, h.valid - j0);  // this block's keys that some query may see
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, g = lane / 4, t = lane % 4;
  const int kw0 = j0 + warp * 16;  // the warp's first key; this thread's keys kw0 + g and kw0 + g + 8
  // One 16-row tile per warp: the [1] of rf::product_abt's and accumulate_xy's tile count.
  std::uint32_t ka[1][D / 16][4], va[1][D / 16][4];
  rf::load_a<D>(ka[0], k, h.k, L.ldk, kw0, j0 + cols, g, t);
  rf::load_a<D>(va[0], v, h.v, L.ldv, kw0, j0 + cols, g, t);
  float dka[1][D / 8][4], dva[1][D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) dka[0][n][e] = dva[0][n][e] = 0.0f;
  const float* lse_bh = lse + static_cast<std::size_t>(bh) * Tq;
  const float scale_log2 = scale * rfb::kLog2e;

  // Causal: query i sees key j only if j ≤ i, so the query tiles before j0 see none of these keys.
  for (int i0 = causal ? j0 : 0; i0 < Tq; i0 += rfb::kRows) {
    const int rows = min(rfb::kRows, Tq - i0);
    __syncthreads();  // every warp is done with the previous query tile
    rf::stage_rows<D, rfb::kThreads>(Qs, q, h.q, L.ldq, i0, Tq, vec);
    rf::stage_cols<D, rfb::kThreads>(Qt, q, h.q, L.ldq, i0, Tq, vec);
    rf::stage_rows<D, rfb::kThreads>(Gs, dout, h.o, L.ldo, i0, Tq, vec);
    rf::stage_cols<D, rfb::kThreads>(Gt, dout, h.o, L.ldo, i0, Tq, vec);
    tcb::stage_stats(lse2_s, D_s, lse_bh, dout, out, h.o, L.ldo, i0, rows, D, rfb::kLog2e);
    __syncthreads();

    float sp[1][8][4], dp[1][8][4];  // Sᵀ then Pᵀ; dPᵀ then dSᵀ: this thread's keys × queries 8n + 2t (+1)
    rf::product_abt<D, 1>(sp, ka, Qs, rows, g, t);
    rf::product_abt<D, 1>(dp, va, Gs, rows, g, t);
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int j = kw0 + 8 * hf + g;
      const bool key_in = j < j0 + cols;
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int c = 8 * n + 2 * t + e, i = i0 + c;
          const bool vis = key_in && c < rows && (!causal || j <= i);
          float& p = sp[0][n][2 * hf + e];
          p = vis ? exp2f(p * scale_log2 - lse2_s[c]) : 0.0f;
          float& ds = dp[0][n][2 * hf + e];
          ds = p == 0.0f ? 0.0f : p * (ds - D_s[c]);
        }
    }
    rf::accumulate_xy<D, 1>(dva, sp, Gt, rows, g, t);
    rf::accumulate_xy<D, 1>(dka, dp, Qt, rows, g, t);
  }

  if (dv) rfb::put_rows<D>(dv, h.v, L.ldv, dva[0], kw0, j0 + cols, 1.0f, add, g, t);
  if (dk) rfb::put_rows<D>(dk, h.k, L.ldk, dka[0], kw0, j0 + cols, scale, add, g, t);
  // The keys of this tile past h.valid, which no query sees.
  if (!add) store_zero_key_rows(dk, dv, h, L, j0 + cols, min(rfb::kRows, L.Tk - j0) - cols);
}

template <int D, typename S, typename G>
__global__ void __launch_bounds__(rfb::kThreads, 1)
    attention_backward_dq_bf16_rf_kernel(G* __restrict__ dq, const S* __restrict__ dout, const S* __restrict__ out,
                                         const float* __restrict__ lse, const S* __restrict__ q,
                                         const S* __restrict__ k, const S* __restrict__ v,
                                         const int* __restrict__ key_len, bool causal, Layout L, int qblocks,
                                         float scale, bool add, bool vec) {
  using T = rf::Tile<D>;
  __shared__ std::uint32_t Ks[rfb::kRows * T::ldk / 2], Vs[rfb::kRows * T::ldk / 2];  // K, V row-major
  __shared__ std::uint32_t Kt[D * T::ldv / 2];                                        // K transposed
  const int Tq = L.Tq, Tk = L.Tk;
  const int bh = blockIdx.x / qblocks, i0 = (blockIdx.x % qblocks) * rfb::kRows;
  const Head h = head_of(bh, key_len, L);
  const int rows = min(rfb::kRows, Tq - i0);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, g = lane / 4, t = lane % 4;
  const int qw0 = i0 + warp * 16;  // the warp's first query; this thread's rows qw0 + g and qw0 + g + 8
  std::uint32_t qa[1][D / 16][4], ga[1][D / 16][4];  // one 16-row tile per warp, as in the dK/dV kernel
  rf::load_a<D>(qa[0], q, h.q, L.ldq, qw0, Tq, g, t);
  rf::load_a<D>(ga[0], dout, h.o, L.ldo, qw0, Tq, g, t);
  const float scale_log2 = scale * rfb::kLog2e;
  float lse2[2], Drow[2];
  int lim[2];
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int i = qw0 + 8 * hf + g;
    lse2[hf] = i < Tq ? lse[static_cast<std::size_t>(bh) * Tq + i] * rfb::kLog2e : 0.0f;
    Drow[hf] = rfb::row_dot<D>(dout, out, h.o, L.ldo, i, Tq, t);
    lim[hf] = i < Tq ? visible_limit(i, h.valid, causal) : 0;
  }
  float dqa[1][D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) dqa[0][n][0] = dqa[0][n][1] = dqa[0][n][2] = dqa[0][n][3] = 0.0f;

  const int kend = causal ? min(h.valid, min(Tk, i0 + rows)) : h.valid;
  for (int j0 = 0; j0 < kend; j0 += rfb::kRows) {
    const int cols = min(rfb::kRows, kend - j0);
    __syncthreads();  // every warp is done with the previous key tile
    rf::stage_rows<D, rfb::kThreads>(Ks, k, h.k, L.ldk, j0, j0 + cols, vec);
    rf::stage_rows<D, rfb::kThreads>(Vs, v, h.v, L.ldv, j0, j0 + cols, vec);
    rf::stage_cols<D, rfb::kThreads>(Kt, k, h.k, L.ldk, j0, j0 + cols, vec);
    __syncthreads();

    float sp[1][8][4], dp[1][8][4];  // S then P; dP then dS: this thread's queries × keys 8n + 2t (+1)
    rf::product_abt<D, 1>(sp, qa, Ks, cols, g, t);
    rf::product_abt<D, 1>(dp, ga, Vs, cols, g, t);
#pragma unroll
    for (int hf = 0; hf < 2; ++hf)
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int j = j0 + 8 * n + 2 * t + e;
          float& p = sp[0][n][2 * hf + e];
          p = j < lim[hf] ? exp2f(p * scale_log2 - lse2[hf]) : 0.0f;
          float& ds = dp[0][n][2 * hf + e];
          ds = p == 0.0f ? 0.0f : p * (ds - Drow[hf]);
        }
    rf::accumulate_xy<D, 1>(dqa, dp, Kt, cols, g, t);
  }

  rfb::put_rows<D>(dq, h.q, L.ldq, dqa[0], qw0, Tq, scale, add, g, t);  // 0 for a row that sees no key
}

// The resolved strides as the kernels take them; throws ShapeError for sizes the kernels cannot take.
Layout check_shape(const char* what, const backend::AttentionShape& shape) {
  const backend::AttentionShape s = shape.resolved();
  const int B = s.B, Tq = s.Tq, Tk = s.Tk, C = s.C, H = s.H;
  auto bad = [&](const std::string& why) {
    throw ShapeError(std::string(what) + ": " + why + " (B = " + std::to_string(B) + ", Tq = " + std::to_string(Tq) +
                     ", Tk = " + std::to_string(Tk) + ", C = " + std::to_string(C) + ", H = " + std::to_string(H) + ")");
  };
  if (B < 0 || Tq < 0 || Tk < 0) bad("negative size");
  if (C < 1 || H < 1 || C % H != 0) bad("H must divide C");
  if (C / H > kMaxD) bad("head width d = C / H = " + std::to_string(C / H) + " is above " + std::to_string(kMaxD));
  if (s.ldq < C || s.ldk < C || s.ldv < C || s.ldo < C) bad("a row stride (ldq, ldk, ldv, ldo) is below C");
  if (s.q_batch < 0 || s.k_batch < 0 || s.v_batch < 0 || s.o_batch < 0) bad("a negative batch stride");
  if (B > 1 && s.o_batch == 0) bad("an output batch stride of 0 (every batch would write the same rows)");
  return Layout{Tq, Tk, C, H, s.ldq, s.ldk, s.ldv, s.ldo, s.q_batch, s.k_batch, s.v_batch, s.o_batch};
}

// 1/√d rounded as the CPU rounds it.
float score_scale(int C, int H) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(C / H))); }

unsigned grid_of(const char* what, int B, int H, int tiles) {
  const long long blocks = static_cast<long long>(B) * H * tiles;
  if (blocks > 0x7fffffffLL) throw ShapeError(std::string(what) + ": too many tiles for one grid");
  return static_cast<unsigned>(blocks);
}

// Whether a backward kernel whose blocks own `rows` rows (Tk for dK/dV, Tq for dQ) has anything to do:
// rows to own, and something to add to them or zeros to store.
bool has_work(const backend::AttentionShape& s, bool add, int rows) {
  return s.B > 0 && rows > 0 && (!add || (s.Tq > 0 && s.Tk > 0));
}

// Whether every row of a head's matrix (base p, rows ld apart, batches batch apart) starts on a
// multiple of `elems` elements, so that the register-tile kernels may read or write it that many at a
// time (float32 or bf16 elements).
template <typename E>
bool rows_aligned(const E* p, long long ld, long long batch, int elems) {
  return reinterpret_cast<std::uintptr_t>(p) % (sizeof(E) * elems) == 0 && ld % elems == 0 && batch % elems == 0;
}

// ATTNLAB_BF16_ATTENTION: "wmma" runs the wmma kernels (forward and backward) for every head width,
// "rf1" the register-tile forward with one row tile per warp at every width it takes, so that one GPU
// session can time the variants against each other (bench/gpu.sh does). Anything else, or unset: the
// default choice.
std::string bf16_attention_choice() {
  const char* e = std::getenv("ATTNLAB_BF16_ATTENTION");
  return e ? std::string(e) : std::string();
}

// The register-tile kernel for head width D, RT row tiles per warp, W warps. K and V are read four
// elements at a time when every row of them starts on a multiple of four (16 bytes of float32, 8 of
// bf16), and out written two at a time when its rows start on a multiple of two.
template <int D, int RT, int W, typename S, typename O>
void launch_forward_bf16_rf(O* out, float* lse, const S* q, const S* k, const S* v,
                            const backend::AttentionShape& s, const Layout& L, Stream stream) {
  const bool vec_kv = rows_aligned(k, L.ldk, L.kb, 4) && rows_aligned(v, L.ldv, L.vb, 4);
  const bool vec_o = rows_aligned(out, L.ldo, L.ob, 2);
  constexpr int kBlockRows = 16 * RT * W;
  const int qblocks = (s.Tq + kBlockRows - 1) / kBlockRows;
  const float scale_log2 = static_cast<float>(score_scale(s.C, s.H) * 1.4426950408889634);  // log2(e)/√d
  ATTNLAB_LAUNCH((attention_forward_bf16_rf_kernel<D, RT, W, S, O>),
                 grid_of("cuda::attention_forward_bf16", s.B, s.H, qblocks), W * kWarpSize, 0,
                 stream)(out, lse, q, k, v, s.key_len, s.causal, L, qblocks, scale_log2, vec_kv, vec_o);
  CUDA_CHECK_LAUNCH();
}

// Whether the register-tile kernel takes head width d, and if so runs it (one_tile: one row tile per
// warp, 8 warps; else the default for d).
template <typename S, typename O>
bool attention_forward_bf16_rf(O* out, float* lse, const S* q, const S* k, const S* v,
                               const backend::AttentionShape& s, const Layout& L, bool one_tile, Stream stream) {
  switch (s.C / s.H) {
    case 32:
      if (one_tile) launch_forward_bf16_rf<32, 1, 8>(out, lse, q, k, v, s, L, stream);
      else launch_forward_bf16_rf<32, 2, 4>(out, lse, q, k, v, s, L, stream);
      return true;
    case 64:
      if (one_tile) launch_forward_bf16_rf<64, 1, 8>(out, lse, q, k, v, s, L, stream);
      else launch_forward_bf16_rf<64, 2, 4>(out, lse, q, k, v, s, L, stream);
      return true;
    case 128:  // one row tile either way: two would need about 300 registers a thread
      launch_forward_bf16_rf<128, 1, 8>(out, lse, q, k, v, s, L, stream);
      return true;
    default:
      return false;
  }
}

// The register-tile backward for head width D (dK/dV, then dQ, as the wmma path), on float32 or bf16
// storage (S for the inputs, G for the gradients). Tiles are read four elements at a time when every
// row of q, k, v and dout starts on a multiple of four elements.
template <int D, typename S, typename G>
void launch_backward_bf16_rf(G* dq, G* dk, G* dv, const S* dout, const S* out, const float* lse, const S* q,
                             const S* k, const S* v, const backend::AttentionShape& s, const Layout& L, bool add,
                             float scale, Stream stream) {
  const bool vec = rows_aligned(q, L.ldq, L.qb, 4) && rows_aligned(k, L.ldk, L.kb, 4) &&
                   rows_aligned(v, L.ldv, L.vb, 4) && rows_aligned(dout, L.ldo, L.ob, 4);
  if ((dk || dv) && has_work(s, add, s.Tk)) {
    const int kblocks = (s.Tk + rfb::kRows - 1) / rfb::kRows;
    ATTNLAB_LAUNCH((attention_backward_dkdv_bf16_rf_kernel<D, S, G>),
                   grid_of("cuda::attention_backward_bf16", s.B, s.H, kblocks), rfb::kThreads, 0,
                   stream)(dk, dv, dout, out, lse, q, k, v, s.key_len, s.causal, L, kblocks, scale, add, vec);
    CUDA_CHECK_LAUNCH();
  }
  if (dq && has_work(s, add, s.Tq)) {
    const int qblocks = (s.Tq + rfb::kRows - 1) / rfb::kRows;
    ATTNLAB_LAUNCH((attention_backward_dq_bf16_rf_kernel<D, S, G>),
                   grid_of("cuda::attention_backward_bf16", s.B, s.H, qblocks), rfb::kThreads, 0,
                   stream)(dq, dout, out, lse, q, k, v, s.key_len, s.causal, L, qblocks, scale, add, vec);
    CUDA_CHECK_LAUNCH();
  }
}

// The backward's refusal of a batch stride of 0 (see attention.hpp).
void check_batch_strides(const char* what, const backend::AttentionShape& s, const Layout& L) {
  if (s.B > 1 && (L.qb == 0 || L.kb == 0 || L.vb == 0))
    throw ShapeError(std::string(what) + ": a batch stride of 0 (one Q, K or V shared by all " + std::to_string(s.B) +
                     " batches) is not supported: the batches' gradients would add into the same rows, which these "
                     "kernels do not reduce (and float atomics would not repeat bit for bit); give each batch its "
                     "own copy, or use the CPU backend");
}

}  // namespace

void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const backend::AttentionShape& s, Stream stream) {
  const Layout L = check_shape("cuda::attention_forward", s);
  if (s.B == 0 || s.Tq == 0) return;
  const int qblocks = (s.Tq + kFwdRows - 1) / kFwdRows;
  ATTNLAB_LAUNCH(attention_forward_kernel, grid_of("cuda::attention_forward", s.B, s.H, qblocks), kThreads, 0,
                 stream)(out, lse, q, k, v, s.key_len, s.causal, L, qblocks, score_scale(s.C, s.H));
  CUDA_CHECK_LAUNCH();
}

void attention_forward_bf16(float* out, float* lse, const float* q, const float* k, const float* v,
                            const backend::AttentionShape& s, Stream stream) {
  const Layout L = check_shape("cuda::attention_forward_bf16", s);
  const int d = s.C / s.H;
  if (d % tc::kEdge != 0)
    throw ShapeError("cuda::attention_forward_bf16: head width d = " + std::to_string(d) +
                     " is not a multiple of 16 (the tensor cores' tile); use attention_forward (float32)");
  if (s.B == 0 || s.Tq == 0) return;
  const std::string choice = bf16_attention_choice();
  if (choice != "wmma" && attention_forward_bf16_rf(out, lse, q, k, v, s, L, choice == "rf1", stream)) return;
  const int qblocks = (s.Tq + tc::kRows - 1) / tc::kRows;
  const std::size_t bytes = tc::smem_for(d).bytes;  // 70 KB at d = 64, 110 KB at d = 128: above the default 48 KB
  CUDA_CHECK(cudaFuncSetAttribute(attention_forward_bf16_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)));
  ATTNLAB_LAUNCH(attention_forward_bf16_kernel, grid_of("cuda::attention_forward_bf16", s.B, s.H, qblocks), kThreads,
                 bytes, stream)(out, lse, q, k, v, s.key_len, s.causal, L, qblocks, score_scale(s.C, s.H));
  CUDA_CHECK_LAUNCH();
}

bool attention_forward_bf16_storage_takes(const backend::AttentionShape& s) {
  if (s.H <= 0 || s.C % s.H != 0) return false;
  const int d = s.C / s.H;
  return (d == 32 || d == 64 || d == 128) && bf16_attention_choice() != "wmma";
}

void attention_forward_bf16_storage(std::uint16_t* out, float* lse, const std::uint16_t* q, const std::uint16_t* k,
                                    const std::uint16_t* v, const backend::AttentionShape& s, Stream stream) {
  const Layout L = check_shape("cuda::attention_forward_bf16 (bf16 storage)", s);
  if (s.B == 0 || s.Tq == 0) return;
  if (!attention_forward_bf16_rf(out, lse, q, k, v, s, L, bf16_attention_choice() == "rf1", stream))
    throw ShapeError("cuda::attention_forward_bf16 (bf16 storage): head width d = " + std::to_string(s.C / s.H) +
                     " is not 32, 64 or 128 (check attention_forward_bf16_storage_takes first)");
}

bool attention_backward_bf16_storage_takes(const backend::AttentionShape& s) {
  if (s.H <= 0 || s.C % s.H != 0) return false;
  const int d = s.C / s.H;
  return (d == 32 || d == 64) && bf16_attention_choice() != "wmma";
}

void attention_backward_bf16_storage(std::uint16_t* dq, std::uint16_t* dk, std::uint16_t* dv,
                                     const std::uint16_t* dout, const std::uint16_t* out, const float* lse,
                                     const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v,
                                     const backend::AttentionShape& s, backend::GradMode mode, Stream stream) {
  const char* what = "cuda::attention_backward_bf16 (bf16 storage)";
  const Layout L = check_shape(what, s);
  check_batch_strides(what, s, L);
  const bool add = mode == backend::GradMode::Add;
  const float scale = score_scale(s.C, s.H);
  switch (s.C / s.H) {
    case 32: launch_backward_bf16_rf<32>(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, scale, stream); break;
    case 64: launch_backward_bf16_rf<64>(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, scale, stream); break;
    default:
      throw ShapeError(std::string(what) + ": head width d = " + std::to_string(s.C / s.H) +
                       " is not 32 or 64 (check attention_backward_bf16_storage_takes first)");
  }
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                        const float* q, const float* k, const float* v, const backend::AttentionShape& s,
                        backend::GradMode mode, Stream stream) {
  const Layout L = check_shape("cuda::attention_backward", s);
  check_batch_strides("cuda::attention_backward", s, L);
  // No query, or no key: every gradient is zero, so Add has nothing to do, and Write still runs the
  // kernels that own the other side's rows (their loops over the empty side store zeros).
  const bool add = mode == backend::GradMode::Add;
  const float scale = score_scale(s.C, s.H);
  if ((dk || dv) && has_work(s, add, s.Tk)) {
    const int kblocks = (s.Tk + kKeys - 1) / kKeys;
    ATTNLAB_LAUNCH(attention_backward_dkdv_kernel, grid_of("cuda::attention_backward", s.B, s.H, kblocks), kThreads,
                   0, stream)(dk, dv, dout, out, lse, q, k, v, s.key_len, s.causal, L, kblocks, scale, add);
    CUDA_CHECK_LAUNCH();
  }
  if (dq && has_work(s, add, s.Tq)) {
    const int qblocks = (s.Tq + kDqRows - 1) / kDqRows;
    ATTNLAB_LAUNCH(attention_backward_dq_kernel, grid_of("cuda::attention_backward", s.B, s.H, qblocks), kThreads, 0,
                   stream)(dq, dout, out, lse, q, k, v, s.key_len, s.causal, L, qblocks, scale, add);
    CUDA_CHECK_LAUNCH();
  }
}

void attention_backward_bf16(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                             const float* q, const float* k, const float* v, const backend::AttentionShape& s,
                             backend::GradMode mode, Stream stream) {
  const Layout L = check_shape("cuda::attention_backward_bf16", s);
  const int d = s.C / s.H;
  if (d % tc::kEdge != 0 || d > tcb::kMaxD)
    throw ShapeError("cuda::attention_backward_bf16: head width d = " + std::to_string(d) +
                     " is not a multiple of 16 up to 64; use attention_backward (float32)");
  check_batch_strides("cuda::attention_backward_bf16", s, L);
  const bool add = mode == backend::GradMode::Add;  // no query or no key: as attention_backward
  const float scale = score_scale(s.C, s.H);
  if ((d == 32 || d == 64) && bf16_attention_choice() != "wmma") {
    if (d == 32) launch_backward_bf16_rf<32>(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, scale, stream);
    else launch_backward_bf16_rf<64>(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, scale, stream);
    return;
  }
  if ((dk || dv) && has_work(s, add, s.Tk)) {
    const int kblocks = (s.Tk + tc::kRows - 1) / tc::kRows;
    const std::size_t bytes = tcb::smem_for(d, true).bytes;  // 108 KB at d = 64
    CUDA_CHECK(cudaFuncSetAttribute(attention_backward_dkdv_bf16_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)));
    ATTNLAB_LAUNCH(attention_backward_dkdv_bf16_kernel, grid_of("cuda::attention_backward_bf16", s.B, s.H, kblocks),
                   kThreads, bytes, stream)(dk, dv, dout, out, lse, q, k, v, s.key_len, s.causal, L, kblocks, scale, add);
    CUDA_CHECK_LAUNCH();
  }
  if (dq && has_work(s, add, s.Tq)) {
    const int qblocks = (s.Tq + tc::kRows - 1) / tc::kRows;
    const std::size_t bytes = tcb::smem_for(d, false).bytes;  // 81 KB at d = 64
    CUDA_CHECK(cudaFuncSetAttribute(attention_backward_dq_bf16_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)));
    ATTNLAB_LAUNCH(attention_backward_dq_bf16_kernel, grid_of("cuda::attention_backward_bf16", s.B, s.H, qblocks),
                   kThreads, bytes, stream)(dq, dout, out, lse, q, k, v, s.key_len, s.causal, L, qblocks, scale, add);
    CUDA_CHECK_LAUNCH();
  }
}

void attention_weights(float* att, const float* lse, const float* q, const float* k, const backend::AttentionShape& s,
                       Stream stream) {
  const Layout L = check_shape("cuda::attention_weights", s);
  if (s.B == 0 || s.Tq == 0 || s.Tk == 0) return;
  const int qblocks = (s.Tq + kWeightRows - 1) / kWeightRows;
  ATTNLAB_LAUNCH(attention_weights_kernel, grid_of("cuda::attention_weights", s.B, s.H, qblocks), kThreads, 0,
                 stream)(att, lse, q, k, s.key_len, s.causal, L, qblocks, score_scale(s.C, s.H));
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
