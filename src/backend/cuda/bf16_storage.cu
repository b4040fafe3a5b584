// bf16 conversions and the bf16 linear layer's epilogue (see bf16_storage.hpp). Grid-stride loops,
// one element per thread per step.
#include "backend/cuda/bf16_storage.hpp"

#include <string>

#include "backend/cuda/bf16.cuh"
#include "backend/cuda/check.hpp"
#include "backend/cuda/common.cuh"
#include "backend/cuda/launch.cuh"

namespace attnlab::cuda {

namespace {

constexpr unsigned kThreads = 256;

__global__ void to_bf16_kernel(std::uint16_t* dst, const float* __restrict__ src, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    detail::store(dst + i, src[i]);
}

__global__ void from_bf16_kernel(float* dst, const std::uint16_t* __restrict__ src, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = detail::load(src + i);
}

// Element i of the B × rows × C that are rounded: column i mod C of row (i / C) mod rows of batch i / (rows·C).
__global__ void to_bf16_rows_kernel(std::uint16_t* dst, const float* __restrict__ src, int rows, int C,
                                    std::int64_t ld, std::int64_t batch, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t row = i / static_cast<std::size_t>(C);
    const std::int64_t off = static_cast<std::int64_t>(row / static_cast<std::size_t>(rows)) * batch +
                             static_cast<std::int64_t>(row % static_cast<std::size_t>(rows)) * ld +
                             static_cast<std::int64_t>(i % static_cast<std::size_t>(C));
    detail::store(dst + off, src[off]);
  }
}

__global__ void bias_act_bf16_kernel(std::uint16_t* out, const float* __restrict__ bias, int OC, std::size_t n,
                                     bool relu, bool product) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float y = product ? detail::load(out + i) : 0.0f;
    if (bias) y += bias[i % static_cast<std::size_t>(OC)];
    if (relu) y = y > 0.0f ? y : 0.0f;  // relu_forward's comparison
    detail::store(out + i, y);
  }
}

}  // namespace

void to_bf16(std::uint16_t* dst, const float* src, std::size_t n, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(to_bf16_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(dst, src, n);
  CUDA_CHECK_LAUNCH();
}

void from_bf16(float* dst, const std::uint16_t* src, std::size_t n, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(from_bf16_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(dst, src, n);
  CUDA_CHECK_LAUNCH();
}

void to_bf16_rows(std::uint16_t* dst, const float* src, int B, int rows, int C, std::int64_t ld,
                  std::int64_t batch, Stream stream) {
  if (B < 0 || rows < 0 || C < 0 || (C > 0 && ld < C))
    throw ShapeError("cuda::to_bf16_rows: B = " + std::to_string(B) + ", rows = " + std::to_string(rows) +
                     ", C = " + std::to_string(C) + ", ld = " + std::to_string(ld) +
                     " (need B, rows, C ≥ 0 and ld ≥ C)");
  const std::size_t n = static_cast<std::size_t>(B) * rows * C;
  if (n == 0) return;
  ATTNLAB_LAUNCH(to_bf16_rows_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(dst, src, rows, C, ld,
                                                                                         batch, n);
  CUDA_CHECK_LAUNCH();
}

void bias_act_bf16(std::uint16_t* out, const float* bias, int N, int OC, bool relu, bool product, Stream stream) {
  if (N < 0 || OC < 1)
    throw ShapeError("cuda::bias_act_bf16: N = " + std::to_string(N) + ", OC = " + std::to_string(OC) +
                     " (need N ≥ 0 and OC ≥ 1)");
  const std::size_t n = static_cast<std::size_t>(N) * OC;
  if (n == 0) return;
  ATTNLAB_LAUNCH(bias_act_bf16_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(out, bias, OC, n, relu,
                                                                                          product);
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
