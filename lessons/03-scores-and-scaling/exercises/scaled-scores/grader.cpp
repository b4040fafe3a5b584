// Grader: scaled scores. Reference: attnlab::core::scale_scores(attnlab::core::attention_scores(q, k), d_k).
#include <doctest/doctest.h>

#include <cmath>

#include "core/attention.hpp"
#include "exercises/grading/grading.hpp"

namespace ex {
Matrix scaled_scores(const Matrix& q, const Matrix& k);  // the learner's function
}

namespace {
using namespace attnlab::grading;

// Q·Kᵀ (or Q·K when transpose is false and the shapes allow it) times `scale`.
std::optional<ex::Matrix> scores(const ex::Matrix& q, const ex::Matrix& k, bool transpose, double scale) {
  if (transpose ? k.cols != q.cols : k.rows != q.cols) return std::nullopt;
  const std::size_t m = transpose ? k.rows : k.cols;
  ex::Matrix s(q.rows, m);
  for (std::size_t i = 0; i < q.rows; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      double acc = 0;
      for (std::size_t t = 0; t < q.cols; ++t) acc += double(q(i, t)) * (transpose ? k(j, t) : k(t, j));
      s(i, j) = static_cast<float>(acc * scale);
    }
  return s;
}

void check_scores(const std::string& what, const ex::Matrix& q, const ex::Matrix& k) {
  InputGuard guard;
  guard.add("q", q).add("k", k);
  const ex::Matrix got = ex::scaled_scores(q, k);
  if (!guard.verify("scaled_scores")) return;
  const ex::Matrix want =
      to_ex(attnlab::core::scale_scores(attnlab::core::attention_scores(to_core(q), to_core(k)), q.cols));
  const double d = double(q.cols);
  std::vector<Candidate> wrong;
  auto add = [&](const Mistake& mk, bool transpose, double scale) {
    if (auto s = scores(q, k, transpose, scale)) wrong.push_back({&mk, *s});
  };
  add(mistakes::no_scaling, true, 1.0);
  add(mistakes::scale_by_dk, true, 1.0 / d);
  add(mistakes::q_times_k, false, 1.0 / std::sqrt(d));
  add(mistakes::q_times_k, false, 1.0);
  expect_match(what, got, want, wrong);
}
}  // namespace

TEST_CASE("a hand-made case: d_k = 4, so the dot products are halved") {
  // q_0 · k_0 = 1 + 0 + 1 + 0 = 2 → 2 / √4 = 1; q_1 · k_1 = 4 → 2.
  check_scores("scaled_scores with q 2 × 4, k 2 × 4", from_rows({{1, 0, 1, 0}, {1, 1, 1, 1}}),
               from_rows({{1, 1, 1, 1}, {1, 1, 1, 1}}));
}

TEST_CASE("n ≠ m: three queries, five keys") {
  Rng rng(111);
  check_scores("scaled_scores with q 3 × 4, k 5 × 4", rng.matrix(3, 4), rng.matrix(5, 4));
}

TEST_CASE("square shapes (where Q·K and Q·Kᵀ both exist)") {
  Rng rng(112);
  check_scores("scaled_scores with q, k 3 × 3", rng.matrix(3, 3), rng.matrix(3, 3));
}

TEST_CASE("one query (n = 1), one key (m = 1)") {
  Rng rng(113);
  check_scores("scaled_scores with q 1 × 9, k 4 × 9", rng.matrix(1, 9), rng.matrix(4, 9));
  check_scores("scaled_scores with q 3 × 2, k 1 × 2", rng.matrix(3, 2), rng.matrix(1, 2));
}
