// Mutant: projects K and V from the decoder side x instead of the encoder memory.
#include <cmath>
#include <limits>
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {

namespace {
// Columns [first, first + width) of a.
Matrix column_block(const Matrix& a, std::size_t first, std::size_t width) {
  Matrix out(a.rows, width);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t t = 0; t < width; ++t) out(i, t) = a(i, first + t);
  return out;
}

// softmax(q·kᵀ/√d_k)·v for one head, with a stable row softmax.
Matrix one_head(const Matrix& q, const Matrix& k, const Matrix& v) {
  Matrix w = matmul(q, transpose(k));
  const float scale = 1.0f / std::sqrt(static_cast<float>(q.cols));  // this head's d_k
  for (std::size_t i = 0; i < w.rows; ++i) {
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < w.cols; ++j) mx = std::max(mx, w(i, j) *= scale);
    double sum = 0.0;
    for (std::size_t j = 0; j < w.cols; ++j) sum += (w(i, j) = std::exp(w(i, j) - mx));
    for (std::size_t j = 0; j < w.cols; ++j) w(i, j) = static_cast<float>(w(i, j) / sum);
  }
  return matmul(w, v);
}
}  // namespace

Matrix cross_attention(const Matrix& x, const Matrix& memory, const Matrix& w_q, const Matrix& w_k,
                       const Matrix& w_v, const Matrix& w_o, std::size_t h) {
  const Matrix q = matmul(x, w_q), k = matmul(x, w_k), v = matmul(x, w_v);
  const std::size_t d_k = w_q.cols / h, d_v = w_v.cols / h;
  Matrix concat(x.rows, h * d_v);
  for (std::size_t head = 0; head < h; ++head) {
    const Matrix out = one_head(column_block(q, head * d_k, d_k), column_block(k, head * d_k, d_k),
                                column_block(v, head * d_v, d_v));
    for (std::size_t i = 0; i < x.rows; ++i)
      for (std::size_t t = 0; t < d_v; ++t) concat(i, head * d_v + t) = out(i, t);  // head order
  }
  return matmul(concat, w_o);  // W_O mixes the heads back into d_model columns
}

}  // namespace ex
