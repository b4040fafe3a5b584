#pragma once
// Adam(W), the paper's learning-rate schedule, and gradient clipping.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/backend.hpp"

namespace attnlab::model {

// β1, β2, ε and the weight decay: backend::AdamHyper, the paper's values by default.
using AdamConfig = backend::AdamHyper;

// lrate = scale · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), step counted from 1: linear
// warm-up for `warmup` steps, then decay with the inverse square root of the step.
double noam_lr(std::int64_t step, int d_model, int warmup, double scale = 1.0);

// Scales grads so their global L2 norm is at most max_norm (no-op for max_norm ≤ 0).
// Returns the norm before clipping.
double clip_grad_norm(std::vector<float>& grads, double max_norm);
// On a backend's buffer the same factor is computed on the backend and applied by the update as it
// reads each gradient (backend::Ops::clip_factor, AdamStep::grad_scale_at; model::train_step).

// The hyper-parameters of one step as the backends take them.
backend::AdamStep adam_hyper(const AdamConfig& cfg, std::int64_t step, double lr);

// The update itself is the backends' op (backend::Ops::adamw; the CPU's is cpu::adamw_step):
//   m ← β1·m + (1 − β1)·g,   v ← β2·v + (1 − β2)·g²
//   p ← p − lr·wd·p                            (decoupled weight decay, where the decay mask allows it)
//   p ← p − (lr / (1 − β1^step)) · m / (√v / √(1 − β2^step) + eps)

}  // namespace attnlab::model
