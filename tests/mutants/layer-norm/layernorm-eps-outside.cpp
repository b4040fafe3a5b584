// Mutant: adds eps after the square root.
#include <cmath>
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix layer_norm(const Matrix& x, const std::vector<float>& gamma, const std::vector<float>& beta, float eps) {
  const std::size_t d = x.cols;
  Matrix y(x.rows, d);
  for (std::size_t i = 0; i < x.rows; ++i) {
    float mean = 0, var = 0;
    for (std::size_t j = 0; j < d; ++j) mean += x(i, j);
    mean /= float(d);
    for (std::size_t j = 0; j < d; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
    var /= float(d);
    for (std::size_t j = 0; j < d; ++j) y(i, j) = gamma[j] * (x(i, j) - mean) / (std::sqrt(var) + eps) + beta[j];
  }
  return y;
}
}  // namespace ex
