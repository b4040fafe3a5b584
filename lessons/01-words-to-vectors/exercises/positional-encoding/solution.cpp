// Reference solution: interleaved sines and cosines, as in the paper.
#include <cmath>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix positional_encoding(std::size_t n_positions, std::size_t d_model) {
  Matrix pe(n_positions, d_model);
  for (std::size_t pos = 0; pos < n_positions; ++pos) {
    for (std::size_t col = 0; col < d_model; col += 2) {
      // col = 2i: the pair (2i, 2i + 1) shares one frequency, 1 / 10000^(2i / d_model).
      const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(col) / d_model);
      pe(pos, col) = static_cast<float>(std::sin(angle));
      if (col + 1 < d_model) pe(pos, col + 1) = static_cast<float>(std::cos(angle));
    }
  }
  return pe;
}

}  // namespace ex
