// Reference solution: scaled dot-product attention for one head.
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) {
  const std::size_t n = q.rows, m = k.rows, d_k = q.cols;
  // scores(i, j) = q_i · k_j: the dot product of query row i with key row j, i.e. Q·Kᵀ.
  Matrix weights = matmul(q, transpose(k));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_k));
  for (std::size_t i = 0; i < n; ++i) {
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < m; ++j) {
      weights(i, j) *= scale;
      mx = std::max(mx, weights(i, j));
    }
    double sum = 0.0;
    for (std::size_t j = 0; j < m; ++j) sum += (weights(i, j) = std::exp(weights(i, j) - mx));
    for (std::size_t j = 0; j < m; ++j) weights(i, j) = static_cast<float>(weights(i, j) / sum);
  }
  return matmul(weights, v);  // n × m times m × d_v
}

}  // namespace ex
