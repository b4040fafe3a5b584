#include "model/optim.hpp"

#include "backend/clip_scale.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::model {

double noam_lr(std::int64_t step, int d_model, int warmup, double scale) {
  const double s = static_cast<double>(std::max<std::int64_t>(step, 1));
  const double w = static_cast<double>(std::max(warmup, 1));
  return scale / std::sqrt(static_cast<double>(d_model)) * std::min(1.0 / std::sqrt(s), s * std::pow(w, -1.5));
}

double clip_grad_norm(std::vector<float>& grads, double max_norm) {
  double sq = 0.0;
  for (float g : grads) sq += static_cast<double>(g) * g;
  const double norm = std::sqrt(sq);
  const float s = backend::clip_scale(norm, max_norm);
  if (s != 1.0f)
    for (float& g : grads) g *= s;
  return norm;
}

backend::AdamStep adam_hyper(const AdamConfig& cfg, std::int64_t step, double lr) {
  backend::AdamStep h;
  static_cast<backend::AdamHyper&>(h) = cfg;
  h.lr = lr;
  h.step = step;
  return h;
}

}  // namespace attnlab::model
