// The bf16 attention kernels with their accumulators in registers (attention.cu has the overview and
// says when they run): FlashAttention-2's forward and backward through PTX mma.sync m16n8k16
// (tensor_core.cuh), on float32 or bf16 storage.
#include "backend/cuda/attention_common.cuh"

namespace attnlab::cuda::attn {

namespace {

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
static_assert(kRows == tc::kRows && kWarps == ::attnlab::cuda::attn::kWarps, "tcb::stage_stats's tile and block shape");

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

// The register-tile backward for head width d (32 or 64); false for another width.
template <typename S, typename G>
bool attention_backward_bf16_rf(G* dq, G* dk, G* dv, const S* dout, const S* out, const float* lse, const S* q,
                                const S* k, const S* v, const backend::AttentionShape& s, const Layout& L, bool add,
                                Stream stream) {
  const float scale = score_scale(s.C, s.H);
  switch (s.C / s.H) {
    case 32: launch_backward_bf16_rf<32>(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, scale, stream); return true;
    case 64: launch_backward_bf16_rf<64>(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, scale, stream); return true;
    default: return false;
  }
}

}  // namespace

bool mma_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                 const backend::AttentionShape& s, const Layout& L, bool one_tile, Stream stream) {
  return attention_forward_bf16_rf(out, lse, q, k, v, s, L, one_tile, stream);
}
bool mma_forward(std::uint16_t* out, float* lse, const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v,
                 const backend::AttentionShape& s, const Layout& L, bool one_tile, Stream stream) {
  return attention_forward_bf16_rf(out, lse, q, k, v, s, L, one_tile, stream);
}
bool mma_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                  const float* q, const float* k, const float* v, const backend::AttentionShape& s, const Layout& L,
                  bool add, Stream stream) {
  return attention_backward_bf16_rf(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, stream);
}
bool mma_backward(std::uint16_t* dq, std::uint16_t* dk, std::uint16_t* dv, const std::uint16_t* dout,
                  const std::uint16_t* out, const float* lse, const std::uint16_t* q, const std::uint16_t* k,
                  const std::uint16_t* v, const backend::AttentionShape& s, const Layout& L, bool add, Stream stream) {
  return attention_backward_bf16_rf(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, stream);
}

}  // namespace attnlab::cuda::attn
