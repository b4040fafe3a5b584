#pragma once
// What the attention kernels share (attention.cu is the overview and the entry points; the kernels are
// in attention_simt.cu, attention_wmma.cu and attention_mma.cu): the constants of the float32 kernels'
// blocks, a call's Layout (the resolved backend::AttentionShape) and each block's Head, the device
// helpers more than one generation uses, the host checks, and the launchers each kernel file defines.
// Internal to the CUDA backend: nothing outside src/backend/cuda/attention*.cu includes it.
#include <cmath>
#include <cstdint>
#include <string>

#include <cuda_bf16.h>

#include "backend/cuda/attention.hpp"
#include "backend/cuda/bf16.cuh"
#include "backend/cuda/check.hpp"
#include "backend/cuda/common.cuh"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/tensor_core.cuh"

namespace attnlab::cuda::attn {

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

// ---- shared by the backward kernels of every generation ---------------------------------------------

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

// The tensor-core kernels' tile (the wmma kernels' block shape; the mma.sync backward uses the same
// 64-row tiles, so that both can stage lse and D with tcb::stage_stats).
namespace tc {
constexpr int kEdge = 16;                            // the wmma tile edge
constexpr int kRowsPerWarp = kEdge;
constexpr int kRows = kWarps * kRowsPerWarp;         // 64 queries per block
constexpr int kTileKeys = 64;                        // keys per tile
constexpr int kSld = kTileKeys + 4;                  // S row stride, floats (a multiple of 4: 16 bytes)
constexpr int kPld = kTileKeys + 8;                  // P row stride, bf16 (a multiple of 8: 16 bytes)
constexpr int kAlign = 128;                          // the shared base is rounded up to this
}  // namespace tc

namespace tcb {
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
}  // namespace tcb

// ---- host side ----------------------------------------------------------------------------------------

// The resolved strides as the kernels take them; throws ShapeError for sizes the kernels cannot take.
inline Layout check_shape(const char* what, const backend::AttentionShape& shape) {
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
inline float score_scale(int C, int H) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(C / H))); }

inline unsigned grid_of(const char* what, int B, int H, int tiles) {
  const long long blocks = static_cast<long long>(B) * H * tiles;
  if (blocks > 0x7fffffffLL) throw ShapeError(std::string(what) + ": too many tiles for one grid");
  return static_cast<unsigned>(blocks);
}

// Whether a backward kernel whose blocks own `rows` rows (Tk for dK/dV, Tq for dQ) has anything to do:
// rows to own, and something to add to them or zeros to store.
inline bool has_work(const backend::AttentionShape& s, bool add, int rows) {
  return s.B > 0 && rows > 0 && (!add || (s.Tq > 0 && s.Tk > 0));
}

// Whether every row of a head's matrix (base p, rows ld apart, batches batch apart) starts on a
// multiple of `elems` elements, so that the register-tile kernels may read or write it that many at a
// time (float32 or bf16 elements).
template <typename E>
bool rows_aligned(const E* p, long long ld, long long batch, int elems) {
  return reinterpret_cast<std::uintptr_t>(p) % (sizeof(E) * elems) == 0 && ld % elems == 0 && batch % elems == 0;
}

// The backward's refusal of a batch stride of 0 (see attention.hpp).
inline void check_batch_strides(const char* what, const backend::AttentionShape& s, const Layout& L) {
  if (s.B > 1 && (L.qb == 0 || L.kb == 0 || L.vb == 0))
    throw ShapeError(std::string(what) + ": a batch stride of 0 (one Q, K or V shared by all " + std::to_string(s.B) +
                     " batches) is not supported: the batches' gradients would add into the same rows, which these "
                     "kernels do not reduce (and float atomics would not repeat bit for bit); give each batch its "
                     "own copy, or use the CPU backend");
}

// ---- the launchers of each kernel file ------------------------------------------------------------------
// Each takes the call's shape and its Layout (already checked) and launches its kernels on `stream`;
// add: GradMode::Add (else Write).

// attention_simt.cu: float32 storage and arithmetic, head widths up to 128.
void simt_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                  const backend::AttentionShape& s, const Layout& L, Stream stream);
void simt_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                   const float* q, const float* k, const float* v, const backend::AttentionShape& s, const Layout& L,
                   bool add, Stream stream);
void simt_weights(float* att, const float* lse, const float* q, const float* k, const backend::AttentionShape& s,
                  const Layout& L, Stream stream);

// attention_wmma.cu: bf16 products as wmma 16 × 16 × 16 tiles, S and O in shared memory; float32
// storage. Forward: head widths that are multiples of 16 up to 128; backward: up to 64.
void wmma_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                  const backend::AttentionShape& s, const Layout& L, Stream stream);
void wmma_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                   const float* q, const float* k, const float* v, const backend::AttentionShape& s, const Layout& L,
                   bool add, Stream stream);

// attention_mma.cu: bf16 products through mma.sync with the accumulators in registers, on float32 or
// bf16 storage (raw bits). Forward: head widths 32, 64 and 128 (one_tile: one 16-query tile a warp
// instead of two where the width allows); backward: 32 and 64. False, with nothing launched, for
// another width.
bool mma_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                 const backend::AttentionShape& s, const Layout& L, bool one_tile, Stream stream);
bool mma_forward(std::uint16_t* out, float* lse, const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v,
                 const backend::AttentionShape& s, const Layout& L, bool one_tile, Stream stream);
bool mma_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                  const float* q, const float* k, const float* v, const backend::AttentionShape& s, const Layout& L,
                  bool add, Stream stream);
bool mma_backward(std::uint16_t* dq, std::uint16_t* dk, std::uint16_t* dv, const std::uint16_t* dout,
                  const std::uint16_t* out, const float* lse, const std::uint16_t* q, const std::uint16_t* k,
                  const std::uint16_t* v, const backend::AttentionShape& s, const Layout& L, bool add, Stream stream);

}  // namespace attnlab::cuda::attn
