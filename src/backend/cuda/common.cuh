#pragma once
// Device helpers shared by the kernels of src/backend/cuda/ (include from .cu files only).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace attnlab::cuda::detail {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// One element of a gradient output under backend::GradMode: added to (Add), or stored without reading
// what the buffer held (Write: it may hold anything).
__device__ __forceinline__ void put_grad(float& out, float g, bool add) { out = add ? out + g : g; }

// Butterfly reductions within one warp: afterwards every lane holds the result. Every lane of the
// warp must call them (the full mask).
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = kWarpSize / 2; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
__device__ __forceinline__ double warp_sum(double v) {
  for (int o = kWarpSize / 2; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = kWarpSize / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

// Block-wide sum or max; every thread gets the result. blockDim.x must be a multiple of 32 (at most
// 1024) and every thread of the block must call it (it has barriers); scratch holds 32 values. The
// trailing barrier lets the caller reuse scratch at once.
template <typename T, bool kMax>
__device__ __forceinline__ T block_reduce(T v, T* scratch) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize, warps = blockDim.x / kWarpSize;
  if constexpr (kMax) v = warp_max(v);
  else v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if constexpr (kMax) {
    v = lane < warps ? scratch[lane] : -INFINITY;
    v = warp_max(v);
  } else {
    v = lane < warps ? scratch[lane] : T(0);
    v = warp_sum(v);
  }
  __syncthreads();
  return v;
}

// Blocks for a grid-stride loop over n items with `threads` per block: enough to fill any current
// GPU, capped so the grid stays within limits for any n (the kernels loop over the rest).
inline unsigned grid_for(std::size_t n, unsigned threads) {
  const std::size_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(blocks, 65535u * 8u)));
}

}  // namespace attnlab::cuda::detail
