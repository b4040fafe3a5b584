#include "core/blas.hpp"

#include "util/blas.hpp"
#include "util/error.hpp"

namespace attnlab::core {

void gemm(const Matrix& a, Trans ta, const Matrix& b, Trans tb, Matrix& c, float alpha, float beta) {
  const std::size_t r = ta == Trans::No ? rows(a) : cols(a);
  const std::size_t k = ta == Trans::No ? cols(a) : rows(a);
  const std::size_t kb = tb == Trans::No ? rows(b) : cols(b);
  const std::size_t cc = tb == Trans::No ? cols(b) : rows(b);
  if (k != kb) {
    throw ShapeError("gemm: inner sizes differ: op(A) is " + shape_str(r, k) + ", op(B) is " +
                     shape_str(kb, cc));
  }
  if (rows(c) != r || cols(c) != cc) {
    throw ShapeError("gemm: result is " + shape_str(c) + ", expected " + shape_str(r, cc));
  }
  if (r == 0 || cc == 0) return;
  if (k == 0) {  // empty inner dimension: the product is all zeros (BLAS would only scale C)
    if (beta == 0.0f) c.fill(0.0f); else c *= beta;
    return;
  }
  // Row-major leading dimensions are the stored column counts, whatever the transpose flag.
  blas::gemm(ta == Trans::Yes, tb == Trans::Yes, static_cast<int>(r), static_cast<int>(cc), static_cast<int>(k), alpha,
             a.data(), static_cast<int>(cols(a)), b.data(), static_cast<int>(cols(b)), beta, c.data(), static_cast<int>(cols(c)));
}

Matrix matmul(const Matrix& a, const Matrix& b, Trans ta, Trans tb) {
  const std::size_t r = ta == Trans::No ? rows(a) : cols(a);
  const std::size_t cc = tb == Trans::No ? cols(b) : rows(b);
  Matrix c = Matrix::from_shape({r, cc});
  gemm(a, ta, b, tb, c);
  return c;
}

}  // namespace attnlab::core
