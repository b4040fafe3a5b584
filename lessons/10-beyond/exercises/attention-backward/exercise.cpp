// Exercise: backward pass of attention                 (lesson 10-beyond · hard · ~60 min)
//
// Training needs gradients. For one head with no mask,
//     S = Q·Kᵀ / √d_k  (n × m),   P = softmax of each row of S,   O = P·V  (n × d_v),
// and a loss L that depends on O. You are given d_out = dL/dO (n × d_v). Write attention_backward,
// returning dL/dQ (n × d_k), dL/dK (m × d_k) and dL/dV (m × d_v) in an ex::AttentionGrads
// { d_q, d_k, d_v } (declared in attnlab/exercise.hpp). Recompute S and P from q, k, v yourself.
// Leave every input unchanged.
//
// Check your work with:   attnlab check attention-backward        (hints: attnlab hint attention-backward)
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

AttentionGrads attention_backward(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& d_out) {
  // TODO: forward (S, P), then dV, dP, dS (through the softmax), dQ and dK.
  return AttentionGrads{};
}

}  // namespace ex
