// Exercise: multi-head self-attention                   (lesson 07-multi-head · medium · ~40 min)
//
// Write multi_head_attention for a sequence x (n × d_model) with h heads and packed weights:
//   w_q, w_k: d_model × (h·d_k)     w_v: d_model × (h·d_v)     w_o: (h·d_v) × d_model
// Steps:  Q = x·w_q, K = x·w_k, V = x·w_v;  head i uses the contiguous column block i of Q, K and V
// (width d_k, d_k, d_v);  head_i = softmax(Q_i·K_iᵀ / √d_k)·V_i  (n × d_v);
// concat = [head_0 | ... | head_{h-1}]  (n × h·d_v);  return concat · w_o  (n × d_model).
// d_k = w_q.cols / h is the width of ONE head. No mask. Leave every input unchanged.
//
// You will need a softmax and the head split again: write them as helpers in this file (copying your
// earlier exercises is fine). The header gives you matmul(a, b) and transpose(a).
// Check your work with:   attnlab check multi-head        (hints: attnlab hint multi-head)
#include <cmath>
#include <limits>
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix multi_head_attention(const Matrix& x, const Matrix& w_q, const Matrix& w_k, const Matrix& w_v,
                            const Matrix& w_o, std::size_t h) {
  // TODO: project, split, attend per head, concatenate in head order, multiply by w_o.
  return Matrix();
}

}  // namespace ex
