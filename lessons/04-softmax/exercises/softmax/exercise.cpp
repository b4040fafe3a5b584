// Exercise: stable softmax over each row                 (lesson 04-softmax · easy · ~15 min)
//
// Write softmax_rows: for every row i of `scores` (n × m, one row per query, one column per key),
//
//     weights(i, j) = exp(scores(i, j)) / Σ_k exp(scores(i, k))
//
// so each row of the result is positive and sums to 1. Three things the grader checks:
//   * it must not overflow: scores like 1000 are legal input (exp(1000) is inf in float);
//   * a score of -inf means "hidden": it gets weight exactly 0;
//   * a row whose scores are ALL -inf (every key hidden) gives a row of zeros, not NaN.
// Do not change `scores`; return a new n × m Matrix.
//
// Check your work with:   attnlab check softmax        (hints: attnlab hint softmax)
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix softmax_rows(const Matrix& scores) {
  // TODO: create `Matrix weights(scores.rows, scores.cols);`, fill it row by row, and return it.
  return Matrix();
}

}  // namespace ex
