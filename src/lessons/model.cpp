#include "lessons/model.hpp"

#include "model/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "util/error.hpp"
#include "util/rng.hpp"

namespace attnlab::lessons {

Rng::Rng(std::uint64_t seed, std::string_view name) {
  std::uint64_t s = seed;
  state_ = splitmix64(s) ^ fnv1a(name);
}

std::uint64_t Rng::next() { return splitmix64(state_); }

double Rng::uniform() {
  // 53 random bits, shifted off zero so log() below is finite.
  return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
}

float Rng::normal(float stddev) {
  if (have_spare_) {
    have_spare_ = false;
    return static_cast<float>(spare_ * stddev);
  }
  const double r = std::sqrt(-2.0 * std::log(uniform()));
  const double a = 2.0 * std::numbers::pi * uniform();
  spare_ = r * std::sin(a);
  have_spare_ = true;
  return static_cast<float>(r * std::cos(a) * stddev);
}

core::Matrix random_matrix(Rng& rng, std::size_t r, std::size_t c, float stddev) {
  core::Matrix m = core::Matrix::from_shape({r, c});
  for (auto& v : m) v = rng.normal(stddev);
  return m;
}

std::vector<float> embedding_row(std::string_view word, std::size_t d_model, std::uint64_t seed) {
  std::vector<float> row(d_model, 0.0f);
  if (word == "<pad>") return row;
  Rng rng(seed, std::string("embedding:") + std::string(word));
  const float sd = 1.0f / std::sqrt(static_cast<float>(d_model));
  for (float& v : row) v = rng.normal(sd);
  return row;
}

core::Matrix embed(const std::vector<std::string>& tokens, std::size_t d_model, std::uint64_t seed) {
  core::Matrix e = core::Matrix::from_shape({tokens.size(), d_model});
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::vector<float> row = embedding_row(tokens[i], d_model, seed);
    for (std::size_t j = 0; j < d_model; ++j) e(i, j) = row[j];
  }
  return e;
}

core::Matrix positional_encoding(std::size_t n, std::size_t d_model) {
  // The model's own table (model/transformer.hpp), so the lessons show exactly what the model adds.
  const std::vector<float> table = model::positional_encoding(static_cast<int>(n), static_cast<int>(d_model));
  core::Matrix pe = core::Matrix::from_shape({n, d_model});
  std::copy(table.begin(), table.end(), pe.data());
  return pe;
}

core::Matrix model_input(const core::Matrix& embeddings, const core::Matrix& pe) {
  if (embeddings.shape() != pe.shape()) {
    throw ShapeError("model_input: embeddings are " + core::shape_str(embeddings) + " but PE is " + core::shape_str(pe));
  }
  const float scale = std::sqrt(static_cast<float>(core::cols(embeddings)));
  core::Matrix x = core::Matrix::from_shape({core::rows(embeddings), core::cols(embeddings)});
  for (std::size_t i = 0; i < core::rows(x); ++i)
    for (std::size_t j = 0; j < core::cols(x); ++j) x(i, j) = embeddings(i, j) * scale + pe(i, j);
  return x;
}

core::AttentionWeights random_attention_weights(std::size_t d_model, std::size_t h, std::uint64_t seed,
                                          std::string_view name) {
  if (h == 0 || d_model % h != 0) {
    throw InputError("--heads " + std::to_string(h) + " does not divide --d-model " + std::to_string(d_model) +
                     "; each head gets d_model / h columns, so pick h among the divisors of d_model");
  }
  const std::size_t d_k = d_model / h;
  Rng rng(seed, name);
  const float sd = 1.0f / std::sqrt(static_cast<float>(d_model));
  core::AttentionWeights w;
  for (std::size_t i = 0; i < h; ++i) {
    core::HeadWeights hw;
    hw.w_q = random_matrix(rng, d_model, d_k, sd);
    hw.w_k = random_matrix(rng, d_model, d_k, sd);
    hw.w_v = random_matrix(rng, d_model, d_k, sd);
    w.heads.push_back(std::move(hw));
  }
  w.w_o = random_matrix(rng, d_model, d_model, sd);
  return w;
}

}  // namespace attnlab::lessons
