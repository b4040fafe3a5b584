#include "lessons/transformer.hpp"

#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "core/mask.hpp"
#include "lessons/model.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

// The arithmetic runs through the CPU backend's ops, the same functions the model trains with, so the
// lesson shows the model's own layer norm, feed-forward net and residual rather than a second copy.
backend::Ops<float>& ops() { return backend::cpu_backend<float>(); }

core::Matrix add(const core::Matrix& a, const core::Matrix& b) {
  if (a.shape() != b.shape()) throw ShapeError("residual: " + core::shape_str(a) + " + " + core::shape_str(b) + " do not match");
  core::Matrix out = core::Matrix::from_shape(a.shape());
  ops().add_forward(out.data(), a.data(), b.data(), a.size());
  return out;
}

core::Matrix layer_norm(const core::Matrix& x, float eps, const core::Matrix* gain, const core::Matrix* bias) {
  for (const core::Matrix* p : {gain, bias})
    if (p && (core::rows(*p) != 1 || core::cols(*p) != core::cols(x))) throw ShapeError("layer_norm: gain/bias is " + core::shape_str(*p) + ", want 1 × " + std::to_string(core::cols(x)));
  const std::size_t n = core::rows(x), c = core::cols(x);
  const std::vector<float> ones(c, 1.0f), zeros(c, 0.0f);
  std::vector<float> mean(n), rstd(n);
  core::Matrix y = core::Matrix::from_shape({n, c});
  ops().layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), gain ? gain->data() : ones.data(),
                          bias ? bias->data() : zeros.data(), static_cast<int>(n), static_cast<int>(c), eps);
  return y;
}

FeedForward random_feed_forward(std::size_t d_model, std::size_t d_ff, std::uint64_t seed, std::string_view name) {
  Rng rng(seed, name);
  FeedForward f;
  f.w1 = random_matrix(rng, d_model, d_ff, 1.0f / std::sqrt(static_cast<float>(d_model)));
  f.w2 = random_matrix(rng, d_ff, d_model, 1.0f / std::sqrt(static_cast<float>(d_ff)));
  f.b1 = core::Matrix(core::Matrix::shape_type{1, d_ff}, 0.0f);
  f.b2 = core::Matrix(core::Matrix::shape_type{1, d_model}, 0.0f);
  return f;
}

core::Matrix feed_forward(const core::Matrix& x, const FeedForward& f, core::Matrix* hidden) {
  const int n = static_cast<int>(core::rows(x)), d_model = static_cast<int>(core::cols(x)), d_ff = static_cast<int>(core::cols(f.w1));
  if (core::rows(f.w1) != core::cols(x) || core::rows(f.w2) != core::cols(f.w1) || core::cols(f.w2) != core::cols(x))
    throw ShapeError("feed_forward: x " + core::shape_str(x) + ", W1 " + core::shape_str(f.w1) + ", W2 " + core::shape_str(f.w2) + " do not chain");
  core::Matrix h = core::Matrix::from_shape({core::rows(x), core::cols(f.w1)});
  ops().linear_forward(h.data(), x.data(), f.w1.data(), f.b1.data(), n, d_model, d_ff);
  ops().relu_forward(h.data(), h.data(), h.size());
  core::Matrix out = core::Matrix::from_shape({core::rows(x), core::cols(x)});
  ops().linear_forward(out.data(), h.data(), f.w2.data(), f.b2.data(), n, d_ff, d_model);
  if (hidden) *hidden = std::move(h);
  return out;
}

core::Matrix encoder_layer(const core::Matrix& x, const EncoderLayer& layer, LayerTrace* t) {
  LayerTrace local;
  LayerTrace& tr = t ? *t : local;
  tr.self_out = core::self_attention(x, layer.self, nullptr, &tr.self);
  tr.after_self = layer_norm(add(x, tr.self_out));
  tr.ffn_out = feed_forward(tr.after_self, layer.ffn, &tr.ffn_hidden);
  tr.output = layer_norm(add(tr.after_self, tr.ffn_out));
  return tr.output;
}

core::Matrix decoder_layer(const core::Matrix& y, const core::Matrix& memory, const DecoderLayer& layer, LayerTrace* t) {
  LayerTrace local;
  LayerTrace& tr = t ? *t : local;
  const core::Mask causal = core::causal_mask(core::rows(y));
  tr.self_out = core::self_attention(y, layer.self, &causal, &tr.self);
  tr.after_self = layer_norm(add(y, tr.self_out));
  tr.cross_out = core::cross_attention(tr.after_self, memory, layer.cross, nullptr, &tr.cross);
  tr.after_cross = layer_norm(add(tr.after_self, tr.cross_out));
  tr.ffn_out = feed_forward(tr.after_cross, layer.ffn, &tr.ffn_hidden);
  tr.output = layer_norm(add(tr.after_cross, tr.ffn_out));
  return tr.output;
}

}  // namespace attnlab::lessons
