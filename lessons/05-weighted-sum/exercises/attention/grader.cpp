// Grader: scaled dot-product attention. Reference: attnlab::core::scaled_dot_product_attention.
#include <doctest/doctest.h>

#include "core/attention.hpp"
#include "exercises/grading/grading.hpp"

namespace ex {
Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v);  // the learner's function
}

namespace {
using namespace attnlab::grading;

void check_attention(const std::string& what, const ex::Matrix& q, const ex::Matrix& k, const ex::Matrix& v,
                     bool large = false) {
  InputGuard guard;
  guard.add("q", q).add("k", k).add("v", v);
  const ex::Matrix got = ex::attention(q, k, v);
  if (!guard.verify("attention")) return;
  const ex::Matrix want = to_ex(attnlab::core::scaled_dot_product_attention(to_core(q), to_core(k), to_core(v)));
  std::vector<Candidate> wrong;
  auto add = [&](const Mistake& m, Variant var) {
    if (auto r = attention_variant(q, k, v, var)) wrong.push_back({&m, r->output});
  };
  add(mistakes::no_scaling, {.scale = Scale::None});
  add(mistakes::scale_by_dk, {.scale = Scale::Dk});
  add(mistakes::softmax_wrong_axis, {.axis = Axis::Cols});
  add(mistakes::q_times_k, {.transpose_k = false});
  add(mistakes::q_times_k, {.scale = Scale::None, .transpose_k = false});
  expect_match(what, got, want, wrong, large ? &mistakes::unstable_softmax : nullptr);
}
}  // namespace

TEST_CASE("a hand-made case: two queries, three keys") {
  // Query 0 matches key 0 best, query 1 matches key 2; d_k = 2, so the scores are divided by √2.
  check_attention("attention with q 2 × 2, k 3 × 2, v 3 × 2", from_rows({{2, 0}, {0, 2}}),
                  from_rows({{1, 0}, {0.5f, 0.5f}, {0, 1}}), from_rows({{1, 0}, {0, 1}, {5, 5}}));
}

TEST_CASE("n ≠ m and d_k ≠ d_v") {
  Rng rng(21);
  check_attention("attention with q 3 × 4, k 5 × 4, v 5 × 2", rng.matrix(3, 4, 1.5f), rng.matrix(5, 4, 1.5f),
                  rng.matrix(5, 2));
  check_attention("attention with q 6 × 3, k 2 × 3, v 2 × 5", rng.matrix(6, 3, 1.5f), rng.matrix(2, 3, 1.5f),
                  rng.matrix(2, 5));
}

TEST_CASE("square shapes (where Q·K and Q·Kᵀ both exist)") {
  Rng rng(22);
  check_attention("attention with q, k 4 × 4 and v 4 × 3", rng.matrix(4, 4, 1.5f), rng.matrix(4, 4, 1.5f),
                  rng.matrix(4, 3));
}

TEST_CASE("one query (n = 1)") {
  Rng rng(23);
  check_attention("attention with q 1 × 8, k 4 × 8, v 4 × 3", rng.matrix(1, 8, 1.5f), rng.matrix(4, 8, 1.5f),
                  rng.matrix(4, 3));
}

TEST_CASE("ties: identical keys give the average of the values") {
  check_attention("attention with three identical keys", from_rows({{1, 2}, {-1, 0}}),
                  from_rows({{1, 1}, {1, 1}, {1, 1}}), from_rows({{3, 0}, {0, 3}, {3, 3}}));
}

TEST_CASE("every score of a row far below zero stays finite") {
  // Scores near −140 and −130: a running maximum that starts at 0 instead of −inf (or at the first
  // score of another row) leaves exp() at 0 for every key and divides 0 by 0 (the ninth adversarial
  // pass passed such a solution, since every random large-score row had a positive score).
  check_attention("attention with every score far below zero", from_rows({{-10, -10}, {-9, -11}}),
                  from_rows({{10, 10}, {9, 9}, {11, 8}}), from_rows({{1, 0}, {0, 1}, {2, 2}}), true);
  // A row whose scores are far below the row before it: a maximum kept from earlier rows (declared
  // outside the row loop) leaves it 0 / 0 (the tenth adversarial pass).
  check_attention("attention with a row far below the row before it", from_rows({{10, 10}, {-10, -10}}),
                  from_rows({{10, 10}, {9, 9}, {11, 8}}), from_rows({{1, 0}, {0, 1}, {2, 2}}), true);
}

TEST_CASE("large scores stay finite") {
  Rng rng(24);
  check_attention("attention with scores in the thousands", rng.matrix(3, 4, 40.0f), rng.matrix(5, 4, 40.0f),
                  rng.matrix(5, 2), true);
}
