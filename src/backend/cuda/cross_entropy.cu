// Cross-entropy kernels (see cross_entropy.hpp). One block per row for the softmax (a row is V values,
// up to 50K), then one single-block kernel that averages the row losses in a fixed order, so the loss
// repeats bit for bit.
#include "backend/cuda/cross_entropy.hpp"

#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"

namespace attnlab::cuda {

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxRowBlocks = 65535u * 8u;

__global__ void __launch_bounds__(kThreads)
    cross_entropy_rows_kernel(float* __restrict__ probs, float* __restrict__ row_loss,
                              const float* __restrict__ logits, const int* __restrict__ targets, int N, int V,
                              float smoothing, int ignore_index) {
  __shared__ float fscratch[detail::kWarpSize];
  __shared__ double dscratch[detail::kWarpSize];
  for (std::size_t r = blockIdx.x; r < static_cast<std::size_t>(N); r += gridDim.x) {
    const float* z = logits + r * V;
    float* p = probs + r * V;
    float mx = -INFINITY;
    for (int c = threadIdx.x; c < V; c += blockDim.x) mx = fmaxf(mx, z[c]);
    mx = detail::block_reduce<float, true>(mx, fscratch);
    // p = exp(z − max) unnormalised; Σ exp and Σ (z − max) (for the smoothing term) in double.
    double sum = 0.0, sum_shifted = 0.0;
    for (int c = threadIdx.x; c < V; c += blockDim.x) {
      const float s = z[c] - mx;
      const float e = expf(s);
      p[c] = e;
      sum += e;
      sum_shifted += s;
    }
    sum = detail::block_reduce<double, false>(sum, dscratch);
    sum_shifted = detail::block_reduce<double, false>(sum_shifted, dscratch);
    const float inv = static_cast<float>(1.0 / sum);
    for (int c = threadIdx.x; c < V; c += blockDim.x) p[c] *= inv;  // the same elements this thread wrote
    if (threadIdx.x == 0) {
      const int t = targets[r];
      double loss = 0.0;
      if (t != ignore_index) {
        if (t < 0 || t >= V) {
          loss = __longlong_as_double(0x7ff8000000000000LL);  // NaN: a target outside the vocabulary
        } else {
          const double log_sum = log(sum);
          const double sum_logp = sum_shifted - static_cast<double>(V) * log_sum;  // Σ_c log p_c
          const double logp_t = static_cast<double>(z[t] - mx) - log_sum;
          const double eps = smoothing;
          loss = -(1.0 - eps) * logp_t - eps / V * sum_logp;
        }
      }
      row_loss[r] = static_cast<float>(loss);
    }
  }
}

// One block: each thread adds rows tid, tid + blockDim, … in double, then a fixed-shape tree.
__global__ void __launch_bounds__(kThreads)
    cross_entropy_mean_kernel(float* __restrict__ loss, int* __restrict__ count, const float* __restrict__ row_loss,
                              const int* __restrict__ targets, int N, int ignore_index) {
  __shared__ double scratch[detail::kWarpSize];
  double total = 0.0, used = 0.0;
  for (int r = threadIdx.x; r < N; r += blockDim.x) {
    if (targets[r] == ignore_index) continue;
    total += row_loss[r];
    used += 1.0;
  }
  total = detail::block_reduce<double, false>(total, scratch);
  used = detail::block_reduce<double, false>(used, scratch);
  if (threadIdx.x == 0) {
    *count = static_cast<int>(used);
    *loss = used > 0.0 ? static_cast<float>(total / used) : 0.0f;
  }
}

__global__ void __launch_bounds__(kThreads)
    cross_entropy_backward_kernel(float* __restrict__ dlogits, const float* __restrict__ probs,
                                  const int* __restrict__ targets, const int* __restrict__ count, int N, int V,
                                  float smoothing, int ignore_index, float dloss) {
  const int n = *count;
  if (n == 0) return;
  const float g = dloss / static_cast<float>(n);
  const float uniform = smoothing / static_cast<float>(V);
  const float hit = (1.0f - smoothing) * g;
  for (std::size_t r = blockIdx.x; r < static_cast<std::size_t>(N); r += gridDim.x) {
    const int t = targets[r];
    if (t == ignore_index) continue;  // uniform over the block: every thread skips the row
    const float* p = probs + r * V;
    float* d = dlogits + r * V;
    for (int c = threadIdx.x; c < V; c += blockDim.x) {
      float v = d[c] + (p[c] - uniform) * g;
      if (c == t) v -= hit;  // as the CPU: the uniform part first, then the target's share
      d[c] = v;
    }
  }
}

void check_shape(const char* what, int N, int V) {
  if (N < 0 || V < 1)
    throw ShapeError(std::string(what) + ": N = " + std::to_string(N) + ", V = " + std::to_string(V) + " (need N ≥ 0, V ≥ 1)");
}

}  // namespace

void cross_entropy_forward(float* probs, float* row_loss, float* loss, int* count, const float* logits,
                           const int* targets, int N, int V, float smoothing, int ignore_index, Stream stream) {
  check_shape("cuda::cross_entropy_forward", N, V);
  if (N > 0) {
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(static_cast<std::size_t>(N), kMaxRowBlocks));
    ATTNLAB_LAUNCH(cross_entropy_rows_kernel, blocks, kThreads, 0, stream)(probs, row_loss, logits, targets, N, V, smoothing,
                                                               ignore_index);
    CUDA_CHECK_LAUNCH();
  }
  ATTNLAB_LAUNCH(cross_entropy_mean_kernel, 1, kThreads, 0, stream)(loss, count, row_loss, targets, N, ignore_index);
  CUDA_CHECK_LAUNCH();
}

void cross_entropy_backward(float* dlogits, const float* probs, const int* targets, const int* count, int N, int V,
                            float smoothing, int ignore_index, float dloss, Stream stream) {
  check_shape("cuda::cross_entropy_backward", N, V);
  if (N == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(static_cast<std::size_t>(N), kMaxRowBlocks));
  ATTNLAB_LAUNCH(cross_entropy_backward_kernel, blocks, kThreads, 0, stream)(dlogits, probs, targets, count, N, V, smoothing,
                                                                 ignore_index, dloss);
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
