// Lesson 7, multi-head attention: the heads side by side, concatenation and W_O, the parameter
// count, and what heads of a single token compute.
#include <array>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "io/problem.hpp"
#include "lessons/model.hpp"
#include "lessons/shows.hpp"
#include "util/paths.hpp"

namespace attnlab::lessons {

namespace {

void show_heads(LessonContext& c) {
  const core::AttentionTrace& t = c.self_trace();
  const auto& tk = c.src.tokens;
  const std::size_t h = t.heads.size(), d_k = core::cols(t.heads[0].q);
  // The packed view: all heads' queries side by side are X · [W_Q⁰ | W_Q¹ | …].
  std::vector<core::Matrix> qs;
  std::vector<std::string> cl;
  for (std::size_t i = 0; i < h; ++i) {
    qs.push_back(t.heads[i].q);
    for (std::size_t j = 0; j < d_k; ++j) cl.push_back(fmt::format("h{}.{}", i, j));
  }
  c.out.matrix(item("q_all", fmt::format("all queries side by side: head i owns columns [i·{}, (i+1)·{})", d_k, d_k),
                    core::merge_heads(qs), tk, cl));
  std::vector<MatrixItem> ws;
  for (std::size_t i = 0; i < h; ++i) ws.push_back(weights_item(fmt::format("weights_{}", i), fmt::format("head {}", i), t.heads[i].weights, tk, tk));
  c.out.side_by_side(ws);
}

void show_concat_output(LessonContext& c) {
  const core::AttentionTrace& t = c.self_trace();
  const core::AttentionWeights w = c.weights("encoder.self");
  const auto& tk = c.src.tokens;
  const std::size_t h = t.heads.size(), d_v = core::cols(t.heads[0].v);
  std::vector<MatrixItem> ctx;
  for (std::size_t i = 0; i < h; ++i)
    ctx.push_back(item(fmt::format("context_{}", i), fmt::format("context of head {}", i), t.heads[i].context, tk, render::numbered_labels("v", d_v)));
  c.out.side_by_side(ctx);
  std::vector<std::string> cl;
  for (std::size_t i = 0; i < h; ++i)
    for (std::size_t j = 0; j < d_v; ++j) cl.push_back(fmt::format("h{}.{}", i, j));
  c.out.matrix(item("concat", h == 1 ? std::string("concat = context_0 (one head)")
                                      : fmt::format("concat = [context_0 | {}context_{}]  (n × h·d_v)", h > 2 ? "… | " : "", h - 1),
                    t.concat, tk, cl));
  if (w.w_o) {
    c.out.matrix(item("w_o", "W_O  (h·d_v × d_model)", *w.w_o, cl, render::numbered_labels("d", core::cols(*w.w_o))));
    if (w.b_o) c.out.matrix(item("b_o", "b_O  (1 × d_model, added to every row)", *w.b_o, {"b_O"}, render::numbered_labels("d", core::cols(*w.b_o))));
    c.out.matrix(item("output", w.b_o ? "output = concat · W_O + b_O  (n × d_model)" : "output = concat · W_O  (n × d_model)", t.output,
                      tk, render::numbered_labels("d", core::cols(t.output))));
    if (c.trained()) {
      const float diff = c.encoder_replay().max_difference;
      c.out.line(fmt::format("Check: recomputing it step by step, as the lessons do, gives the model's own encoder layer 0 attention output ({}).", agreement(diff)));
      c.out.value("max_difference_from_model", diff);
      c.out.line("");
    }
  } else {
    c.out.line("The --weights file has no w_o, so the output is the concatenation itself.");
  }
}

void show_parameter_count(LessonContext& c) {
  const core::AttentionWeights w = c.weights("encoder.self");
  const std::size_t d = c.d_model;
  // Biases (a trained model has them) count once per output column: h·d_k = d_model either way.
  const bool biases = w.heads[0].b_q.has_value();
  auto count = [biases](const core::AttentionWeights& a) {
    std::array<double, 5> n{};
    for (const core::HeadWeights& hw : a.heads) {
      n[0] += static_cast<double>(hw.w_q.size());
      n[1] += static_cast<double>(hw.w_k.size());
      n[2] += static_cast<double>(hw.w_v.size());
      if (biases) n[4] += 3.0 * static_cast<double>(core::cols(hw.w_q));
    }
    n[3] = a.w_o ? static_cast<double>(a.w_o->size()) : 0.0;
    if (biases && a.w_o) n[4] += static_cast<double>(core::cols(*a.w_o));
    n[4] += n[0] + n[1] + n[2] + n[3];
    return n;
  };
  const auto many = count(w);
  const auto one = count(random_attention_weights(d, 1, c.seed, "one-wide-head"));
  if (biases) {
    c.out.line(fmt::format("The totals include the biases b_Q, b_K, b_V and b_O: d_model = {} numbers each", d));
    c.out.line("(512 in the base model), with one head or many.");
  }
  // The paper's base model: d_model = 512, h = 8, d_k = d_v = 64 (arithmetic only, no matrices).
  const double base_h = 8.0 * 512 * 64, base_o = 8.0 * 64 * 512;  // each of W_Q, W_K, W_V; W_O
  core::Matrix table = core::Matrix::from_shape({3, 5});
  for (std::size_t j = 0; j < 5; ++j) {
    table(0, j) = static_cast<float>(many[j]);
    table(1, j) = static_cast<float>(one[j]);
  }
  for (std::size_t j = 0; j < 3; ++j) table(2, j) = static_cast<float>(base_h);
  table(2, 3) = static_cast<float>(base_o);
  // The same convention as the rows above: with biases, the base row counts its 4 × 512 too.
  table(2, 4) = static_cast<float>(3 * base_h + base_o + (biases ? 4.0 * 512 : 0.0));
  const std::size_t d_k = core::cols(w.heads[0].w_q);
  MatrixItem it = item("parameters", "parameters of one attention layer",
                       table,
                       {fmt::format("{} × d_k {}", w.heads.size(), d_k), fmt::format("1 × d_k {}", d), "base 8 × 64"},
                       {"W_Q", "W_K", "W_V", "W_O", "total"});
  it.precision = 0;
  c.out.matrix(it);
  c.out.line(fmt::format("{} heads: {} parameters; one head of width d_model = {}: {} parameters{}", w.heads.size(),
                         static_cast<long long>(many[4]), d, static_cast<long long>(one[4]),
                         many[4] == one[4] ? " (the same)." : "."));
  c.out.line("");
  c.out.value("parameters_multi_head", many[4]);
  c.out.value("parameters_single_head", one[4]);
}

// A worked example with one token, X = [1, 2, 3, 4], and two heads (data/examples/
// one_token_x1234_two_heads.json): its one score per head softmaxes to a weight of exactly 1, so
// each head's output is its V row, X · W_V, whatever W_Q and W_K are.
void show_one_token_heads(LessonContext& c) {
  // The course notes' own matrices (X = [1, 2, 3, 4], W_Q, W_K, W_V of both heads), exactly as given
  // there; the notes give no W_O, so the output is the concatenation.
  const std::string file = "data/examples/notes_x1234_two_heads.json";
  // What the notes assume the heads give instead of computing it (their "Assume: head1_output = …").
  const std::vector<std::vector<double>> assumed{{0.5, 1.2}, {-0.4, 2.3}};
  const io::Problem p = io::load_problem(resolve_data_path(file));
  core::AttentionTrace t;
  core::self_attention(p.x, p.weights, nullptr, &t);
  c.out.line(fmt::format("X = [1, 2, 3, 4], {} heads of width {}, the notes' W_Q, W_K, W_V ({}):", t.heads.size(), core::cols(t.heads[0].v),
                         file));
  for (std::size_t h = 0; h < t.heads.size(); ++h) {
    const core::HeadTrace& ht = t.heads[h];
    c.out.line(fmt::format("  head {}: scaled score {:.4f}, weight {:.4f}; V = X · W_V = [{:g}, {:g}]; output [{:g}, {:g}]", h + 1,
                           ht.scaled(0, 0), ht.weights(0, 0), ht.v(0, 0), ht.v(0, 1), ht.context(0, 0), ht.context(0, 1)));
    if (h < assumed.size())
      c.out.line(fmt::format("          the notes assume [{:g}, {:g}]", assumed[h][0], assumed[h][1]));
    c.out.value(fmt::format("head_{}_weight", h), ht.weights(0, 0));
    c.out.value(fmt::format("head_{}_output", h), std::vector<float>{ht.context(0, 0), ht.context(0, 1)});
    c.out.value(fmt::format("head_{}_v", h), std::vector<float>{ht.v(0, 0), ht.v(0, 1)});
  }
  c.out.value("notes_assumed_outputs", assumed);
  c.out.matrix(item("one_token_concat", "concat = [head 1 | head 2]", t.concat, p.tokens, render::numbered_labels("c", core::cols(t.concat))));
  c.out.line("Each head's weight is exactly 1 and its output is its V row, X · W_V, whatever W_Q and W_K are.");
  c.out.line(fmt::format("With the notes' own matrices that is [{:g}, {:g}] and [{:g}, {:g}], not the outputs they assume.",
                         t.heads[0].v(0, 0), t.heads[0].v(0, 1), t.heads[1].v(0, 0), t.heads[1].v(0, 1)));
  c.out.line("");
}

}  // namespace

void register_lesson_7(ShowMap& r) {
  r["heads"] = {show_heads, nullptr};
  r["concat-output"] = {show_concat_output, nullptr};
  r["parameter-count"] = {show_parameter_count, nullptr};
  r["one-token-heads"] = {show_one_token_heads, nullptr};
}

}  // namespace attnlab::lessons
