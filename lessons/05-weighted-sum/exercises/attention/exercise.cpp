// Exercise: scaled dot-product attention                (lesson 05-weighted-sum · easy · ~25 min)
//
// Write attention(q, k, v) = softmax(Q·Kᵀ / √d_k) · V for one head, where
//   q is n × d_k   (one query per row)
//   k is m × d_k   (one key per row; m may differ from n)
//   v is m × d_v   (one value per row; d_v may differ from d_k)
// and the result is n × d_v: row i is the average of the value rows, weighted by how well query i
// matches each key. The softmax runs over each row (over the keys) and must stay finite for large
// scores. Leave q, k and v unchanged.
//
// The header gives you matmul(a, b) and transpose(a) if you want them.
// Check your work with:   attnlab check attention        (hints: attnlab hint attention)
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) {
  // TODO: scores (n × m), scale them, softmax each row, then multiply by v. Return the n × d_v result.
  return Matrix();
}

}  // namespace ex
