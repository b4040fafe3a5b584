#pragma once
// Matrix products through OpenBLAS.
//
// Why not xt::linalg::dot: it allocates a fresh result on every call and copies transposed or
// non-contiguous operands first. Attention multiplies by a transpose (Q · Kᵀ) at every step, so we
// call BLAS's gemm (util/blas.hpp) with its transpose flags instead and write into a caller-owned buffer.
#include "core/matrix.hpp"

namespace attnlab::core {

enum class Trans { No, Yes };

// C = alpha · op(A) · op(B) + beta · C, where op(X) is X or Xᵀ.
// Shapes: op(A) is r × k, op(B) is k × c, C must already be r × c (it is not resized, so the
// caller can reuse buffers). Throws ShapeError when the inner or outer sizes disagree.
void gemm(const Matrix& a, Trans ta, const Matrix& b, Trans tb, Matrix& c, float alpha = 1.0f,
          float beta = 0.0f);

// Convenience: returns op(A) · op(B) in a new matrix.
Matrix matmul(const Matrix& a, const Matrix& b, Trans ta = Trans::No, Trans tb = Trans::No);

}  // namespace attnlab::core
