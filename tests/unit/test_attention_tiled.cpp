// The tiled attention (online softmax, no Tq × Tk matrix) against the plain path of backend/cpu/ops.hpp:
// same outputs and gradients on random inputs, for many shapes, tile sizes and masks, in float and double.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backend/cpu/ops.hpp"
#include "backend/cpu/parallel.hpp"

using namespace attnlab::cpu;

namespace {

template <typename T>
std::vector<T> randn(std::mt19937& rng, std::size_t n, double sd = 1.0) {
  std::normal_distribution<double> d(0.0, sd);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

// max |a − b| / max |b| over the whole tensor (absolute when b is all zero).
template <typename T>
double rel_err(const std::vector<T>& a, const std::vector<T>& b) {
  double diff = 0, mag = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    mag = std::max(mag, std::fabs(static_cast<double>(b[i])));
  }
  return mag > 0 ? diff / mag : diff;
}

struct Case {
  int Tq, Tk;
  bool causal, padded;
};

template <typename T>
void check_against_plain(double tol) {
  std::mt19937 rng(7);
  const int B = 3, H = 2, C = 16;  // head width 8
  const Case cases[] = {{1, 1, false, false}, {5, 5, true, false},  {17, 17, true, true},  {64, 64, false, true},
                        {7, 33, false, true}, {33, 7, false, false}, {100, 100, true, true}, {50, 130, false, false}};
  const int blocks[][2] = {{1, 1}, {4, 7}, {16, 16}, {64, 128}, {3, 200}};
  for (const Case& cs : cases) {
    for (const auto& blk : blocks) {
      const int bq = blk[0], bk = blk[1];
      CAPTURE(cs.Tq);
      CAPTURE(cs.Tk);
      CAPTURE(cs.causal);
      CAPTURE(cs.padded);
      CAPTURE(bq);
      CAPTURE(bk);
      const std::size_t nq = static_cast<std::size_t>(B) * cs.Tq * C, nk = static_cast<std::size_t>(B) * cs.Tk * C;
      // Scores of a few units, so the softmax is neither flat nor one-hot.
      auto q = randn<T>(rng, nq, 1.5), k = randn<T>(rng, nk, 1.5), v = randn<T>(rng, nk);
      // Batch element 1 has no visible key at all (every row fully masked) when padded.
      std::vector<int> key_len = {cs.Tk, 0, std::max(1, cs.Tk / 2)};
      const int* kl = cs.padded ? key_len.data() : nullptr;

      std::vector<T> out(nq), att(static_cast<std::size_t>(B) * H * cs.Tq * cs.Tk);
      attention_forward<T>(out.data(), att.data(), q.data(), k.data(), v.data(), kl, cs.causal, B, cs.Tq, cs.Tk, C, H);
      std::vector<T> tout(nq, T(123)), lse(static_cast<std::size_t>(B) * H * cs.Tq);
      std::vector<T> work(attention_tiled_workspace<T>(bq, bk));
      attention_forward_tiled<T>(tout.data(), lse.data(), work.data(), q.data(), k.data(), v.data(), kl, cs.causal, B,
                                 cs.Tq, cs.Tk, C, H, bq, bk);
      CHECK(rel_err(tout, out) < tol);
      if (cs.padded) {
        // The fully masked batch element: zeros, never NaN, and lse = −inf.
        for (std::size_t i = nq / B; i < 2 * nq / B; ++i) REQUIRE(tout[i] == T(0));
        for (int i = 0; i < H * cs.Tq; ++i) CHECK(std::isinf(lse[static_cast<std::size_t>(H) * cs.Tq + i]));
      }
      for (T x : tout) REQUIRE(std::isfinite(static_cast<double>(x)));

      // Backward: the same gradients as the plain path's.
      auto dout = randn<T>(rng, nq);
      std::vector<T> dq(nq, T(0)), dk(nk, T(0)), dv(nk, T(0)), scratch(attention_backward_scratch<T>(cs.Tq, cs.Tk));
      attention_backward<T>(dq.data(), dk.data(), dv.data(), scratch.data(), dout.data(), att.data(), q.data(), k.data(),
                            v.data(), B, cs.Tq, cs.Tk, C, H);
      std::vector<T> tdq(nq, T(0)), tdk(nk, T(0)), tdv(nk, T(0));
      std::vector<T> bwork(attention_tiled_backward_workspace<T>(bq, bk, cs.Tq, C / H));
      attention_backward_tiled<T>(tdq.data(), tdk.data(), tdv.data(), bwork.data(), dout.data(), tout.data(), lse.data(),
                                  q.data(), k.data(), v.data(), kl, cs.causal, B, cs.Tq, cs.Tk, C, H, bq, bk);
      CHECK(rel_err(tdq, dq) < tol);
      CHECK(rel_err(tdk, dk) < tol);
      CHECK(rel_err(tdv, dv) < tol);
    }
  }
}

}  // namespace

TEST_CASE("tiled attention equals the plain path (double)") { check_against_plain<double>(1e-10); }

TEST_CASE("tiled attention equals the plain path (float, 1e-5 relative)") { check_against_plain<float>(1e-5); }

TEST_CASE("tiled attention: workspace does not grow with the sequence") {
  // Per thread: one tile and two running values per query row (forward); two tiles, one value per query
  // row and a Tq × d_k partial dQ (backward): O(Tq), never Tq × Tk.
  const std::size_t t = static_cast<std::size_t>(attnlab::par::threads());
  CHECK(attention_tiled_workspace<float>(64, 128) == t * (64 * 128 + 2 * 64));
  CHECK(attention_tiled_backward_workspace<float>(64, 128, 4096, 64) == t * (2 * 64 * 128 + 64 + 4096 * 64));
}

TEST_CASE("tiled attention: large scores do not overflow (online softmax stays stable)") {
  std::mt19937 rng(3);
  const int Tq = 40, Tk = 300, C = 8, H = 1;
  auto q = randn<float>(rng, static_cast<std::size_t>(Tq) * C, 30.0), k = randn<float>(rng, static_cast<std::size_t>(Tk) * C, 30.0);
  auto v = randn<float>(rng, static_cast<std::size_t>(Tk) * C);
  std::vector<float> out(static_cast<std::size_t>(Tq) * C), att(static_cast<std::size_t>(Tq) * Tk), tout(out.size()), lse(Tq);
  std::vector<float> work(attention_tiled_workspace<float>(8, 32));
  attention_forward<float>(out.data(), att.data(), q.data(), k.data(), v.data(), nullptr, false, 1, Tq, Tk, C, H);
  attention_forward_tiled<float>(tout.data(), lse.data(), work.data(), q.data(), k.data(), v.data(), nullptr, false, 1, Tq,
                                 Tk, C, H, 8, 32);
  for (float x : tout) REQUIRE(std::isfinite(x));
  CHECK(rel_err(tout, out) < 1e-5);
}

// Float softmaxes use a vectorised polynomial exp (ops.cpp); double uses libm. Their agreement checks it.
TEST_CASE("float softmaxes (fast exp) agree with double (libm exp): attention and the loss") {
  std::mt19937 rng(5);
  const int B = 2, H = 2, C = 16, Tq = 37, Tk = 53;
  const auto qd = randn<double>(rng, static_cast<std::size_t>(B) * Tq * C, 2.0);
  const auto kd = randn<double>(rng, static_cast<std::size_t>(B) * Tk * C, 2.0);
  const auto vd = randn<double>(rng, static_cast<std::size_t>(B) * Tk * C);
  const std::vector<float> qf(qd.begin(), qd.end()), kf(kd.begin(), kd.end()), vf(vd.begin(), vd.end());
  const std::vector<int> key_len = {Tk, 20};
  std::vector<double> od(qd.size()), ad(static_cast<std::size_t>(B) * H * Tq * Tk);
  std::vector<float> of(qd.size()), af(ad.size());
  attention_forward<double>(od.data(), ad.data(), qd.data(), kd.data(), vd.data(), key_len.data(), true, B, Tq, Tk, C, H);
  attention_forward<float>(of.data(), af.data(), qf.data(), kf.data(), vf.data(), key_len.data(), true, B, Tq, Tk, C, H);
  CHECK(rel_err(std::vector<double>(af.begin(), af.end()), ad) < 1e-5);
  CHECK(rel_err(std::vector<double>(of.begin(), of.end()), od) < 1e-5);

  const int N = 9, V = 5000;  // logits spread over ±15 so many exps are tiny and some are large
  const auto zd = randn<double>(rng, static_cast<std::size_t>(N) * V, 5.0);
  const std::vector<float> zf(zd.begin(), zd.end());
  std::vector<int> targets(N);
  for (int r = 0; r < N; ++r) targets[static_cast<std::size_t>(r)] = (r * 997) % V;
  std::vector<double> lsed(N), pd(zd.size()), gd(zd.size());
  std::vector<float> lsef(N), pf(zd.size()), gf(zd.size());
  int cd = 0, cf = 0;
  const double ld = cross_entropy_forward<double>(lsed.data(), zd.data(), targets.data(), N, V, 0.1, -1, &cd);
  const float lf = cross_entropy_forward<float>(lsef.data(), zf.data(), targets.data(), N, V, 0.1f, -1, &cf);
  CHECK(cd == cf);
  CHECK(std::fabs(lf - ld) / std::fabs(ld) < 1e-5);
  softmax_from_lse<double>(pd.data(), zd.data(), lsed.data(), N, V);
  softmax_from_lse<float>(pf.data(), zf.data(), lsef.data(), N, V);
  CHECK(rel_err(std::vector<double>(pf.begin(), pf.end()), pd) < 1e-5);
  // The float backward (fast exp, float lse) against the double one.
  cross_entropy_backward<double>(gd.data(), zd.data(), lsed.data(), targets.data(), N, V, 0.1, -1, cd, 1.0);
  cross_entropy_backward<float>(gf.data(), zf.data(), lsef.data(), targets.data(), N, V, 0.1f, -1, cf, 1.0f);
  CHECK(rel_err(std::vector<double>(gf.begin(), gf.end()), gd) < 1e-5);
}
