// LayerNorm forward/backward (see layernorm.hpp). One warp per row for everything that is per row;
// the parameter gradients are column sums over all rows, done by a second kernel whose blocks own 32
// columns each, so no two blocks add into the same element.
#include "backend/cuda/layernorm.hpp"

#include <string>

#include "backend/cuda/bf16.cuh"
#include "backend/cuda/check.hpp"
#include "backend/cuda/column_sums.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"

namespace attnlab::cuda {

namespace {

using detail::kWarpSize;
constexpr int kRowWarps = 8;  // rows per block of the per-row kernels (one warp each)

// Out: float (out) or bf16 bits; out2, when not null, receives the float32 output as well (the bf16
// forward's T copy).
template <typename Out>
__global__ void __launch_bounds__(kRowWarps * kWarpSize)
    layernorm_forward_kernel(Out* __restrict__ out, float* __restrict__ out2, float* __restrict__ mean,
                             float* __restrict__ rstd, const float* __restrict__ inp, const float* __restrict__ gamma,
                             const float* __restrict__ beta, int N, int C, float eps) {
  const int lane = threadIdx.x % kWarpSize;
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * kRowWarps + threadIdx.x / kWarpSize;
  if (row >= static_cast<std::size_t>(N)) return;  // the whole warp leaves together
  const float* x = inp + row * C;
  Out* o = out + row * C;
  float* o2 = out2 ? out2 + row * C : nullptr;
  float s = 0.0f;
  for (int c = lane; c < C; c += kWarpSize) s += x[c];
  const float m = detail::warp_sum(s) / static_cast<float>(C);
  float v = 0.0f;
  for (int c = lane; c < C; c += kWarpSize) {
    const float d = x[c] - m;
    v += d * d;
  }
  const float var = detail::warp_sum(v) / static_cast<float>(C);  // biased, as the CPU and torch
  const float rs = 1.0f / sqrtf(var + eps);                       // not rsqrtf: that one is approximate
  for (int c = lane; c < C; c += kWarpSize) {
    const float y = ((x[c] - m) * rs) * gamma[c] + beta[c];
    detail::store(o + c, y);
    if (o2) o2[c] = y;
  }
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = rs;
  }
}

template <typename Dout>
__global__ void __launch_bounds__(kRowWarps * kWarpSize)
    layernorm_backward_input_kernel(float* __restrict__ dinp, const Dout* __restrict__ dout,
                                    const float* __restrict__ inp, const float* __restrict__ gamma,
                                    const float* __restrict__ mean, const float* __restrict__ rstd, int N, int C,
                                    bool add) {
  const int lane = threadIdx.x % kWarpSize;
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * kRowWarps + threadIdx.x / kWarpSize;
  if (row >= static_cast<std::size_t>(N)) return;
  const float* x = inp + row * C;
  const Dout* g = dout + row * C;
  float* dx = dinp + row * C;
  const float mu = mean[row], rs = rstd[row];
  // dx̂ = dout ⊙ γ rounded on its own (__fmul_rn) in both loops: nvcc would otherwise fuse the second
  // loop's product into `dx̂ − m1` as an FMA, which keeps the product's rounding error that m1 has
  // lost. Where every dx̂ of a row is equal (C = 1) the difference must be exactly 0, not that error
  // times rstd (up to 1/√ε ≈ 316): seen on an H100, 1.4e-5 normwise against the CPU.
  float s1 = 0.0f, s2 = 0.0f;
  for (int c = lane; c < C; c += kWarpSize) {
    const float xhat = (x[c] - mu) * rs;
    const float dxhat = __fmul_rn(detail::load(g + c), gamma[c]);
    s1 += dxhat;
    s2 += dxhat * xhat;
  }
  const float m1 = detail::warp_sum(s1) / static_cast<float>(C);
  const float m2 = detail::warp_sum(s2) / static_cast<float>(C);
  for (int c = lane; c < C; c += kWarpSize) {
    const float xhat = (x[c] - mu) * rs;
    const float d = rs * (__fmul_rn(detail::load(g + c), gamma[c]) - m1 - xhat * m2);
    detail::put_grad(dx[c], d, add);
  }
}

// Stage 1 of dγ and dβ as column sums (column_sums.hpp): block (x, y) = (32 columns, chunk y of
// kColumnChunkRows rows). threadIdx.x picks one of the block's 32 columns (adjacent threads, adjacent
// addresses), threadIdx.y strides over the chunk's rows; the kColumnRowThreads partial sums of a column
// are then added in a fixed order by the threadIdx.y == 0 thread and written as the chunk's partial sums:
// dγ's at partials[chunk·C + c], dβ's at partials[(chunks + chunk)·C + c]. Stage 2 adds the chunks.
template <typename Dout>
__global__ void __launch_bounds__(kWarpSize * detail::kColumnRowThreads)
    layernorm_backward_params_kernel(float* __restrict__ partials, const Dout* __restrict__ dout,
                                     const float* __restrict__ inp, const float* __restrict__ mean,
                                     const float* __restrict__ rstd, int N, int C) {
  constexpr int kRows = detail::kColumnRowThreads;
  __shared__ float part_g[kRows][kWarpSize + 1];
  __shared__ float part_b[kRows][kWarpSize + 1];
  const int c = blockIdx.x * kWarpSize + threadIdx.x;
  const int r0 = blockIdx.y * kColumnChunkRows, r1 = min(N, r0 + kColumnChunkRows);
  float sg = 0.0f, sb = 0.0f;
  if (c < C) {
    for (int r = r0 + threadIdx.y; r < r1; r += kRows) {
      const std::size_t i = static_cast<std::size_t>(r) * C + c;
      const float g = detail::load(dout + i);
      sg += g * ((inp[i] - mean[r]) * rstd[r]);
      sb += g;
    }
  }
  part_g[threadIdx.y][threadIdx.x] = sg;
  part_b[threadIdx.y][threadIdx.x] = sb;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    float tg = 0.0f, tb = 0.0f;
    for (int y = 0; y < kRows; ++y) {
      tg += part_g[y][threadIdx.x];
      tb += part_b[y][threadIdx.x];
    }
    partials[static_cast<std::size_t>(blockIdx.y) * C + c] = tg;
    partials[static_cast<std::size_t>(gridDim.y + blockIdx.y) * C + c] = tb;
  }
}

void check_shape(const char* what, int N, int C) {
  if (N < 0 || C < 1)
    throw ShapeError(std::string(what) + ": N = " + std::to_string(N) + ", C = " + std::to_string(C) +
                     " (need N ≥ 0, C ≥ 1)");
}

template <typename Out>
void layernorm_forward_to(const char* what, Out* out, float* out2, float* mean, float* rstd, const float* inp,
                          const float* gamma, const float* beta, int N, int C, float eps, Stream stream) {
  check_shape(what, N, C);
  if (N == 0) return;
  const unsigned blocks = static_cast<unsigned>((N + kRowWarps - 1) / kRowWarps);
  ATTNLAB_LAUNCH(layernorm_forward_kernel<Out>, blocks, kRowWarps * kWarpSize, 0, stream)(out, out2, mean, rstd, inp,
                                                                                          gamma, beta, N, C, eps);
  CUDA_CHECK_LAUNCH();
}

template <typename Dout>
void layernorm_backward_from(const char* what, float* dinp, float* dgamma, float* dbeta, const Dout* dout,
                             const float* inp, const float* gamma, const float* mean, const float* rstd, int N, int C,
                             float* scratch, backend::GradMode mode, backend::GradMode param_mode, Stream stream) {
  check_shape(what, N, C);
  const bool add_params = param_mode == backend::GradMode::Add;
  if (N == 0) return add_column_partials(dgamma, dbeta, nullptr, 0, C, stream, add_params);  // Write: zeros
  const unsigned blocks = static_cast<unsigned>((N + kRowWarps - 1) / kRowWarps);
  ATTNLAB_LAUNCH(layernorm_backward_input_kernel<Dout>, blocks, kRowWarps * kWarpSize, 0, stream)(
      dinp, dout, inp, gamma, mean, rstd, N, C, mode == backend::GradMode::Add);
  CUDA_CHECK_LAUNCH();
  const int chunks = column_chunks(N);
  if (chunks > 65535)
    throw ShapeError(std::string(what) + ": N = " + std::to_string(N) + " rows is more than 65,535 chunks");
  if (!scratch) throw ShapeError(std::string(what) + ": no scratch for the γ and β partial sums");
  const dim3 grid(static_cast<unsigned>((C + kWarpSize - 1) / kWarpSize), static_cast<unsigned>(chunks));
  ATTNLAB_LAUNCH(layernorm_backward_params_kernel<Dout>, grid, dim3(kWarpSize, detail::kColumnRowThreads), 0, stream)(
      scratch, dout, inp, mean, rstd, N, C);
  CUDA_CHECK_LAUNCH();
  add_column_partials(dgamma, dbeta, scratch, chunks, C, stream, add_params);
}

}  // namespace

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* gamma, const float* beta,
                       int N, int C, float eps, Stream stream) {
  layernorm_forward_to("cuda::layernorm_forward", out, nullptr, mean, rstd, inp, gamma, beta, N, C, eps, stream);
}

void layernorm_forward_bf16(std::uint16_t* out, float* out_f32, float* mean, float* rstd, const float* inp,
                            const float* gamma, const float* beta, int N, int C, float eps, Stream stream) {
  layernorm_forward_to("cuda::layernorm_forward_bf16", out, out_f32, mean, rstd, inp, gamma, beta, N, C, eps, stream);
}

void layernorm_backward(float* dinp, float* dgamma, float* dbeta, const float* dout, const float* inp,
                        const float* gamma, const float* mean, const float* rstd, int N, int C, float* scratch,
                        backend::GradMode mode, backend::GradMode param_mode, Stream stream) {
  layernorm_backward_from("cuda::layernorm_backward", dinp, dgamma, dbeta, dout, inp, gamma, mean, rstd, N, C, scratch,
                          mode, param_mode, stream);
}

void layernorm_backward_bf16(float* dinp, float* dgamma, float* dbeta, const std::uint16_t* dout, const float* inp,
                             const float* gamma, const float* mean, const float* rstd, int N, int C, float* scratch,
                             backend::GradMode mode, backend::GradMode param_mode, Stream stream) {
  layernorm_backward_from("cuda::layernorm_backward_bf16", dinp, dgamma, dbeta, dout, inp, gamma, mean, rstd, N, C,
                          scratch, mode, param_mode, stream);
}

}  // namespace attnlab::cuda
