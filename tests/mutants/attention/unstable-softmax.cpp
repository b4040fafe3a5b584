// Mutant: right scores and scale, but exp() without subtracting the row maximum.
#include <cmath>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) {
  Matrix w = matmul(q, transpose(k));
  for (std::size_t i = 0; i < w.rows; ++i) {
    float sum = 0;
    for (std::size_t j = 0; j < w.cols; ++j) sum += (w(i, j) = std::exp(w(i, j) / std::sqrt(float(q.cols))));
    for (std::size_t j = 0; j < w.cols; ++j) w(i, j) /= sum;
  }
  return matmul(w, v);
}
}  // namespace ex
