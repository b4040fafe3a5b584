// Exercise: scores and scaling                   (lesson 03-scores-and-scaling · easy · ~10 min)
//
// Write scaled_scores(q, k) = Q·Kᵀ / √d_k, where
//   q is n × d_k   (one query per row)
//   k is m × d_k   (one key per row; m may differ from n)
// The result is n × m: entry (i, j) is the dot product of query row i with key row j, divided by
// √d_k (d_k = the number of columns of q and k). Leave q and k unchanged.
//
// Write the loops yourself this time (the header's matmul and transpose are for later exercises).
// Check your work with:   attnlab check scaled-scores        (hints: attnlab hint scaled-scores)
#include <cmath>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix scaled_scores(const Matrix& q, const Matrix& k) {
  // TODO: an n × m Matrix; entry (i, j) = Σ_t q(i, t)·k(j, t), divided by √d_k.
  return Matrix();
}

}  // namespace ex
