// Lesson 4, softmax: row by row (subtract the maximum, exponentiate, normalise), and why the naive
// formula overflows where the stable one does not.
#include <cfloat>
#include <cmath>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "lessons/shows.hpp"

namespace attnlab::lessons {

namespace {

void show_softmax_steps(LessonContext& c) {
  const core::HeadTrace& t = c.self_trace().heads[0];
  const std::size_t n = core::rows(t.scaled), m = core::cols(t.scaled);
  core::Matrix row_max = core::Matrix::from_shape({n, 1}), shifted = core::Matrix::from_shape({n, m}), ex = core::Matrix::from_shape({n, m}),
         sums = core::Matrix::from_shape({n, 1});
  for (std::size_t i = 0; i < n; ++i) {
    float mx = t.scaled(i, 0);
    for (std::size_t j = 1; j < m; ++j) mx = std::max(mx, t.scaled(i, j));
    row_max(i, 0) = mx;
    double s = 0.0;
    for (std::size_t j = 0; j < m; ++j) {
      shifted(i, j) = t.scaled(i, j) - mx;
      ex(i, j) = std::exp(shifted(i, j));
      s += ex(i, j);
    }
    sums(i, 0) = static_cast<float>(s);
  }
  const auto& tk = c.src.tokens;
  c.out.matrix(item("scaled", "1. the scaled scores s", t.scaled, tk, tk));
  c.out.side_by_side({item("row_max", "2. max of each row", row_max, tk, {"max"}),
                      item("shifted", "3. s − row max (every entry ≤ 0)", shifted, tk, tk)});
  c.out.side_by_side({item("exp", "4. exp(s − max), all in (0, 1]", ex, tk, tk), item("row_sum", "5. row sums", sums, tk, {"sum"})});
  c.out.matrix(weights_item("weights", "6. weights = exp / row sum (the softmax the lessons' attention code runs)", t.weights, tk, tk));
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    double r = 0.0;
    for (std::size_t j = 0; j < m; ++j) r += t.weights(i, j);
    s += fmt::format(" {:.3f}", r);
  }
  c.out.line("Row sums of the weights:" + s);
  c.out.line("");
}

void show_softmax_overflow(LessonContext& c) {
  const float scores[] = {98.0f, 100.0f, 102.0f, 104.0f};
  core::Matrix s = core::Matrix::from_shape({1, 4}), naive_exp = core::Matrix::from_shape({1, 4}), naive = core::Matrix::from_shape({1, 4}),
         shifted_exp = core::Matrix::from_shape({1, 4});
  float sum = 0.0f;  // float32, as a naive implementation would accumulate
  for (std::size_t j = 0; j < 4; ++j) {
    s(0, j) = scores[j];
    naive_exp(0, j) = std::exp(scores[j]);  // float32 exp: overflows above ~88.72
    sum += naive_exp(0, j);
  }
  for (std::size_t j = 0; j < 4; ++j) naive(0, j) = naive_exp(0, j) / sum;  // inf / inf = NaN
  for (std::size_t j = 0; j < 4; ++j) shifted_exp(0, j) = std::exp(scores[j] - scores[3]);
  const core::Matrix stable = core::softmax_rows(s);
  const std::vector<std::string> rl{"row"}, cl = render::numbered_labels("k", 4);
  c.out.matrix(item("scores", "a row of scores around 100", s, rl, cl));
  c.out.line(fmt::format("float32 holds numbers up to {:.3g} = e^{:.2f}; e^98 is already beyond that.", double(FLT_MAX),
                         std::log(double(FLT_MAX))));
  c.out.line("");
  MatrixItem ne = item("naive_exp", "naive: exp(s) in float32", naive_exp, rl, cl);
  ne.broken_demo = true;
  MatrixItem nw = item("naive_weights", "naive: exp(s) / Σ exp(s) = inf / inf", naive, rl, cl);
  nw.broken_demo = true;
  c.out.matrix(ne);
  c.out.matrix(nw);
  c.out.matrix(item("stable_exp", "stable: exp(s − max(s)) = exp([−6, −4, −2, 0])", shifted_exp, rl, cl));
  c.out.matrix(weights_item("stable_weights", "stable: the weights (the softmax the lessons' attention code runs)", stable, rl, cl));
}

}  // namespace

void register_lesson_4(ShowMap& r) {
  r["softmax-steps"] = {show_softmax_steps, nullptr};
  r["softmax-overflow"] = {show_softmax_overflow, nullptr};
}

}  // namespace attnlab::lessons
