// Exercise: cross-attention                         (lesson 08-cross-attention · medium · ~25 min)
//
// In a translation model the decoder asks questions of the encoded source sentence. Write
// cross_attention, multi-head attention where
//   x       (n × d_model) are the decoder states: the QUERIES come from here, Q = x · w_q;
//   memory  (m × d_model) is the encoder output: KEYS and VALUES come from here, K = memory · w_k,
//           V = memory · w_v;
// so each head's weight matrix is n × m (decoder tokens × source tokens), and the result is
// n × d_model: one row per decoder token. Weights are packed as in the multi-head exercise:
//   w_q, w_k: d_model × (h·d_k)   w_v: d_model × (h·d_v)   w_o: (h·d_v) × d_model
// No mask. Leave every input unchanged.
//
// Check your work with:   attnlab check cross-attention        (hints: attnlab hint cross-attention)
#include <cmath>
#include <limits>
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix cross_attention(const Matrix& x, const Matrix& memory, const Matrix& w_q, const Matrix& w_k,
                       const Matrix& w_v, const Matrix& w_o, std::size_t h) {
  // TODO: your multi-head attention, with Q from x and K, V from memory.
  return Matrix();
}

}  // namespace ex
