// What the op table (tests/backend/test_backend_ops.cpp, which holds every op of the backend interface
// on the CUDA backend to the CPU backend) cannot reach: the kernels and launchers that are not backend
// ops, or not only. GELU against a double-precision formula, the positional encoding, an out-of-range
// token, cuBLAS's strided-batched, TF32 and bf16 products against double, and the launchers' own shape
// checks, on fresh random inputs. Outputs that a kernel writes are poisoned with NaN before the launch,
// so an element it forgets shows up. Tolerances (kernel_check.hpp): normwise relative error below 1e-5
// in float32, 1e-3 with TF32, 1e-2 with bf16, measured against the larger of the result's size and the inputs' scale.
//
// Two suites. "cpu" needs no GPU: the comparison and poison helpers, the GELU reference, the error
// macros, the launchers' shape checks (which throw before touching CUDA) and the CPU references
// themselves. "gpu" runs the kernels. Without a device the program runs the "cpu" suite, then prints
// "skipped: no CUDA device (<reason>)" and exits 77 (ctest's SKIP_RETURN_CODE); `--cpu-only` runs
// just the "cpu" suite and exits 0 when it passes (the gpu_kernels_cpu_checks test).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/bf16.hpp"
#include "backend/positional.hpp"
#include "backend/cuda/adamw.hpp"
#include "backend/cuda/attention.hpp"
#include "backend/cuda/check.hpp"
#include "backend/cuda/cross_entropy.hpp"
#include "backend/cuda/device.hpp"
#include "backend/cuda/elementwise.hpp"
#include "backend/cuda/embedding.hpp"
#include "backend/cuda/layernorm.hpp"
#include "backend/cuda/matmul.hpp"
#include "backend/cuda/tensor_core.hpp"
#include "device_gate.hpp"
#include "kernel_check.hpp"
#include "backend/cpu/ops.hpp"
#include "util/error.hpp"

namespace {

using attnlab::cuda::DeviceArray;
using namespace attnlab::gputest;
namespace cu = attnlab::cuda;
namespace cpu = attnlab::cpu;

std::uint32_t fresh_seed() {
  static const std::uint32_t seed = std::random_device{}();
  return seed;
}

template <typename T>
DeviceArray<T> up(const std::vector<T>& host) {
  return DeviceArray<T>(host);
}

// A written output: a device array of n elements, poisoned.
DeviceArray<float> poisoned(std::size_t n) {
  DeviceArray<float> d(n);
  d.poison();
  return d;
}

// got vs want: no NaN, and normwise relative error below tol, measured against max(max|want|, floor)
// where floor is the scale of the inputs (kernel_check.hpp: compare).
#define CHECK_CLOSE(got, want, tol, floor)                    \
  do {                                                        \
    const Comparison cmp_ = compare((got), (want), (floor));  \
    INFO(#got << " vs " << #want << ": " << cmp_.str());      \
    CHECK(cmp_.nan == 0);                                     \
    CHECK(cmp_.rel < (tol));                                  \
  } while (0)

}  // namespace

// =====================================================================================================
// "cpu": runs everywhere
// =====================================================================================================

TEST_CASE("the poison value is a NaN and compare() catches it" * doctest::test_suite("cpu")) {
  CHECK(std::isnan(poison_value()));
  const std::vector<float> want = {1.0f, -2.0f, 3.0f};
  CHECK(compare(want, want).rel == 0.0);
  std::vector<float> got = want;
  got[1] = poison_value();
  const Comparison c = compare(got, want);
  CHECK(c.nan == 1);
  CHECK(std::isinf(c.rel));
  got = want;
  got[2] = 3.0f + 3e-5f;  // 3e-5 / max|want| = 1e-5
  CHECK(compare(got, want).rel == doctest::Approx(1e-5).epsilon(1e-3));
  CHECK(compare(got, want).worst == 2);
  CHECK(std::isinf(compare(std::vector<float>{1.0f}, want).rel));  // size mismatch
  // The floor: a result that cancelled to 1e-6 is measured against the inputs' scale (1), not itself.
  CHECK(compare(std::vector<float>{2e-6f}, std::vector<float>{1e-6f}).rel == doctest::Approx(1.0));
  CHECK(compare(std::vector<float>{2e-6f}, std::vector<float>{1e-6f}, 1.0).rel == doctest::Approx(1e-6));
  // Infinities: equal ones agree (a fully masked row's lse), different ones do not.
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(compare(std::vector<float>{-inf, 1.0f}, std::vector<float>{-inf, 1.0f}).rel == 0.0);
  CHECK(std::isinf(compare(std::vector<float>{0.0f, 1.0f}, std::vector<float>{-inf, 1.0f}).rel));
  // A NaN the reference expects must be there.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(compare(std::vector<float>{nan}, std::vector<float>{nan}).nan == 0);
  CHECK(compare(std::vector<float>{0.0f}, std::vector<float>{nan}).nan == 1);
}

TEST_CASE("round_to_tf32 and round_to_bf16 keep 10 and 7 mantissa bits and are idempotent" * doctest::test_suite("cpu")) {
  struct Format {
    const char* name;
    void (*round)(std::vector<float>&);
    int bits;  // explicit mantissa bits kept
  };
  for (const Format& f : {Format{"tf32", round_to_tf32, 10}, Format{"bf16", round_to_bf16, 7}}) {
    INFO(std::string(f.name));
    const float ulp = std::ldexp(1.0f, -f.bits);  // the last kept bit of a number in [1, 2)
    std::vector<float> v = {1.0f, 1.0f + ulp, 1.0f + ulp / 2, -3.14159265f, 1e-30f, 0.0f};
    f.round(v);
    CHECK(v[0] == 1.0f);
    CHECK(v[1] == 1.0f + ulp);  // the last kept bit survives
    CHECK(v[2] == 1.0f);        // the next one does not
    CHECK(std::fabs(v[3] + 3.14159265f) < 3.15f * ulp);
    const std::vector<float> once = v;
    f.round(v);
    CHECK(v == once);
    const std::uint32_t dropped = (1u << (23 - f.bits)) - 1u;
    for (float x : v) {
      std::uint32_t b;
      std::memcpy(&b, &x, sizeof b);
      CHECK((b & dropped) == 0u);
    }
  }
}

TEST_CASE("the GELU reference: known values and its derivative by finite differences" * doctest::test_suite("cpu")) {
  CHECK(gelu_ref(0.0) == 0.0);
  CHECK(gelu_ref(10.0) == doctest::Approx(10.0));
  CHECK(std::fabs(gelu_ref(-10.0)) < 1e-20);
  CHECK(gelu_ref(1.0) == doctest::Approx(0.8411919906).epsilon(1e-9));  // torch.nn.GELU("tanh")(1.0)
  for (double x : {-4.0, -1.3, -0.2, 0.0, 0.4, 1.0, 2.7, 6.0}) {
    const double h = 1e-5;
    const double fd = (gelu_ref(x + h) - gelu_ref(x - h)) / (2 * h);
    INFO("x = " << x);
    CHECK(gelu_grad_ref(x) == doctest::Approx(fd).epsilon(1e-8));
  }
}

TEST_CASE("the error macros throw RuntimeError with file, line, call and CUDA's message" * doctest::test_suite("cpu")) {
  try {
    CUDA_CHECK(cudaErrorInvalidValue);
    FAIL("no throw");
  } catch (const attnlab::RuntimeError& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(m.find("test_cuda_kernels.cpp:") != std::string::npos);
    CHECK(m.find("cudaErrorInvalidValue") != std::string::npos);
    CHECK(m.find(cudaGetErrorString(cudaErrorInvalidValue)) != std::string::npos);
    CHECK(e.exit_code() == 1);
  }
  try {
    CUBLAS_CHECK(CUBLAS_STATUS_NOT_INITIALIZED);
    FAIL("no throw");
  } catch (const attnlab::RuntimeError& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(m.find("cuBLAS error at") != std::string::npos);
    CHECK(m.find("CUBLAS_STATUS_NOT_INITIALIZED") != std::string::npos);  // the call text
  }
  CHECK_NOTHROW(CUDA_CHECK(cudaSuccess));
}

TEST_CASE("launchers reject bad shapes before touching the GPU" * doctest::test_suite("cpu")) {
  float* none = nullptr;
  // Attention: the head width d = C / H must be 1 … 128 and H must divide C.
  CHECK_THROWS_AS(cu::attention_forward(none, none, none, none, none, nullptr, false, 1, 4, 4, 129, 1),
                  attnlab::ShapeError);
  CHECK_THROWS_AS(cu::attention_forward(none, none, none, none, none, nullptr, false, 1, 4, 4, 10, 3),
                  attnlab::ShapeError);
  CHECK_THROWS_AS(cu::attention_backward(none, none, none, none, none, none, none, none, none, nullptr, true, 1, 4,
                                         4, 258, 2),
                  attnlab::ShapeError);
  CHECK_THROWS_AS(cu::attention_forward(none, none, none, none, none, nullptr, false, -1, 4, 4, 8, 1),
                  attnlab::ShapeError);
  // The tensor-core forward takes head widths that are multiples of 16 (the wmma tile) only.
  CHECK_THROWS_AS(cu::attention_forward_bf16(none, none, none, none, none, cu::packed_attention(nullptr, false, 1, 4, 4, 24, 1)),
                  attnlab::ShapeError);
  CHECK_THROWS_AS(cu::attention_forward_bf16(none, none, none, none, none, cu::packed_attention(nullptr, false, 1, 4, 4, 144, 1)),
                  attnlab::ShapeError);
  CHECK_THROWS_AS(cu::layernorm_forward(none, none, none, none, none, none, 4, 0, 1e-5f), attnlab::ShapeError);
  CHECK_THROWS_AS(cu::embedding_forward(none, nullptr, none, none, 1, 1, 8, 0, 1.0f), attnlab::ShapeError);
  CHECK_THROWS_AS(cu::cross_entropy_backward(none, none, none, nullptr, -2, 10, 0.1f, 0, 1, 1.0f),
                  attnlab::ShapeError);
  CHECK_THROWS_AS(cu::dropout_forward(none, none, nullptr, 10, 1.0f, 7), attnlab::ShapeError);
  CHECK_THROWS_AS(cu::dropout_backward(none, none, 10, -0.5f, 7, attnlab::backend::GradMode::Write), attnlab::ShapeError);
  attnlab::backend::AdamStep step_zero;
  step_zero.step = 0;  // steps count from 1
  step_zero.lr = 1e-3;
  CHECK_THROWS_AS(cu::adamw_step(none, none, none, none, nullptr, 10, step_zero),
                  attnlab::ShapeError);
  // Nothing to do is not an error, and launches nothing.
  CHECK_NOTHROW(cu::layernorm_forward(none, none, none, none, none, none, 0, 8, 1e-5f));
  CHECK_NOTHROW(cu::attention_forward(none, none, none, none, none, nullptr, true, 0, 4, 4, 128, 1));
  CHECK_NOTHROW(cu::relu_forward(none, none, 0));
  DeviceArray<float> empty(0);  // allocates nothing
  CHECK(empty.get() == nullptr);
  CHECK(empty.download().empty());
}

// =====================================================================================================
// "gpu": the kernels
// =====================================================================================================

TEST_CASE("GELU forward and backward against the double formula" * doctest::test_suite("gpu")) {
  // Not in the backend interface (the model uses ReLU), so not in the op table: the kernel is held to
  // gelu_ref and gelu_grad_ref directly.
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  for (std::size_t n : {std::size_t{1}, std::size_t{37}, std::size_t{1000}, std::size_t{100003}}) {
    INFO("n = " << n);
    auto a = random_floats(rng, n, 3.0f);
    const auto b = random_floats(rng, n);
    for (std::size_t i = 0; i < n; i += 7) a[i] = 0.0f;
    auto da = up(a), dbv = up(b);
    std::vector<double> gelu(n), gin(n);
    const auto g0 = random_floats(rng, n);
    for (std::size_t i = 0; i < n; ++i) {
      gelu[i] = gelu_ref(a[i]);
      gin[i] = g0[i] + static_cast<double>(b[i]) * gelu_grad_ref(a[i]);
    }
    auto dgelu = poisoned(n);
    cu::gelu_forward(dgelu.get(), da.get(), n);
    CHECK_CLOSE(dgelu.download(), gelu, kFp32Tol, 1.0);
    auto dgin = up(g0);
    cu::gelu_backward(dgin.get(), dbv.get(), da.get(), n);
    CHECK_CLOSE(dgin.download(), gin, kFp32Tol, 1.0);
  }
}

TEST_CASE("positional encoding on the device equals the CPU's" * doctest::test_suite("gpu")) {
  for (int C : {1, 2, 7, 64, 129, 768}) {
    INFO("C = " << C);
    const int L = 1024;
    const std::vector<float> pe = attnlab::backend::positional_encoding<float>(L, C);
    auto dpe = poisoned(pe.size());
    cu::positional_encoding(dpe.get(), L, C);
    CHECK_CLOSE(dpe.download(), pe, kFp32Tol, 1.0);
  }
}

TEST_CASE("a token id outside the vocabulary gives NaN, never a read out of bounds" * doctest::test_suite("gpu")) {
  const int C = 4, V = 5;
  const std::vector<float> wte(static_cast<std::size_t>(V) * C, 1.0f), pe(2 * C, 0.0f);
  auto dwte_ = up(wte), dpe = up(pe);
  auto dtok = up(std::vector<int>{2, 5});
  auto dout_ = poisoned(2 * C);
  cu::embedding_forward(dout_.get(), dtok.get(), dwte_.get(), dpe.get(), 1, 2, C, V, 1.0f);
  const auto out = dout_.download();
  CHECK(out[0] == 1.0f);
  CHECK(std::isnan(out[C]));
  // The backward skips it: the gradient of the vocabulary is untouched.
  auto dgrad = up(std::vector<float>(static_cast<std::size_t>(V) * C, 0.0f));
  auto dg = up(std::vector<float>(2 * C, 1.0f));
  cu::embedding_backward(dgrad.get(), dg.get(), dtok.get(), 1, 2, C, V, 1.0f);
  const auto grad = dgrad.download();
  for (int t = 0; t < V; ++t)
    for (int c = 0; c < C; ++c) CHECK(grad[static_cast<std::size_t>(t) * C + c] == (t == 2 ? 1.0f : 0.0f));
}

TEST_CASE("the embedding backward grouped on the device: the host grouping's bits and group count" * doctest::test_suite("gpu")) {
  // Which sizes the one-block sort takes: 1 to 16,384 rows, keys t·n + r below 2^32.
  CHECK(cu::embedding_backward_groups_on_device(1, 1));
  CHECK(cu::embedding_backward_groups_on_device(16384, 50257));
  CHECK_FALSE(cu::embedding_backward_groups_on_device(0, 5));
  CHECK_FALSE(cu::embedding_backward_groups_on_device(16385, 5));
  CHECK(cu::embedding_backward_groups_on_device(16384, 262143));       // largest key 2^32 − 16,385
  CHECK_FALSE(cu::embedding_backward_groups_on_device(16384, 262144));  // 2^32 − 1: the padding's key
  CHECK_THROWS_AS(cu::embedding_backward_sorted(nullptr, nullptr, nullptr, 1, 16385, 4, 5, 1.0f, nullptr),
                  attnlab::ShapeError);
  std::mt19937 rng(fresh_seed() + 17);
  INFO("seed " << fresh_seed() + 17);
  struct Case {
    int B, T, C, V;
    bool invalid;  // some ids −1 or V: left out by both
  };
  // One row; a power of two; just past one row a thread; many collisions; a vocabulary larger than
  // the rows; GPT-2 small's 8 × 1024 (32 KB of keys); past 48 KB of keys (the opt-in limit asked
  // for); the most rows the sort takes.
  for (const Case c : {Case{1, 1, 5, 1, false}, Case{2, 16, 33, 7, true}, Case{1, 1025, 3, 5, true},
                       Case{3, 37, 129, 5, false}, Case{2, 513, 4, 37000, true}, Case{5, 1000, 2, 40, true},
                       Case{8, 1024, 3, 50257, false}, Case{128, 80, 2, 9000, true}, Case{16, 1024, 2, 50257, true}}) {
    const std::size_t n = static_cast<std::size_t>(c.B) * c.T;
    INFO("B " << c.B << " T " << c.T << " C " << c.C << " V " << c.V << (c.invalid ? ", invalid ids" : ""));
    std::vector<int> tokens = random_ints(rng, n, 0, c.V - 1);
    if (c.invalid)
      for (std::size_t r = 0; r < n; r += 7) tokens[r] = r % 2 ? -1 : c.V;
    const auto dout = random_floats(rng, n * c.C), start = random_floats(rng, static_cast<std::size_t>(c.V) * c.C);
    auto dtok = up(tokens);
    auto ddout = up(dout), on_host = up(start), on_device = up(start);
    cu::embedding_backward(on_host.get(), ddout.get(), dtok.get(), c.B, c.T, c.C, c.V, 1.5f);
    DeviceArray<unsigned> keys(n);
    keys.poison();
    DeviceArray<int> groups(1);
    groups.poison();
    cu::embedding_backward_sorted(on_device.get(), ddout.get(), dtok.get(), c.B, c.T, c.C, c.V, 1.5f, keys.get(),
                                  groups.get());
    const auto a = on_host.download(), b = on_device.download();
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    CHECK(groups.download()[0] == cu::group_by_token(tokens, c.V).groups());
    // The keys: every valid row once, grouped by id, increasing within a group, the invalid ones last.
    const auto k = keys.download();
    std::vector<unsigned> want;
    for (std::size_t r = 0; r < n; ++r)
      if (tokens[r] >= 0 && tokens[r] < c.V) want.push_back(static_cast<unsigned>(tokens[r] * n + r));
    std::sort(want.begin(), want.end());
    want.resize(n, 0xffffffffu);
    CHECK(k == want);
  }
}

namespace {
double tol_for(cu::Math math) { return math == cu::Math::Fp32 ? kFp32Tol : math == cu::Math::Tf32 ? kTf32Tol : kBf16Tol; }
// Inputs the tensor cores take unchanged, so the product is checked, not the conversion.
void representable(cu::Math math, std::vector<float>& v) {
  if (math == cu::Math::Tf32) round_to_tf32(v);
  if (math == cu::Math::Bf16) round_to_bf16(v);
}
const char* math_name(cu::Math math) { return math == cu::Math::Fp32 ? "fp32" : math == cu::Math::Tf32 ? "tf32" : "bf16"; }
}  // namespace

TEST_CASE("cuBLAS row-major gemm, strided-batched, fp32, TF32 and bf16" * doctest::test_suite("gpu")) {
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  cu::Blas blas;
  struct Shape {
    int m, n, k;
  };
  const Shape shapes[] = {{1, 1, 1}, {37, 1, 129}, {64, 48, 32}, {129, 37, 65}, {5, 7, 0}, {256, 256, 512}};
  for (const Shape& s : shapes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (cu::Math math : {cu::Math::Fp32, cu::Math::Tf32, cu::Math::Bf16}) {
          const double tol = tol_for(math);
          INFO("m " << s.m << " n " << s.n << " k " << s.k << " ta " << ta << " tb " << tb << " " << math_name(math));
          // Row-major with padded leading dimensions (+3), as when addressing column blocks.
          const int ar = ta ? s.k : s.m, ac = ta ? s.m : s.k, br = tb ? s.n : s.k, bc = tb ? s.k : s.n;
          const int lda = ac + 3, ldb = bc + 3, ldc = s.n + 3;
          const int batch = 3;
          const long long sa = static_cast<long long>(ar) * lda + 5, sb = static_cast<long long>(br) * ldb + 2,
                          sc = static_cast<long long>(s.m) * ldc + 1;
          auto a = random_floats(rng, static_cast<std::size_t>(sa) * batch);
          auto b = random_floats(rng, static_cast<std::size_t>(sb) * batch);
          representable(math, a);
          representable(math, b);
          const auto c0 = random_floats(rng, static_cast<std::size_t>(sc) * batch);
          const float alpha = 0.75f, beta = 0.5f;
          // Reference in double (model::gemm<double> = OpenBLAS dgemm), element by element of the batch.
          std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()), cd(c0.begin(), c0.end());
          for (int i = 0; i < batch; ++i)
            cpu::gemm<double>(ta, tb, s.m, s.n, s.k, alpha, ad.data() + i * sa, lda, bd.data() + i * sb, ldb, beta,
                              cd.data() + i * sc, ldc);
          auto ga = up(a), gb = up(b);
          auto gc1 = up(c0);
          cu::gemm(blas, math, ta, tb, s.m, s.n, s.k, alpha, ga.get(), lda, gb.get(), ldb, beta, gc1.get(), ldc);
          std::vector<double> want1 = cd;  // only the first product changed
          for (std::size_t e = static_cast<std::size_t>(sc); e < want1.size(); ++e) want1[e] = c0[e];
          CHECK_CLOSE(gc1.download(), want1, tol, 1.0);
          auto gcb = up(c0);
          cu::gemm_strided_batched(blas, math, ta, tb, s.m, s.n, s.k, alpha, ga.get(), lda, sa, gb.get(), ldb, sb,
                                   beta, gcb.get(), ldc, sc, batch);
          CHECK_CLOSE(gcb.download(), cd, tol, 1.0);
        }
      }
    }
    // The packed helpers (beta = 0: the poisoned output must be fully overwritten).
    for (cu::Math math : {cu::Math::Fp32, cu::Math::Tf32, cu::Math::Bf16}) {
      const double tol = tol_for(math);
      auto a = random_floats(rng, static_cast<std::size_t>(s.m) * s.k);   // m × k (or k × m for tn)
      auto b = random_floats(rng, static_cast<std::size_t>(s.k) * s.n);   // k × n (or n × k for nt)
      representable(math, a);
      representable(math, b);
      const std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
      auto ga = up(a), gb = up(b);
      const int M = s.m, N = s.n, K = s.k;
      auto one = [&](const char* what, bool ta, bool tb, auto&& launch) {
        INFO(what << " m " << M << " n " << N << " k " << K << " " << math_name(math));
        std::vector<double> want(static_cast<std::size_t>(M) * N, 0.0);
        cpu::gemm<double>(ta, tb, M, N, K, 1.0, ad.data(), std::max(1, ta ? M : K), bd.data(), std::max(1, tb ? K : N),
                          0.0, want.data(), std::max(1, N));
        auto gc = poisoned(want.size());
        launch(gc.get());
        CHECK_CLOSE(gc.download(), want, tol, 1.0);
      };
      one("nn", false, false, [&](float* c) { cu::matmul_nn(blas, math, c, ga.get(), gb.get(), M, N, K); });
      one("nt", false, true, [&](float* c) { cu::matmul_nt(blas, math, c, ga.get(), gb.get(), M, N, K); });
      one("tn", true, false, [&](float* c) { cu::matmul_tn(blas, math, c, ga.get(), gb.get(), M, N, K); });
    }
  }
}

TEST_CASE("gemm_bias: cuBLASLt's bias (and ReLU) epilogue and the two-step path agree, and match double" *
          doctest::test_suite("gpu")) {
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  struct Shape {
    int m, n, k;
  };
  // Padded leading dimensions (+3 on C: the columns beyond n must stay untouched), k = 0 (C = bias).
  const Shape shapes[] = {{1, 1, 1}, {37, 33, 129}, {64, 48, 32}, {5, 7, 0}, {256, 768, 512}};
  for (const Shape& s : shapes) {
    for (cu::Math math : {cu::Math::Fp32, cu::Math::Tf32, cu::Math::Bf16})
    for (bool relu : {false, true}) {
      INFO("m " << s.m << " n " << s.n << " k " << s.k << " " << math_name(math) << std::string(relu ? " ReLU" : ""));
      const int lda = std::max(1, s.k) + 1, ldb = s.n + 2, ldc = s.n + 3;
      auto a = random_floats(rng, static_cast<std::size_t>(s.m) * lda);
      auto b = random_floats(rng, static_cast<std::size_t>(std::max(1, s.k)) * ldb);
      const auto bias = random_floats(rng, static_cast<std::size_t>(s.n));
      representable(math, a);
      representable(math, b);
      const auto c0 = random_floats(rng, static_cast<std::size_t>(s.m) * ldc);
      std::vector<double> want(c0.begin(), c0.end());
      for (int i = 0; i < s.m; ++i)
        for (int j = 0; j < s.n; ++j) {
          double acc = bias[static_cast<std::size_t>(j)];
          for (int p = 0; p < s.k; ++p)
            acc += static_cast<double>(a[static_cast<std::size_t>(i) * lda + p]) * b[static_cast<std::size_t>(p) * ldb + j];
          want[static_cast<std::size_t>(i) * ldc + j] = relu ? std::max(acc, 0.0) : acc;
        }
      auto ga = up(a), gb = up(b), gbias = up(bias);
      std::vector<std::vector<float>> got;
      for (bool lt : {true, false}) {
        cu::Blas blas;
        blas.use_cublaslt(lt);
        auto gc = up(c0);
        cu::gemm_bias(blas, math, s.m, s.n, s.k, ga.get(), lda, gb.get(), ldb, gbias.get(), gc.get(), ldc, relu);
        // The emulator always has cuBLASLt; a GPU without an algorithm for a shape takes the two-step
        // path, so there only the path's answer is required, not which one ran.
        if (!lt || s.k == 0) CHECK_FALSE(blas.last_gemm_bias_fused());
        if (lt && s.k > 0 && cu::cuda_emulated()) CHECK(blas.last_gemm_bias_fused());
        if (lt && s.k > 0 && !cu::cuda_emulated())
          MESSAGE("gemm_bias m " << s.m << " n " << s.n << " k " << s.k << " " << math_name(math) << std::string(relu ? " ReLU" : "")
                                 << ": " << std::string(blas.last_gemm_bias_fused() ? "cuBLASLt's epilogue" : "two-step (cuBLASLt declined)"));
        got.push_back(gc.download());
        INFO("cuBLASLt " << lt);
        CHECK_CLOSE(got.back(), want, tol_for(math), 1.0);
      }
      std::vector<double> other(got[1].begin(), got[1].end());
      CHECK_CLOSE(got[0], other, tol_for(math), 1.0);
    }
  }
  // Matrices at odd offsets (a weight inside the parameter block, a column block): cuBLASLt is told
  // how aligned each one is. A bias not 16-byte aligned goes the two-step way.
  const int m = 33, n = 40, k = 24;
  const auto a = random_floats(rng, static_cast<std::size_t>(m) * k + 1);
  const auto b = random_floats(rng, static_cast<std::size_t>(k) * n + 3);
  const auto bias = random_floats(rng, static_cast<std::size_t>(n) + 4);
  std::vector<double> want(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = bias[static_cast<std::size_t>(j) + 4];
      for (int p = 0; p < k; ++p) acc += static_cast<double>(a[1 + static_cast<std::size_t>(i) * k + p]) * b[3 + static_cast<std::size_t>(p) * n + j];
      want[static_cast<std::size_t>(i) * n + j] = acc;
    }
  auto ga = up(a), gb = up(b);
  for (int bias_off : {4, 1}) {
    INFO("bias at offset " << bias_off << " floats");
    std::vector<float> bias_host(bias);
    if (bias_off == 1) std::copy(bias.begin() + 4, bias.begin() + 4 + n, bias_host.begin() + 1);
    auto gb2 = up(bias_host);
    cu::Blas blas;
    auto gc = poisoned(static_cast<std::size_t>(m) * n + 5);
    cu::gemm_bias(blas, cu::Math::Fp32, m, n, k, ga.get() + 1, k, gb.get() + 3, n, gb2.get() + bias_off, gc.get() + 5, n);
    if (cu::cuda_emulated()) CHECK(blas.last_gemm_bias_fused() == (bias_off == 4));
    const auto all = gc.download();
    CHECK_CLOSE(std::vector<float>(all.begin() + 5, all.end()), want, 1e-5, 1.0);
  }
}

namespace {
// bf16 bits of values already representable in bf16 (round_to_bf16 above), and back.
std::vector<std::uint16_t> bf16_bits(const std::vector<float>& v) {
  std::vector<std::uint16_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint32_t b;
    std::memcpy(&b, &v[i], 4);
    out[i] = static_cast<std::uint16_t>(b >> 16);
  }
  return out;
}
std::vector<float> bf16_floats(const std::vector<std::uint16_t>& v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint32_t b = static_cast<std::uint32_t>(v[i]) << 16;
    std::memcpy(&out[i], &b, 4);
  }
  return out;
}
}  // namespace

TEST_CASE("cuBLAS with bf16 storage: bf16 A and B, a float32 or bf16 C, row-major with padding" *
          doctest::test_suite("gpu")) {
  // The inputs are bf16 values, so the float32 C is their product to float32 accumulation (1e-5), and
  // the bf16 C that rounded once more: within one bf16 rounding (2^-8 of the largest value) of it.
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  cu::Blas blas;
  struct Shape {
    int m, n, k;
  };
  for (const Shape& s : {Shape{1, 1, 1}, Shape{37, 5, 129}, Shape{64, 48, 32}, Shape{129, 37, 65}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        INFO("m " << s.m << " n " << s.n << " k " << s.k << " ta " << ta << " tb " << tb);
        const int ar = ta ? s.k : s.m, ac = ta ? s.m : s.k, br = tb ? s.n : s.k, bc = tb ? s.k : s.n;
        const int lda = ac + 3, ldb = bc + 1, ldc = s.n + 2;
        auto a = random_floats(rng, static_cast<std::size_t>(ar) * lda);
        auto b = random_floats(rng, static_cast<std::size_t>(br) * ldb);
        auto c0 = random_floats(rng, static_cast<std::size_t>(s.m) * ldc);
        round_to_bf16(a);
        round_to_bf16(b);
        round_to_bf16(c0);  // so the bf16 C starts from the same values as the float32 one
        const float alpha = 0.75f, beta = 0.5f;
        std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()), want(c0.begin(), c0.end());
        cpu::gemm<double>(ta, tb, s.m, s.n, s.k, alpha, ad.data(), lda, bd.data(), ldb, beta, want.data(), ldc);
        cu::DeviceArray<std::uint16_t> ga(bf16_bits(a)), gb(bf16_bits(b)), gc16(bf16_bits(c0));
        auto gc = up(c0);
        cu::gemm_bf16_storage(blas, ta, tb, s.m, s.n, s.k, alpha, ga.get(), lda, gb.get(), ldb, beta, gc.get(), ldc);
        CHECK_CLOSE(gc.download(), want, kFp32Tol, 1.0);
        cu::gemm_bf16_storage(blas, ta, tb, s.m, s.n, s.k, alpha, ga.get(), lda, gb.get(), ldb, beta, gc16.get(), ldc);
        const std::vector<float> c16 = bf16_floats(gc16.download());
        CHECK_CLOSE(c16, want, 1.0 / 256, 1.0);
        // Really rounded to bf16 (every value has a zero lower half), not a float32 result cut short.
        std::vector<float> again = c16;
        round_to_bf16(again);
        CHECK(again == c16);
      }
    }
  }
  const std::uint16_t* none = nullptr;
  CHECK_THROWS_AS(cu::gemm_bf16_storage(blas, false, false, 2, 2, 0, 1.0f, none, 1, none, 2, 0.0f,
                                        static_cast<float*>(nullptr), 2),
                  attnlab::ShapeError);
  // The bench's timing of the three storages runs and times something.
  const cu::StorageSeconds t = cu::bf16_storage_seconds(64, 96, 32, true, 1);
  CHECK(t.fp32 > 0.0);
  CHECK(t.bf16_inputs > 0.0);
  CHECK(t.bf16 > 0.0);
}

namespace {
// A float32 value rounded to bf16 (backend/bf16.hpp: to nearest, ties to even, what cuBLAS and the
// kernels store), widened back.
float bf16_rn(float x) { return attnlab::backend::to_float(attnlab::backend::to_bf16(x)); }
}  // namespace

TEST_CASE("gemm_bias_bf16_storage: cuBLASLt's epilogue rounds once, the two-step path twice, bit for bit" *
          doctest::test_suite("gpu")) {
  // Small integers (A, B) and eighths (the bias) make every product and sum exact in float32 on any
  // hardware (tensor cores included), so each path's answer is known bit for bit: the epilogue
  // stores bf16(act(p + bias)), the two-step path bf16(act(bf16(p) + bias)). The sums reach a few
  // thousand, where bf16 keeps 8 significant bits, so the two differ often (p = 257, bias 0.75: 258
  // against 256). The emulator always fuses where cuBLASLt is on, k ≥ 1 and there is something to
  // add; on a GPU either path may run, and the test says which.
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  std::uniform_int_distribution<int> small(-7, 7), eighths(-512, 512);
  struct Shape {
    int m, n, k;
  };
  for (const Shape& s : {Shape{1, 1, 1}, Shape{37, 33, 129}, Shape{64, 48, 32}, Shape{5, 7, 0}, Shape{256, 96, 64}}) {
    std::vector<float> a(static_cast<std::size_t>(s.m) * std::max(1, s.k)), b(static_cast<std::size_t>(std::max(1, s.k)) * s.n),
        bias(static_cast<std::size_t>(s.n));
    for (float& x : a) x = static_cast<float>(small(rng));
    for (float& x : b) x = static_cast<float>(small(rng));
    for (float& x : bias) x = static_cast<float>(eighths(rng)) / 8.0f;
    cu::DeviceArray<std::uint16_t> ga(bf16_bits(a)), gb(bf16_bits(b));
    auto gbias = up(bias);
    for (bool with_bias : {true, false})
      for (bool relu : {false, true})
        for (bool lt : {true, false}) {
          INFO("m " << s.m << " n " << s.n << " k " << s.k << std::string(with_bias ? " bias" : "") << std::string(relu ? " ReLU" : "")
                    << std::string(lt ? " cuBLASLt on" : " cuBLASLt off"));
          std::vector<float> fused(static_cast<std::size_t>(s.m) * s.n), two_step(fused.size());
          for (int i = 0; i < s.m; ++i)
            for (int j = 0; j < s.n; ++j) {
              float p = 0.0f;
              for (int l = 0; l < s.k; ++l)
                p += a[static_cast<std::size_t>(i) * s.k + l] * b[static_cast<std::size_t>(l) * s.n + j];
              const float add = with_bias ? bias[static_cast<std::size_t>(j)] : 0.0f;
              const float r1 = p + add, r2 = (s.k > 0 ? bf16_rn(p) : 0.0f) + add;
              fused[static_cast<std::size_t>(i) * s.n + j] = bf16_rn(relu ? std::max(r1, 0.0f) : r1);
              two_step[static_cast<std::size_t>(i) * s.n + j] = bf16_rn(relu ? std::max(r2, 0.0f) : r2);
            }
          cu::Blas blas;
          blas.use_cublaslt(lt);
          cu::DeviceArray<std::uint16_t> gc(fused.size());
          gc.poison();
          cu::gemm_bias_bf16_storage(blas, s.m, s.n, s.k, ga.get(), gb.get(), with_bias ? gbias.get() : nullptr,
                                     gc.get(), relu);
          const bool ran_fused = blas.last_gemm_bias_fused();
          if (!lt || s.k == 0 || (!with_bias && !relu)) CHECK_FALSE(ran_fused);
          if (lt && s.k > 0 && (with_bias || relu) && cu::cuda_emulated()) CHECK(ran_fused);
          if (lt && s.k > 0 && (with_bias || relu) && !cu::cuda_emulated())
            MESSAGE("gemm_bias_bf16_storage m " << s.m << " n " << s.n << " k " << s.k << std::string(with_bias ? " bias" : "")
                                                << std::string(relu ? " ReLU" : "") << ": "
                                                << std::string(ran_fused ? "cuBLASLt's epilogue" : "two-step (cuBLASLt declined)"));
          const std::vector<float> got = bf16_floats(gc.download()), &want = ran_fused ? fused : two_step;
          std::size_t wrong = 0, differ = 0;
          for (std::size_t e = 0; e < got.size(); ++e) {
            wrong += got[e] != want[e];
            differ += fused[e] != two_step[e];
          }
          CHECK_MESSAGE(wrong == 0, wrong << " of " << got.size() << " outputs not "
                                          << std::string(ran_fused ? "bf16(act(p + bias))" : "bf16(act(bf16(p) + bias))"));
          // The two roundings really differ here, so the check above tells the paths apart.
          if (with_bias && s.m * s.n >= 1000) CHECK(differ > 0);
        }
  }
  // A bias not 16-byte aligned goes the two-step way; an output at an odd element (2 bytes past an
  // aligned one) is described to cuBLASLt, which still fuses in the emulator.
  const int m = 33, n = 40, k = 24;
  std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n), bias(n + 1);
  for (float& x : a) x = static_cast<float>(small(rng));
  for (float& x : b) x = static_cast<float>(small(rng));
  for (float& x : bias) x = static_cast<float>(eighths(rng)) / 8.0f;
  cu::DeviceArray<std::uint16_t> ga(bf16_bits(a)), gb(bf16_bits(b));
  auto gbias = up(bias);
  for (int bias_off : {0, 1})
    for (int c_off : {0, 1}) {
      INFO("bias at offset " << bias_off << " floats, C at offset " << c_off << " elements");
      cu::Blas blas;
      cu::DeviceArray<std::uint16_t> gc(static_cast<std::size_t>(m) * n + 1);
      gc.poison();
      cu::gemm_bias_bf16_storage(blas, m, n, k, ga.get(), gb.get(), gbias.get() + bias_off, gc.get() + c_off, true);
      const bool ran_fused = blas.last_gemm_bias_fused();
      if (cu::cuda_emulated()) CHECK(ran_fused == (bias_off == 0));
      const std::vector<float> all = bf16_floats(gc.download());
      std::size_t wrong = 0;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          float p = 0.0f;
          for (int l = 0; l < k; ++l) p += a[static_cast<std::size_t>(i) * k + l] * b[static_cast<std::size_t>(l) * n + j];
          const float add = bias[static_cast<std::size_t>(j + bias_off)], r = ran_fused ? p + add : bf16_rn(p) + add;
          wrong += all[static_cast<std::size_t>(c_off + i * n + j)] != bf16_rn(std::max(r, 0.0f));
        }
      CHECK(wrong == 0);
    }
}

TEST_CASE("TF32 and bf16 on arbitrary float32 inputs: each within its own error, and really rounded" *
          doctest::test_suite("gpu")) {
  // Inputs not representable in TF32 or bf16, so the tensor cores really convert them. Simulated in
  // NumPy at these sizes, the error measure (largest difference over largest value) is about 3e-4
  // for TF32 (1.1e-3 if the conversion truncates) and 2e-3 for bf16 (7e-3 truncating); the bounds
  // are 3e-3 and 1e-2, fp32 on the same inputs must still meet 1e-5, and bf16's error must be 3×
  // TF32's: a FAST_16BF call that quietly computed in TF32 or fp32 fails that.
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  cu::Blas blas;
  const int m = 256, n = 256, k = 512;
  const auto a = random_floats(rng, static_cast<std::size_t>(m) * k), b = random_floats(rng, static_cast<std::size_t>(k) * n);
  const std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
  std::vector<double> want(static_cast<std::size_t>(m) * n, 0.0);
  cpu::gemm<double>(false, false, m, n, k, 1.0, ad.data(), k, bd.data(), n, 0.0, want.data(), n);
  auto ga = up(a), gb = up(b);
  auto product = [&](cu::Math math) {
    auto gc = poisoned(want.size());
    cu::matmul_nn(blas, math, gc.get(), ga.get(), gb.get(), m, n, k);
    return gc.download();
  };
  const auto fp32 = product(cu::Math::Fp32), tf32 = product(cu::Math::Tf32), bf16 = product(cu::Math::Bf16);
  CHECK_CLOSE(fp32, want, kFp32Tol, 1.0);
  CHECK_CLOSE(tf32, want, 3e-3, 1.0);
  CHECK_CLOSE(bf16, want, kBf16Tol, 1.0);
  const double e_tf32 = compare(tf32, want).rel, e_bf16 = compare(bf16, want).rel;
  MESSAGE("normwise error on arbitrary inputs: TF32 " << e_tf32 << ", bf16 " << e_bf16);
  CHECK(e_bf16 > 3 * e_tf32);
}

namespace {
// One shape of the bf16 attention tests: B batches of Tq queries over Tk keys, C channels in H heads.
struct AttentionCase {
  const char* what;
  int B, Tq, Tk, C, H;
  bool causal;
  std::vector<int> key_len;  // empty: all visible
  bool fused;                // Q, K, V as column blocks of one B·T × 3C buffer (self-attention only)
  int pad = 0;               // not fused: rows of q, k, v, out (dout, the gradients) C + pad floats apart
};
}  // namespace

TEST_CASE("mma.sync m16n8k16: the register layout of tensor_core.cuh is the hardware's" * doctest::test_suite("gpu")) {
  // The register-tile attention kernel and the emulator both follow the PTX ISA's description of which
  // lane holds which element; on a GPU this checks that description against the instruction itself
  // (a wrong lane or a swapped half gives an error of order 1, not rounding). Inputs already bf16, so
  // the product is exact in float and only the order of the 16-term sums differs.
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  for (int run = 0; run < 3; ++run) {
    auto a = random_floats(rng, 16 * 16), b = random_floats(rng, 16 * 8);
    const auto c = random_floats(rng, 16 * 8);
    round_to_bf16(a);
    round_to_bf16(b);
    std::vector<double> want(16 * 8);
    for (int i = 0; i < 16; ++i)
      for (int n = 0; n < 8; ++n) {
        double acc = c[i * 8 + n];
        for (int k = 0; k < 16; ++k) acc += double(a[i * 16 + k]) * b[k * 8 + n];
        want[i * 8 + n] = acc;
      }
    auto da = up(a), db = up(b), dc = up(c);
    auto dd = poisoned(16 * 8);
    cu::mma_layout_probe(dd.get(), da.get(), db.get(), dc.get());
    const auto got = dd.download();
    CHECK(compare(got, want, 1.0).nan == 0);
    CHECK(compare(got, want, 1.0).rel < 1e-6);
  }
}

TEST_CASE("bf16 tensor-core attention forward: within 1e-2 of the float32 CPU op, masks and strides included" *
          doctest::test_suite("gpu")) {
  // Q, K, V rounded to bf16 (2^-9 relative each) and the weights P rounded before P·V: the output moves
  // by about 1e-3 of its scale, lse by about 1e-3 absolute. The bound is 1e-2 (the per-op
  // tolerance for bf16); the error must also be above 1e-4, which the float32 kernel (1e-6) is not, so
  // the tensor-core path is the one measured.
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  const AttentionCase cases[] = {
      {"self, causal, d 64, T not a multiple of the tiles", 2, 70, 70, 128, 2, true, {}, false},
      {"cross, d 128, padding", 2, 37, 130, 128, 1, false, {130, 5}, false},
      {"d 16, one query, a fully masked batch", 3, 1, 65, 16, 1, false, {0, 1, 65}, false},
      {"fused Q/K/V (ld = 3C), causal, d 16", 2, 64, 64, 64, 4, true, {}, true},
      {"one tile exactly, d 32", 1, 64, 64, 96, 3, false, {}, false},
      // attention_forward_bf16 runs a register-tile kernel (mma.sync) for d = 32, 64, 128 and the wmma
      // kernel for the other multiples of 16: these cover both past their first tiles.
      {"d 48 (the wmma kernel), causal, three query blocks", 1, 150, 150, 96, 2, true, {}, false},
      {"d 64, causal, 300 queries (three blocks, warps past the diagonal)", 1, 300, 300, 128, 2, true, {}, false},
      {"fused Q/K/V (ld = 3C), d 64, padding", 2, 90, 90, 128, 2, false, {90, 33}, true},
      {"odd row strides (scalar loads and stores), d 64, causal", 2, 40, 40, 64, 1, true, {}, false, 1},
      {"odd row strides, d 32, cross, padding", 2, 17, 100, 64, 2, false, {100, 64}, false, 3},
  };
  for (const AttentionCase& c : cases) {
    INFO(std::string(c.what));
    attnlab::backend::AttentionShape sh = cu::packed_attention(nullptr, c.causal, c.B, c.Tq, c.Tk, c.C, c.H);
    std::vector<float> q, k, v;
    std::vector<float> qkv;
    const int ld = c.C + c.pad;
    if (c.fused) {
      qkv = random_floats(rng, static_cast<std::size_t>(c.B) * c.Tq * 3 * c.C);
      sh.ldq = sh.ldk = sh.ldv = 3 * c.C;
    } else {
      q = random_floats(rng, static_cast<std::size_t>(c.B) * c.Tq * ld);
      k = random_floats(rng, static_cast<std::size_t>(c.B) * c.Tk * ld);
      v = random_floats(rng, static_cast<std::size_t>(c.B) * c.Tk * ld);
      sh.ldq = sh.ldk = sh.ldv = sh.ldo = ld;
    }
    const std::size_t nout = static_cast<std::size_t>(c.B) * c.Tq * (c.fused ? c.C : ld),
                      nlse = static_cast<std::size_t>(c.B) * c.H * c.Tq;
    // The CPU op on host memory (its key_len is host memory too).
    std::vector<float> want(nout), want_lse(nlse), scratch(cpu::attention_lse_scratch<float>(c.Tq, c.Tk));
    attnlab::backend::AttentionShape hs = sh;
    hs.key_len = c.key_len.empty() ? nullptr : c.key_len.data();
    const float* hq = c.fused ? qkv.data() : q.data();
    const float* hk = c.fused ? qkv.data() + c.C : k.data();
    const float* hv = c.fused ? qkv.data() + 2 * c.C : v.data();
    cpu::attention_forward_lse<float>(want.data(), want_lse.data(), scratch.data(), hq, hk, hv, hs);

    auto dkl = up(c.key_len.empty() ? std::vector<int>{0} : c.key_len);
    sh.key_len = c.key_len.empty() ? nullptr : dkl.get();
    auto gout = poisoned(nout), glse = poisoned(nlse), gref = poisoned(nout), gref_lse = poisoned(nlse);
    DeviceArray<float> gq = up(c.fused ? qkv : q), gk = up(c.fused ? std::vector<float>{0.0f} : k),
                       gv = up(c.fused ? std::vector<float>{0.0f} : v);
    const float* dq = gq.get();
    const float* dk = c.fused ? gq.get() + c.C : gk.get();
    const float* dv = c.fused ? gq.get() + 2 * c.C : gv.get();
    cu::attention_forward_bf16(gout.get(), glse.get(), dq, dk, dv, sh);
    cu::attention_forward(gref.get(), gref_lse.get(), dq, dk, dv, sh);
    // The C columns of each output row (a padded row's last pad floats are written by no one).
    auto columns = [&](const std::vector<float>& x) {
      if (c.pad == 0) return x;
      std::vector<float> r;
      for (std::size_t row = 0; row < x.size() / ld; ++row)
        r.insert(r.end(), x.begin() + static_cast<long>(row * ld), x.begin() + static_cast<long>(row * ld + c.C));
      return r;
    };
    want = columns(want);
    const auto out = columns(gout.download()), lse = glse.download();
    CHECK_CLOSE(out, want, kBf16Tol, 1.0);
    CHECK_CLOSE(lse, want_lse, kBf16Tol, 1.0);  // −inf rows must match exactly (compare())
    CHECK_CLOSE(columns(gref.download()), want, kFp32Tol, 1.0);
    const double e = compare(out, want, 1.0).rel;
    MESSAGE(std::string(c.what) << ": bf16 attention output error " << e << ", lse " << compare(lse, want_lse, 1.0).rel);
    CHECK(e > 1e-4);
    // AttentionVariant::Wmma: the wmma kernel at every width, within the same bound; where the
    // register-tile kernel ran first, the two must differ somewhere (they round the same bf16 inputs
    // alike, but not their exponentials and sums), or the switch did nothing.
    cu::set_kernel_choice({cu::AttentionVariant::Wmma});
    auto gw = poisoned(nout), gw_lse = poisoned(nlse);
    cu::attention_forward_bf16(gw.get(), gw_lse.get(), dq, dk, dv, sh);
    cu::set_kernel_choice({});
    const auto wout = columns(gw.download());
    CHECK_CLOSE(wout, want, kBf16Tol, 1.0);
    CHECK_CLOSE(gw_lse.download(), want_lse, kBf16Tol, 1.0);
    MESSAGE(std::string(c.what) << ": the wmma kernel's output error " << compare(wout, want, 1.0).rel);
    const int d = c.C / c.H;
    if (d == 32 || d == 64 || d == 128) CHECK(wout != out);
    else CHECK(wout == out);
    // AttentionVariant::OneTile: the register-tile kernel with one row tile per warp (8 warps) where
    // the default has two (4 warps, d ≤ 64). Each row's arithmetic is the same, so the output must be
    // too, bit for bit.
    cu::set_kernel_choice({cu::AttentionVariant::OneTile});
    auto g1 = poisoned(nout), g1_lse = poisoned(nlse);
    cu::attention_forward_bf16(g1.get(), g1_lse.get(), dq, dk, dv, sh);
    cu::set_kernel_choice({});
    CHECK(columns(g1.download()) == out);
    CHECK(g1_lse.download() == lse);
  }
}

TEST_CASE("bf16 tensor-core attention backward: dQ, dK, dV within their bound of the float32 CPU op" *
          doctest::test_suite("gpu")) {
  // The five products take bf16 inputs (Q, K, V, dout, and the recomputed P and dS): each gradient
  // moves by up to about 1e-2 of its scale, more than the forward, since dS = P ⊙ (dP − D) subtracts
  // nearly equal terms. Over 25 runs of fresh seeds under the emulator the worst was 1.6e-2 (one
  // query, d 16); the seed is fresh every run, so the bound is 5e-2, and the error must be above 1e-4
  // (the float32 kernels: 1e-6). The gradients start from the same random values on both sides
  // (they accumulate), and out and lse come from the float32 forward, so the backward alone is
  // measured; then once more after the bf16 forward.
  std::mt19937 rng(fresh_seed());
  INFO("seed " << fresh_seed());
  const AttentionCase cases[] = {
      {"self, causal, d 64, T = 70", 2, 70, 70, 128, 2, true, {}, false},
      {"cross, d 64, padding", 2, 37, 130, 128, 2, false, {130, 5}, false},
      {"d 16, one query, a fully masked batch", 3, 1, 65, 16, 1, false, {0, 1, 65}, false},
      {"fused Q/K/V (ld = 3C), causal, d 16", 2, 64, 64, 64, 4, true, {}, true},
      {"one tile exactly, d 32", 1, 64, 64, 96, 3, false, {}, false},
      // attention_backward_bf16 runs register-tile kernels (mma.sync) for d = 32 and 64, the wmma ones
      // for d = 16 and 48; each case runs both (AttentionVariant::Wmma).
      {"d 64, causal, T = 200 (four key and query blocks)", 1, 200, 200, 128, 2, true, {}, false},
      {"fused Q/K/V (ld = 3C), d 64, padding", 2, 90, 90, 128, 2, false, {90, 33}, true},
      {"odd row strides (scalar loads), d 64, causal", 2, 40, 40, 64, 1, true, {}, false, 1},
      {"odd row strides, d 32, cross, padding", 2, 17, 100, 64, 2, false, {100, 64}, false, 3},
      {"d 48 (wmma kernels), cross", 1, 33, 70, 96, 2, false, {}, false},
  };
  for (const AttentionCase& c : cases) {
    INFO(std::string(c.what));
    attnlab::backend::AttentionShape sh = cu::packed_attention(nullptr, c.causal, c.B, c.Tq, c.Tk, c.C, c.H);
    const int w = c.fused ? 3 * c.C : c.C + c.pad;  // row width of the q/k/v (and gradient) buffers
    if (c.fused) sh.ldq = sh.ldk = sh.ldv = w;
    if (c.pad) sh.ldq = sh.ldk = sh.ldv = sh.ldo = w;  // out and dout too
    const std::size_t nq = static_cast<std::size_t>(c.B) * c.Tq * w, nk = static_cast<std::size_t>(c.B) * c.Tk * w,
                      nout = static_cast<std::size_t>(c.B) * c.Tq * (c.pad ? w : c.C),
                      nlse = static_cast<std::size_t>(c.B) * c.H * c.Tq;
    const auto q = random_floats(rng, nq), k = c.fused ? q : random_floats(rng, nk), v = c.fused ? q : random_floats(rng, nk);
    const auto dout = random_floats(rng, nout);
    const auto gq0 = random_floats(rng, nq), gk0 = c.fused ? gq0 : random_floats(rng, nk), gv0 = c.fused ? gq0 : random_floats(rng, nk);
    const std::size_t ko = c.fused ? c.C : 0, vo = c.fused ? 2 * c.C : 0;  // column offsets in a fused buffer
    // The CPU: dq, dk, dv += the gradients (host key_len).
    attnlab::backend::AttentionShape hs = sh;
    hs.key_len = c.key_len.empty() ? nullptr : c.key_len.data();
    std::vector<float> wq = gq0, wk = gk0, wv = gv0, scratch(cpu::attention_lse_scratch<float>(c.Tq, c.Tk));
    if (c.fused) {  // one buffer: the three gradients land in their own columns
      cpu::attention_backward_lse<float>(wq.data(), wq.data() + ko, wq.data() + vo, scratch.data(), dout.data(), q.data(),
                                         q.data() + ko, q.data() + vo, hs);
      wk = wv = wq;
    } else {
      cpu::attention_backward_lse<float>(wq.data(), wk.data(), wv.data(), scratch.data(), dout.data(), q.data(), k.data(),
                                         v.data(), hs);
    }
    auto dkl = up(c.key_len.empty() ? std::vector<int>{0} : c.key_len);
    sh.key_len = c.key_len.empty() ? nullptr : dkl.get();
    auto gq = up(q), gk = up(k), gv = up(v), gdout = up(dout);
    const float* dqp = gq.get();
    const float* dkp = c.fused ? gq.get() + ko : gk.get();
    const float* dvp = c.fused ? gq.get() + vo : gv.get();
    for (const auto& [bf16_forward, kernel] : {std::pair{false, ""}, std::pair{true, ""}, std::pair{true, "wmma"}}) {
      INFO("forward in " << std::string(bf16_forward ? "bf16" : "float32") << ", attention variant " << (*kernel ? kernel : "default"));
      auto gout = poisoned(nout), glse = poisoned(nlse);
      if (bf16_forward)
        cu::attention_forward_bf16(gout.get(), glse.get(), dqp, dkp, dvp, sh);
      else
        cu::attention_forward(gout.get(), glse.get(), dqp, dkp, dvp, sh);
      auto ggq = up(gq0), ggk = up(gk0), ggv = up(gv0);
      float* gdq = ggq.get();
      float* gdk = c.fused ? ggq.get() + ko : ggk.get();
      float* gdv = c.fused ? ggq.get() + vo : ggv.get();
      if (*kernel) cu::set_kernel_choice({cu::AttentionVariant::Wmma});
      cu::attention_backward_bf16(gdq, gdk, gdv, gdout.get(), gout.get(), glse.get(), dqp, dkp, dvp, sh);
      cu::set_kernel_choice({});
      const auto rq = ggq.download(), rk = c.fused ? rq : ggk.download(), rv = c.fused ? rq : ggv.download();
      // The gradients alone (what was added), measured against the CPU's additions.
      auto added = [](const std::vector<float>& after, const std::vector<float>& before) {
        std::vector<double> a(after.size());
        for (std::size_t e = 0; e < a.size(); ++e) a[e] = double(after[e]) - before[e];
        return a;
      };
      const auto want_q = added(wq, gq0), want_k = added(wk, gk0), want_v = added(wv, gv0);
      const auto got_q = added(rq, gq0), got_k = added(rk, gk0), got_v = added(rv, gv0);
      // Measured against the inputs' scale (1) where a gradient is smaller: dQ and dK sum
      // dS_ij = P_ij (dP_ij − D_i), whose terms cancel (Σ_j dS_ij = 0), so with one query the
      // result can be far smaller than the terms whose bf16 rounding it carries.
      const double eq = compare(got_q, want_q, 1.0).rel, ek = compare(got_k, want_k, 1.0).rel,
                   ev = compare(got_v, want_v, 1.0).rel;
      MESSAGE(std::string(c.what) << std::string(bf16_forward ? ", after the bf16 forward" : "")
                                  << std::string(*kernel ? ", the wmma kernels" : "") << ": dq " << eq << ", dk " << ek
                                  << ", dv " << ev);
      CHECK(compare(got_q, want_q, 1.0).nan == 0);
      CHECK(compare(got_k, want_k, 1.0).nan == 0);
      CHECK(compare(got_v, want_v, 1.0).nan == 0);

      CHECK(eq < 5e-2);
      CHECK(ek < 5e-2);
      CHECK(ev < 5e-2);
      if (!bf16_forward) CHECK(std::max({eq, ek, ev}) > 1e-4);
    }
  }
}

int main(int argc, char** argv) {
  bool cpu_only = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--cpu-only") cpu_only = true;
    else args.push_back(argv[i]);
  }
  doctest::Context context(static_cast<int>(args.size()), args.data());
  std::string why = "--cpu-only";
  const int gate = cpu_only ? 77 : attnlab::gputest::device_gate(&why);
  if (gate == 1) return 1;
  if (gate == 77) {
    context.setOption("test-suite", "cpu");
    const int rc = context.run();
    if (rc != 0 || context.shouldExit() || cpu_only) return rc;
    std::cout << "skipped: no CUDA device (" << why << "); the CPU-side checks above passed" << std::endl;
    return 77;
  }
  return context.run();
}
