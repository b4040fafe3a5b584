#pragma once
// The attention core: every stage of (multi-head) scaled dot-product attention as its own function.
//
// Shape legend (row-vector convention, one token per row):
//   n        query tokens (the sequence being updated; the decoder side in cross-attention)
//   m        key/value tokens (= n in self-attention; the encoder memory in cross-attention)
//   d_model  model width (columns of x and of memory)
//   d_k      query/key width of one head      d_v  value width of one head
//   h        number of heads
//
//   x (n × d_model) ─ W_Q (d_model × d_k) ─▶ Q (n × d_k)
//   kv (m × d_model) ─ W_K ─▶ K (m × d_k),  ─ W_V (d_model × d_v) ─▶ V (m × d_v)
//   scores = Q · Kᵀ (n × m) ─▶ scaled = scores / √d_k ─▶ masked (−inf where hidden)
//   weights = softmax over each row (n × m, rows sum to 1) ─▶ context = weights · V (n × d_v)
//   concat = [context_1 | … | context_h] (n × h·d_v) ─ W_O (h·d_v × d_model) ─▶ output (n × d_model)
//
// All matrix products go through OpenBLAS (core/blas.hpp). The naive reference that the tests use as
// an oracle lives separately in reference/naive_attention.hpp and shares no code with this file.
#include <optional>
#include <vector>

#include "core/mask.hpp"
#include "core/matrix.hpp"

namespace attnlab::core {

// ---- weights ----------------------------------------------------------------

// One head's projections: W_Q and W_K are d_model × d_k, W_V is d_model × d_v. The biases are
// optional row vectors (1 × d_k, 1 × d_k, 1 × d_v) added to every row: Q = X · W_Q + b_Q. The paper's
// formulas have none; trained models (and torch.nn.MultiheadAttention by default) do.
struct HeadWeights {
  Matrix w_q, w_k, w_v;
  std::optional<Matrix> b_q{}, b_k{}, b_v{};
};

// h heads (all with the same d_k and d_v) and an optional output projection W_O of shape
// (h·d_v) × d_model. Without W_O the result is the concatenation of the heads.
struct AttentionWeights {
  std::vector<HeadWeights> heads;
  std::optional<Matrix> w_o;
  std::optional<Matrix> b_o{};  // 1 × d_model, only with w_o
};

// Checks that the weights fit inputs of width d_model: every W_Q/W_K/W_V has d_model rows, all heads
// share d_k and d_v, W_O is (h·d_v) × d_model, and every bias is a 1 × width row matching its matrix.
// Throws ShapeError naming the head and matrix.
void validate_weights(const AttentionWeights& w, std::size_t d_model);

// ---- trace ------------------------------------------------------------------

// Every intermediate of one head. `masked` is empty when no mask was given.
struct HeadTrace {
  Matrix q, k, v;        // n × d_k, m × d_k, m × d_v
  Matrix scores;         // n × m, Q · Kᵀ
  Matrix scaled;         // n × m, scores / √d_k
  Matrix masked;         // n × m, scaled with −inf at hidden positions (only with a mask)
  Matrix weights;        // n × m, row softmax
  Matrix context;        // n × d_v, weights · V
  std::vector<std::size_t> fully_masked_rows;  // rows whose keys were all hidden: weights set to 0
};

struct AttentionTrace {
  std::vector<HeadTrace> heads;
  Matrix concat;   // n × h·d_v
  Matrix output;   // n × d_model (= concat when there is no W_O)
  bool has_mask = false;
  bool has_output_projection = false;
  std::vector<std::size_t> fully_masked_rows;  // same for every head (the mask is shared)
};

// ---- stages -----------------------------------------------------------------

// Q = X · W (+ b) (also K and V): x is rows × d_model, w is d_model × d_out, bias (optional) is
// 1 × d_out and is added to every row; returns rows × d_out.
Matrix project(const Matrix& x, const Matrix& w, const Matrix* bias = nullptr);

// Raw scores Q · Kᵀ: q is n × d_k, k is m × d_k; returns n × m. Entry (i, j) says how well query i
// matches key j. Note the transpose: Q · K (without ᵀ) does not even have matching shapes unless
// d_k = m, and then computes the wrong thing.
Matrix attention_scores(const Matrix& q, const Matrix& k);

// scaled = scores / √d_k. Why: for random unit-variance q and k, q·k has variance d_k, so without the
// scaling large d_k pushes the softmax into saturation (one weight ≈ 1, vanishing gradients).
Matrix scale_scores(const Matrix& scores, std::size_t d_k);

// Writes −inf where mask(i, j) == 0; mask must be n × m like the scores.
Matrix apply_mask(const Matrix& scaled, const Mask& mask);

// Numerically stable softmax over each row (over the keys j for a fixed query i):
//   w(i, j) = exp(s(i, j) − max_j s(i, j)) / Σ_j exp(s(i, j) − max_j s(i, j)).
// Subtracting the row max keeps every exponent ≤ 0, so nothing overflows in float32.
// A row whose entries are all −inf (fully masked) yields all-zero weights, never NaN, and its index
// is appended to *fully_masked when given. Throws NumericError if a row holds +inf or NaN (scores
// that overflowed float32).
Matrix softmax_rows(const Matrix& s, std::vector<std::size_t>* fully_masked = nullptr);

// context = weights · V: weights is n × m, v is m × d_v; returns n × d_v. Row i is the average of
// the value rows, weighted by how much query i attends to each key.
Matrix weighted_sum(const Matrix& weights, const Matrix& v);

// Splits n × (h·d) into h matrices of n × d, head i taking the *contiguous* columns [i·d, (i+1)·d).
// (Interleaving, head i taking columns i, i+h, …, is the classic mistake: it mixes up the heads that
// W_Q's column blocks produced.) Throws ShapeError if h does not divide the width.
std::vector<Matrix> split_heads(const Matrix& x, std::size_t h);

// Inverse of split_heads: concatenates the heads' columns in order [head_0 | head_1 | …].
Matrix merge_heads(const std::vector<Matrix>& heads);

// output = concat · W_O (+ b_O): concat is n × (h·d_v), w_o is (h·d_v) × d_model, bias 1 × d_model.
Matrix output_projection(const Matrix& concat, const Matrix& w_o, const Matrix* bias = nullptr);

// ---- compositions -----------------------------------------------------------

// One head: softmax(mask(Q·Kᵀ/√d_k))·V. mask may be null. Records every stage in *trace when given.
Matrix scaled_dot_product_attention(const Matrix& q, const Matrix& k, const Matrix& v,
                                    const Mask* mask = nullptr, HeadTrace* trace = nullptr);

// Multi-head attention with queries from x (n × d_model) and keys/values from kv (m × d_model).
// Self-attention passes kv = x; cross-attention passes the encoder memory. Returns n × d_model when
// W_O is given, otherwise the n × (h·d_v) concatenation.
Matrix multi_head_attention(const Matrix& x, const Matrix& kv, const AttentionWeights& w,
                            const Mask* mask = nullptr, AttentionTrace* trace = nullptr);

// Self-attention: Q, K and V all come from x.
inline Matrix self_attention(const Matrix& x, const AttentionWeights& w, const Mask* mask = nullptr,
                             AttentionTrace* trace = nullptr) {
  return multi_head_attention(x, x, w, mask, trace);
}

// Cross-attention (encoder–decoder attention): Q from the decoder side x (n × d_model), K and V from
// the encoder memory (m × d_model), so the weight matrices are n × m.
inline Matrix cross_attention(const Matrix& x, const Matrix& memory, const AttentionWeights& w,
                              const Mask* mask = nullptr, AttentionTrace* trace = nullptr) {
  return multi_head_attention(x, memory, w, mask, trace);
}

// The packed form a real model uses: one W_Q of d_model × (h·d_k) (head i owns the column block
// [i·d_k, (i+1)·d_k)), likewise W_K and W_V, projected once and then split into heads. Equivalent to
// multi_head_attention with the per-head slices (see unpack_heads below); w_o may be empty (0 × 0) for
// no output projection.
Matrix multi_head_attention_packed(const Matrix& x, const Matrix& kv, const Matrix& w_q,
                                   const Matrix& w_k, const Matrix& w_v, const Matrix& w_o,
                                   std::size_t h, const Mask* mask = nullptr);

// Slices packed projections into per-head weights (contiguous column blocks of width d_k, d_v).
AttentionWeights unpack_heads(const Matrix& w_q, const Matrix& w_k, const Matrix& w_v,
                              std::optional<Matrix> w_o, std::size_t h);

}  // namespace attnlab::core
