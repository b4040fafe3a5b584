// Mutant: uses the pair index i instead of 2i in the exponent.
#include <cmath>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix positional_encoding(std::size_t n, std::size_t d) {
  Matrix pe(n, d);
  for (std::size_t pos = 0; pos < n; ++pos)
    for (std::size_t col = 0; col < d; col += 2) {
      const double a = double(pos) / std::pow(10000.0, double(col / 2) / double(d));
      pe(pos, col) = static_cast<float>(std::sin(a));
      if (col + 1 < d) pe(pos, col + 1) = static_cast<float>(std::cos(a));
    }
  return pe;
}
}  // namespace ex
