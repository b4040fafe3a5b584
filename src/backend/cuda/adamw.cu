// The AdamW kernel (see adamw.hpp): one thread per parameter, grid-stride.
#include "backend/cuda/adamw.hpp"

#include <cmath>

#include "backend/cuda/bf16.cuh"
#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"

namespace attnlab::cuda {

namespace {

constexpr unsigned kThreads = 256;

__global__ void adamw_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                             float* __restrict__ v, const std::uint8_t* __restrict__ decay_mask, std::size_t n,
                             float lr, float step_size, float inv_sqrt_c2, float b1, float b2, float eps, float wd,
                             float grad_scale, const double* __restrict__ grad_scale_at,
                             std::uint16_t* __restrict__ p_bf16) {
  const float gs = grad_scale_at ? static_cast<float>(*grad_scale_at) : grad_scale;
  const bool skip = isnan(gs);  // clip_factor's sign of a step whose loss or gradient is not finite
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (skip) {
      if (p_bf16) detail::store(p_bf16 + i, p[i]);
      continue;
    }
    const float gi = g[i] * gs;  // the clipping factor, rounded as a separate multiply
    const float mi = b1 * m[i] + (1.0f - b1) * gi;
    const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    float pi = p[i];
    if (wd > 0.0f && (decay_mask == nullptr || decay_mask[i])) pi -= lr * wd * pi;
    pi -= step_size * mi / (sqrtf(vi) * inv_sqrt_c2 + eps);
    p[i] = pi;
    if (p_bf16) detail::store(p_bf16 + i, pi);
  }
}

}  // namespace

void adamw_step(float* params, const float* grads, float* m, float* v, const std::uint8_t* decay_mask, std::size_t n,
                const backend::AdamStep& cfg, Stream stream, std::uint16_t* params_bf16) {
  const std::int64_t step = cfg.step;
  const double lr = cfg.lr;
  if (step < 1) throw ShapeError("cuda::adamw_step: step " + std::to_string(step) + " (steps count from 1)");
  if (n == 0) return;
  // Exactly the CPU's scalars (model/optim.cpp): corrections in double, then rounded to float.
  const double c1 = 1.0 - std::pow(static_cast<double>(cfg.beta1), static_cast<double>(step));
  const double c2 = 1.0 - std::pow(static_cast<double>(cfg.beta2), static_cast<double>(step));
  const float lr_f = static_cast<float>(lr);
  const float step_size = static_cast<float>(lr / c1);
  const float inv_sqrt_c2 = static_cast<float>(1.0 / std::sqrt(c2));
  ATTNLAB_LAUNCH(adamw_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(params, grads, m, v, decay_mask, n, lr_f,
                                                                       step_size, inv_sqrt_c2, cfg.beta1, cfg.beta2,
                                                                       cfg.eps, cfg.weight_decay, cfg.grad_scale,
                                                                       cfg.grad_scale_at, params_bf16);
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
