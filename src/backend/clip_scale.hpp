#pragma once
// Gradient clipping's factor: one formula for the host (model::clip_grad_norm's rule, the CPU
// backend's clip_factor) and the CUDA kernel that computes it on the device, so that both round it
// the same way. Plain arithmetic, so the header compiles for the host and, under nvcc, the device.
#if !defined(ATTNLAB_HOST_DEVICE)
#if defined(__CUDACC__)
#define ATTNLAB_HOST_DEVICE __host__ __device__
#else
#define ATTNLAB_HOST_DEVICE
#endif
#endif

namespace attnlab::backend {

// The factor each gradient is multiplied by so that the whole gradient's norm is at most max_norm:
// max_norm / (norm + 1e-12) in double, rounded to float, where norm > max_norm > 0; else 1.
ATTNLAB_HOST_DEVICE inline float clip_scale(double norm, double max_norm) {
  return max_norm > 0.0 && norm > max_norm ? static_cast<float>(max_norm / (norm + 1e-12)) : 1.0f;
}

}  // namespace attnlab::backend
