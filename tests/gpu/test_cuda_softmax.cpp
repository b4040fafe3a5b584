// GPU tests for the CUDA row softmax: it must agree with the CPU path, softmax_rows(apply_mask(s,
// mask)), on random inputs of awkward shapes (1 × 1, a single warp, many blocks' worth of keys,
// lengths that are not multiples of the block size), on huge scores, and on masks with fully-masked
// rows.
//
// Without a CUDA device the program prints "skipped: no CUDA device (<reason>)" and exits with 77,
// which tests/gpu/CMakeLists.txt declares as ctest's SKIP_RETURN_CODE.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/softmax.hpp"
#include "device_gate.hpp"
#include "core/attention.hpp"
#include "util/error.hpp"

namespace {

using attnlab::core::Mask;
using attnlab::core::Matrix;

// Fresh inputs on every run, so repeated runs cover more cases; the seed is part of every failure
// message, so a failing case can be replayed.
std::uint32_t fresh_seed() {
  static const std::uint32_t seed = std::random_device{}();
  return seed;
}

Matrix random_scores(std::mt19937& rng, std::size_t n, std::size_t m, float scale, float offset) {
  std::normal_distribution<float> dist(0.0f, scale);
  Matrix s = Matrix::from_shape({n, m});
  for (auto& v : s) v = offset + dist(rng);
  return s;
}

// Each entry visible with probability p_visible; then about a quarter of the rows (at least one)
// are hidden completely, to exercise the fully-masked path.
Mask random_mask(std::mt19937& rng, std::size_t n, std::size_t m, double p_visible) {
  std::bernoulli_distribution visible(p_visible);
  Mask mask = Mask::from_shape({n, m});
  for (auto& v : mask) v = visible(rng) ? 1 : 0;
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  const std::size_t hidden_rows = std::max<std::size_t>(1, n / 4);
  for (std::size_t k = 0; k < hidden_rows; ++k) {
    const std::size_t i = pick(rng);
    for (std::size_t j = 0; j < m; ++j) mask(i, j) = 0;
  }
  return mask;
}

std::string describe(const std::vector<std::size_t>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

// Runs both paths and compares element by element. The GPU output buffer is poisoned with NaN
// first, so an element the kernel never wrote shows up as a NaN here.
//
// Error measure: |gpu − cpu| / max(|cpu|, FLT_MIN), i.e. the plain relative error for every normal
// float. The floor only matters for weights below FLT_MIN (denormals, where a single ulp is already
// a large fraction of the value); there it turns into an absolute bound of 1e-5 · FLT_MIN ≈ 1e-43.
void expect_matches_cpu(const Matrix& scores, const Mask* mask) {
  std::vector<std::size_t> cpu_rows, gpu_rows;
  const Matrix cpu =
      attnlab::core::softmax_rows(mask ? attnlab::core::apply_mask(scores, *mask) : scores, &cpu_rows);
  const Matrix gpu =
      attnlab::cuda::detail::softmax_rows(scores, mask, &gpu_rows, /*poison_output=*/true);

  REQUIRE(attnlab::core::rows(gpu) == attnlab::core::rows(cpu));
  REQUIRE(attnlab::core::cols(gpu) == attnlab::core::cols(cpu));
  INFO("fully-masked rows: cpu " << describe(cpu_rows) << ", gpu " << describe(gpu_rows));
  CHECK(gpu_rows == cpu_rows);

  const std::size_t n = attnlab::core::rows(cpu), m = attnlab::core::cols(cpu);
  std::size_t nan_count = 0, hidden_nonzero = 0;
  double worst = 0.0;
  std::size_t worst_i = 0, worst_j = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < m; ++j) {
      const float g = gpu(i, j), c = cpu(i, j);
      if (std::isnan(g)) {
        ++nan_count;
        continue;
      }
      if (mask && (*mask)(i, j) == 0 && g != 0.0f) ++hidden_nonzero;
      const double err =
          std::fabs(double(g) - double(c)) / std::max(std::fabs(double(c)), double(FLT_MIN));
      if (err > worst) {
        worst = err;
        worst_i = i;
        worst_j = j;
      }
    }
  }
  INFO("worst relative error " << worst << " at (" << worst_i << ", " << worst_j << ")");
  CHECK(nan_count == 0);       // every element written, nothing NaN
  CHECK(hidden_nonzero == 0);  // hidden keys get exactly 0
  CHECK(worst < 1e-5);

  // Independently of the CPU path: the reported rows are all zeros, every other row sums to 1.
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < m; ++j) sum += gpu(i, j);
    const bool reported = std::find(gpu_rows.begin(), gpu_rows.end(), i) != gpu_rows.end();
    INFO("row " << i << " sums to " << sum);
    CHECK(std::fabs(sum - (reported ? 0.0 : 1.0)) < 1e-5);
  }
}

struct Shape {
  std::size_t n, m;
};

// 1 × 1: the smallest block; 3 × 7: one partly idle warp; 64 × 64: two warps per row; 33 × 1000:
// a full block striding over a row; 5 × 4097: one past a multiple of the block size.
const Shape kShapes[] = {{1, 1}, {3, 7}, {64, 64}, {33, 1000}, {5, 4097}};

}  // namespace

TEST_CASE("CUDA softmax matches the CPU softmax on random scores, without a mask") {
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  for (const Shape& sh : kShapes) {
    INFO("shape " << sh.n << " × " << sh.m);
    const Matrix s = random_scores(rng, sh.n, sh.m, 1.0f, 0.0f);
    expect_matches_cpu(s, nullptr);
  }
}

TEST_CASE("CUDA softmax matches the CPU softmax with random masks and fully-masked rows") {
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  for (const Shape& sh : kShapes) {
    for (double p_visible : {0.05, 0.5, 0.95}) {
      INFO("shape " << sh.n << " × " << sh.m << ", p_visible " << p_visible);
      const Matrix s = random_scores(rng, sh.n, sh.m, 2.0f, 0.0f);
      const Mask mask = random_mask(rng, sh.n, sh.m, p_visible);
      expect_matches_cpu(s, &mask);
    }
  }
}

TEST_CASE("CUDA softmax stays finite on large scores (~1e3)") {
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  for (const Shape& sh : kShapes) {
    INFO("shape " << sh.n << " × " << sh.m);
    // Spread ~1e3: exp(s) overflows float32 without the max subtraction, rows are nearly one-hot.
    const Matrix wide = random_scores(rng, sh.n, sh.m, 1000.0f, 0.0f);
    expect_matches_cpu(wide, nullptr);
    // Offset ~1e3 with a small spread: every exp(s) overflows, the weights are far from one-hot.
    const Matrix shifted = random_scores(rng, sh.n, sh.m, 1.0f, 1000.0f);
    expect_matches_cpu(shifted, nullptr);
    const Mask mask = random_mask(rng, sh.n, sh.m, 0.5);
    expect_matches_cpu(shifted, &mask);
  }
}

TEST_CASE("CUDA softmax edge cases agree with the CPU") {
  const float inf = std::numeric_limits<float>::infinity();

  SUBCASE("a 1 × 1 row whose only key is hidden is fully masked") {
    Matrix s = Matrix::from_shape({1, 1});
    s(0, 0) = 3.0f;
    Mask mask = Mask::from_shape({1, 1});
    mask(0, 0) = 0;
    expect_matches_cpu(s, &mask);
  }
  SUBCASE("visible scores of −inf count as hidden; a row of them is fully masked") {
    Matrix s = Matrix::from_shape({2, 40});
    for (auto& v : s) v = -inf;
    s(0, 17) = 1.0f;
    expect_matches_cpu(s, nullptr);
  }
  SUBCASE("a NaN behind the mask is never read") {
    Matrix s = Matrix::from_shape({2, 3});
    for (auto& v : s) v = 0.5f;
    s(1, 2) = std::numeric_limits<float>::quiet_NaN();
    Mask mask = Mask::from_shape({2, 3});
    for (auto& v : mask) v = 1;
    mask(1, 2) = 0;
    expect_matches_cpu(s, &mask);
  }
  SUBCASE("no keys at all: every row is reported, no launch") {
    const Matrix s = Matrix::from_shape({3, 0});
    expect_matches_cpu(s, nullptr);
  }
  SUBCASE("no queries") {
    const Matrix s = Matrix::from_shape({0, 5});
    expect_matches_cpu(s, nullptr);
  }
}

TEST_CASE("CUDA softmax rejects what the CPU rejects") {
  Matrix s = Matrix::from_shape({4, 50});
  for (auto& v : s) v = 0.0f;

  SUBCASE("a mask of the wrong shape") {
    const Mask mask = Mask::from_shape({4, 49});
    CHECK_THROWS_AS(attnlab::cuda::cuda_softmax_rows(s, &mask, nullptr), attnlab::ShapeError);
  }
  SUBCASE("+inf or NaN among the visible scores") {
    s(2, 31) = std::numeric_limits<float>::infinity();
    CHECK_THROWS_AS(attnlab::core::softmax_rows(s), attnlab::NumericError);
    CHECK_THROWS_AS(attnlab::cuda::cuda_softmax_rows(s, nullptr, nullptr), attnlab::NumericError);
    s(2, 31) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_AS(attnlab::cuda::cuda_softmax_rows(s, nullptr, nullptr), attnlab::NumericError);
  }
}

TEST_CASE("the public entry point gives the same bits as the poisoned test path") {
  // Same kernel, same launch shape, so the same reduction order: the results must be identical.
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  const Matrix s = random_scores(rng, 33, 1000, 3.0f, 0.0f);
  const Mask mask = random_mask(rng, 33, 1000, 0.5);
  std::vector<std::size_t> a_rows, b_rows;
  const Matrix a = attnlab::cuda::cuda_softmax_rows(s, &mask, &a_rows);
  const Matrix b = attnlab::cuda::detail::softmax_rows(s, &mask, &b_rows, /*poison_output=*/true);
  CHECK(a_rows == b_rows);
  const bool identical = (a == b);  // xtensor's == compares shape and every element
  CHECK(identical);
}

int main(int argc, char** argv) {
  std::string why;
  const int gate = attnlab::gputest::device_gate(&why);
  if (gate == 1) return 1;
  if (gate == 77) {
    std::cout << "skipped: no CUDA device (" << why << ")" << std::endl;
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
