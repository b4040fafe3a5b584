#pragma once
// One launch syntax for the two builds of the CUDA backend (include from .cu files only):
//
//   ATTNLAB_LAUNCH(kernel, grid, block, shared_bytes, stream)(args...);
//
// is kernel<<<grid, block, shared_bytes, stream>>>(args...) under nvcc, and the emulator's launcher
// (emulation/emulator.hpp) in the emulation build (-DATTNLAB_CUDA=EMULATE), where the host C++
// compiler builds the same sources. Kernel bodies are identical in both builds: anything that must
// differ lives in helpers like dynamic_shared below, never in a kernel.
#include <cuda_runtime.h>

#if defined(__CUDACC__)
#define ATTNLAB_LAUNCH(kernel, grid, block, smem, stream) kernel<<<(grid), (block), (smem), (stream)>>>
#else
#define ATTNLAB_LAUNCH(kernel, grid, block, smem, stream) \
  ::attnlab::cuda::emu::make_launcher(kernel, #kernel, (grid), (block), (smem), (stream))
#endif

namespace attnlab::cuda::detail {

// The block's dynamic shared memory (the launch's shared_bytes), as an array of T.
template <typename T>
__device__ __forceinline__ T* dynamic_shared() {
#if defined(__CUDACC__)
  extern __shared__ __align__(16) unsigned char attnlab_dynamic_smem[];
  return reinterpret_cast<T*>(attnlab_dynamic_smem);
#else
  return static_cast<T*>(::attnlab::cuda::emu::dynamic_shared_memory());
#endif
}

}  // namespace attnlab::cuda::detail
