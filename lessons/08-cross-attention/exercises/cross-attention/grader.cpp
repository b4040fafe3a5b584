// Grader: cross-attention. Reference: attnlab::core::multi_head_attention_packed(x, memory, ...).
#include <doctest/doctest.h>

#include <cmath>

#include "core/attention.hpp"
#include "exercises/grading/grading.hpp"

namespace ex {  // the learner's function
Matrix cross_attention(const Matrix& x, const Matrix& memory, const Matrix& w_q, const Matrix& w_k,
                       const Matrix& w_v, const Matrix& w_o, std::size_t h);
}

namespace {
using namespace attnlab::grading;

void check_cross_of(const std::string& what, const ex::Matrix& x, const ex::Matrix& memory, const ex::Matrix& w_q,
                    const ex::Matrix& w_k, const ex::Matrix& w_v, const ex::Matrix& w_o, std::size_t h, bool large);

void check_cross(const std::string& what, std::uint32_t seed, std::size_t n, std::size_t m, std::size_t d_model,
                 std::size_t h, std::size_t d_k, std::size_t d_v, float scale = 1.0f) {
  Rng rng(seed);
  const ex::Matrix x = rng.matrix(n, d_model, scale), memory = rng.matrix(m, d_model, scale), w_q = rng.matrix(d_model, h * d_k),
                   w_k = rng.matrix(d_model, h * d_k), w_v = rng.matrix(d_model, h * d_v),
                   w_o = rng.matrix(h * d_v, d_model);
  check_cross_of(what, x, memory, w_q, w_k, w_v, w_o, h, scale > 1.0f);
}

void check_cross_of(const std::string& what, const ex::Matrix& x, const ex::Matrix& memory, const ex::Matrix& w_q,
                    const ex::Matrix& w_k, const ex::Matrix& w_v, const ex::Matrix& w_o, std::size_t h, bool large) {
  const std::size_t n = x.rows, m = memory.rows, d_model = x.cols;
  InputGuard guard;
  guard.add("x", x).add("memory", memory).add("w_q", w_q).add("w_k", w_k).add("w_v", w_v).add("w_o", w_o);
  const ex::Matrix got = ex::cross_attention(x, memory, w_q, w_k, w_v, w_o, h);
  if (!guard.verify("cross_attention")) return;
  const ex::Matrix want = to_ex(attnlab::core::multi_head_attention_packed(
      to_core(x), to_core(memory), to_core(w_q), to_core(w_k), to_core(w_v), to_core(w_o), h));
  if (got.rows == m && m != n && got.data.size() == got.rows * got.cols) {
    fail(what + ": the result has m = " + std::to_string(m) + " rows (one per memory token). Rows follow " +
         "the queries, which come from the decoder side x: expected " + want.shape() + ".");
    return;
  }
  std::vector<Candidate> wrong;
  auto add = [&](const Mistake& mk, const ex::Matrix& kv, MhaVariant var) {
    if (auto r = mha_variant(x, kv, w_q, w_k, w_v, w_o, h, var)) wrong.push_back({&mk, *r});
  };
  add(mistakes::cross_kv_from_decoder, x, {});
  add(mistakes::cross_kv_from_decoder, x, {.skip_wo = true});
  add(mistakes::missing_wo, memory, {.skip_wo = true});
  add(mistakes::no_scaling, memory, {.head = {.scale = Scale::None}});
  add(mistakes::scale_by_dmodel, memory, {.head = {.scale = Scale::Custom, .custom_scale = 1.0 / std::sqrt(double(d_model))}});
  add(mistakes::softmax_wrong_axis, memory, {.head = {.axis = Axis::Cols}});
  add(mistakes::heads_interleaved, memory, {.interleave_split = true});
  add(mistakes::heads_wrong_order, memory, {.reverse_concat = true});
  expect_match(what, got, want, wrong, large ? &mistakes::unstable_softmax : nullptr);
}
}  // namespace

TEST_CASE("three decoder tokens attend to five source tokens") {
  check_cross("cross-attention, n = 3, m = 5, d_model = 4, h = 2, d_k = d_v = 2", 71, 3, 5, 4, 2, 2, 2);
}

TEST_CASE("more decoder tokens than source tokens, d_k ≠ d_v") {
  check_cross("cross-attention, n = 6, m = 2, d_model = 6, h = 3, d_k = 2, d_v = 3", 72, 6, 2, 6, 3, 2, 3);
}

TEST_CASE("one decoder token (n = 1)") {
  check_cross("cross-attention, n = 1, m = 4, d_model = 4, h = 2, d_k = d_v = 2", 73, 1, 4, 4, 2, 2, 2);
}

TEST_CASE("one head, one source token (m = 1)") {
  check_cross("cross-attention, n = 3, m = 1, d_model = 4, h = 1, d_k = d_v = 4", 74, 3, 1, 4, 1, 4, 4);
}

TEST_CASE("large scores stay finite") {
  // Scores in the thousands: exp without subtracting the row's maximum overflows (the eighth pass).
  check_cross("cross-attention with scores in the thousands, n = 3, m = 4, d_model = 4, h = 2", 75, 3, 4, 4, 2, 2, 2, 30.0f);
}

TEST_CASE("h · d_k different from d_model") {
  // d_k = d_model / h passed every case above, where h · d_k = d_model (the ninth adversarial pass).
  check_cross("cross-attention, n = 4, m = 3, d_model = 8, h = 2, d_k = 3, d_v = 4", 76, 4, 3, 8, 2, 3, 4);
}

TEST_CASE("every score of a row far below zero stays finite") {
  // Keys are the negated queries' direction: every score about −140; a running maximum that starts at
  // 0 instead of −inf gives 0 / 0 (the ninth adversarial pass).
  const ex::Matrix x = from_rows({{10, 10, 10, 10}, {9, 11, 10, 10}});
  const ex::Matrix memory = from_rows({{10, 10, 10, 10}, {10, 9, 11, 10}, {11, 10, 9, 10}});
  const ex::Matrix w_q = from_rows({{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}});
  const ex::Matrix w_k = from_rows({{-1, 0, 0, 0}, {0, -1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, -1}});
  Rng rng(77);
  check_cross_of("cross-attention with every score far below zero, n = 2, m = 3, d_model = 4, h = 2", x, memory, w_q, w_k,
                 rng.matrix(4, 4), rng.matrix(4, 4), 2, true);
  // Row 0's scores near 140, row 1's near 14: a maximum kept from earlier rows leaves row 1 0 / 0
  // (the tenth adversarial pass).
  check_cross_of("cross-attention with a row far below the row before it, n = 2, m = 3, d_model = 4, h = 2",
                 from_rows({{10, 10, 10, 10}, {1, 1, 1, 1}}), from_rows({{10, 10, 10, 10}, {1, 1, 1, 1}, {2, 1, 1, 2}}), w_q, w_q,
                 rng.matrix(4, 4), rng.matrix(4, 4), 2, true);
}
