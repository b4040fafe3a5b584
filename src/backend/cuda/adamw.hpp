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

#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

struct AdamWParams {
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f;  // the paper's values, as model::AdamConfig
  float weight_decay = 0.0f;
  float grad_scale = 1.0f;  // each gradient used as g · grad_scale (backend::AdamStep)
};

void adamw_step(float* params, const float* grads, float* m, float* v, const std::uint8_t* decay_mask, std::size_t n,
                std::int64_t step, double lr, const AdamWParams& cfg, Stream stream = nullptr);

}  // namespace attnlab::cuda
