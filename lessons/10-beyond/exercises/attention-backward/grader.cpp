// Grader: the backward pass of scaled dot-product attention. Reference: the analytic gradients in
// double, themselves checked here against central finite differences of the forward pass.
#include <doctest/doctest.h>

#include <cmath>

#include "core/attention.hpp"
#include "exercises/grading/grading.hpp"

namespace ex {  // the learner's function
AttentionGrads attention_backward(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& d_out);
}

namespace {
using namespace attnlab::grading;

struct BwVariant {
  bool no_scale = false;      // forget 1/√d_k in dQ, dK
  int jacobian = 0;           // 0 right, 1: dS = dP, 2: dS = P ∘ dP
  bool dv_no_transpose = false;
};

struct Grads {
  ex::Matrix d_q, d_k, d_v;
};

Grads backward_variant(const ex::Matrix& q, const ex::Matrix& k, const ex::Matrix& v, const ex::Matrix& dout,
                       BwVariant var) {
  const std::size_t n = q.rows, m = k.rows, dk = q.cols, dv = v.cols;
  const double c = 1.0 / std::sqrt(double(dk));
  std::vector<double> p(n * m), dp(n * m), ds(n * m);
  for (std::size_t i = 0; i < n; ++i) {
    double mx = -INFINITY;
    for (std::size_t j = 0; j < m; ++j) {
      double s = 0;
      for (std::size_t t = 0; t < dk; ++t) s += double(q(i, t)) * k(j, t);
      p[i * m + j] = s * c;
      mx = std::max(mx, p[i * m + j]);
    }
    double sum = 0;
    for (std::size_t j = 0; j < m; ++j) sum += (p[i * m + j] = std::exp(p[i * m + j] - mx));
    for (std::size_t j = 0; j < m; ++j) p[i * m + j] /= sum;
    double dot = 0;
    for (std::size_t j = 0; j < m; ++j) {
      double a = 0;
      for (std::size_t t = 0; t < dv; ++t) a += double(dout(i, t)) * v(j, t);
      dp[i * m + j] = a;
      dot += p[i * m + j] * a;
    }
    for (std::size_t j = 0; j < m; ++j) {
      const double pij = p[i * m + j], dpij = dp[i * m + j];
      ds[i * m + j] = var.jacobian == 1 ? dpij : var.jacobian == 2 ? pij * dpij : pij * (dpij - dot);
    }
  }
  const double cs = var.no_scale ? 1.0 : c;
  Grads g{ex::Matrix(n, dk), ex::Matrix(m, dk), ex::Matrix(var.dv_no_transpose ? n : m, dv)};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < dk; ++t) {
      double a = 0;
      for (std::size_t j = 0; j < m; ++j) a += ds[i * m + j] * k(j, t);
      g.d_q(i, t) = static_cast<float>(a * cs);
    }
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t t = 0; t < dk; ++t) {
      double a = 0;
      for (std::size_t i = 0; i < n; ++i) a += ds[i * m + j] * q(i, t);
      g.d_k(j, t) = static_cast<float>(a * cs);
    }
  if (var.dv_no_transpose) {  // P·dO: only defined when m = n
    if (n == m)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t t = 0; t < dv; ++t) {
          double a = 0;
          for (std::size_t j = 0; j < m; ++j) a += p[i * m + j] * dout(j, t);
          g.d_v(i, t) = static_cast<float>(a);
        }
  } else {
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t t = 0; t < dv; ++t) {
        double a = 0;
        for (std::size_t i = 0; i < n; ++i) a += p[i * m + j] * dout(i, t);
        g.d_v(j, t) = static_cast<float>(a);
      }
  }
  return g;
}

void check_backward_of(const std::string& what, const ex::Matrix& q, const ex::Matrix& k, const ex::Matrix& v,
                       const ex::Matrix& dout, bool large);

void check_backward(const std::string& what, std::uint32_t seed, std::size_t n, std::size_t m, std::size_t dk,
                    std::size_t dv, float scale = 1.5f) {
  Rng rng(seed);
  const ex::Matrix q = rng.matrix(n, dk, scale), k = rng.matrix(m, dk, scale), v = rng.matrix(m, dv),
                   dout = rng.matrix(n, dv);
  check_backward_of(what, q, k, v, dout, scale > 2.0f);
}

void check_backward_of(const std::string& what, const ex::Matrix& q, const ex::Matrix& k, const ex::Matrix& v,
                       const ex::Matrix& dout, bool large) {
  const std::size_t n = q.rows, m = k.rows;
  InputGuard guard;
  guard.add("q", q).add("k", k).add("v", v).add("d_out", dout);
  const ex::AttentionGrads got = ex::attention_backward(q, k, v, dout);
  if (!guard.verify("attention_backward")) return;
  const Grads want = backward_variant(q, k, v, dout, {});
  const Grads no_scale = backward_variant(q, k, v, dout, {.no_scale = true});
  const Grads jac1 = backward_variant(q, k, v, dout, {.jacobian = 1});
  const Grads jac2 = backward_variant(q, k, v, dout, {.jacobian = 2});
  const Grads dv_wrong = backward_variant(q, k, v, dout, {.dv_no_transpose = true});
  const std::vector<Candidate> for_qk_q = {{&mistakes::backward_missing_scale, no_scale.d_q},
                                           {&mistakes::backward_softmax_jacobian, jac1.d_q},
                                           {&mistakes::backward_softmax_jacobian, jac2.d_q}};
  const std::vector<Candidate> for_qk_k = {{&mistakes::backward_missing_scale, no_scale.d_k},
                                           {&mistakes::backward_softmax_jacobian, jac1.d_k},
                                           {&mistakes::backward_softmax_jacobian, jac2.d_k}};
  std::vector<Candidate> for_v;
  if (n == m) for_v.push_back({&mistakes::backward_dv_transpose, dv_wrong.d_v});
  const Mistake* unstable = large ? &mistakes::unstable_softmax : nullptr;
  expect_match(what + ", d_v", got.d_v, want.d_v, for_v, unstable, 2e-4);
  expect_match(what + ", d_q", got.d_q, want.d_q, for_qk_q, unstable, 2e-4);
  expect_match(what + ", d_k", got.d_k, want.d_k, for_qk_k, unstable, 2e-4);
}
}  // namespace

TEST_CASE("the grader's own reference agrees with finite differences") {
  // L = Σ O ∘ d_out, so dL/dq(i, t) ≈ (L(q + h) − L(q − h)) / 2h. This checks the grader, not you.
  Rng rng(90);
  const ex::Matrix q = rng.matrix(2, 3), k = rng.matrix(4, 3), v = rng.matrix(4, 2), dout = rng.matrix(2, 2);
  const Grads g = backward_variant(q, k, v, dout, {});
  auto loss = [&](const ex::Matrix& qq, const ex::Matrix& kk, const ex::Matrix& vv) {
    const attnlab::core::Matrix o = attnlab::core::scaled_dot_product_attention(to_core(qq), to_core(kk), to_core(vv));
    double l = 0;
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t t = 0; t < 2; ++t) l += double(o(i, t)) * dout(i, t);
    return l;
  };
  const float h = 1e-2f;
  ex::Matrix qp = q, qm = q, kp = k, km = k, vp = v, vm = v;
  qp(1, 2) += h, qm(1, 2) -= h, kp(3, 0) += h, km(3, 0) -= h, vp(2, 1) += h, vm(2, 1) -= h;
  CHECK(std::abs((loss(qp, k, v) - loss(qm, k, v)) / (2 * h) - g.d_q(1, 2)) < 2e-3);
  CHECK(std::abs((loss(q, kp, v) - loss(q, km, v)) / (2 * h) - g.d_k(3, 0)) < 2e-3);
  CHECK(std::abs((loss(q, k, vp) - loss(q, k, vm)) / (2 * h) - g.d_v(2, 1)) < 2e-3);
}

TEST_CASE("n ≠ m and d_k ≠ d_v") {
  check_backward("attention_backward with q 3 × 4, k 5 × 4, v 5 × 2", 91, 3, 5, 4, 2);
}

TEST_CASE("square shapes") { check_backward("attention_backward with n = m = 4, d_k = d_v = 3", 92, 4, 4, 3, 3); }

TEST_CASE("one query (n = 1)") { check_backward("attention_backward with q 1 × 2, k 3 × 2, v 3 × 4", 93, 1, 3, 2, 4); }

TEST_CASE("large scores stay finite") {
  // Scores in the thousands: the softmax inside the backward pass overflows without subtracting each
  // row's maximum (the eighth adversarial pass passed such a solution).
  check_backward("attention_backward with scores in the thousands, q 3 × 4, k 5 × 4", 94, 3, 5, 4, 2, 40.0f);
}

TEST_CASE("every score of a row far below zero stays finite") {
  // A running maximum that starts at 0 instead of −inf gives 0 / 0 here (the ninth adversarial pass).
  check_backward_of("attention_backward with every score far below zero", from_rows({{-10, -10}, {-9, -11}}),
                    from_rows({{10, 10}, {9, 9}, {11, 8}}), from_rows({{1, 0}, {0, 1}, {2, 2}}),
                    from_rows({{1, -1}, {0.5f, 2}}), true);
  // A row far below the row before it: a maximum kept from earlier rows leaves it 0 / 0 (tenth pass).
  check_backward_of("attention_backward with a row far below the row before it", from_rows({{10, 10}, {-10, -10}}),
                    from_rows({{10, 10}, {9, 9}, {11, 8}}), from_rows({{1, 0}, {0, 1}, {2, 2}}),
                    from_rows({{1, -1}, {0.5f, 2}}), true);
}
