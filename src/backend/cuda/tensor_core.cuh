#pragma once
// Tensor-core and vector-load helpers for kernels that keep their matrix tiles in registers (include
// from .cu files only). Like launch.cuh, this is where the two builds differ: under nvcc they are one
// PTX instruction each; in the emulation build they are written with warp shuffles and scalar loads
// that give the same values, so the kernels that call them run unchanged on the CPU.
//
// mma_bf16_16816 is PTX's `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` (sm_80 and later):
// D (16 × 8, float) += A (16 × 16, bf16) · B (16 × 8, bf16), the operands spread over the warp's 32
// lanes in the fixed layout the PTX ISA documents. With g = lane / 4 and t = lane % 4:
//   A, 4 registers of two bf16 each:  a[0] = A[g][2t, 2t+1]     a[1] = A[g+8][2t, 2t+1]
//                                     a[2] = A[g][2t+8, 2t+9]   a[3] = A[g+8][2t+8, 2t+9]
//   B, 2 registers:                   b[0] = B[2t, 2t+1][g]     b[1] = B[2t+8, 2t+9][g]
//   C/D, 4 floats:                    c[0], c[1] = D[g][2t, 2t+1]   c[2], c[3] = D[g+8][2t, 2t+1]
// (the lower-indexed element of a pair in the register's low 16 bits). Because the layout is known,
// unlike a wmma fragment's, a kernel can rescale an accumulator's rows in registers and feed a product's
// result (rounded to bf16) straight back as the next product's A operand: FlashAttention-2's loop.
// Every lane of the warp must call it (it is warp-synchronous, like the instruction).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace attnlab::cuda::detail {

// Two floats rounded to bf16 (nearest, ties to even) in one register: lo in bits 0–15, hi in 16–31.
__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  return static_cast<std::uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(lo))) |
         (static_cast<std::uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16);
}

__device__ __forceinline__ void mma_bf16_16816(float (&c)[4], const std::uint32_t (&a)[4],
                                               const std::uint32_t (&b)[2]) {
#if defined(__CUDACC__)
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  // Each lane gathers the two rows of A and the two columns of B its four outputs need from the lanes
  // that hold them (lanes 4g' + t' hold row g' of A and column g' of B), then sums over k in order in
  // float. bf16 × bf16 is exact in float; the tensor cores' summation order may differ within rounding.
  const int lane = static_cast<int>(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
  auto lo = [](std::uint32_t r) { return __uint_as_float(r << 16); };
  auto hi = [](std::uint32_t r) { return __uint_as_float(r & 0xffff0000u); };
  float arow[2][16], bcol[2][16];  // [row g, row g + 8][k], [column 2t, column 2t + 1][k]
  for (int tp = 0; tp < 4; ++tp) {
    const int k0 = 2 * tp, k1 = 2 * tp + 8;
    const std::uint64_t a01 = (static_cast<std::uint64_t>(a[1]) << 32) | a[0];
    const std::uint64_t a23 = (static_cast<std::uint64_t>(a[3]) << 32) | a[2];
    const std::uint64_t b01 = (static_cast<std::uint64_t>(b[1]) << 32) | b[0];
    const std::uint64_t ra01 = __shfl_sync(0xffffffffu, a01, 4 * g + tp);
    const std::uint64_t ra23 = __shfl_sync(0xffffffffu, a23, 4 * g + tp);
    const std::uint64_t rb0 = __shfl_sync(0xffffffffu, b01, 4 * (2 * t) + tp);
    const std::uint64_t rb1 = __shfl_sync(0xffffffffu, b01, 4 * (2 * t + 1) + tp);
    const auto w = [](std::uint64_t v, int half) { return static_cast<std::uint32_t>(v >> (32 * half)); };
    arow[0][k0] = lo(w(ra01, 0)), arow[0][k0 + 1] = hi(w(ra01, 0));
    arow[1][k0] = lo(w(ra01, 1)), arow[1][k0 + 1] = hi(w(ra01, 1));
    arow[0][k1] = lo(w(ra23, 0)), arow[0][k1 + 1] = hi(w(ra23, 0));
    arow[1][k1] = lo(w(ra23, 1)), arow[1][k1 + 1] = hi(w(ra23, 1));
    bcol[0][k0] = lo(w(rb0, 0)), bcol[0][k0 + 1] = hi(w(rb0, 0));
    bcol[0][k1] = lo(w(rb0, 1)), bcol[0][k1 + 1] = hi(w(rb0, 1));
    bcol[1][k0] = lo(w(rb1, 0)), bcol[1][k0 + 1] = hi(w(rb1, 0));
    bcol[1][k1] = lo(w(rb1, 1)), bcol[1][k1 + 1] = hi(w(rb1, 1));
  }
  for (int r = 0; r < 2; ++r)
    for (int n = 0; n < 2; ++n) {
      float acc = c[2 * r + n];
      for (int kk = 0; kk < 16; ++kk) acc += arow[r][kk] * bcol[n][kk];
      c[2 * r + n] = acc;
    }
#endif
}

// Four consecutive floats from global memory in one 16-byte load; p must be 16-byte aligned (the
// emulator checks, as the GPU would fault).
__device__ __forceinline__ void load_float4(float (&x)[4], const float* p) {
#if defined(__CUDACC__)
  const float4 v = __ldg(reinterpret_cast<const float4*>(p));
  x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
#else
  if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
    ::attnlab::cuda::emu::kernel_error("load_float4: the address is not 16-byte aligned");
  for (int e = 0; e < 4; ++e) x[e] = p[e];
#endif
}

// Two floats to global memory in one 8-byte store; p must be 8-byte aligned.
__device__ __forceinline__ void store_float2(float* p, float x0, float x1) {
#if defined(__CUDACC__)
  *reinterpret_cast<float2*>(p) = make_float2(x0, x1);
#else
  if (reinterpret_cast<std::uintptr_t>(p) % 8 != 0)
    ::attnlab::cuda::emu::kernel_error("store_float2: the address is not 8-byte aligned");
  p[0] = x0, p[1] = x1;
#endif
}

// Four consecutive bf16 (raw bits) from global memory in one 8-byte load, widened; p must be 8-byte
// aligned.
__device__ __forceinline__ void load_bf16x4(float (&x)[4], const std::uint16_t* p) {
#if defined(__CUDACC__)
  const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
  x[0] = __uint_as_float(v.x << 16), x[1] = __uint_as_float(v.x & 0xffff0000u);
  x[2] = __uint_as_float(v.y << 16), x[3] = __uint_as_float(v.y & 0xffff0000u);
#else
  if (reinterpret_cast<std::uintptr_t>(p) % 8 != 0)
    ::attnlab::cuda::emu::kernel_error("load_bf16x4: the address is not 8-byte aligned");
  for (int e = 0; e < 4; ++e) {
    const std::uint32_t bits = static_cast<std::uint32_t>(p[e]) << 16;
    std::memcpy(&x[e], &bits, sizeof bits);
  }
#endif
}

// Two floats rounded to bf16 (to nearest, ties to even) and stored in one 4-byte store; p must be
// 4-byte aligned.
__device__ __forceinline__ void store_bf16x2(std::uint16_t* p, float x0, float x1) {
#if defined(__CUDACC__)
  *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x0, x1);
#else
  if (reinterpret_cast<std::uintptr_t>(p) % 4 != 0)
    ::attnlab::cuda::emu::kernel_error("store_bf16x2: the address is not 4-byte aligned");
  const __nv_bfloat16 a = __float2bfloat16_rn(x0), b = __float2bfloat16_rn(x1);
  std::memcpy(p, &a, 2);
  std::memcpy(p + 1, &b, 2);
#endif
}

}  // namespace attnlab::cuda::detail
