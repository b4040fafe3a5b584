// The float32 attention kernels (attention.cu has the overview): forward, dK/dV, dQ and the weights,
// each a block of 4 warps with keys in tiles of 32 through shared memory, one key per lane.
#include "backend/cuda/attention_common.cuh"

namespace attnlab::cuda::attn {

namespace {

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

}  // namespace

void simt_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                  const backend::AttentionShape& s, const Layout& L, Stream stream) {
  const int qblocks = (s.Tq + kFwdRows - 1) / kFwdRows;
  ATTNLAB_LAUNCH(attention_forward_kernel, grid_of("cuda::attention_forward", s.B, s.H, qblocks), kThreads, 0,
                 stream)(out, lse, q, k, v, s.key_len, s.causal, L, qblocks, score_scale(s.C, s.H));
  CUDA_CHECK_LAUNCH();
}

void simt_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                   const float* q, const float* k, const float* v, const backend::AttentionShape& s, const Layout& L,
                   bool add, Stream stream) {
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

void simt_weights(float* att, const float* lse, const float* q, const float* k, const backend::AttentionShape& s,
                  const Layout& L, Stream stream) {
  const int qblocks = (s.Tq + kWeightRows - 1) / kWeightRows;
  ATTNLAB_LAUNCH(attention_weights_kernel, grid_of("cuda::attention_weights", s.B, s.H, qblocks), kThreads, 0,
                 stream)(att, lse, q, k, s.key_len, s.causal, L, qblocks, score_scale(s.C, s.H));
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda::attn
