// Mutant: correct result, but normalises the caller's x in place (const_cast) and returns a copy of it.
#include <cmath>
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix layer_norm(const Matrix& input, const std::vector<float>& gamma, const std::vector<float>& beta, float eps) {
  Matrix& x = const_cast<Matrix&>(input);
  for (std::size_t i = 0; i < x.rows; ++i) {
    double mean = 0, var = 0;
    for (std::size_t j = 0; j < x.cols; ++j) mean += x(i, j);
    mean /= double(x.cols);
    for (std::size_t j = 0; j < x.cols; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
    var /= double(x.cols);
    for (std::size_t j = 0; j < x.cols; ++j)
      x(i, j) = static_cast<float>(gamma[j] * (x(i, j) - mean) / std::sqrt(var + eps) + beta[j]);
  }
  return x;
}
}  // namespace ex
