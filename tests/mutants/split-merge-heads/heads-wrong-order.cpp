// Mutant: splits correctly but concatenates the last head first.
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {
std::vector<Matrix> split_heads(const Matrix& x, std::size_t h) {
  const std::size_t d = x.cols / h;
  std::vector<Matrix> heads(h, Matrix(x.rows, d));
  for (std::size_t head = 0; head < h; ++head)
    for (std::size_t i = 0; i < x.rows; ++i)
      for (std::size_t t = 0; t < d; ++t) heads[head](i, t) = x(i, head * d + t);
  return heads;
}

Matrix merge_heads(const std::vector<Matrix>& heads) {
  const std::size_t h = heads.size(), d = heads[0].cols;
  Matrix out(heads[0].rows, h * d);
  for (std::size_t head = 0; head < h; ++head)
    for (std::size_t i = 0; i < out.rows; ++i)
      for (std::size_t t = 0; t < d; ++t) out(i, (h - 1 - head) * d + t) = heads[head](i, t);
  return out;
}
}  // namespace ex
