#include "lessons/transformer.hpp"

#include <algorithm>
#include <cmath>

#include "core/blas.hpp"
#include "core/mask.hpp"
#include "lessons/model.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

Matrix add(const Matrix& a, const Matrix& b) {
  if (a.shape() != b.shape()) throw ShapeError("residual: " + shape_str(a) + " + " + shape_str(b) + " do not match");
  Matrix out = a;
  for (std::size_t i = 0; i < a.size(); ++i) out.data()[i] += b.data()[i];
  return out;
}

Matrix layer_norm(const Matrix& x, float eps, const Matrix* gain, const Matrix* bias) {
  for (const Matrix* p : {gain, bias})
    if (p && (rows(*p) != 1 || cols(*p) != cols(x))) throw ShapeError("layer_norm: gain/bias is " + shape_str(*p) + ", want 1 × " + std::to_string(cols(x)));
  Matrix y = Matrix::from_shape({rows(x), cols(x)});
  const double d = static_cast<double>(cols(x));
  for (std::size_t i = 0; i < rows(x); ++i) {
    double mean = 0.0;
    for (std::size_t j = 0; j < cols(x); ++j) mean += x(i, j);
    mean /= d;
    double var = 0.0;
    for (std::size_t j = 0; j < cols(x); ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
    var /= d;
    const double inv = 1.0 / std::sqrt(var + static_cast<double>(eps));
    for (std::size_t j = 0; j < cols(x); ++j) {
      const double n = (x(i, j) - mean) * inv;
      y(i, j) = static_cast<float>(n * (gain ? (*gain)(0, j) : 1.0) + (bias ? (*bias)(0, j) : 0.0));
    }
  }
  return y;
}

FeedForward random_feed_forward(std::size_t d_model, std::size_t d_ff, std::uint64_t seed, std::string_view name) {
  Rng rng(seed, name);
  FeedForward f;
  f.w1 = random_matrix(rng, d_model, d_ff, 1.0f / std::sqrt(static_cast<float>(d_model)));
  f.w2 = random_matrix(rng, d_ff, d_model, 1.0f / std::sqrt(static_cast<float>(d_ff)));
  f.b1 = Matrix(Matrix::shape_type{1, d_ff}, 0.0f);
  f.b2 = Matrix(Matrix::shape_type{1, d_model}, 0.0f);
  return f;
}

Matrix feed_forward(const Matrix& x, const FeedForward& f, Matrix* hidden) {
  Matrix h = matmul(x, f.w1);
  for (std::size_t i = 0; i < rows(h); ++i)
    for (std::size_t j = 0; j < cols(h); ++j) h(i, j) = std::max(0.0f, h(i, j) + f.b1(0, j));
  Matrix out = matmul(h, f.w2);
  for (std::size_t i = 0; i < rows(out); ++i)
    for (std::size_t j = 0; j < cols(out); ++j) out(i, j) += f.b2(0, j);
  if (hidden) *hidden = std::move(h);
  return out;
}

Matrix encoder_layer(const Matrix& x, const EncoderLayer& layer, LayerTrace* t) {
  LayerTrace local;
  LayerTrace& tr = t ? *t : local;
  tr.self_out = self_attention(x, layer.self, nullptr, &tr.self);
  tr.after_self = layer_norm(add(x, tr.self_out));
  tr.ffn_out = feed_forward(tr.after_self, layer.ffn, &tr.ffn_hidden);
  tr.output = layer_norm(add(tr.after_self, tr.ffn_out));
  return tr.output;
}

Matrix decoder_layer(const Matrix& y, const Matrix& memory, const DecoderLayer& layer, LayerTrace* t) {
  LayerTrace local;
  LayerTrace& tr = t ? *t : local;
  const Mask causal = causal_mask(rows(y));
  tr.self_out = self_attention(y, layer.self, &causal, &tr.self);
  tr.after_self = layer_norm(add(y, tr.self_out));
  tr.cross_out = cross_attention(tr.after_self, memory, layer.cross, nullptr, &tr.cross);
  tr.after_cross = layer_norm(add(tr.after_self, tr.cross_out));
  tr.ffn_out = feed_forward(tr.after_cross, layer.ffn, &tr.ffn_hidden);
  tr.output = layer_norm(add(tr.after_cross, tr.ffn_out));
  return tr.output;
}

}  // namespace attnlab::lessons
