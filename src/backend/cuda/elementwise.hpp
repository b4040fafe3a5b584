#pragma once
// Element-wise ops on the GPU: the residual sum and its backward, ReLU (model::relu_forward /
// relu_backward) and GELU, all over n contiguous floats.
//
// Shape legend: n elements (N × C or N × F activations, flattened). Backward functions accumulate
// (+=) into dinp/dst, as the CPU ops do.
#include <cstddef>

#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

// out = a + b                                                         (model::add_forward)
void add_forward(float* out, const float* a, const float* b, std::size_t n, Stream stream = nullptr);
// dst += src: the backward of a residual, once for each input            (model::accumulate)
void accumulate(float* dst, const float* src, std::size_t n, Stream stream = nullptr);

// out = max(x, 0);  dinp += x > 0 ? dout : 0                          (model::relu_forward/backward)
void relu_forward(float* out, const float* inp, std::size_t n, Stream stream = nullptr);
void relu_backward(float* dinp, const float* dout, const float* inp, std::size_t n, Stream stream = nullptr);

// GELU in its tanh form (GPT-2's; torch.nn.GELU(approximate="tanh")):
//   gelu(x) = ½·x·(1 + tanh(u)),  u = √(2/π)·(x + 0.044715·x³)
//   gelu'(x) = ½·(1 + tanh(u)) + ½·x·(1 − tanh²(u))·√(2/π)·(1 + 3·0.044715·x²)
// The CPU model has no GELU yet (it uses ReLU); the tests compare with a double-precision reference.
void gelu_forward(float* out, const float* inp, std::size_t n, Stream stream = nullptr);
void gelu_backward(float* dinp, const float* dout, const float* inp, std::size_t n, Stream stream = nullptr);

}  // namespace attnlab::cuda
