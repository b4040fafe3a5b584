// Lesson 3, scores and scaling: QKᵀ, the scaling by √d_k, and two demonstrations on random data:
// the variance of a dot product grows with d_k, and unscaled scores saturate the softmax.
#include <cmath>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "lessons/model.hpp"
#include "lessons/shows.hpp"

namespace attnlab::lessons {

namespace {

void show_scores(LessonContext& c) {
  const core::HeadTrace& t = c.self_trace().heads[0];
  c.out.matrix(item("scores", "scores = Q · Kᵀ  (row: query token, column: key token)", t.scores, c.src.tokens, c.src.tokens));
  if (c.src.tokens.size() > 1) {
    std::string terms;
    const std::size_t shown = std::min<std::size_t>(core::cols(t.q), 3);
    for (std::size_t j = 0; j < shown; ++j) terms += fmt::format("{}({:.3f})·({:.3f})", j ? " + " : "", t.q(1, j), t.k(0, j));
    if (core::cols(t.q) > shown) terms += " + …";
    c.out.line(fmt::format("e.g. scores[{}][{}] = q_{} · k_{} = {} = {:.3f}", c.src.tokens[1], c.src.tokens[0],
                           c.src.tokens[1], c.src.tokens[0], terms, t.scores(1, 0)));
    c.out.line("");
  }
}

void show_scaled(LessonContext& c) {
  const core::HeadTrace& t = c.self_trace().heads[0];
  const std::size_t d_k = core::cols(t.q);
  c.out.matrix(item("scaled", fmt::format("scaled = scores / √d_k  (√{} = {:.3f})", d_k, std::sqrt(double(d_k))), t.scaled,
                    c.src.tokens, c.src.tokens));
}

// Sample mean and variance of all entries (double accumulation).
std::pair<double, double> mean_var(const core::Matrix& m) {
  double s = 0.0;
  for (float v : m) s += v;
  const double mean = s / static_cast<double>(m.size());
  double q = 0.0;
  for (float v : m) q += (v - mean) * (v - mean);
  return {mean, q / static_cast<double>(m.size() - 1)};
}

constexpr std::size_t kDemoDims[] = {4, 64, 512};

constexpr std::size_t kDemoQueries = 256, kDemoKeys = 8;

// q·kᵀ for kDemoQueries random queries and `keys` random keys of width d_k, entries ~ N(0, 1), drawn
// from the seeded stream "lesson3.<what>.<d_k>" (so each demo and width has its own numbers).
core::Matrix demo_scores(const LessonContext& c, const std::string& what, std::size_t d_k, std::size_t keys) {
  Rng rng(c.seed, "lesson3." + what + "." + std::to_string(d_k));
  const core::Matrix q = random_matrix(rng, kDemoQueries, d_k, 1.0f);
  const core::Matrix k = random_matrix(rng, keys, d_k, 1.0f);
  return core::attention_scores(q, k);
}

void show_variance_demo(LessonContext& c) {
  core::Matrix table = core::Matrix::from_shape({3, 2});
  std::vector<std::string> rl;
  for (std::size_t r = 0; r < 3; ++r) {
    const std::size_t d_k = kDemoDims[r];
    const core::Matrix s = demo_scores(c, "variance", d_k, kDemoQueries);
    table(r, 0) = static_cast<float>(mean_var(s).second);
    table(r, 1) = static_cast<float>(mean_var(core::scale_scores(s, d_k)).second);
    rl.push_back(fmt::format("d_k = {}", d_k));
  }
  MatrixItem it = item("variance", fmt::format("variance of q·k over {}×{} random pairs, entries ~ N(0, 1)", kDemoQueries, kDemoQueries),
                       table, rl, {"unscaled", "scaled"});
  it.precision = 2;
  c.out.matrix(it);
}

void show_saturation_demo(LessonContext& c) {
  core::Matrix table = core::Matrix::from_shape({3, 2});
  core::Matrix ex_raw = core::Matrix::from_shape({3, kDemoKeys}), ex_scaled = core::Matrix::from_shape({3, kDemoKeys});
  std::vector<std::string> rl;
  for (std::size_t r = 0; r < 3; ++r) {
    const std::size_t d_k = kDemoDims[r];
    const core::Matrix s = demo_scores(c, "saturation", d_k, kDemoKeys);  // kDemoQueries × kDemoKeys
    const core::Matrix w_raw = core::softmax_rows(s);
    const core::Matrix w_scaled = core::softmax_rows(core::scale_scores(s, d_k));
    double max_raw = 0.0, max_scaled = 0.0;
    for (std::size_t i = 0; i < kDemoQueries; ++i) {
      float a = 0.0f, b = 0.0f;
      for (std::size_t j = 0; j < kDemoKeys; ++j) {
        a = std::max(a, w_raw(i, j));
        b = std::max(b, w_scaled(i, j));
      }
      max_raw += a;
      max_scaled += b;
    }
    table(r, 0) = static_cast<float>(max_raw / kDemoQueries);
    table(r, 1) = static_cast<float>(max_scaled / kDemoQueries);
    for (std::size_t j = 0; j < kDemoKeys; ++j) {
      ex_raw(r, j) = w_raw(0, j);
      ex_scaled(r, j) = w_scaled(0, j);
    }
    rl.push_back(fmt::format("d_k = {}", d_k));
  }
  c.out.matrix(item("saturation",
                    fmt::format("largest softmax weight over {} keys, averaged over {} queries", kDemoKeys, kDemoQueries),
                    table, rl, {"unscaled", "scaled"}));
  const auto kl = render::numbered_labels("key", kDemoKeys);
  c.out.matrix(weights_item("example_unscaled", "one query's weights, softmax(q·kᵀ) without scaling", ex_raw, rl, kl));
  c.out.matrix(weights_item("example_scaled", "the same query, softmax(q·kᵀ / √d_k)", ex_scaled, rl, kl));
}

}  // namespace

void register_lesson_3(ShowMap& r) {
  r["scores"] = {show_scores, nullptr};
  r["scaled"] = {show_scaled, nullptr};
  r["variance-demo"] = {show_variance_demo, nullptr};
  r["saturation-demo"] = {show_saturation_demo, nullptr};
}

}  // namespace attnlab::lessons
