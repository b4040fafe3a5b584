// Mutant: scaled scores, but the softmax normalises each column (over the queries).
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) {
  Matrix w = matmul(q, transpose(k));
  for (float& x : w.data) x /= std::sqrt(float(q.cols));
  for (std::size_t j = 0; j < w.cols; ++j) {
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < w.rows; ++i) mx = std::max(mx, w(i, j));
    float sum = 0;
    for (std::size_t i = 0; i < w.rows; ++i) sum += (w(i, j) = std::exp(w(i, j) - mx));
    for (std::size_t i = 0; i < w.rows; ++i) w(i, j) /= sum;
  }
  return matmul(w, v);
}
}  // namespace ex
