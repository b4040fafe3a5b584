// Grader: split_heads and merge_heads. Reference: attnlab::core::split_heads / attnlab::core::merge_heads.
#include <doctest/doctest.h>

#include "core/attention.hpp"
#include "exercises/grading/grading.hpp"

namespace ex {  // the learner's functions
std::vector<Matrix> split_heads(const Matrix& x, std::size_t h);
Matrix merge_heads(const std::vector<Matrix>& heads);
}  // namespace ex

namespace {
using namespace attnlab::grading;

void check_split(const std::string& what, const ex::Matrix& x, std::size_t h) {
  InputGuard guard;
  guard.add("x", x);
  const std::vector<ex::Matrix> got = ex::split_heads(x, h);
  if (!guard.verify("split_heads")) return;
  const std::vector<attnlab::core::Matrix> want = attnlab::core::split_heads(to_core(x), h);
  if (got.size() != h) {
    fail(what + ": split_heads returned " + std::to_string(got.size()) + " heads, expected h = " +
               std::to_string(h) + ".");
    return;
  }
  for (std::size_t head = 0; head < h; ++head) {
    if (!expect_match(what + ", head " + std::to_string(head), got[head], to_ex(want[head]),
                      {{&mistakes::heads_interleaved, head_columns(x, head, x.cols / h, h, true)},
                       {&mistakes::heads_wrong_order, head_columns(x, h - 1 - head, x.cols / h, h, false)}}))
      return;
  }
}

void check_merge(const std::string& what, const std::vector<ex::Matrix>& heads) {
  InputGuard guard;
  for (const auto& m : heads) guard.add("heads", m);
  const ex::Matrix got = ex::merge_heads(heads);
  if (!guard.verify("merge_heads")) return;
  std::vector<attnlab::core::Matrix> core;
  for (const auto& m : heads) core.push_back(to_core(m));
  const ex::Matrix want = to_ex(attnlab::core::merge_heads(core));
  // The wrong ways: reversed order, or writing head i's column t to column i + t·h.
  ex::Matrix reversed(want.rows, want.cols), interleaved(want.rows, want.cols);
  const std::size_t h = heads.size(), d = heads[0].cols;
  for (std::size_t head = 0; head < h; ++head)
    for (std::size_t i = 0; i < want.rows; ++i)
      for (std::size_t t = 0; t < d; ++t) {
        reversed(i, (h - 1 - head) * d + t) = heads[head](i, t);
        interleaved(i, head + t * h) = heads[head](i, t);
      }
  expect_match(what, got, want,
               {{&mistakes::heads_wrong_order, reversed}, {&mistakes::heads_interleaved, interleaved}});
}
}  // namespace

TEST_CASE("split 2 × 6 into three heads of width 2") {
  // Columns are numbered so a wrong mapping is easy to see: head 1 must hold columns 2 and 3.
  check_split("split_heads of [[0 1 2 3 4 5], [10 11 12 13 14 15]] with h = 3",
              from_rows({{0, 1, 2, 3, 4, 5}, {10, 11, 12, 13, 14, 15}}), 3);
}

TEST_CASE("split with other shapes: h = 2, h = 4, h = 1, n = 1") {
  Rng rng(51);
  check_split("split_heads of a random 3 × 8 matrix with h = 2", rng.matrix(3, 8), 2);
  check_split("split_heads of a random 2 × 12 matrix with h = 4", rng.matrix(2, 12), 4);
  check_split("split_heads of a random 4 × 5 matrix with h = 1", rng.matrix(4, 5), 1);
  check_split("split_heads of a random 1 × 6 matrix with h = 3", rng.matrix(1, 6), 3);
}

TEST_CASE("merge three heads back in order") {
  check_merge("merge_heads of three 2 × 2 heads",
              {from_rows({{0, 1}, {10, 11}}), from_rows({{2, 3}, {12, 13}}), from_rows({{4, 5}, {14, 15}})});
  Rng rng(52);
  check_merge("merge_heads of four random 3 × 3 heads",
              {rng.matrix(3, 3), rng.matrix(3, 3), rng.matrix(3, 3), rng.matrix(3, 3)});
  // Heads that are not square: rows and columns swapped matched every square case (the ninth
  // adversarial pass).
  check_merge("merge_heads of two 2 × 4 heads", {rng.matrix(2, 4), rng.matrix(2, 4)});
  check_merge("merge_heads of three 5 × 2 heads", {rng.matrix(5, 2), rng.matrix(5, 2), rng.matrix(5, 2)});
}

TEST_CASE("merge_heads(split_heads(x, h)) gives back x") {
  Rng rng(53);
  const ex::Matrix x = rng.matrix(3, 6);
  const ex::Matrix back = ex::merge_heads(ex::split_heads(x, 2));
  expect_match("merge_heads(split_heads(x, 2)) for a random 3 × 6 x", back, x);
}
