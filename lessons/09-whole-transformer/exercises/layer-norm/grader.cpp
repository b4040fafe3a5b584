// Grader: layer normalisation. Reference: the definition, computed here in double.
#include <doctest/doctest.h>

#include <cmath>

#include "exercises/grading/grading.hpp"

namespace ex {  // the learner's function
Matrix layer_norm(const Matrix& x, const std::vector<float>& gamma, const std::vector<float>& beta, float eps);
}

namespace {
using namespace attnlab::grading;

struct LnVariant {
  bool eps_outside = false, over_columns = false, unbiased = false, no_affine = false;
};

ex::Matrix ln_variant(const ex::Matrix& x, const std::vector<float>& g, const std::vector<float>& b, float eps,
                      LnVariant v) {
  ex::Matrix y(x.rows, x.cols);
  const std::size_t lines = v.over_columns ? x.cols : x.rows, len = v.over_columns ? x.rows : x.cols;
  auto at = [&](std::size_t line, std::size_t k) { return v.over_columns ? x(k, line) : x(line, k); };
  for (std::size_t line = 0; line < lines; ++line) {
    double mean = 0, var = 0;
    for (std::size_t k = 0; k < len; ++k) mean += at(line, k);
    mean /= double(len);
    for (std::size_t k = 0; k < len; ++k) var += (at(line, k) - mean) * (at(line, k) - mean);
    var /= v.unbiased ? double(len > 1 ? len - 1 : 1) : double(len);
    const double denom = v.eps_outside ? std::sqrt(var) + eps : std::sqrt(var + eps);
    for (std::size_t k = 0; k < len; ++k) {
      const std::size_t i = v.over_columns ? k : line, j = v.over_columns ? line : k;
      const double xhat = (at(line, k) - mean) / denom;
      y(i, j) = static_cast<float>(v.no_affine ? xhat : g[j] * xhat + b[j]);
    }
  }
  return y;
}

void check_ln(const std::string& what, const ex::Matrix& x, const std::vector<float>& g, const std::vector<float>& b,
              float eps) {
  InputGuard guard;
  guard.add("x", x).add("gamma", g).add("beta", b);
  const ex::Matrix got = ex::layer_norm(x, g, b, eps);
  if (!guard.verify("layer_norm")) return;
  expect_match(what, got, ln_variant(x, g, b, eps, {}),
               {{&mistakes::layernorm_eps_outside, ln_variant(x, g, b, eps, {.eps_outside = true})},
                {&mistakes::layernorm_wrong_axis, ln_variant(x, g, b, eps, {.over_columns = true})},
                {&mistakes::layernorm_biased_variance, ln_variant(x, g, b, eps, {.unbiased = true})},
                {&mistakes::layernorm_no_affine, ln_variant(x, g, b, eps, {.no_affine = true})}},
               nullptr, 2e-4);
}
}  // namespace

TEST_CASE("a hand-made row: [1, 2, 3, 4] has mean 2.5 and variance 1.25") {
  check_ln("layer_norm of [[1, 2, 3, 4], [2, 0, 2, 0]] with γ = 1, β = 0", from_rows({{1, 2, 3, 4}, {2, 0, 2, 0}}),
           {1, 1, 1, 1}, {0, 0, 0, 0}, 1e-5f);
}

TEST_CASE("random tokens with γ and β") {
  Rng rng(81);
  check_ln("layer_norm of random 4 × 6 x", rng.matrix(4, 6, 3.0f), rng.vector(6, 2.0f), rng.vector(6, 1.0f), 1e-5f);
  check_ln("layer_norm of random 3 × 5 x", rng.matrix(3, 5, 3.0f), rng.vector(5, 2.0f), rng.vector(5, 1.0f), 1e-5f);
}

TEST_CASE("rows with tiny variance: where ε sits matters") {
  // Variance about 1e-4 with ε = 1e-3: √(var + ε) ≈ 0.0332 but √var + ε ≈ 0.011.
  check_ln("layer_norm of nearly constant rows, ε = 1e-3", from_rows({{1.00f, 1.01f, 0.99f, 1.02f}, {-3, -3.02f, -2.99f, -3.0f}}),
           {1.5f, 1, 0.5f, 2}, {0.1f, 0, -0.1f, 0.2f}, 1e-3f);
}

TEST_CASE("rows far from zero: the variance from centred values") {
  // 10000 + [0, 1, 2, 3] normalises exactly like [0, 1, 2, 3]. The variance as E[x²] − mean² in float
  // subtracts two numbers near 10^8 and keeps mostly rounding error (the eleventh adversarial pass
  // passed such a solution): compute the mean first, then the mean of (x − mean)².
  check_ln("layer_norm of rows near 10000", from_rows({{10000, 10001, 10002, 10003}, {-5000, -5002, -5001, -5003}}),
           {1, 1, 1, 1}, {0, 0, 0, 0}, 1e-5f);
}

TEST_CASE("one token (n = 1) and a constant row (gives β)") {
  Rng rng(82);
  check_ln("layer_norm of a single random token", rng.matrix(1, 8, 2.0f), rng.vector(8, 2.0f), rng.vector(8), 1e-5f);
  check_ln("layer_norm of a constant row", from_rows({{4, 4, 4}, {1, 2, 3}}), {2, 3, 4}, {0.5f, -0.5f, 1}, 1e-5f);
}
