// Mutant: sines in the first half of the columns, cosines in the second half.
#include <cmath>

#include "attnlab/exercise.hpp"

namespace ex {
Matrix positional_encoding(std::size_t n, std::size_t d) {
  Matrix pe(n, d);
  const std::size_t half = (d + 1) / 2;
  for (std::size_t pos = 0; pos < n; ++pos)
    for (std::size_t k = 0; k < half; ++k) {
      const double a = double(pos) / std::pow(10000.0, double(2 * k) / double(d));
      pe(pos, k) = static_cast<float>(std::sin(a));
      if (half + k < d) pe(pos, half + k) = static_cast<float>(std::cos(a));
    }
  return pe;
}
}  // namespace ex
