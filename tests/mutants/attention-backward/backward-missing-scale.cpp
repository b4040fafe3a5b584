// Mutant: forgets the 1/√d_k factor in dQ and dK.
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

AttentionGrads attention_backward(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& d_out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(q.cols));
  // Forward again: P = softmax(Q·Kᵀ·scale), stable.
  Matrix p = matmul(q, transpose(k));
  for (std::size_t i = 0; i < p.rows; ++i) {
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < p.cols; ++j) mx = std::max(mx, p(i, j) *= scale);
    double sum = 0.0;
    for (std::size_t j = 0; j < p.cols; ++j) sum += (p(i, j) = std::exp(p(i, j) - mx));
    for (std::size_t j = 0; j < p.cols; ++j) p(i, j) = static_cast<float>(p(i, j) / sum);
  }
  AttentionGrads g;
  // O = P·V, so dV = Pᵀ·dO (m × d_v) and dP = dO·Vᵀ (n × m).
  g.d_v = matmul(transpose(p), d_out);
  const Matrix dp = matmul(d_out, transpose(v));
  // Softmax backward, row by row: dS_ij = P_ij · (dP_ij − Σ_k P_ik dP_ik).
  Matrix ds(p.rows, p.cols);
  for (std::size_t i = 0; i < p.rows; ++i) {
    double dot = 0.0;
    for (std::size_t j = 0; j < p.cols; ++j) dot += p(i, j) * dp(i, j);
    for (std::size_t j = 0; j < p.cols; ++j) ds(i, j) = static_cast<float>(p(i, j) * (dp(i, j) - dot));
  }
  // S = Q·Kᵀ·scale, so dQ = dS·K·scale and dK = dSᵀ·Q·scale.
  g.d_q = matmul(ds, k);
  g.d_k = matmul(transpose(ds), q);
  return g;
}

}  // namespace ex
