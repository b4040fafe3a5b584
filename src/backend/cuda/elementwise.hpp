#pragma once
// Element-wise ops on the GPU: the residual sum and its backward, ReLU (cpu::relu_forward /
// relu_backward), GELU, scaling, dropout with the counter-based mask of backend/dropout_hash.hpp, and
// gradient clipping's norm and factor, all over n contiguous floats.
//
// Shape legend: n elements (N × C or N × F activations, or a parameter block, flattened). Backward
// functions accumulate (+=) into dinp/dst, as the CPU ops do.
#include <cstddef>
#include <cstdint>

#include "backend/backend.hpp"  // GradMode
#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

// out = a + b                                                         (model::add_forward)
void add_forward(float* out, const float* a, const float* b, std::size_t n, Stream stream = nullptr);
// dst += src: the backward of a residual, once for each input            (model::accumulate)
void accumulate(float* dst, const float* src, std::size_t n, Stream stream = nullptr);

// out = max(x, 0);  dinp += (or =, mode) x > 0 ? dout : 0          (model::relu_forward/backward)
void relu_forward(float* out, const float* inp, std::size_t n, Stream stream = nullptr);
void relu_backward(float* dinp, const float* dout, const float* inp, std::size_t n, backend::GradMode mode,
                   Stream stream = nullptr);

// relu_backward on bf16 buffers (raw bits; backend::Ops::relu_backward_bf16): the sum in float32,
// stored rounded once.
void relu_backward_bf16(std::uint16_t* dinp, const std::uint16_t* dout, const std::uint16_t* inp, std::size_t n,
                        backend::GradMode mode, Stream stream = nullptr);

// GELU in its tanh form (GPT-2's; torch.nn.GELU(approximate="tanh")):
//   gelu(x) = ½·x·(1 + tanh(u)),  u = √(2/π)·(x + 0.044715·x³)
//   gelu'(x) = ½·(1 + tanh(u)) + ½·x·(1 − tanh²(u))·√(2/π)·(1 + 3·0.044715·x²)
// The CPU model has no GELU yet (it uses ReLU); the tests compare with a double-precision reference.
void gelu_forward(float* out, const float* inp, std::size_t n, Stream stream = nullptr);
void gelu_backward(float* dinp, const float* dout, const float* inp, std::size_t n, Stream stream = nullptr);

// x *= s                                                                 (backend::Ops::scale)
void scale(float* x, std::size_t n, float s, Stream stream = nullptr);

// Inverted dropout fused with the residual add after it (cpu::dropout_forward_hashed): element i is
// kept iff dropout_keep(seed, i, dropout_threshold(p)), the same bits as on the CPU, so both backends
// draw the same mask for a seed; out = residual + inp · mask (residual null: inp · mask), the product
// rounded on its own as on the CPU. mask_i = kept ? 1/(1 − p) : 0 is never stored: the backward draws
// it again. p = 0 keeps everything. out may be inp or residual. ShapeError unless 0 ≤ p < 1.
void dropout_forward(float* out, const float* inp, const float* residual, std::size_t n, float p, std::uint64_t seed,
                     Stream stream = nullptr);
// dinp += (or =, mode) dout · mask, the forward's mask for the same p and seed.
void dropout_backward(float* dinp, const float* dout, std::size_t n, float p, std::uint64_t seed,
                      backend::GradMode mode, Stream stream = nullptr);

// The same with inp in bf16 (raw bits, widened as read; out and residual float32), and with dinp in
// bf16 (the float32 value stored rounded once): backend::Ops::dropout_forward_bf16 / backward_bf16.
void dropout_forward_bf16(float* out, const std::uint16_t* inp, const float* residual, std::size_t n, float p,
                          std::uint64_t seed, Stream stream = nullptr);
void dropout_backward_bf16(std::uint16_t* dinp, const float* dout, std::size_t n, float p, std::uint64_t seed,
                           backend::GradMode mode, Stream stream = nullptr);

// Σ x² in double, deterministically: a fixed grid of kSumSquaresBlocks blocks (whatever the device)
// each writes the double sum of its grid-stride share to partials[block] (a fixed-shape tree inside
// the block). partials: kSumSquaresBlocks doubles on the device.
inline constexpr int kSumSquaresBlocks = 128;
void sum_squares_partials(double* partials, const float* x, std::size_t n, Stream stream = nullptr);

// Gradient clipping on the device (backend::Ops::clip_factor), nothing read back: the partials of
// Σ x², then one block adds them in block order (the same sum every run) and writes *norm = √Σ and
// *scale = backend::clip_scale(*norm, max_norm), or NaN when the norm or any of check[0, n_check)
// is not finite. norm, scale, check: device memory.
void clip_factor(double* norm, double* scale, double* partials, const float* x, std::size_t n, double max_norm,
                 const double* check, std::size_t n_check, Stream stream = nullptr);

}  // namespace attnlab::cuda
