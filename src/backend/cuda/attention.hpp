#pragma once
// Fused multi-head attention on the GPU, forward and backward, mirroring model::attention_forward_tiled
// / attention_backward_tiled (backend/cpu/ops.hpp): the same masks, the same log-sum-exp, the same results to
// float rounding, and never the Tq × Tk matrix of weights in memory (FlashAttention's idea: keys in
// tiles through shared memory, with an online softmax).
//
// Shape legend (llm.c style): B batch, Tq query tokens, Tk key tokens (Tk = Tq for self-attention,
// the source length for cross-attention), C channels, H heads of width d = C / H (1 ≤ d ≤ 128).
//   q, dq, out, dout   B × Tq rows of ≥ C floats    k, v, dk, dv   B × Tk rows    lse   B × H × Tq
//   att                B × H × Tq × Tk (attention_weights only)
//   key_len            B int32 (device; null: every key visible)
// Rows are addressed through backend::AttentionShape (backend/backend.hpp): row r of batch b of q
// starts at q + b·q_batch + r·ldq (likewise k, v, and out with ldo / o_batch; dq, dk, dv share the
// strides of q, k, v, dout those of out). The defaults are packed N × C activations; ld = 3C reads a
// fused Q/K/V buffer in place, and a batch stride of 0 (forward only) lets every batch's queries read
// one shared K/V (the cross-attention cache of beam search).
// Head h owns the column block [h·d, (h+1)·d) of each row. For each batch b and head h:
//   out_bh = softmax(mask(Q_bh · K_bhᵀ / √d)) · V_bh.
// Masking: key j is visible to query i iff j < key_len[b] and, when causal, j ≤ i. A query with no
// visible key (padding, key_len 0) gets an all-zero output row and lse = −inf, as on the CPU.
//
// All arithmetic is float32 (attention_forward_bf16: bf16 products, float32 accumulation); the softmax
// statistics (running max, normaliser, lse) are float32 in both.
#include <cstdint>

#include "backend/backend.hpp"
#include "backend/cuda/device.hpp"
#include "backend/cuda/kernel_choice.hpp"

namespace attnlab::cuda {

inline constexpr int kAttentionMaxHead = 128;  // the largest d = C / H the kernels take

// Which kernels the bf16 entry points run is attention.cu's table (docs/cuda.md, "Which attention kernel
// runs"): the register-tile (mma.sync) kernels where they take the head width, else the wmma ones.
// kernel_choice().attention (kernel_choice.hpp) overrides it: AttentionVariant::Wmma runs the wmma
// kernels at every width they take (the bf16-storage entry points then take no shape, so the backend
// widens); OneTile gives the register-tile forward one 16-query tile per warp instead of two, the same
// results. For timing the variants against each other and for tests.

// out (written: the C columns of each row; columns beyond C of a wider row are not touched) and lse
// (written: log Σ_j exp(s_ij) per query row, −inf for a fully masked row).
void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const backend::AttentionShape& s, Stream stream = nullptr);

// The same on tensor cores: Q·Kᵀ and P·V with bf16 inputs (Q, K, V rounded as they are read, the
// weights P rounded before P·V) and float32 accumulation; the softmax statistics, lse and the output
// stay float32. Errors against attention_forward about 1e-3 relative (bf16's 8 significant bits).
// Head width d must be a multiple of 16 (ShapeError otherwise). Two kernels (sm_80 and later): for
// d = 32, 64 and 128, FlashAttention-2's loop with S and O in registers (PTX mma.sync, 128 queries per
// block, 18 KB of static shared memory at d = 64, 36 KB at d = 128); for the other multiples of 16, or
// under AttentionVariant::Wmma, the wmma kernel with S and O in shared
// memory (70 KB per block at d = 64, 110 KB at d = 128). AttentionVariant::OneTile gives each warp
// of the register-tile kernel one tile of 16 queries instead of two (d ≤ 64), the same results.
void attention_forward_bf16(float* out, float* lse, const float* q, const float* k, const float* v,
                            const backend::AttentionShape& s, Stream stream = nullptr);

// attention_forward_bf16 on bf16 storage (raw bits: q, k, v and out; lse float32): the register-tile
// kernel reading the 16 bits and storing out rounded once, no float32 copy of anything. The same
// arithmetic as attention_forward_bf16 on the widened q, k, v (whose rounding as they are read is then
// exact), so out is that result rounded, bit for bit. Head widths 32, 64 and 128 only, and not under
// AttentionVariant::Wmma: _takes says whether it runs a shape; where it does not, the caller widens
// and calls attention_forward_bf16 (the storage function throws ShapeError for such a shape, as for
// any shape attention_forward refuses).
bool attention_forward_bf16_storage_takes(const backend::AttentionShape& s);
void attention_forward_bf16_storage(std::uint16_t* out, float* lse, const std::uint16_t* q, const std::uint16_t* k,
                                    const std::uint16_t* v, const backend::AttentionShape& s, Stream stream = nullptr);

// dq, dk, dv accumulate (+=; a null one is skipped), or under GradMode::Write are stored: every
// element of their rows' C columns, zeros for keys no query sees (the blocks that skip such keys store
// them), and all of dk/dv when Tq = 0, all of dq when Tk = 0. Recomputes the weights from q, k and lse
// (P = exp(s − lse)); with D_i = Σ_c dout_ic · out_ic, dscores = P ⊙ (dout·Vᵀ − D). dK and dV are
// computed by blocks that own a tile of keys, dQ by blocks that own a tile of queries: no atomics,
// results repeat bit for bit. A batch stride of 0 (K/V shared among B > 1 batches) throws ShapeError:
// blocks of different batches would then add into the same rows of dK/dV, which needs either atomics
// (not deterministic) or a reduction over batches that nothing here implements yet.
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                        const float* q, const float* k, const float* v, const backend::AttentionShape& s,
                        backend::GradMode mode = backend::GradMode::Add, Stream stream = nullptr);

// The same on tensor cores: S, dP and the three gradient products with bf16 inputs (Q, K, V, dout, P
// and dS rounded) and float32 accumulation; lse, D and the softmax arithmetic float32. Errors against
// attention_backward about 1e-2 relative. Head width d: a multiple of 16, at most 64 (ShapeError
// otherwise); the same refusal of a batch stride of 0. For d = 32 and 64 the products run through
// mma.sync with S, dP and the gradients in registers (static shared memory: 37 KB for dK/dV, 27 KB for
// dQ at d = 64); for d = 16 and 48, or under AttentionVariant::Wmma, the wmma kernels with them in
// shared memory (108 KB and 81 KB at d = 64).
void attention_backward_bf16(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                             const float* q, const float* k, const float* v, const backend::AttentionShape& s,
                             backend::GradMode mode = backend::GradMode::Add, Stream stream = nullptr);

// attention_backward_bf16 on bf16 storage (raw bits: q, k, v, out, dout and the gradients; lse float32):
// the register-tile kernels reading the 16 bits, D_i summed in float32 from the widened dout and out,
// each gradient element stored rounded once (under Add: the old value widened, the sum in float32,
// then rounded: what widening the gradient, adding and rounding it gives). The same arithmetic as
// attention_backward_bf16 on the widened operands, so each gradient is that result rounded, bit for
// bit. Head widths 32 and 64, and not under AttentionVariant::Wmma: _takes says whether it runs a
// shape, as for the forward; the same refusal of a batch stride of 0.
bool attention_backward_bf16_storage_takes(const backend::AttentionShape& s);
void attention_backward_bf16_storage(std::uint16_t* dq, std::uint16_t* dk, std::uint16_t* dv,
                                     const std::uint16_t* dout, const std::uint16_t* out, const float* lse,
                                     const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v,
                                     const backend::AttentionShape& s,
                                     backend::GradMode mode = backend::GradMode::Add, Stream stream = nullptr);

// att (written, B × H × Tq × Tk) = exp(s_ij − lse_i) where key j is visible to query i, else 0: the
// weights the forward used, recomputed from q, k and its lse (for the lessons; training never stores
// them). One warp per query row.
void attention_weights(float* att, const float* lse, const float* q, const float* k, const backend::AttentionShape& s,
                       Stream stream = nullptr);

// The packed layout (q, out: (B·Tq) × C; k, v: (B·Tk) × C), as the model's activations.
inline backend::AttentionShape packed_attention(const int* key_len, bool causal, int B, int Tq, int Tk, int C, int H) {
  backend::AttentionShape s;
  s.B = B;
  s.Tq = Tq;
  s.Tk = Tk;
  s.C = C;
  s.H = H;
  s.key_len = key_len;
  s.causal = causal;
  return s;
}
inline void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                              const int* key_len, bool causal, int B, int Tq, int Tk, int C, int H,
                              Stream stream = nullptr) {
  attention_forward(out, lse, q, k, v, packed_attention(key_len, causal, B, Tq, Tk, C, H), stream);
}
inline void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                               const float* q, const float* k, const float* v, const int* key_len, bool causal, int B,
                               int Tq, int Tk, int C, int H, Stream stream = nullptr) {
  attention_backward(dq, dk, dv, dout, out, lse, q, k, v, packed_attention(key_len, causal, B, Tq, Tk, C, H),
                     backend::GradMode::Add, stream);
}

}  // namespace attnlab::cuda
