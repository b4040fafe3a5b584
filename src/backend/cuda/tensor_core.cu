// One m16n8k16 product through tensor_core.cuh's register layout (see tensor_core.hpp).
#include "backend/cuda/tensor_core.hpp"

#include <cstdint>

#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/tensor_core.cuh"

namespace attnlab::cuda {

namespace {

// One warp. Lane (g = lane / 4, t = lane % 4) holds what the PTX ISA assigns it, no more.
__global__ void mma_layout_probe_kernel(float* d, const float* a, const float* b, const float* c) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  auto A = [&](int r, int k) { return a[r * 16 + k]; };
  auto B = [&](int k, int n) { return b[k * 8 + n]; };
  const std::uint32_t ra[4] = {detail::pack_bf16x2(A(g, 2 * t), A(g, 2 * t + 1)),
                               detail::pack_bf16x2(A(g + 8, 2 * t), A(g + 8, 2 * t + 1)),
                               detail::pack_bf16x2(A(g, 2 * t + 8), A(g, 2 * t + 9)),
                               detail::pack_bf16x2(A(g + 8, 2 * t + 8), A(g + 8, 2 * t + 9))};
  const std::uint32_t rb[2] = {detail::pack_bf16x2(B(2 * t, g), B(2 * t + 1, g)),
                               detail::pack_bf16x2(B(2 * t + 8, g), B(2 * t + 9, g))};
  float acc[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
  detail::mma_bf16_16816(acc, ra, rb);
  d[g * 8 + 2 * t] = acc[0];
  d[g * 8 + 2 * t + 1] = acc[1];
  d[(g + 8) * 8 + 2 * t] = acc[2];
  d[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

}  // namespace

void mma_layout_probe(float* d, const float* a, const float* b, const float* c, Stream stream) {
  ATTNLAB_LAUNCH(mma_layout_probe_kernel, 1, 32, 0, stream)(d, a, b, c);
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
