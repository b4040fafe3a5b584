// Mutant: reads k(t, j), computing Q·K instead of Q·Kᵀ.
#include <cmath>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix scaled_scores(const Matrix& q, const Matrix& k) {
  const std::size_t n = q.rows, m = k.rows, d_k = q.cols;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_k));
  Matrix s(n, m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      float dot = 0.0f;
      for (std::size_t t = 0; t < d_k; ++t) dot += q(i, t) * k(t, j);
      s(i, j) = dot * scale;
    }
  return s;
}

}  // namespace ex
