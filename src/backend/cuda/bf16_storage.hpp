#pragma once
// bf16 storage on the GPU: the conversions between float32 and bfloat16 buffers, and the epilogue of
// a linear layer whose product cuBLAS wrote in bf16 (backend::Ops' bf16 ops, backend/bf16.hpp).
//
// A bf16 buffer is passed as its raw bits (std::uint16_t: the top half of each float's bits), so this
// header stays free of CUDA types, as matmul.hpp's gemm_bf16_storage. Rounding is to nearest, ties to
// even (__float2bfloat16_rn: the CPU's backend::to_bf16 bit for bit); widening is exact.
//
// Shape legend: n elements; N rows and OC columns of a linear layer's output (row-major).
#include <cstddef>
#include <cstdint>

#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

// dst = bf16(src);  dst = float(src). n elements, grid-stride; dst and src do not overlap.
void to_bf16(std::uint16_t* dst, const float* src, std::size_t n, Stream stream = nullptr);
void from_bf16(float* dst, const std::uint16_t* src, std::size_t n, Stream stream = nullptr);
// to_bf16 on the first C elements of each of B × rows rows, row r of batch b at src + b·batch + r·ld
// (dst alike); what lies between them is not touched. One launch for all of them.
void to_bf16_rows(std::uint16_t* dst, const float* src, int B, int rows, int C, std::int64_t ld,
                  std::int64_t batch, Stream stream = nullptr);

// out[r, c] = bf16(act(p[r, c] + bias[c])), in place, where p is what out holds (the product, already
// rounded to bf16 by cuBLAS) or 0 when `product` is false (a product over IC = 0 inputs); bias may be
// null (0), act is ReLU when `relu`. So the output is rounded twice (the product, then the sum),
// where the reference rounds once: at most one more half-unit of bf16's last place, 2^-9 of the value.
void bias_act_bf16(std::uint16_t* out, const float* bias, int N, int OC, bool relu, bool product,
                   Stream stream = nullptr);

}  // namespace attnlab::cuda
