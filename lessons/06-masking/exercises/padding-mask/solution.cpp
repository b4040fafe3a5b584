// Reference solution: key and query padding from the sequence length, then a stable row softmax that
// turns fully hidden rows into zeros.
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix padded_attention_weights(const Matrix& scaled_scores, std::size_t length) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  Matrix w = scaled_scores;
  for (std::size_t i = 0; i < w.rows; ++i) {
    for (std::size_t j = 0; j < w.cols; ++j)
      if (i >= length || j >= length) w(i, j) = neg_inf;  // the mask comes from positions only
    float mx = neg_inf;
    for (std::size_t j = 0; j < w.cols; ++j) mx = std::max(mx, w(i, j));
    if (mx == neg_inf) {  // a padding query: every key hidden, so the row is all zeros
      for (std::size_t j = 0; j < w.cols; ++j) w(i, j) = 0.0f;
      continue;
    }
    double sum = 0.0;
    for (std::size_t j = 0; j < w.cols; ++j) sum += (w(i, j) = std::exp(w(i, j) - mx));
    for (std::size_t j = 0; j < w.cols; ++j) w(i, j) = static_cast<float>(w(i, j) / sum);
  }
  return w;
}

}  // namespace ex
