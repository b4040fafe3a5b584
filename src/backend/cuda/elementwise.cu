// Element-wise kernels (see elementwise.hpp): grid-stride loops, one element per thread per step. No
// __restrict__: each element is read and written by one thread only, so in-place calls (out == inp)
// are allowed.
#include "backend/cuda/elementwise.hpp"

#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"

namespace attnlab::cuda {

namespace {

constexpr unsigned kThreads = 256;
constexpr float kGeluK = 0.7978845608028654f;  // √(2/π)
constexpr float kGeluA = 0.044715f;

#define ATTNLAB_GRID_STRIDE(i, n)                                                          \
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

__global__ void add_kernel(float* out, const float* a, const float* b,
                           std::size_t n) {
  ATTNLAB_GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}

__global__ void accumulate_kernel(float* dst, const float* src, std::size_t n) {
  ATTNLAB_GRID_STRIDE(i, n) dst[i] += src[i];
}

__global__ void relu_forward_kernel(float* out, const float* inp, std::size_t n) {
  ATTNLAB_GRID_STRIDE(i, n) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

__global__ void relu_backward_kernel(float* dinp, const float* dout,
                                     const float* inp, std::size_t n) {
  ATTNLAB_GRID_STRIDE(i, n) dinp[i] += inp[i] > 0.0f ? dout[i] : 0.0f;
}

__global__ void gelu_forward_kernel(float* out, const float* inp, std::size_t n) {
  ATTNLAB_GRID_STRIDE(i, n) {
    const float x = inp[i];
    const float t = tanhf(kGeluK * (x + kGeluA * x * x * x));
    out[i] = 0.5f * x * (1.0f + t);
  }
}

__global__ void gelu_backward_kernel(float* dinp, const float* dout,
                                     const float* inp, std::size_t n) {
  ATTNLAB_GRID_STRIDE(i, n) {
    const float x = inp[i];
    const float t = tanhf(kGeluK * (x + kGeluA * x * x * x));
    const float du = kGeluK * (1.0f + 3.0f * kGeluA * x * x);
    dinp[i] += dout[i] * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
  }
}

#undef ATTNLAB_GRID_STRIDE

}  // namespace

void add_forward(float* out, const float* a, const float* b, std::size_t n, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(add_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(out, a, b, n);
  CUDA_CHECK_LAUNCH();
}

void accumulate(float* dst, const float* src, std::size_t n, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(accumulate_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(dst, src, n);
  CUDA_CHECK_LAUNCH();
}

void relu_forward(float* out, const float* inp, std::size_t n, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(relu_forward_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(out, inp, n);
  CUDA_CHECK_LAUNCH();
}

void relu_backward(float* dinp, const float* dout, const float* inp, std::size_t n, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(relu_backward_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(dinp, dout, inp, n);
  CUDA_CHECK_LAUNCH();
}

void gelu_forward(float* out, const float* inp, std::size_t n, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(gelu_forward_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(out, inp, n);
  CUDA_CHECK_LAUNCH();
}

void gelu_backward(float* dinp, const float* dout, const float* inp, std::size_t n, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(gelu_backward_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(dinp, dout, inp, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
