// Embedding and positional-encoding kernels (see embedding.hpp): one thread per output element.
#include "backend/cuda/embedding.hpp"

#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"

namespace attnlab::cuda {

namespace {

constexpr unsigned kThreads = 256;

__global__ void positional_encoding_kernel(float* __restrict__ pe, int L, int C) {
  const int half = (C + 1) / 2;  // pairs (2i, 2i+1); the last one has no cosine when C is odd
  const std::size_t n = static_cast<std::size_t>(L) * half;
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int pos = static_cast<int>(e / half), i = static_cast<int>(e % half);
    const double angle = pos / pow(10000.0, (2.0 * i) / C);
    float* row = pe + static_cast<std::size_t>(pos) * C;
    row[2 * i] = static_cast<float>(sin(angle));
    if (2 * i + 1 < C) row[2 * i + 1] = static_cast<float>(cos(angle));
  }
}

__global__ void embedding_forward_kernel(float* __restrict__ out, const int* __restrict__ tokens,
                                         const float* __restrict__ wte, const float* __restrict__ pe, int T, int C,
                                         int V, float scale, std::size_t n) {
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = e / C;
    const int c = static_cast<int>(e % C), t = static_cast<int>(r % T);
    const int tok = tokens[r];
    out[e] = (tok >= 0 && tok < V) ? wte[static_cast<std::size_t>(tok) * C + c] * scale + pe[static_cast<std::size_t>(t) * C + c]
                                   : __int_as_float(0x7fffffff);  // NaN
  }
}

__global__ void embedding_backward_kernel(float* __restrict__ dwte, const float* __restrict__ dout,
                                          const int* __restrict__ tokens, int C, int V, float scale, std::size_t n) {
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = e / C;
    const int c = static_cast<int>(e % C);
    const int tok = tokens[r];
    if (tok >= 0 && tok < V) atomicAdd(dwte + static_cast<std::size_t>(tok) * C + c, dout[e] * scale);
  }
}

void check_shape(const char* what, int B, int T, int C, int V) {
  if (B < 0 || T < 0 || C < 1 || V < 1) {
    throw ShapeError(std::string(what) + ": B = " + std::to_string(B) + ", T = " + std::to_string(T) + ", C = " +
                     std::to_string(C) + ", V = " + std::to_string(V) + " (need B, T ≥ 0 and C, V ≥ 1)");
  }
}

}  // namespace

void positional_encoding(float* pe, int L, int C, Stream stream) {
  if (L < 0 || C < 1) throw ShapeError("cuda::positional_encoding: L = " + std::to_string(L) + ", C = " + std::to_string(C));
  const std::size_t n = static_cast<std::size_t>(L) * ((C + 1) / 2);
  if (n == 0) return;
  ATTNLAB_LAUNCH(positional_encoding_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(pe, L, C);
  CUDA_CHECK_LAUNCH();
}

void embedding_forward(float* out, const int* tokens, const float* wte, const float* pe, int B, int T, int C, int V,
                       float scale, Stream stream) {
  check_shape("cuda::embedding_forward", B, T, C, V);
  const std::size_t n = static_cast<std::size_t>(B) * T * C;
  if (n == 0) return;
  ATTNLAB_LAUNCH(embedding_forward_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(out, tokens, wte, pe, T, C, V,
                                                                                    scale, n);
  CUDA_CHECK_LAUNCH();
}

void embedding_backward(float* dwte, const float* dout, const int* tokens, int B, int T, int C, int V, float scale,
                        Stream stream) {
  check_shape("cuda::embedding_backward", B, T, C, V);
  const std::size_t n = static_cast<std::size_t>(B) * T * C;
  if (n == 0) return;
  ATTNLAB_LAUNCH(embedding_backward_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(dwte, dout, tokens, C, V, scale,
                                                                                     n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace attnlab::cuda
