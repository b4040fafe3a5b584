// The bf16 attention kernels on wmma tiles (attention.cu has the overview and says when they run):
// Q·Kᵀ and P·V (and the backward's five products) as 16 × 16 × 16 tiles with S and O in shared memory,
// for the head widths the register-tile kernels of attention_mma.cu do not take.
#include <mma.h>

#include "backend/cuda/attention_common.cuh"

namespace attnlab::cuda::attn {

// Not in an unnamed namespace: tc and tcb add to attention_common.cuh's namespaces of those names.

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

void wmma_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                  const backend::AttentionShape& s, const Layout& L, Stream stream) {
  const int qblocks = (s.Tq + tc::kRows - 1) / tc::kRows;
  const std::size_t bytes = tc::smem_for(s.C / s.H).bytes;  // 70 KB at d = 64, 110 KB at d = 128: above the default 48 KB
  CUDA_CHECK(cudaFuncSetAttribute(attention_forward_bf16_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)));
  ATTNLAB_LAUNCH(attention_forward_bf16_kernel, grid_of("cuda::attention_forward_bf16", s.B, s.H, qblocks), kThreads,
                 bytes, stream)(out, lse, q, k, v, s.key_len, s.causal, L, qblocks, score_scale(s.C, s.H));
  CUDA_CHECK_LAUNCH();
}

void wmma_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                   const float* q, const float* k, const float* v, const backend::AttentionShape& s, const Layout& L,
                   bool add, Stream stream) {
  const int d = s.C / s.H;
  const float scale = score_scale(s.C, s.H);
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

}  // namespace attnlab::cuda::attn
