// Mutant: correct numbers, but computed in place in the caller's scores (const_cast "to save a copy").
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix softmax_rows(const Matrix& scores) {
  Matrix& s = const_cast<Matrix&>(scores);
  for (std::size_t i = 0; i < s.rows; ++i) {
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < s.cols; ++j) mx = std::max(mx, s(i, j));
    if (mx == -std::numeric_limits<float>::infinity()) {
      for (std::size_t j = 0; j < s.cols; ++j) s(i, j) = 0;
      continue;
    }
    float sum = 0;
    for (std::size_t j = 0; j < s.cols; ++j) sum += (s(i, j) = std::exp(s(i, j) - mx));
    for (std::size_t j = 0; j < s.cols; ++j) s(i, j) /= sum;
  }
  return s;
}
}  // namespace ex
