// Exercise: layer normalisation                       (lesson 09-whole-transformer · easy · ~20 min)
//
// Every Transformer sub-layer is wrapped as LayerNorm(x + Sublayer(x)). Write layer_norm for x
// (n × d_model, one token per row), with per-feature gain gamma and bias beta (d_model values each):
//
//     μ_i  = (1/d) Σ_j x(i, j)                     the mean of row i (one token's features)
//     σ²_i = (1/d) Σ_j (x(i, j) − μ_i)²            its variance (divide by d, not d − 1)
//     y(i, j) = gamma[j] · (x(i, j) − μ_i) / √(σ²_i + eps) + beta[j]
//
// Return y (n × d_model). Leave x, gamma and beta unchanged: the residual connection needs x again.
//
// Check your work with:   attnlab check layer-norm        (hints: attnlab hint layer-norm)
#include <cmath>
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix layer_norm(const Matrix& x, const std::vector<float>& gamma, const std::vector<float>& beta, float eps) {
  // TODO: for each row: mean, variance, normalise, then scale by gamma[j] and shift by beta[j].
  return Matrix();
}

}  // namespace ex
