// Lesson 2, queries, keys and values: the input X, the projection matrices W_Q, W_K, W_V and the
// projections Q, K, V, all taken from the core's trace of the lesson sentence.

#include <fmt/format.h>

#include "core/attention.hpp"
#include "lessons/shows.hpp"

namespace attnlab::lessons {

namespace {

void show_input(LessonContext& c) {
  // A pre-norm model's attention reads LayerNorm 1 of X, not X itself (LessonContext::x).
  const bool pre = c.trained() && c.facts.at("norm") == "pre-norm";
  const std::string what = pre ? "LayerNorm1(X), what encoder layer 0's attention reads" : "X";
  c.out.matrix(item("x", fmt::format("{}  (n × d_model = {})", what, dims(c.src.tokens.size(), c.d_model)), c.x, c.src.tokens,
                    render::numbered_labels("d", c.d_model)));
}

void show_projection_weights(LessonContext& c) {
  const core::AttentionWeights w = c.weights("encoder.self");
  const core::HeadWeights& h = w.heads[0];
  const auto rl = render::numbered_labels("d", c.d_model);
  c.out.side_by_side({item("w_q", "W_Q (head 0)", h.w_q, rl, render::numbered_labels("q", core::cols(h.w_q))),
                      item("w_k", "W_K (head 0)", h.w_k, rl, render::numbered_labels("k", core::cols(h.w_k))),
                      item("w_v", "W_V (head 0)", h.w_v, rl, render::numbered_labels("v", core::cols(h.w_v)))});
  if (h.b_q && h.b_k && h.b_v) {
    c.out.line("The model also learned a bias per projection, added to every row: Q = X · W_Q + b_Q, and so on.");
    c.out.line("");
    c.out.matrix(item("b_q", "b_Q (head 0)", *h.b_q, {"b_Q"}, render::numbered_labels("q", core::cols(*h.b_q))));
    c.out.matrix(item("b_k", "b_K (head 0)", *h.b_k, {"b_K"}, render::numbered_labels("k", core::cols(*h.b_k))));
    c.out.matrix(item("b_v", "b_V (head 0)", *h.b_v, {"b_V"}, render::numbered_labels("v", core::cols(*h.b_v))));
  }
}

void show_qkv(LessonContext& c) {
  const core::HeadTrace& t = c.self_trace().heads[0];
  const core::HeadWeights hw = c.weights("encoder.self").heads[0];
  const std::size_t n = c.src.tokens.size();
  for (const auto& [name, m, p] : {std::tuple{"Q", &t.q, "q"}, std::tuple{"K", &t.k, "k"}, std::tuple{"V", &t.v, "v"}}) {
    c.out.line(fmt::format("{} = {}:  ({}) · ({}){} = {}", name, projection_formula(hw, name), dims(n, c.d_model),
                           dims(c.d_model, core::cols(*m)), hw.b_q ? fmt::format(" + (1 × {})", core::cols(*m)) : "", dims(n, core::cols(*m))));
  }
  c.out.line("");
  c.out.side_by_side({item("q", "Q = " + projection_formula(hw, "Q"), t.q, c.src.tokens, render::numbered_labels("q", core::cols(t.q))),
                      item("k", "K = " + projection_formula(hw, "K"), t.k, c.src.tokens, render::numbered_labels("k", core::cols(t.k))),
                      item("v", "V = " + projection_formula(hw, "V"), t.v, c.src.tokens, render::numbered_labels("v", core::cols(t.v)))});
}

}  // namespace

void register_lesson_2(ShowMap& r) {
  r["input"] = {show_input, nullptr};
  r["projection-weights"] = {show_projection_weights, nullptr};
  r["qkv"] = {show_qkv, nullptr};
}

}  // namespace attnlab::lessons
