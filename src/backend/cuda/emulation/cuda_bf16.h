#pragma once
// bfloat16 as the emulation build provides it: the storage type, the two conversions the kernels use
// and the raw bits (__bfloat16_as_ushort). __float2bfloat16_rn rounds to nearest, ties to even (NaN
// stays a quiet NaN); __bfloat162float is exact (a bf16 is the top half of a float).
#include <cstdint>
#include <cstring>

struct __nv_bfloat16 {
  std::uint16_t bits;
};

inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  if ((b & 0x7f800000u) == 0x7f800000u) {
    if (b & 0x007fffffu) b |= 0x00400000u;  // a NaN stays a NaN (quiet) whatever its payload
  } else {
    b += 0x7fffu + ((b >> 16) & 1u);
  }
  return __nv_bfloat16{static_cast<std::uint16_t>(b >> 16)};
}

inline float __bfloat162float(__nv_bfloat16 h) {
  const std::uint32_t b = static_cast<std::uint32_t>(h.bits) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.bits; }
