#include "model/optim.hpp"

#include "model/profile.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::model {

double noam_lr(std::int64_t step, int d_model, int warmup, double scale) {
  const double s = static_cast<double>(std::max<std::int64_t>(step, 1));
  const double w = static_cast<double>(std::max(warmup, 1));
  return scale / std::sqrt(static_cast<double>(d_model)) * std::min(1.0 / std::sqrt(s), s * std::pow(w, -1.5));
}

double clip_grad_norm(std::vector<float>& grads, double max_norm) {
  prof::Scope prof_scope(prof::Op::Optimizer);
  double sq = 0.0;
  for (float g : grads) sq += static_cast<double>(g) * g;
  const double norm = std::sqrt(sq);
  if (max_norm > 0.0 && norm > max_norm) {
    const float s = static_cast<float>(max_norm / (norm + 1e-12));
    for (float& g : grads) g *= s;
  }
  return norm;
}

void adam_step(std::vector<float>& params, const std::vector<float>& grads, std::vector<float>& m,
               std::vector<float>& v, std::int64_t step, double lr, const AdamConfig& cfg,
               const std::vector<std::uint8_t>& decay_mask) {
  prof::Scope prof_scope(prof::Op::Optimizer);
  const double b1 = cfg.beta1, b2 = cfg.beta2;
  // Bias corrections undo the zero initialisation of the moments in the first steps.
  const double c1 = 1.0 - std::pow(b1, static_cast<double>(step));
  const double c2 = 1.0 - std::pow(b2, static_cast<double>(step));
  const float lr_f = static_cast<float>(lr);
  const float step_size = static_cast<float>(lr / c1);
  const float inv_sqrt_c2 = static_cast<float>(1.0 / std::sqrt(c2));
  const float fb1 = cfg.beta1, fb2 = cfg.beta2, eps = cfg.eps, wd = cfg.weight_decay;
  const std::size_t n = params.size();
  for (std::size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    m[i] = fb1 * m[i] + (1.0f - fb1) * g;
    v[i] = fb2 * v[i] + (1.0f - fb2) * g * g;
    if (wd > 0.0f && (decay_mask.empty() || decay_mask[i])) params[i] -= lr_f * wd * params[i];
    params[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_c2 + eps);
  }
}

}  // namespace attnlab::model
