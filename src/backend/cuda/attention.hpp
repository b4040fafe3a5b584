#pragma once
// Fused multi-head attention on the GPU, forward and backward, mirroring model::attention_forward_tiled
// / attention_backward_tiled (backend/cpu/ops.hpp): the same masks, the same log-sum-exp, the same results to
// float rounding, and never the Tq × Tk matrix of weights in memory (FlashAttention's idea: keys in
// tiles through shared memory, with an online softmax).
//
// Shape legend (llm.c style): B batch, Tq query tokens, Tk key tokens (Tk = Tq for self-attention,
// the source length for cross-attention), C channels, H heads of width d = C / H (1 ≤ d ≤ 128).
//   q, dq, out, dout   (B·Tq) × C        k, v, dk, dv   (B·Tk) × C        lse   B × H × Tq
//   key_len            B int32 (device; null: every key visible)
// Head h owns the column block [h·d, (h+1)·d) of q, k, v and out. For each batch b and head h:
//   out_bh = softmax(mask(Q_bh · K_bhᵀ / √d)) · V_bh.
// Masking: key j is visible to query i iff j < key_len[b] and, when causal, j ≤ i. A query with no
// visible key (padding, key_len 0) gets an all-zero output row and lse = −inf, as on the CPU.
//
// All arithmetic is float32; the softmax statistics (running max, normaliser, lse) too.
#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

inline constexpr int kAttentionMaxHead = 128;  // the largest d = C / H the kernels take

// out (written) and lse (written: log Σ_j exp(s_ij) per query row, −inf for a fully masked row).
void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v, const int* key_len,
                       bool causal, int B, int Tq, int Tk, int C, int H, Stream stream = nullptr);

// dq, dk, dv accumulate (+=). Recomputes the weights from q, k and lse (P = exp(s − lse)); with
// D_i = Σ_c dout_ic · out_ic, dscores = P ⊙ (dout·Vᵀ − D). dK and dV are computed by blocks that own
// a tile of keys, dQ by blocks that own a tile of queries: no atomics, results repeat bit for bit.
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                        const float* q, const float* k, const float* v, const int* key_len, bool causal, int B,
                        int Tq, int Tk, int C, int H, Stream stream = nullptr);

}  // namespace attnlab::cuda
