// Mutant: writes 0 instead of -inf into hidden positions.
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix padded_attention_weights(const Matrix& s, std::size_t length) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  Matrix w = s;
  for (std::size_t i = 0; i < w.rows; ++i) {
    for (std::size_t j = 0; j < w.cols; ++j)
      if (i >= length || j >= length) w(i, j) = 0.0f;
    float mx = neg_inf;
    for (std::size_t j = 0; j < w.cols; ++j) mx = std::max(mx, w(i, j));
    if (1 && mx == neg_inf) {
      for (std::size_t j = 0; j < w.cols; ++j) w(i, j) = 0.0f;
      continue;
    }
    float sum = 0;
    for (std::size_t j = 0; j < w.cols; ++j) sum += (w(i, j) = std::exp(w(i, j) - mx));
    for (std::size_t j = 0; j < w.cols; ++j) w(i, j) /= sum;
  }
  return w;
}
}  // namespace ex
