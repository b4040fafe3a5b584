// Mutant: stable, but a row of all -inf becomes (-inf) - (-inf) = NaN.
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix softmax_rows(const Matrix& s) {
  Matrix w(s.rows, s.cols);
  for (std::size_t i = 0; i < s.rows; ++i) {
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < s.cols; ++j) mx = std::max(mx, s(i, j));
    float sum = 0;
    for (std::size_t j = 0; j < s.cols; ++j) sum += (w(i, j) = std::exp(s(i, j) - mx));
    for (std::size_t j = 0; j < s.cols; ++j) w(i, j) /= sum;
  }
  return w;
}
}  // namespace ex
