#pragma once
// LayerNorm on the GPU, mirroring model::layernorm_forward / layernorm_backward (backend/cpu/ops.hpp).
//
// Shape legend (llm.c style): N rows (B·T tokens), C channels.
//   inp, out, dout, dinp   N × C        gamma, beta, dgamma, dbeta   C
//   mean, rstd             N            (saved by the forward for the backward)
// out = (x − mean) · rstd · gamma + beta with rstd = 1 / √(var + eps), biased variance, eps inside
// the square root, as torch.nn.LayerNorm and the CPU op. Reductions run in float32 (the CPU's in
// double): one warp per row, two passes (mean, then squared deviations), so no cancellation.
#include <cstdint>

#include "backend/backend.hpp"  // GradMode
#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* gamma, const float* beta,
                       int N, int C, float eps, Stream stream = nullptr);

// dinp += (or =, mode) rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ⊙ x̂)) with x̂ = (x − mean)·rstd, dx̂ = dout ⊙ gamma;
// dgamma += Σ_rows dout ⊙ x̂; dbeta += Σ_rows dout (= under param_mode Write, zeros when N = 0): column
// sums in two stages, in a fixed order (no atomics; column_sums.hpp), so results repeat bit for bit;
// scratch: column_sums_scratch(N, C, 2) floats.
void layernorm_backward(float* dinp, float* dgamma, float* dbeta, const float* dout, const float* inp,
                        const float* gamma, const float* mean, const float* rstd, int N, int C, float* scratch,
                        backend::GradMode mode, backend::GradMode param_mode, Stream stream = nullptr);

// The same with bf16 storage (backend::Ops::layernorm_forward_bf16 / layernorm_backward_bf16): the
// forward's out in bf16 (raw bits), rounded from the float32 result, and that float32 result also in
// out_f32 when it is not null; the backward reads dout in bf16. Everything else as above.
void layernorm_forward_bf16(std::uint16_t* out, float* out_f32, float* mean, float* rstd, const float* inp,
                            const float* gamma, const float* beta, int N, int C, float eps, Stream stream = nullptr);
void layernorm_backward_bf16(float* dinp, float* dgamma, float* dbeta, const std::uint16_t* dout, const float* inp,
                             const float* gamma, const float* mean, const float* rstd, int N, int C, float* scratch,
                             backend::GradMode mode, backend::GradMode param_mode, Stream stream = nullptr);

}  // namespace attnlab::cuda
