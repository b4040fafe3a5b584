#pragma once
// Error checks for CUDA runtime calls, cuBLAS calls and kernel launches. Include from .cu files only
// (it includes the CUDA headers). A failure throws attnlab::RuntimeError (exit code 1) naming the
// file, the line, the call as written and CUDA's own message, e.g.
//   CUDA error at layernorm.cu:88 in cudaMalloc(&p, bytes): out of memory (cudaErrorMemoryAllocation)
//
//   CUDA_CHECK(cudaMemcpy(...));        any call returning cudaError_t
//   CUBLAS_CHECK(cublasGemmEx(...));    any call returning cublasStatus_t
//   kernel<<<grid, block, 0, stream>>>(...);
//   CUDA_CHECK_LAUNCH();                a bad launch configuration (too many threads, too much shared
//                                       memory, no kernel image for this GPU) is reported only through
//                                       cudaGetLastError(); errors while the kernel runs surface at the
//                                       next synchronising call (a cudaMemcpy, device_synchronize()).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "util/error.hpp"

namespace attnlab::cuda::detail {

// cuBLAS's name for a status (matmul.cu: cuBLAS is loaded on first use, so this goes through it).
const char* cublas_status_string(cublasStatus_t st);

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw RuntimeError(std::string("CUDA error at ") + file + ":" + std::to_string(line) + " in " + call + ": " +
                     cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")");
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t st, const char* call, const char* file, int line) {
  throw RuntimeError(std::string("cuBLAS error at ") + file + ":" + std::to_string(line) + " in " + call + ": " +
                     cublas_status_string(st) + " (status " + std::to_string(static_cast<int>(st)) + ")");
}

}  // namespace attnlab::cuda::detail

#define CUDA_CHECK(call)                                                               \
  do {                                                                                 \
    const cudaError_t attnlab_cuda_err_ = (call);                                      \
    if (attnlab_cuda_err_ != cudaSuccess)                                              \
      ::attnlab::cuda::detail::throw_cuda_error(attnlab_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                             \
  do {                                                                                 \
    const cublasStatus_t attnlab_cublas_st_ = (call);                                  \
    if (attnlab_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                   \
      ::attnlab::cuda::detail::throw_cublas_error(attnlab_cublas_st_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch. cudaGetLastError also clears the error, so it is reported once.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
