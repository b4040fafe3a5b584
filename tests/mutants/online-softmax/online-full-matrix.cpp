// Mutant: right numbers, but builds the whole n × m score matrix first and ignores the blocks.
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix attention_online(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t block) {
  Matrix w = matmul(q, transpose(k));
  for (std::size_t i = 0; i < w.rows; ++i) {
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < w.cols; ++j) mx = std::max(mx, w(i, j) /= std::sqrt(float(q.cols)));
    float sum = 0;
    for (std::size_t j = 0; j < w.cols; ++j) sum += (w(i, j) = std::exp(w(i, j) - mx));
    for (std::size_t j = 0; j < w.cols; ++j) w(i, j) /= sum;
  }
  return matmul(w, v);
}
}  // namespace ex
