#pragma once
// The one call into OpenBLAS's matrix product: row-major C = alpha · op(A) · op(B) + beta · C on raw
// pointers, where op(X) is X or Xᵀ and the leading dimensions are the stored row lengths. The lessons'
// Matrix products (core/blas.hpp, which checks shapes) and the CPU backend (backend/cpu/ops.hpp, which
// profiles) are both built on it. Header-only, so the exercise graders' library (core alone) links.
#include <cblas.h>

namespace attnlab::blas {

inline void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                 float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

inline void gemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
                 double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

}  // namespace attnlab::blas
