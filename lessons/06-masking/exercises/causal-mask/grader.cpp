// Grader: causal mask. Reference: attnlab::core::causal_mask + apply_mask + softmax_rows.
#include <doctest/doctest.h>

#include "core/attention.hpp"
#include "core/mask.hpp"
#include "exercises/grading/grading.hpp"

namespace ex {
Matrix causal_attention_weights(const Matrix& scaled_scores);  // the learner's function
}

namespace {
using namespace attnlab::grading;

MaskBits causal_bits(std::size_t n, std::size_t m, long offset) {  // visible iff j ≤ i + offset
  MaskBits b(n, std::vector<std::uint8_t>(m, 0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) b[i][j] = static_cast<long>(j) <= static_cast<long>(i) + offset;
  return b;
}

ex::Matrix run(const ex::Matrix& s) {
  InputGuard guard;
  guard.add("scaled_scores", s);
  ex::Matrix got = ex::causal_attention_weights(s);
  guard.verify("causal_attention_weights");
  return got;
}

void check_causal(const std::string& what, const ex::Matrix& s, bool large = false) {
  const ex::Matrix got = run(s);
  const attnlab::core::Matrix core = to_core(s);
  const ex::Matrix want =
      to_ex(attnlab::core::softmax_rows(attnlab::core::apply_mask(core, attnlab::core::causal_mask(s.rows, s.cols))));
  const MaskBits right = causal_bits(s.rows, s.cols, 0);
  const MaskBits hides_diag = causal_bits(s.rows, s.cols, -1), leaks = causal_bits(s.rows, s.cols, 1);
  MaskBits past(s.rows, std::vector<std::uint8_t>(s.cols, 0));  // the wrong triangle: visible iff j ≥ i
  for (std::size_t i = 0; i < s.rows; ++i)
    for (std::size_t j = 0; j < s.cols; ++j) past[i][j] = j >= i;
  expect_match(what, got, want,
               {{&mistakes::mask_after_softmax, masked_softmax(s, right, MaskMode::AfterSoftmax)},
                {&mistakes::mask_zero_fill, masked_softmax(s, right, MaskMode::BeforeSoftmaxZero)},
                {&mistakes::causal_hides_diagonal, masked_softmax(s, hides_diag)},
                {&mistakes::causal_hides_diagonal, masked_softmax(s, hides_diag, MaskMode::BeforeSoftmaxNegInf, true)},
                {&mistakes::causal_hides_diagonal, masked_softmax(s, hides_diag, MaskMode::AfterSoftmax)},
                {&mistakes::causal_leaks_next, masked_softmax(s, leaks)},
                {&mistakes::causal_leaks_next, masked_softmax(s, leaks, MaskMode::AfterSoftmax)},
                {&mistakes::causal_hides_past, masked_softmax(s, past)},
                {&mistakes::causal_hides_past, masked_softmax(s, past, MaskMode::AfterSoftmax)},
                {&mistakes::softmax_wrong_axis,
                 masked_softmax(s, right, MaskMode::BeforeSoftmaxNegInf, false, Axis::Cols)}},
               large ? &mistakes::unstable_softmax : nullptr);
}
}  // namespace

TEST_CASE("a 3 × 3 decoder: row 0 sees key 0, row 2 sees all keys") {
  check_causal("causal weights of [[1, 2, 3], [0.5, -1, 2], [2, 0, 1]]",
               from_rows({{1, 2, 3}, {0.5f, -1, 2}, {2, 0, 1}}));
}

TEST_CASE("random square scores, n = 5") {
  Rng rng(31);
  check_causal("causal weights of random 5 × 5 scores", rng.matrix(5, 5, 2.0f));
}

TEST_CASE("one token (n = 1) and n ≠ m") {
  Rng rng(32);
  check_causal("causal weights of a 1 × 1 score", from_rows({{0.7f}}));
  check_causal("causal weights of random 3 × 5 scores (key j visible iff j ≤ i)", rng.matrix(3, 5, 2.0f));
  // More queries than keys: rows 3 and 4 see every key (a loop over keys 0..i only ran past the
  // row's end here: the eighth adversarial pass).
  check_causal("causal weights of random 5 × 3 scores (key j visible iff j ≤ i)", rng.matrix(5, 3, 2.0f));
}

TEST_CASE("the mask depends only on positions, not on score values") {
  // Same shape, different values (including exact zeros and negatives below the diagonal): the set of
  // zero weights must be the same, {j > i}, for both.
  Rng rng(33);
  ex::Matrix a = rng.matrix(4, 4, 1.0f), b = a;
  b(1, 0) = 0.0f;
  b(2, 1) = -2.5f;
  b(3, 3) = 0.0f;
  b(0, 2) = 1.5f;
  const ex::Matrix wa = run(a), wb = run(b);
  if (wa.data.size() == 16 && wb.data.size() == 16 && zero_pattern(wa) != zero_pattern(wb)) {
    report_mistake(mistakes::mask_from_scores, "causal weights of two 4 × 4 score matrices");
    return;
  }
  check_causal("causal weights with zero and negative scores", b);
}

TEST_CASE("hidden keys get no weight even when every visible score is below any finite fill value") {
  // A fill of −100 or −1e9 passes on ordinary scores (exp underflows to 0) but is not a mask: here the
  // visible scores are lower still, so a finite fill takes all the weight.
  check_causal("causal weights of scores near -1e35",
               from_rows({{-3e35f, -1e35f, -2e35f}, {-2e35f, -3e35f, -1e35f}, {-1e35f, -2e35f, -3e35f}}));
}

TEST_CASE("a row far below the row before it") {
  // Row 0's only visible score is 1000, the later rows' are near 0: a maximum kept from earlier rows
  // (declared outside the row loop) leaves them inexact or 0 / 0 (the tenth adversarial pass).
  check_causal("causal weights of [[1000, 0, 0], [0, 1, 0], [-5, 0, 5]]", from_rows({{1000, 0, 0}, {0, 1, 0}, {-5, 0, 5}}), true);
}

TEST_CASE("large scores stay finite") {
  check_causal("causal weights of scores near 1000", from_rows({{1000, 5, 2}, {990, 1000, 7}, {-1000, 980, 1000}}),
               true);
}
