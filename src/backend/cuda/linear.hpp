#pragma once
// A linear layer on the GPU, mirroring cpu::linear_forward / linear_backward (backend/cpu/ops.hpp):
// the products through cuBLAS (matmul.hpp; float32 compute, or TF32 or bf16 inputs when `math` says so), the bias
// added by cuBLASLt's epilogue (or a small kernel) and its gradient as column sums (column_sums.hpp).
//
// Shape legend (llm.c style): N rows (B·T tokens), IC input channels, OC output channels.
//   inp, dinp  N × IC        w, dw  IC × OC        bias, dbias  OC        out, dout  N × OC
// out = inp · w + bias (the row-vector convention of the lessons), or ReLU of it.
#include <cstdint>

#include "backend/backend.hpp"  // GradMode
#include "backend/cuda/device.hpp"
#include "backend/cuda/matmul.hpp"

namespace attnlab::cuda {

// out (written) = inp · w + bias, then ReLU when `relu`; bias may be null. With a bias, matmul.hpp's
// gemm_bias: one cuBLASLt matmul whose epilogue adds the bias (and applies ReLU), else (as the CPU
// does) each row of out set to the bias, the gemm adding inp · w to it (beta = 1), then a ReLU pass.
void linear_forward(Blas& blas, float* out, const float* inp, const float* w, const float* bias, int N, int IC,
                    int OC, Math math = Math::Fp32, bool relu = false);

// dinp += dout · wᵀ (= when dinp_mode is Write: beta = 0, cuBLAS does not read it);  dw += inpᵀ · dout;
// dbias += column sums of dout (both = when param_mode is Write, neither read). Null gradients are skipped.
// dbias: column_sums.hpp's deterministic two-stage sum (no atomics: it repeats bit for bit), with
// scratch of column_sums_scratch(N, OC, 1) floats (may be null when dbias is).
void linear_backward(Blas& blas, float* dinp, float* dw, float* dbias, const float* dout, const float* inp,
                     const float* w, int N, int IC, int OC, Math math, float* scratch,
                     backend::GradMode dinp_mode = backend::GradMode::Add,
                     backend::GradMode param_mode = backend::GradMode::Add);

// The same layer on bf16 storage (backend::Ops::linear_forward_bf16 / linear_backward_bf16): inp, w,
// out, dout and dinp are bf16 (raw bits), the bias, dw and dbias float32. The products through
// gemm_bf16_storage (bf16 operands read as they are, float32 accumulation): out and dinp rounded to
// bf16 as cuBLAS stores them (dinp under Add: the old value widened, added in float32, rounded once),
// dw added to (or, param_mode Write, stored) in float32. The forward through matmul.hpp's gemm_bias_bf16_storage: the float32 bias
// and ReLU in cuBLASLt's epilogue, the output rounded once as it is stored (where cuBLASLt declines,
// a pass of their own over the rounded product: two roundings where the reference has one).
// dbias: the column sums of the widened dout (column_sums.hpp), scratch as linear_backward's.
void linear_forward_bf16(Blas& blas, std::uint16_t* out, const std::uint16_t* inp, const std::uint16_t* w,
                         const float* bias, int N, int IC, int OC, bool relu = false);
void linear_backward_bf16(Blas& blas, std::uint16_t* dinp, float* dw, float* dbias, const std::uint16_t* dout,
                          const std::uint16_t* inp, const std::uint16_t* w, int N, int IC, int OC, float* scratch,
                          backend::GradMode dinp_mode = backend::GradMode::Add,
                          backend::GradMode param_mode = backend::GradMode::Add);
// dinp in float32 (added to in float32, or stored): a post-norm sub-layer's input gradient.
void linear_backward_bf16(Blas& blas, float* dinp, float* dw, float* dbias, const std::uint16_t* dout,
                          const std::uint16_t* inp, const std::uint16_t* w, int N, int IC, int OC, float* scratch,
                          backend::GradMode dinp_mode = backend::GradMode::Add,
                          backend::GradMode param_mode = backend::GradMode::Add);

}  // namespace attnlab::cuda
