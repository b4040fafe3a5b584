// Grader: multi-head self-attention. Reference: attnlab::core::multi_head_attention_packed.
#include <doctest/doctest.h>

#include <cmath>

#include "core/attention.hpp"
#include "exercises/grading/grading.hpp"

namespace ex {  // the learner's function
Matrix multi_head_attention(const Matrix& x, const Matrix& w_q, const Matrix& w_k, const Matrix& w_v,
                            const Matrix& w_o, std::size_t h);
}

namespace {
using namespace attnlab::grading;

void check_mha_of(const std::string& what, const ex::Matrix& x, const ex::Matrix& w_q, const ex::Matrix& w_k,
                  const ex::Matrix& w_v, const ex::Matrix& w_o, std::size_t h, bool large);

void check_mha(const std::string& what, std::uint32_t seed, std::size_t n, std::size_t d_model, std::size_t h,
               std::size_t d_k, std::size_t d_v, float x_scale = 1.0f) {
  Rng rng(seed);
  const ex::Matrix x = rng.matrix(n, d_model, x_scale), w_q = rng.matrix(d_model, h * d_k), w_k = rng.matrix(d_model, h * d_k),
                   w_v = rng.matrix(d_model, h * d_v), w_o = rng.matrix(h * d_v, d_model);
  check_mha_of(what, x, w_q, w_k, w_v, w_o, h, x_scale > 1.0f);
}

void check_mha_of(const std::string& what, const ex::Matrix& x, const ex::Matrix& w_q, const ex::Matrix& w_k,
                  const ex::Matrix& w_v, const ex::Matrix& w_o, std::size_t h, bool large) {
  const std::size_t d_model = x.cols, d_k = w_q.cols / h;
  InputGuard guard;
  guard.add("x", x).add("w_q", w_q).add("w_k", w_k).add("w_v", w_v).add("w_o", w_o);
  const ex::Matrix got = ex::multi_head_attention(x, w_q, w_k, w_v, w_o, h);
  if (!guard.verify("multi_head_attention")) return;
  const ex::Matrix want = to_ex(attnlab::core::multi_head_attention_packed(
      to_core(x), to_core(x), to_core(w_q), to_core(w_k), to_core(w_v), to_core(w_o), h));

  std::vector<Candidate> wrong;
  auto add = [&](const Mistake& m, MhaVariant var) {
    if (auto r = mha_variant(x, x, w_q, w_k, w_v, w_o, h, var)) wrong.push_back({&m, *r});
  };
  add(mistakes::missing_wo, {.skip_wo = true});
  add(mistakes::no_scaling, {.head = {.scale = Scale::None}});
  add(mistakes::scale_by_dk, {.head = {.scale = Scale::Dk}});
  add(mistakes::scale_by_dmodel, {.head = {.scale = Scale::Custom, .custom_scale = 1.0 / std::sqrt(double(d_model))}});
  add(mistakes::scale_by_dmodel, {.head = {.scale = Scale::Custom, .custom_scale = 1.0 / std::sqrt(double(h * d_k))}});
  add(mistakes::softmax_wrong_axis, {.head = {.axis = Axis::Cols}});
  add(mistakes::heads_interleaved, {.interleave_split = true});
  add(mistakes::heads_wrong_order, {.reverse_concat = true});
  add(mistakes::q_times_k, {.head = {.transpose_k = false}});
  expect_match(what, got, want, wrong, large ? &mistakes::unstable_softmax : nullptr);
}
}  // namespace

TEST_CASE("two heads, d_model = 6 = h·d_k") {
  check_mha("multi-head attention, n = 3, d_model = 6, h = 2, d_k = d_v = 3", 61, 3, 6, 2, 3, 3);
}

TEST_CASE("three heads with d_k ≠ d_v") {
  check_mha("multi-head attention, n = 4, d_model = 6, h = 3, d_k = 2, d_v = 3", 62, 4, 6, 3, 2, 3);
}

TEST_CASE("d_model different from h·d_k") {
  check_mha("multi-head attention, n = 5, d_model = 8, h = 2, d_k = 3, d_v = 4", 63, 5, 8, 2, 3, 4);
}

TEST_CASE("one token (n = 1) and one head (h = 1)") {
  check_mha("multi-head attention, n = 1, d_model = 6, h = 2, d_k = d_v = 3", 64, 1, 6, 2, 3, 3);
  check_mha("multi-head attention, n = 3, d_model = 4, h = 1, d_k = d_v = 4", 65, 3, 4, 1, 4, 4);
}

TEST_CASE("large scores stay finite") {
  // Inputs of size 30 give scores in the thousands: exp without subtracting the row's maximum
  // overflows (the eighth adversarial pass passed such a solution).
  check_mha("multi-head attention with scores in the thousands, n = 4, d_model = 6, h = 2", 66, 4, 6, 2, 3, 3, 30.0f);
}

TEST_CASE("every score of a row far below zero stays finite") {
  // W_K = −W_Q and rows of x near 10·(1, 1, 1, 1): every query meets every key at about −140, and a
  // running maximum that starts at 0 instead of −inf gives 0 / 0 (the ninth adversarial pass).
  const ex::Matrix x = from_rows({{10, 10, 10, 10}, {9, 11, 10, 10}, {10, 9, 11, 10}});
  const ex::Matrix w_q = from_rows({{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}});
  const ex::Matrix w_k = from_rows({{-1, 0, 0, 0}, {0, -1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, -1}});
  Rng rng(67);
  check_mha_of("multi-head attention with every score far below zero, n = 3, d_model = 4, h = 2", x, w_q, w_k,
               rng.matrix(4, 4), rng.matrix(4, 4), 2, true);
  // Row 0's scores near 140, row 1's near 14: a maximum kept from earlier rows leaves row 1 0 / 0
  // (the tenth adversarial pass).
  const ex::Matrix steps = from_rows({{10, 10, 10, 10}, {1, 1, 1, 1}, {2, 1, 1, 2}});
  check_mha_of("multi-head attention with a row far below the row before it, n = 3, d_model = 4, h = 2", steps, w_q, w_q,
               rng.matrix(4, 4), rng.matrix(4, 4), 2, true);
}
