// Lesson 5, the weighted sum: the attention weights, the values, the context vectors, and one
// word's row read as percentages (with a trained model: that row in every encoder head).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "lessons/shows.hpp"
#include "lessons/trained.hpp"

namespace attnlab::lessons {

namespace {

core::Matrix row_of(const core::Matrix& m, std::size_t i) {
  core::Matrix r = core::Matrix::from_shape({1, core::cols(m)});
  for (std::size_t j = 0; j < core::cols(m); ++j) r(0, j) = m(i, j);
  return r;
}

void show_attention_weights(LessonContext& c) {
  const core::HeadTrace& t = c.self_trace().heads[0];
  c.out.matrix(weights_item("weights", "weights = softmax(Q · Kᵀ / √d_k)  (each row sums to 1)", t.weights, c.src.tokens, c.src.tokens));
}

void show_values(LessonContext& c) {
  const core::HeadTrace& t = c.self_trace().heads[0];
  c.out.matrix(item("v", "V = " + projection_formula(c.weights("encoder.self").heads[0], "V"), t.v, c.src.tokens,
                    render::numbered_labels("v", core::cols(t.v))));
}

void show_context(LessonContext& c) {
  const core::HeadTrace& t = c.self_trace().heads[0];
  c.out.line(fmt::format("context = weights · V:  ({}) · ({}) = {}", dims(core::rows(t.weights), core::cols(t.weights)),
                         dims(core::rows(t.v), core::cols(t.v)), dims(core::rows(t.context), core::cols(t.context))));
  c.out.line("");
  c.out.matrix(item("context", "context = weights · V", t.context, c.src.tokens, render::numbered_labels("v", core::cols(t.context))));
}

void show_percentages(LessonContext& c) {
  const core::HeadTrace& t = c.self_trace().heads[0];
  const auto& tk = c.src.tokens;
  const std::size_t f = focus_index(tk, c.text.word("focus"));
  c.out.line(fmt::format("How much \"{}\" takes from each word (row {} of the weights):", tk[f], f));
  std::vector<float> pct;
  double total = 0.0;
  for (std::size_t j = 0; j < tk.size(); ++j) {
    const double p = 100.0 * t.weights(f, j);
    total += p;
    pct.push_back(static_cast<float>(p));
    std::string bar;
    for (long b = 0; b < std::lround(p * 0.4); ++b) bar += "█";
    c.out.line(fmt::format("  {:<12} {:5.1f} %  {}", tk[j], p, bar));
  }
  c.out.line(fmt::format("  {:<12} {:5.1f} %", "total", total));
  std::string sum;
  for (std::size_t j = 0; j < tk.size(); ++j) sum += fmt::format("{}{:.3f}·v[{}]", j ? " + " : "", t.weights(f, j), tk[j]);
  c.out.line(fmt::format("context[{}] = {}", tk[f], sum));
  c.out.line("");
  c.out.value("focus", tk[f]);
  c.out.value("percent", pct);
  c.out.matrix(item("context_row", fmt::format("context[{}]", tk[f]), row_of(t.context, f), {tk[f]},
                    render::numbered_labels("v", core::cols(t.context))));
}

void show_focus_row_all_heads_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const auto& cfg = net.config();
  const auto& tk = c.src.tokens;
  const std::size_t f = focus_index(tk, c.text.word("focus")), m = tk.size(), H = static_cast<std::size_t>(cfg.heads);
  forward_one(net, c.src.int_ids(), {model::kBos});
  std::vector<std::string> rows;
  core::Matrix all = core::Matrix::from_shape({static_cast<std::size_t>(cfg.encoder_layers) * H, m});
  float lo = 1.0f, hi = 0.0f;
  for (int l = 0; l < cfg.encoder_layers; ++l) {
    const std::vector<float>& att = net.encoder_attention(l);
    for (std::size_t k = 0; k < H; ++k) {
      const std::size_t r = static_cast<std::size_t>(l) * H + k;
      rows.push_back(fmt::format("L{} h{}", l, k));
      for (std::size_t j = 0; j < m; ++j) all(r, j) = att[(k * m + f) * m + j];
      lo = std::min(lo, all(r, f));
      hi = std::max(hi, all(r, f));
    }
  }
  MatrixItem it = weights_item("focus_row_all_heads", fmt::format("the row of \"{}\" in every encoder layer (L) and head (h)", tk[f]),
                               all, rows, tk);
  it.focus_cols = {tk[f]};
  c.out.matrix(it);
  c.out.line(fmt::format("What \"{}\" gives itself ranges from {:.0f} % to {:.0f} % across the {} heads.", tk[f], 100 * lo, 100 * hi,
                         rows.size()));
  c.out.value("focus_self_weight_range", std::vector<double>{lo, hi});
  c.out.line("");
}

}  // namespace

void register_lesson_5(ShowMap& r) {
  r["attention-weights"] = {show_attention_weights, nullptr};
  r["values"] = {show_values, nullptr};
  r["context"] = {show_context, nullptr};
  r["percentages"] = {show_percentages, [](LessonContext& c) {
                        show_percentages(c);
                        show_focus_row_all_heads_trained(c);  // the same row in every head of every layer
                      }};
}

}  // namespace attnlab::lessons
