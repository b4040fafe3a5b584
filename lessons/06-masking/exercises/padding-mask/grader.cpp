// Grader: padding mask. Reference: attnlab::core::padding_masks + apply_mask + softmax_rows.
#include <doctest/doctest.h>

#include "core/attention.hpp"
#include "core/mask.hpp"
#include "exercises/grading/grading.hpp"

namespace ex {
Matrix padded_attention_weights(const Matrix& scaled_scores, std::size_t length);  // the learner's function
}

namespace {
using namespace attnlab::grading;

MaskBits padding_bits(std::size_t t, std::size_t length, bool hide_query_rows) {
  MaskBits b(t, std::vector<std::uint8_t>(t, 0));
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = 0; j < t; ++j) b[i][j] = j < length && (i < length || !hide_query_rows);
  return b;
}

ex::Matrix run(const ex::Matrix& s, std::size_t length) {
  InputGuard guard;
  guard.add("scaled_scores", s);
  ex::Matrix got = ex::padded_attention_weights(s, length);
  guard.verify("padded_attention_weights");
  return got;
}

void check_padding(const std::string& what, const ex::Matrix& s, std::size_t length) {
  const ex::Matrix got = run(s, length);
  const auto masks = attnlab::core::padding_masks({length}, s.rows);
  const ex::Matrix want = to_ex(attnlab::core::softmax_rows(attnlab::core::apply_mask(to_core(s), masks[0])));
  const MaskBits right = padding_bits(s.rows, length, true), keys_only = padding_bits(s.rows, length, false);
  expect_match(what, got, want,
               {{&mistakes::fully_masked_nan, masked_softmax(s, right, MaskMode::BeforeSoftmaxNegInf, true)},
                {&mistakes::mask_after_softmax, masked_softmax(s, right, MaskMode::AfterSoftmax)},
                {&mistakes::mask_after_softmax, masked_softmax(s, keys_only, MaskMode::AfterSoftmax)},
                {&mistakes::mask_zero_fill, masked_softmax(s, right, MaskMode::BeforeSoftmaxZero)},
                {&mistakes::mask_zero_fill, masked_softmax(s, keys_only, MaskMode::BeforeSoftmaxZero)},
                {&mistakes::padding_query_rows, masked_softmax(s, keys_only)}});
}
}  // namespace

TEST_CASE("three real tokens padded to five") {
  Rng rng(41);
  check_padding("padding weights, length 3 of T = 5", rng.matrix(5, 5, 2.0f), 3);
}

TEST_CASE("no padding (length = T) and one real token (length = 1)") {
  Rng rng(42);
  check_padding("padding weights, length 4 of T = 4", rng.matrix(4, 4, 2.0f), 4);
  check_padding("padding weights, length 1 of T = 4", rng.matrix(4, 4, 2.0f), 1);
}

TEST_CASE("padding keys get no weight even when every real score is below any finite fill value") {
  check_padding("padding weights of scores near -1e35, length 2 of T = 3",
                from_rows({{-3e35f, -2e35f, -1e35f}, {-1e35f, -3e35f, -2e35f}, {-2e35f, -1e35f, -3e35f}}), 2);
}

TEST_CASE("everything is padding (length = 0): all zeros") {
  Rng rng(43);
  check_padding("padding weights, length 0 of T = 3", rng.matrix(3, 3, 2.0f), 0);
}

TEST_CASE("the mask depends only on the length, not on score values") {
  // Realistic scores first: padding tokens have zero embeddings, so their scores are 0. Then the same
  // shape with a real score of exactly 0 and non-zero padding scores. The hidden set must not move.
  Rng rng(44);
  const std::size_t length = 3;
  ex::Matrix a = rng.matrix(5, 5, 2.0f), b = rng.matrix(5, 5, 2.0f);
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j)
      if (i >= length || j >= length) a(i, j) = 0.0f;
  b(0, 1) = 0.0f;
  b(2, 2) = 0.0f;
  const ex::Matrix wa = run(a, length), wb = run(b, length);
  if (wa.data.size() == 25 && wb.data.size() == 25 && zero_pattern(wa) != zero_pattern(wb)) {
    report_mistake(mistakes::mask_from_scores, "padding weights of two 5 × 5 score matrices, length 3");
    return;
  }
  check_padding("padding weights with zero padding scores", a, length);
  check_padding("padding weights with a real score of 0", b, length);
}
