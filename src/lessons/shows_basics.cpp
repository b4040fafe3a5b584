// Computations for lessons 1–5: embeddings and positions, projections, scores and scaling,
// softmax, weighted sum. Everything the attention core computes is taken from the core (through
// LessonContext::self_trace or the stage functions); the lesson layer only computes what the
// demonstrations need besides (sample variances, the naive softmax shown as the wrong way).
#include <cfloat>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "lessons/model.hpp"
#include "lessons/shows.hpp"

namespace attnlab::lessons {

MatrixItem signed_heat_item(std::string key, std::string title, core::Matrix m, std::vector<std::string> row_labels,
                            std::vector<std::string> col_labels) {
  float a = 0.0f;
  for (float v : m) a = std::max(a, std::fabs(v));
  MatrixItem it = item(std::move(key), std::move(title), std::move(m), std::move(row_labels), std::move(col_labels));
  it.heatmap = true;
  it.lo = -std::max(a, 1e-6f);
  it.hi = std::max(a, 1e-6f);
  return it;
}

std::size_t focus_index(const std::vector<std::string>& tokens, const std::string& word) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] == word) return i;
  return tokens.size() / 2;
}

core::Matrix row_of(const core::Matrix& m, std::size_t i) {
  core::Matrix r = core::Matrix::from_shape({1, core::cols(m)});
  for (std::size_t j = 0; j < core::cols(m); ++j) r(0, j) = m(i, j);
  return r;
}

namespace {

std::string dims(std::size_t r, std::size_t c) { return fmt::format("{} × {}", r, c); }

// ---- lesson 1 -------------------------------------------------------------------------

// Why attention: how many steps separate two tokens in a recurrent network (information passes from
// one position to the next, one step at a time) and in self-attention (every token reads every other
// one directly). The paper's Table 1: maximum path length O(n) against O(1).
void show_why_attention(LessonContext& c) {
  const std::size_t n = c.src.tokens.size();
  core::Matrix rnn = core::Matrix::from_shape({n, n}), att = core::Matrix::from_shape({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      rnn(i, j) = static_cast<float>(i > j ? i - j : j - i);
      att(i, j) = i == j ? 0.0f : 1.0f;
    }
  MatrixItem r = item("rnn_path_length", "recurrent network: steps from token j (column) to token i (row)", rnn,
                      c.src.tokens, c.src.tokens);
  r.precision = 0;
  MatrixItem a = item("attention_path_length", "self-attention: steps from token j to token i", att,
                      c.src.tokens, c.src.tokens);
  a.precision = 0;
  c.out.matrix(r);
  c.out.matrix(a);
  c.out.line(fmt::format("From \"{}\" to \"{}\": {} steps in sequence through a recurrent network, 1 through self-attention.",
                         c.src.tokens.front(), c.src.tokens.back(), n - 1));
  c.out.line(fmt::format("A layer of self-attention computes all {} × {} = {} token pairs at once;", n, n, n * n));
  c.out.line("a recurrent layer must wait for position i − 1 before it can compute position i.");
  c.out.value("rnn_longest_path", n - 1);
  c.out.value("attention_longest_path", n > 1 ? 1 : 0);
  c.out.line("");
}

void show_tokens(LessonContext& c) {
  c.out.line(fmt::format("\"{}\" → {} tokens:", c.src.text, c.src.tokens.size()));
  for (std::size_t i = 0; i < c.src.tokens.size(); ++i)
    c.out.line(fmt::format("  position {:>2}   {:<12} vocabulary id {}", i, c.src.tokens[i], c.src.ids[i]));
  if (!c.src.unknown.empty()) {
    std::string words;
    for (const auto& w : c.src.unknown) words += (words.empty() ? "" : ", ") + w;
    c.out.line("  (<unk> stands for words outside the vocabulary: " + words + ")");
  }
  c.out.line(fmt::format("Vocabulary: {} words ({}).", c.session.vocab().size(), c.session.vocab_name()));
  c.out.value("tokens", c.src.tokens);
  c.out.value("ids", c.src.ids);
  c.out.value("unknown", c.src.unknown);
  c.out.value("vocabulary_size", c.session.vocab().size());
  c.out.line("");
}

void show_embeddings(LessonContext& c) {
  const auto dl = render::numbered_labels("d", c.d_model);
  c.out.matrix(item("embeddings",
                    c.trained() ? "E: each token's row of the model's learned embedding table (tok_emb)"
                                : "E: each token's row of the embedding table",
                    c.embeddings, c.src.tokens, dl));
  core::Matrix scaled = c.embeddings * std::sqrt(static_cast<float>(c.d_model));
  c.out.matrix(item("scaled_embeddings", fmt::format("E · √d_model  (√{} = {:.3f})", c.d_model, std::sqrt(double(c.d_model))),
                    scaled, c.src.tokens, dl));
}

void show_positional_encoding(LessonContext& c) {
  std::vector<std::string> pos;
  for (std::size_t i = 0; i < c.src.tokens.size(); ++i) pos.push_back(fmt::format("{} {}", i, c.src.tokens[i]));
  c.out.matrix(signed_heat_item("pe", "PE: sin on even columns, cos on odd columns", c.pe, pos,
                                render::numbered_labels("d", c.d_model)));
  if (c.src.tokens.size() > 1) {
    const double d = static_cast<double>(c.d_model);
    c.out.line(fmt::format("Check: PE(1, 0) = sin(1 / 10000^(0/{})) = sin(1) = {:.3f}, PE(1, 1) = cos(1) = {:.3f}, "
                           "PE(1, 2) = sin(1 / 10000^(2/{})) = {:.3f}",
                           c.d_model, c.pe(1, 0), c.pe(1, 1), c.d_model,
                           c.d_model > 2 ? c.pe(1, 2) : static_cast<float>(std::sin(1.0 / std::pow(10000.0, 2.0 / d)))));
    c.out.line("");
  }
}

void show_pe_frequencies(LessonContext& c) {
  const std::size_t pairs = (c.d_model + 1) / 2;
  core::Matrix f = core::Matrix::from_shape({pairs, 2});
  std::vector<std::string> rl;
  for (std::size_t i = 0; i < pairs; ++i) {
    const double denom = std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(c.d_model));
    f(i, 0) = static_cast<float>(1.0 / denom);
    f(i, 1) = static_cast<float>(2.0 * std::numbers::pi * denom);
    rl.push_back(fmt::format("cols {},{}", 2 * i, 2 * i + 1));
  }
  MatrixItem it = item("pe_frequencies", "each (sin, cos) pair turns at its own rate", f, rl, {"rate", "wavelength"});
  it.precision = 4;
  c.out.matrix(it);
}

void show_model_input(LessonContext& c) {
  c.out.matrix(signed_heat_item("x", "X = E · √d_model + PE  (the input to attention)", model_input(c.embeddings, c.pe),
                                c.src.tokens, render::numbered_labels("d", c.d_model)));
}

// The trained form adds the check that X is the model's own encoder input.
void show_model_input_trained(LessonContext& c) {
  show_model_input(c);
  c.out.line(fmt::format("Check: this is the model's own encoder input (largest difference {}).",
                         c.embedding_difference <= 1e-5f ? "below 1e-5" : fmt::format("{:.2g}", c.embedding_difference)));
  c.out.value("max_difference_from_model", c.embedding_difference);
  c.out.line("");
}

// "X · W_Q + b_Q" when the block has biases (a trained model), else "X · W_Q".
std::string projection_formula(const core::HeadWeights& h, const char* name) {
  const bool bias = name[0] == 'Q' ? h.b_q.has_value() : name[0] == 'K' ? h.b_k.has_value() : h.b_v.has_value();
  return fmt::format("X · W_{}{}", name, bias ? fmt::format(" + b_{}", name) : "");
}

// ---- lesson 2 -------------------------------------------------------------------------

void show_input(LessonContext& c) {
  c.out.matrix(item("x", fmt::format("X  (n × d_model = {})", dims(c.src.tokens.size(), c.d_model)), c.x, c.src.tokens,
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

// ---- lesson 3 -------------------------------------------------------------------------

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

void show_variance_demo(LessonContext& c) {
  core::Matrix table = core::Matrix::from_shape({3, 2});
  std::vector<std::string> rl;
  for (std::size_t r = 0; r < 3; ++r) {
    const std::size_t d_k = kDemoDims[r];
    Rng rng(c.seed, "lesson3.variance." + std::to_string(d_k));
    const core::Matrix q = random_matrix(rng, kDemoQueries, d_k, 1.0f);
    const core::Matrix k = random_matrix(rng, kDemoQueries, d_k, 1.0f);
    const core::Matrix s = core::attention_scores(q, k);
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
    Rng rng(c.seed, "lesson3.saturation." + std::to_string(d_k));
    const core::Matrix q = random_matrix(rng, kDemoQueries, d_k, 1.0f);
    const core::Matrix k = random_matrix(rng, kDemoKeys, d_k, 1.0f);
    const core::Matrix s = core::attention_scores(q, k);  // kDemoQueries × kDemoKeys
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

// ---- lesson 4 -------------------------------------------------------------------------

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
  c.out.matrix(weights_item("weights", "6. weights = exp / row sum (the core's softmax_rows)", t.weights, tk, tk));
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
  c.out.matrix(weights_item("stable_weights", "stable: the weights (the core's softmax_rows)", stable, rl, cl));
}

// ---- lesson 5 -------------------------------------------------------------------------

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
  const std::size_t f = focus_index(tk, c.text.focus);
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

}  // namespace

void register_basic_shows(std::map<std::string, Show>& r) {
  r["why-attention"] = {show_why_attention, nullptr};
  r["tokens"] = {show_tokens, nullptr};
  r["embeddings"] = {show_embeddings, nullptr};
  r["positional-encoding"] = {show_positional_encoding, nullptr};
  r["pe-frequencies"] = {show_pe_frequencies, nullptr};
  r["model-input"] = {show_model_input, show_model_input_trained};
  r["input"] = {show_input, nullptr};
  r["projection-weights"] = {show_projection_weights, nullptr};
  r["qkv"] = {show_qkv, nullptr};
  r["scores"] = {show_scores, nullptr};
  r["scaled"] = {show_scaled, nullptr};
  r["variance-demo"] = {show_variance_demo, nullptr};
  r["saturation-demo"] = {show_saturation_demo, nullptr};
  r["softmax-steps"] = {show_softmax_steps, nullptr};
  r["softmax-overflow"] = {show_softmax_overflow, nullptr};
  r["attention-weights"] = {show_attention_weights, nullptr};
  r["values"] = {show_values, nullptr};
  r["context"] = {show_context, nullptr};
  r["percentages"] = {show_percentages, [](LessonContext& c) {
                        show_percentages(c);
                        show_focus_row_all_heads_trained(c);  // the same row in every head of every layer
                      }};
}

const std::map<std::string, Show>& show_registry() {
  static const std::map<std::string, Show> registry = [] {
    std::map<std::string, Show> r;
    register_basic_shows(r);
    register_advanced_shows(r);
    return r;
  }();
  return registry;
}

}  // namespace attnlab::lessons
