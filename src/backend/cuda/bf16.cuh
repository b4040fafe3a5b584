#pragma once
// Device loads and stores of an element that is float32 or bf16 (a buffer of bf16 raw bits,
// std::uint16_t, as the launchers take them): one kernel body serves both storages through these
// overloads. A bf16 widens exactly and is stored rounded to nearest, ties to even
// (__float2bfloat16_rn, as the host's backend::to_bf16). Include from .cu files only.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace attnlab::cuda::detail {

__device__ __forceinline__ float load(const float* p) { return *p; }
__device__ __forceinline__ float load(const std::uint16_t* p) {
  return __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(p));
}
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(std::uint16_t* p, float v) {
  *reinterpret_cast<__nv_bfloat16*>(p) = __float2bfloat16_rn(v);
}

// A gradient element under backend::GradMode, in either storage: added to (add: widened, summed in
// float32, stored once) or stored without reading the old value.
template <typename G>
__device__ __forceinline__ void put_grad_to(G* p, float g, bool add) {
  store(p, add ? load(p) + g : g);
}

}  // namespace attnlab::cuda::detail
