#pragma once
// bfloat16 as the backends store it: the element type of activation buffers kept in 16 bits (the
// bf16 overloads of backend::Ops), and its two conversions on the host.
//
// A bf16 is the top half of a float32's bits: sign, the same 8 exponent bits, 7 explicit mantissa bits
// (about 2.4 decimal digits). So widening is exact (append 16 zero bits) and the range is float32's;
// narrowing rounds to nearest, ties to even, as the GPU's __float2bfloat16_rn and cuBLAS's bf16 output
// do, so the CPU's reference and the device round every value the same way. A NaN stays a NaN (made
// quiet: the payload's top bit set, so dropping the low half cannot turn it into an infinity); ±inf
// stay; a finite value beyond the largest bf16 (about 3.39e38) rounds to ±inf, as ties to even says.
//
// Why a struct and not a bare uint16_t: a Bf16* cannot be passed where a float* or an int buffer is
// meant (the overloads of backend::Ops tell activation storage apart by the pointer's type), and
// nothing converts to or from it implicitly. Layout: exactly the 2 bytes of the bits, so a Bf16 array
// is what cuBLAS's CUDA_R_16BF and CUDA's __nv_bfloat16 read.
#include <bit>
#include <cstddef>
#include <cstdint>

namespace attnlab::backend {

struct Bf16 {
  std::uint16_t bits = 0;
};
static_assert(sizeof(Bf16) == 2, "Bf16 must be exactly the 2 bytes of its bits");

// float32 → bf16, to nearest, ties to even.
inline Bf16 to_bf16(float x) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(x);
  if ((b & 0x7f800000u) == 0x7f800000u) {
    if (b & 0x007fffffu) b |= 0x00400000u;  // NaN: quiet, so its top half is still a NaN
  } else {
    b += 0x7fffu + ((b >> 16) & 1u);  // add half an ulp (less one when the kept bit is even), truncate
  }
  return Bf16{static_cast<std::uint16_t>(b >> 16)};
}

// float64 → bf16, to nearest, ties to even, rounding once: the double is first narrowed to float32
// with rounding to odd (truncate, then set the lowest bit when anything was dropped), which keeps
// enough information for the second rounding to be the one a direct rounding would give (float32
// has 16 more bits than bf16, at least the 2 that rounding to odd needs).
inline Bf16 to_bf16(double x) {
  float f = static_cast<float>(x);  // to nearest
  if (static_cast<double>(f) != x && x == x && f - f == 0.0f) {
    std::uint32_t b = std::bit_cast<std::uint32_t>(f);
    if (static_cast<double>(f) > x ? f > 0.0f : f < 0.0f) --b;  // rounded away from zero: truncate
    b |= 1u;
    f = std::bit_cast<float>(b);
  } else if (f - f != 0.0f && x == x && x - x == 0.0) {
    // A finite double beyond float32's range: the float32 just below it in magnitude, made odd (all
    // mantissa bits set already), rounds to ±inf as bf16 should.
    f = std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) - 1u);
  }
  return to_bf16(f);
}

// bf16 → float32: exact.
inline float to_float(Bf16 h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h.bits) << 16); }

// Element-wise on host arrays (the CPU backend's conversions, the tests' uploads and downloads).
template <typename T>
void to_bf16(Bf16* dst, const T* src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = to_bf16(src[i]);
}
template <typename T>
void from_bf16(T* dst, const Bf16* src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(to_float(src[i]));
}

}  // namespace attnlab::backend
