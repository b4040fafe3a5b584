// Reference solution: contiguous column blocks, concatenated in head order.
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {

std::vector<Matrix> split_heads(const Matrix& x, std::size_t h) {
  const std::size_t d = x.cols / h;
  std::vector<Matrix> heads(h, Matrix(x.rows, d));
  for (std::size_t head = 0; head < h; ++head)
    for (std::size_t i = 0; i < x.rows; ++i)
      for (std::size_t t = 0; t < d; ++t) heads[head](i, t) = x(i, head * d + t);  // block, not stride
  return heads;
}

Matrix merge_heads(const std::vector<Matrix>& heads) {
  if (heads.empty()) return Matrix();
  const std::size_t n = heads[0].rows, d = heads[0].cols;
  Matrix out(n, heads.size() * d);
  for (std::size_t head = 0; head < heads.size(); ++head)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t t = 0; t < d; ++t) out(i, head * d + t) = heads[head](i, t);
  return out;
}

}  // namespace ex
