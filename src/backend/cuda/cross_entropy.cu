// Cross-entropy kernels (see cross_entropy.hpp). One block per row for the forward (a row is V
// values, up to 50K): a block-wide max, then Σ exp(z − max) and Σ (z − max) in double. The backward
// and softmax_from_lse are element-wise given the row's lse: grid-stride loops over N·V.
#include "backend/cuda/cross_entropy.hpp"

#include <algorithm>
#include <string>

#include "backend/cuda/bf16.cuh"
#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"

namespace attnlab::cuda {

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxRowBlocks = 65535u * 8u;

// L: the logits' storage, float or bf16 bits (widened as read).
template <typename L>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_rows_kernel(float* __restrict__ lse, double* __restrict__ row_loss,
                              const L* __restrict__ logits, const int* __restrict__ targets, int N, int V,
                              float smoothing, int ignore_index) {
  __shared__ float fscratch[detail::kWarpSize];
  __shared__ double dscratch[detail::kWarpSize];
  for (std::size_t r = blockIdx.x; r < static_cast<std::size_t>(N); r += gridDim.x) {
    const L* z = logits + r * V;
    float mx = -INFINITY;
    for (int c = threadIdx.x; c < V; c += blockDim.x) mx = fmaxf(mx, detail::load(z + c));
    mx = detail::block_reduce<float, true>(mx, fscratch);
    // Σ exp(z − max) and Σ (z − max) (for the smoothing term), in double.
    double sum = 0.0, sum_shifted = 0.0;
    for (int c = threadIdx.x; c < V; c += blockDim.x) {
      const float s = detail::load(z + c) - mx;
      sum += expf(s);
      sum_shifted += s;
    }
    sum = detail::block_reduce<double, false>(sum, dscratch);
    sum_shifted = detail::block_reduce<double, false>(sum_shifted, dscratch);
    if (threadIdx.x == 0) {
      const double log_sum = log(sum);
      lse[r] = static_cast<float>(static_cast<double>(mx) + log_sum);  // the CPU's rounding
      const int t = targets[r];
      double loss = 0.0;
      if (t != ignore_index) {
        if (t < 0 || t >= V) {
          loss = __longlong_as_double(0x7ff8000000000000LL);  // NaN: a target outside the vocabulary
        } else {
          const double sum_logp = sum_shifted - static_cast<double>(V) * log_sum;  // Σ_c log p_c
          const double logp_t = static_cast<double>(detail::load(z + t) - mx) - log_sum;
          const double eps = smoothing;
          loss = -(1.0 - eps) * logp_t - eps / V * sum_logp;
        }
      }
      row_loss[r] = loss;
    }
  }
}

// No __restrict__ on dlogits and logits: they may be the same buffer. Each element is read and then
// written by one thread, so the in-place call is safe.
template <typename L>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_backward_kernel(L* dlogits, const L* logits, const float* __restrict__ lse,
                                  const int* __restrict__ targets, std::size_t n, int V, float smoothing,
                                  int ignore_index, bool none, float g) {
  const float uniform = smoothing / static_cast<float>(V);
  const float hit = (1.0f - smoothing) * g;
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = e / V;
    const int c = static_cast<int>(e % V), t = targets[r];
    if (none || t == ignore_index) {  // no counted row at all, or a padding row: no gradient
      detail::store(dlogits + e, 0.0f);
      continue;
    }
    float d = (expf(detail::load(logits + e) - lse[r]) - uniform) * g;
    if (c == t) d -= hit;  // as the CPU: the uniform part first, then the target's share
    detail::store(dlogits + e, d);
  }
}

__global__ void __launch_bounds__(kThreads)
    softmax_from_lse_kernel(float* probs, const float* logits, const float* __restrict__ lse, std::size_t n, int V) {
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    probs[e] = expf(logits[e] - lse[e / V]);
}

void check_shape(const char* what, int N, int V) {
  if (N < 0 || V < 1)
    throw ShapeError(std::string(what) + ": N = " + std::to_string(N) + ", V = " + std::to_string(V) + " (need N ≥ 0, V ≥ 1)");
}

template <typename L>
void cross_entropy_forward_of(const char* what, float* lse, double* row_loss, const L* logits, const int* targets,
                              int N, int V, float smoothing, int ignore_index, Stream stream) {
  check_shape(what, N, V);
  if (N == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(static_cast<std::size_t>(N), kMaxRowBlocks));
  ATTNLAB_LAUNCH(cross_entropy_rows_kernel<L>, blocks, kThreads, 0, stream)(lse, row_loss, logits, targets, N, V,
                                                                            smoothing, ignore_index);
  CUDA_CHECK_LAUNCH();
}

template <typename L>
void cross_entropy_backward_of(const char* what, L* dlogits, const L* logits, const float* lse, const int* targets,
                               int N, int V, float smoothing, int ignore_index, int count, float dloss,
                               Stream stream) {
  check_shape(what, N, V);
  if (count < 0) throw ShapeError(std::string(what) + ": count = " + std::to_string(count));
  const std::size_t n = static_cast<std::size_t>(N) * V;
  if (n == 0) return;
  const float g = count > 0 ? dloss / static_cast<float>(count) : 0.0f;  // the CPU's rounding
  ATTNLAB_LAUNCH(cross_entropy_backward_kernel<L>, detail::grid_for(n, kThreads), kThreads, 0, stream)(
      dlogits, logits, lse, targets, n, V, smoothing, ignore_index, count == 0, g);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void cross_entropy_forward(float* lse, double* row_loss, const float* logits, const int* targets, int N, int V,
                           float smoothing, int ignore_index, Stream stream) {
  cross_entropy_forward_of("cuda::cross_entropy_forward", lse, row_loss, logits, targets, N, V, smoothing,
                           ignore_index, stream);
}

void cross_entropy_forward_bf16(float* lse, double* row_loss, const std::uint16_t* logits, const int* targets, int N,
                                int V, float smoothing, int ignore_index, Stream stream) {
  cross_entropy_forward_of("cuda::cross_entropy_forward_bf16", lse, row_loss, logits, targets, N, V, smoothing,
                           ignore_index, stream);
}

void cross_entropy_backward(float* dlogits, const float* logits, const float* lse, const int* targets, int N, int V,
                            float smoothing, int ignore_index, int count, float dloss, Stream stream) {
  cross_entropy_backward_of("cuda::cross_entropy_backward", dlogits, logits, lse, targets, N, V, smoothing,
                            ignore_index, count, dloss, stream);
}

void cross_entropy_backward_bf16(std::uint16_t* dlogits, const std::uint16_t* logits, const float* lse,
                                 const int* targets, int N, int V, float smoothing, int ignore_index, int count,
                                 float dloss, Stream stream) {
  cross_entropy_backward_of("cuda::cross_entropy_backward_bf16", dlogits, logits, lse, targets, N, V, smoothing,
                            ignore_index, count, dloss, stream);
}

void softmax_from_lse(float* probs, const float* logits, const float* lse, int N, int V, Stream stream) {
  check_shape("cuda::softmax_from_lse", N, V);
  const std::size_t n = static_cast<std::size_t>(N) * V;
  if (n == 0) return;
  ATTNLAB_LAUNCH(softmax_from_lse_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(probs, logits, lse, n, V);
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
