#pragma once
// One AdamW step on the GPU, mirroring model::adam_step (model/optim.hpp) operation for operation:
//   m ← β1·m + (1 − β1)·g,   v ← β2·v + (1 − β2)·g²
//   p ← p − lr·wd·p                            (decoupled weight decay, where decay_mask allows it)
//   p ← p − (lr / (1 − β1^step)) · m / (√v / √(1 − β2^step) + eps)
// The bias corrections are computed on the host in double, as on the CPU.
//
// Shape legend: n parameters; params, grads, m, v are n floats; decay_mask n bytes (1 = decay) or null
// (every parameter decays when weight_decay > 0, like the CPU's empty mask).
#include <cstddef>
#include <cstdint>

#include "backend/backend.hpp"
#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

// params_bf16 (n bf16 values as raw bits, or null): also receives each updated parameter rounded to
// bf16, in the same pass (the weights' copy that bf16 products read: one 2-byte store per parameter,
// where a conversion of its own would read the 4 bytes again).
// `h` is the backends' one description of a step (backend.hpp's AdamStep: β1, β2, ε, weight decay,
// lr, step, and the gradient scale or where clip_factor left it; NaN there skips the update).
void adamw_step(float* params, const float* grads, float* m, float* v, const std::uint8_t* decay_mask, std::size_t n,
                const backend::AdamStep& h, Stream stream = nullptr, std::uint16_t* params_bf16 = nullptr);

}  // namespace attnlab::cuda
