// Reference solution: causal mask applied to the scores, then a stable row softmax.
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix causal_attention_weights(const Matrix& scaled_scores) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  Matrix w = scaled_scores;  // a copy: the caller keeps its scores
  for (std::size_t i = 0; i < w.rows; ++i) {
    // Mask before the softmax: -inf becomes exactly 0 after exp(), and the rest renormalise.
    for (std::size_t j = i + 1; j < w.cols; ++j) w(i, j) = neg_inf;
    float mx = neg_inf;
    for (std::size_t j = 0; j < w.cols; ++j) mx = std::max(mx, w(i, j));
    if (mx == neg_inf) continue;  // only possible when m = 0
    double sum = 0.0;
    for (std::size_t j = 0; j < w.cols; ++j) sum += (w(i, j) = std::exp(w(i, j) - mx));
    for (std::size_t j = 0; j < w.cols; ++j) w(i, j) = static_cast<float>(w(i, j) / sum);
  }
  return w;
}

}  // namespace ex
