// Properties of the CPU's softmaxes that a comparison between backends cannot show: the tiled
// attention's workspace does not grow with the sequence, its online softmax survives large scores, and
// float's fast exp agrees with double's libm exp. Whether the tiled and stored-weights attention give
// the plain path's outputs and gradients (many shapes, tile sizes, masks, strides, float and double) is
// checked in the op table (tests/backend/test_backend_ops.cpp), through make_cpu_backend's variants.
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

}  // namespace

TEST_CASE("tiled attention: workspace does not grow with the sequence") {
  // Per thread: one tile and two running values per query row (forward); two tiles and one value per
  // query row (backward), plus 8 fixed groups' Tq × d_k partial dQ: O(Tq), never Tq × Tk.
  const std::size_t t = static_cast<std::size_t>(attnlab::cpu::threads());
  CHECK(attention_tiled_workspace<float>(64, 128) == t * (64 * 128 + 2 * 64));
  CHECK(attention_tiled_backward_workspace<float>(64, 128, 4096, 64) == 8 * 4096 * 64 + t * (2 * 64 * 128 + 64));
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
