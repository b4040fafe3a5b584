// Element-wise kernels (see elementwise.hpp): grid-stride loops, one element per thread per step. No
// __restrict__: each element is read and written by one thread only, so in-place calls (out == inp)
// are allowed. clip_factor: a fixed grid of block sums in double, added by one thread in block order.
#include "backend/cuda/elementwise.hpp"

#include "backend/clip_scale.hpp"
#include "backend/dropout_hash.hpp"

#include "backend/cuda/bf16.cuh"
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

// add: dinp += …; else dinp = … without reading it (the buffer may hold anything). E: float, or bf16
// bits for all three arrays.
template <typename E>
__global__ void relu_backward_kernel(E* dinp, const E* dout, const E* inp, std::size_t n, bool add) {
  ATTNLAB_GRID_STRIDE(i, n) {
    detail::put_grad_to(dinp + i, detail::load(inp + i) > 0.0f ? detail::load(dout + i) : 0.0f, add);
  }
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

__global__ void scale_kernel(float* x, std::size_t n, float s) {
  ATTNLAB_GRID_STRIDE(i, n) x[i] *= s;
}

// The mask depends on (seed, i) only, so any grid gives the CPU's mask, and the backward draws it
// again. __fmul_rn: the product rounded on its own, as the CPU rounds it, not fused into the sum.
// In: the input's storage (float, or bf16 bits: a sub-layer's bf16 output); out and residual float.
template <bool kResidual, typename In>
__global__ void dropout_forward_kernel(float* out, const In* inp, const float* residual, std::size_t n,
                                       std::uint64_t seed, std::uint32_t threshold, float keep_scale) {
  ATTNLAB_GRID_STRIDE(i, n) {
    const float dropped =
        __fmul_rn(detail::load(inp + i), backend::dropout_keep(seed, i, threshold) ? keep_scale : 0.0f);
    out[i] = kResidual ? residual[i] + dropped : dropped;
  }
}

// G: dinp's storage (float, or bf16 bits); dout float.
template <typename G>
__global__ void dropout_backward_kernel(G* dinp, const float* dout, std::size_t n, std::uint64_t seed,
                                        std::uint32_t threshold, float keep_scale, bool add) {
  ATTNLAB_GRID_STRIDE(i, n) {
    detail::put_grad_to(dinp + i, dout[i] * (backend::dropout_keep(seed, i, threshold) ? keep_scale : 0.0f), add);
  }
}

__global__ void __launch_bounds__(kThreads)
    sum_squares_kernel(double* __restrict__ partials, const float* __restrict__ x, std::size_t n) {
  __shared__ double scratch[detail::kWarpSize];
  double acc = 0.0;
  ATTNLAB_GRID_STRIDE(i, n) {
    const double xi = x[i];
    acc += xi * xi;
  }
  acc = detail::block_reduce<double, false>(acc, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// One block: the check values scanned by every thread, the partials added by one in block order.
__global__ void __launch_bounds__(kThreads)
    clip_factor_kernel(double* __restrict__ norm, double* __restrict__ scale, const double* __restrict__ partials,
                       double max_norm, const double* __restrict__ check, std::size_t n_check) {
  int bad = 0;
  for (std::size_t i = threadIdx.x; i < n_check; i += blockDim.x) bad |= !isfinite(check[i]);
  bad = __syncthreads_or(bad);
  if (threadIdx.x != 0) return;
  double total = 0.0;
  for (int b = 0; b < kSumSquaresBlocks; ++b) total += partials[b];
  const double r = sqrt(total);
  *norm = r;
  *scale = bad || !isfinite(r) ? static_cast<double>(nanf("")) : static_cast<double>(backend::clip_scale(r, max_norm));
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

void relu_backward(float* dinp, const float* dout, const float* inp, std::size_t n, backend::GradMode mode,
                   Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(relu_backward_kernel<float>, detail::grid_for(n, kThreads), kThreads, 0, stream)(
      dinp, dout, inp, n, mode == backend::GradMode::Add);
  CUDA_CHECK_LAUNCH();
}

void relu_backward_bf16(std::uint16_t* dinp, const std::uint16_t* dout, const std::uint16_t* inp, std::size_t n,
                        backend::GradMode mode, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(relu_backward_kernel<std::uint16_t>, detail::grid_for(n, kThreads), kThreads, 0, stream)(
      dinp, dout, inp, n, mode == backend::GradMode::Add);
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

void scale(float* x, std::size_t n, float s, Stream stream) {
  if (n == 0) return;
  ATTNLAB_LAUNCH(scale_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(x, n, s);
  CUDA_CHECK_LAUNCH();
}

namespace {
template <typename In>
void dropout_forward_of(const char* what, float* out, const In* inp, const float* residual, std::size_t n, float p,
                        std::uint64_t seed, Stream stream) {
  const auto [keep_scale, threshold] = backend::dropout_params<float>(what, p);
  if (n == 0) return;
  if (residual) {
    ATTNLAB_LAUNCH((dropout_forward_kernel<true, In>), detail::grid_for(n, kThreads), kThreads, 0, stream)(
        out, inp, residual, n, seed, threshold, keep_scale);
  } else {
    ATTNLAB_LAUNCH((dropout_forward_kernel<false, In>), detail::grid_for(n, kThreads), kThreads, 0, stream)(
        out, inp, residual, n, seed, threshold, keep_scale);
  }
  CUDA_CHECK_LAUNCH();
}

template <typename G>
void dropout_backward_of(const char* what, G* dinp, const float* dout, std::size_t n, float p, std::uint64_t seed,
                         backend::GradMode mode, Stream stream) {
  const auto [keep_scale, threshold] = backend::dropout_params<float>(what, p);
  if (n == 0) return;
  ATTNLAB_LAUNCH(dropout_backward_kernel<G>, detail::grid_for(n, kThreads), kThreads, 0, stream)(
      dinp, dout, n, seed, threshold, keep_scale, mode == backend::GradMode::Add);
  CUDA_CHECK_LAUNCH();
}
}  // namespace

void dropout_forward(float* out, const float* inp, const float* residual, std::size_t n, float p, std::uint64_t seed,
                     Stream stream) {
  dropout_forward_of("cuda::dropout_forward", out, inp, residual, n, p, seed, stream);
}

void dropout_forward_bf16(float* out, const std::uint16_t* inp, const float* residual, std::size_t n, float p,
                          std::uint64_t seed, Stream stream) {
  dropout_forward_of("cuda::dropout_forward_bf16", out, inp, residual, n, p, seed, stream);
}

void dropout_backward(float* dinp, const float* dout, std::size_t n, float p, std::uint64_t seed,
                      backend::GradMode mode, Stream stream) {
  dropout_backward_of("cuda::dropout_backward", dinp, dout, n, p, seed, mode, stream);
}

void dropout_backward_bf16(std::uint16_t* dinp, const float* dout, std::size_t n, float p, std::uint64_t seed,
                           backend::GradMode mode, Stream stream) {
  dropout_backward_of("cuda::dropout_backward_bf16", dinp, dout, n, p, seed, mode, stream);
}

void sum_squares_partials(double* partials, const float* x, std::size_t n, Stream stream) {
  ATTNLAB_LAUNCH(sum_squares_kernel, kSumSquaresBlocks, kThreads, 0, stream)(partials, x, n);
  CUDA_CHECK_LAUNCH();
}

void clip_factor(double* norm, double* scale, double* partials, const float* x, std::size_t n, double max_norm,
                 const double* check, std::size_t n_check, Stream stream) {
  sum_squares_partials(partials, x, n, stream);  // n = 0: every partial 0
  ATTNLAB_LAUNCH(clip_factor_kernel, 1, kThreads, 0, stream)(norm, scale, partials, max_norm, check, n_check);
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
