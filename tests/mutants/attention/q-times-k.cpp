// Mutant: indexes k(t, j), computing Q·K instead of Q·Kᵀ (only defined when d_k = m).
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) {
  const std::size_t n = q.rows, m = k.rows, d_k = q.cols;
  Matrix w(n, m);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < m; ++j) {
      float dot = 0;
      for (std::size_t t = 0; t < d_k; ++t) dot += q(i, t) * k(t, j);
      w(i, j) = dot * (1.0f / std::sqrt(float(d_k)));
    }
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < m; ++j) mx = std::max(mx, w(i, j));
    float sum = 0;
    for (std::size_t j = 0; j < m; ++j) sum += (w(i, j) = std::exp(w(i, j) - mx));
    for (std::size_t j = 0; j < m; ++j) w(i, j) /= sum;
  }
  return matmul(w, v);
}
}  // namespace ex
