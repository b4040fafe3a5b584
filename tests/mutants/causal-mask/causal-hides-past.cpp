// Mutant: the wrong triangle. Hides the keys before each query (j < i) and keeps the later ones; a row
// with no key left (more queries than keys) gets zero weights, as a careful learner would give it.
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix causal_attention_weights(const Matrix& s) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  Matrix w = s;
  for (std::size_t i = 0; i < w.rows; ++i) {
    for (std::size_t j = 0; j < i && j < w.cols; ++j) w(i, j) = neg_inf;
    float mx = neg_inf;
    for (std::size_t j = 0; j < w.cols; ++j) mx = std::max(mx, w(i, j));
    if (mx == neg_inf) {
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
