// Reference solution: stable softmax over each row.
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix softmax_rows(const Matrix& scores) {
  Matrix weights(scores.rows, scores.cols);
  for (std::size_t i = 0; i < scores.rows; ++i) {
    // The row maximum: subtracting it changes nothing mathematically (the factor exp(-max) cancels
    // between numerator and denominator) but keeps every exponent ≤ 0, so exp() cannot overflow.
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < scores.cols; ++j) mx = std::max(mx, scores(i, j));
    if (mx == -std::numeric_limits<float>::infinity()) continue;  // every key hidden: leave zeros

    double sum = 0.0;
    for (std::size_t j = 0; j < scores.cols; ++j) {
      weights(i, j) = std::exp(scores(i, j) - mx);  // exp(-inf) = 0 for hidden keys
      sum += weights(i, j);
    }
    for (std::size_t j = 0; j < scores.cols; ++j) weights(i, j) = static_cast<float>(weights(i, j) / sum);
  }
  return weights;
}

}  // namespace ex
