#pragma once
// CPU-side helpers of the GPU kernel tests: comparing a kernel's output with the CPU op's, spotting
// elements a kernel never wrote (the output buffers are poisoned with NaN before each launch), random
// inputs, and the double-precision GELU reference (the CPU model has no GELU). Plain C++, no CUDA: the
// test runs their self-checks even on a machine without a GPU.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace attnlab::gputest {

inline constexpr double kFp32Tol = 1e-5;  // float32 kernels against the float32 CPU op
inline constexpr double kTf32Tol = 1e-3;  // TF32 tensor-core products (10-bit mantissa inputs)
inline constexpr double kBf16Tol = 1e-2;  // bf16 tensor-core products (7-bit mantissa inputs)

// What DeviceArray::poison() leaves in a float: every bit set, a NaN.
inline float poison_value() {
  const std::uint32_t bits = 0xFFFFFFFFu;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The comparison of a kernel's output `got` with the reference `want`:
//   rel = max_i |got_i − want_i| / max(max_i |want_i|, floor)
// the normwise relative error. `floor` is the scale of the values that went into the result (1 for
// inputs of order 1): a result that cancels to nearly zero (a one-element vector a + b with b ≈ −a)
// carries rounding errors of the size of its inputs, not of itself, and must not be compared against
// its own tiny size. floor = 0 gives the plain normwise error (with 1e-30 so an all-zero reference
// compares absolutely).
// Infinities compare equal when both sides hold the same one (lse of a fully masked row is −inf);
// a NaN in `got` where `want` has none is counted in `nan` and makes rel infinite, as does a size
// mismatch.
struct Comparison {
  double rel = 0.0;
  std::size_t nan = 0;    // NaN in got where want is not NaN: unwritten (poisoned) or broken
  std::size_t worst = 0;  // index of the largest difference
  std::string str() const {
    std::ostringstream s;
    s << "relative error " << rel << " (worst at " << worst << "), " << nan << " NaN";
    return s.str();
  }
};

template <typename A, typename B>
Comparison compare(const std::vector<A>& got, const std::vector<B>& want, double floor = 0.0) {
  Comparison c;
  if (got.size() != want.size()) {
    c.rel = INFINITY;
    return c;
  }
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (std::isnan(w)) {
      if (!std::isnan(g)) ++c.nan;  // the reference says NaN (a deliberate bad token): so must the kernel
      continue;
    }
    if (std::isnan(g)) {
      ++c.nan;
      continue;
    }
    if (std::isinf(w) || std::isinf(g)) {
      if (g != w) {
        diff = INFINITY;
        c.worst = i;
      }
      continue;
    }
    scale = std::max(scale, std::fabs(w));
    const double d = std::fabs(g - w);
    if (d > diff) {
      diff = d;
      c.worst = i;
    }
  }
  c.rel = c.nan ? INFINITY : diff / std::max({scale, floor, 1e-30});
  return c;
}

inline std::vector<float> random_floats(std::mt19937& rng, std::size_t n, float sd = 1.0f, float mean = 0.0f) {
  std::normal_distribution<float> dist(mean, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline std::vector<int> random_ints(std::mt19937& rng, std::size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Truncates each value to a narrower float: keeps the bits of `mask` (sign, exponent and the top
// mantissa bits) and clears the rest.
inline void keep_bits(std::vector<float>& v, std::uint32_t mask) {
  for (float& x : v) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    bits &= mask;
    std::memcpy(&x, &bits, sizeof x);
  }
}

// Rounds each value to TF32 (float32 with the low 13 of its 23 mantissa bits cleared: 10 bits left),
// by truncation. Inputs made this way pass through the TF32 tensor cores unchanged whether the library
// rounds or truncates to TF32, so a TF32 product of them differs from the exact one only by float32
// accumulation: the test can then check the wiring (transposes, leading dimensions, strides) at TF32's
// 1e-3 tolerance without depending on how cuBLAS converts. (On arbitrary inputs TF32's conversion alone
// costs a normwise error of about 5e-4 when rounding and 1.1e-3 when truncating; see docs/cuda.md.)
inline void round_to_tf32(std::vector<float>& v) { keep_bits(v, 0xFFFFE000u); }

// The same for bfloat16 (the top 16 bits: 7 mantissa bits), for the bf16 products' wiring.
inline void round_to_bf16(std::vector<float>& v) { keep_bits(v, 0xFFFF0000u); }

// GELU, tanh form, in double: the reference for the GPU kernels.
inline double gelu_ref(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi), a = 0.044715;
  return 0.5 * x * (1.0 + std::tanh(k * (x + a * x * x * x)));
}
inline double gelu_grad_ref(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi), a = 0.044715;
  const double t = std::tanh(k * (x + a * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * a * x * x);
}

}  // namespace attnlab::gputest
