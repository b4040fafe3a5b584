// Deterministic two-stage column sums (see column_sums.hpp).
#include "backend/cuda/column_sums.hpp"

#include <string>

#include "backend/cuda/bf16.cuh"
#include "backend/cuda/check.hpp"
#include "backend/cuda/common.cuh"
#include "backend/cuda/launch.cuh"

namespace attnlab::cuda {

namespace {

using detail::kColumnRowThreads;
using detail::kWarpSize;

// Stage 1: block (x, y) = (32 columns, chunk y). Thread (tx, ty) adds rows ty, ty + 8, … of the chunk
// in column c (adjacent threads read adjacent columns: each row's read is coalesced); then thread
// ty = 0 adds the 8 partial sums in order and writes the chunk's sum.
template <typename Src>
__global__ void __launch_bounds__(kWarpSize * kColumnRowThreads)
    column_partials_kernel(float* __restrict__ partials, const Src* __restrict__ src, int N, int C) {
  __shared__ float part[kColumnRowThreads][kWarpSize + 1];
  const int c = blockIdx.x * kWarpSize + threadIdx.x;
  const int r0 = blockIdx.y * kColumnChunkRows, r1 = min(N, r0 + kColumnChunkRows);
  float s = 0.0f;
  if (c < C)
    for (int r = r0 + threadIdx.y; r < r1; r += kColumnRowThreads)
      s += detail::load(src + static_cast<std::size_t>(r) * C + c);
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    float t = 0.0f;
    for (int y = 0; y < kColumnRowThreads; ++y) t += part[y][threadIdx.x];
    partials[static_cast<std::size_t>(blockIdx.y) * C + c] = t;
  }
}

// Stage 2: one thread per column adds the chunks' sums in chunk order, then adds the total to dst or
// stores it there (add false: dst is not read, so the caller need not zero it first).
__global__ void add_column_partials_kernel(float* __restrict__ dst0, float* __restrict__ dst1,
                                           const float* __restrict__ partials, int chunks, int C, bool add) {
  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C; c += gridDim.x * blockDim.x) {
    float t = 0.0f;
    for (int k = 0; k < chunks; ++k) t += partials[static_cast<std::size_t>(k) * C + c];
    dst0[c] = add ? dst0[c] + t : t;
    if (dst1) {
      float u = 0.0f;
      for (int k = 0; k < chunks; ++k) u += partials[static_cast<std::size_t>(chunks + k) * C + c];
      dst1[c] = add ? dst1[c] + u : u;
    }
  }
}

}  // namespace

void add_column_partials(float* dst0, float* dst1, const float* partials, int chunks, int C, Stream stream,
                         bool add) {
  if (C <= 0 || (chunks <= 0 && add)) return;  // stored, no chunks: zeros
  const unsigned threads = 128;
  ATTNLAB_LAUNCH(add_column_partials_kernel, detail::grid_for(static_cast<std::size_t>(C), threads), threads, 0, stream)(
      dst0, dst1, partials, chunks > 0 ? chunks : 0, C, add);
  CUDA_CHECK_LAUNCH();
}

template <typename Src>
void column_sums_of(float* dst, const Src* src, int N, int C, float* scratch, Stream stream, bool add) {
  if (N < 0 || C < 0) throw ShapeError("cuda::column_sums: N = " + std::to_string(N) + ", C = " + std::to_string(C));
  const int chunks = column_chunks(N);
  if (C == 0) return;
  if (chunks == 0) return add_column_partials(dst, nullptr, nullptr, 0, C, stream, add);
  if (chunks > 65535) throw ShapeError("cuda::column_sums: N = " + std::to_string(N) + " rows is more than 65,535 chunks");
  if (!scratch) throw ShapeError("cuda::column_sums: no scratch for " + std::to_string(chunks) + " × " + std::to_string(C) + " partial sums");
  const dim3 grid(static_cast<unsigned>((C + kWarpSize - 1) / kWarpSize), static_cast<unsigned>(chunks));
  ATTNLAB_LAUNCH(column_partials_kernel<Src>, grid, dim3(kWarpSize, kColumnRowThreads), 0, stream)(scratch, src, N, C);
  CUDA_CHECK_LAUNCH();
  add_column_partials(dst, nullptr, scratch, chunks, C, stream, add);
}

void column_sums(float* dst, const float* src, int N, int C, float* scratch, Stream stream, bool add) {
  column_sums_of(dst, src, N, C, scratch, stream, add);
}

void column_sums(float* dst, const std::uint16_t* src, int N, int C, float* scratch, Stream stream, bool add) {
  column_sums_of(dst, src, N, C, scratch, stream, add);
}

}  // namespace attnlab::cuda
