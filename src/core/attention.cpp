#include "core/attention.hpp"

#include <cmath>
#include <limits>

#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

#include "core/blas.hpp"
#include "util/error.hpp"

namespace attnlab::core {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}

void validate_weights(const AttentionWeights& w, std::size_t d_model) {
  if (w.heads.empty()) throw ShapeError("attention weights: at least one head is needed, got 0");
  const std::size_t d_k = cols(w.heads[0].w_q);
  const std::size_t d_v = cols(w.heads[0].w_v);
  for (std::size_t i = 0; i < w.heads.size(); ++i) {
    const HeadWeights& hw = w.heads[i];
    const std::string at = "heads[" + std::to_string(i) + "]";
    auto check = [&](const Matrix& m, const char* name, std::size_t want_cols, const char* dim) {
      if (rows(m) != d_model || cols(m) != want_cols) {
        throw ShapeError(at + "." + name + ": expected " + shape_str(d_model, want_cols) +
                         " (d_model × " + dim + "), got " + shape_str(m));
      }
    };
    check(hw.w_q, "w_q", d_k, "d_k");
    check(hw.w_k, "w_k", d_k, "d_k");
    check(hw.w_v, "w_v", d_v, "d_v");
    auto check_bias = [&](const std::optional<Matrix>& b, const char* name, std::size_t width, const char* dim) {
      if (b && (rows(*b) != 1 || cols(*b) != width)) {
        throw ShapeError(at + "." + name + ": expected " + shape_str(1, width) + " (1 × " + dim + "), got " + shape_str(*b));
      }
    };
    check_bias(hw.b_q, "b_q", d_k, "d_k");
    check_bias(hw.b_k, "b_k", d_k, "d_k");
    check_bias(hw.b_v, "b_v", d_v, "d_v");
  }
  if (d_k == 0 || d_v == 0) throw ShapeError("attention weights: d_k and d_v must be at least 1");
  if (w.w_o) {
    const std::size_t want = w.heads.size() * d_v;
    if (rows(*w.w_o) != want || cols(*w.w_o) != d_model) {
      throw ShapeError("w_o: expected " + shape_str(want, d_model) + " (h·d_v × d_model), got " +
                       shape_str(*w.w_o));
    }
  }
  if (w.b_o) {
    if (!w.w_o) throw ShapeError("b_o: given without w_o");
    if (rows(*w.b_o) != 1 || cols(*w.b_o) != d_model) {
      throw ShapeError("b_o: expected " + shape_str(1, d_model) + " (1 × d_model), got " + shape_str(*w.b_o));
    }
  }
}

namespace {
void add_bias_rows(Matrix& m, const Matrix* bias, const char* what) {
  if (!bias) return;
  if (rows(*bias) != 1 || cols(*bias) != cols(m)) {
    throw ShapeError(std::string(what) + ": bias is " + shape_str(*bias) + ", expected " + shape_str(1, cols(m)));
  }
  m += *bias;  // 1 × cols broadcast over every row: X·W + b
}
}  // namespace

Matrix project(const Matrix& x, const Matrix& w, const Matrix* bias) {
  if (cols(x) != rows(w)) {
    throw ShapeError("project: x is " + shape_str(x) + " but W is " + shape_str(w) +
                     "; W needs one row per column of x");
  }
  Matrix out = matmul(x, w);
  add_bias_rows(out, bias, "project");
  return out;
}

Matrix attention_scores(const Matrix& q, const Matrix& k) {
  if (cols(q) != cols(k)) {
    throw ShapeError("attention_scores: Q is " + shape_str(q) + " and K is " + shape_str(k) +
                     "; they need the same d_k");
  }
  return matmul(q, k, Trans::No, Trans::Yes);
}

Matrix scale_scores(const Matrix& scores, std::size_t d_k) {
  if (d_k == 0) throw ShapeError("scale_scores: d_k must be at least 1");
  const float factor = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_k)));
  Matrix out = scores * factor;
  return out;
}

Matrix apply_mask(const Matrix& scaled, const Mask& mask) {
  if (rows(mask) != rows(scaled) || cols(mask) != cols(scaled)) {
    throw ShapeError("apply_mask: mask is " + shape_str(mask) + " but the scores are " +
                     shape_str(scaled));
  }
  // A hidden key's score becomes −∞, so that softmax gives it exactly 0.
  return xt::where(xt::equal(mask, std::uint8_t{0}), kNegInf, scaled);
}

Matrix softmax_rows(const Matrix& s, std::vector<std::size_t>* fully_masked) {
  const std::size_t n = rows(s), m = cols(s);
  Matrix out = Matrix::from_shape({n, m});
  for (std::size_t i = 0; i < n; ++i) {
    const float* in = s.data() + i * m;
    float* w = out.data() + i * m;
    float mx = kNegInf;
    for (std::size_t j = 0; j < m; ++j) {
      const float v = in[j];
      if (std::isnan(v) || v == std::numeric_limits<float>::infinity()) {
        throw NumericError("softmax: row " + std::to_string(i) +
                           " holds a score of inf or NaN (the scores overflowed float32); "
                           "scale the inputs or weights down");
      }
      if (v > mx) mx = v;
    }
    if (mx == kNegInf) {  // every key hidden (or m = 0): all-zero weights, reported, never NaN
      for (std::size_t j = 0; j < m; ++j) w[j] = 0.0f;
      if (fully_masked) fully_masked->push_back(i);
      continue;
    }
    // Accumulate the normaliser in double: rows can be long and the exps span many magnitudes.
    double sum = 0.0;
    for (std::size_t j = 0; j < m; ++j) {
      const float e = std::exp(in[j] - mx);  // ≤ 1, and exactly 0 for −inf
      w[j] = e;
      sum += e;
    }
    const float inv = static_cast<float>(1.0 / sum);  // sum ≥ 1: the max contributes exp(0)
    for (std::size_t j = 0; j < m; ++j) w[j] *= inv;
  }
  return out;
}

Matrix weighted_sum(const Matrix& weights, const Matrix& v) {
  if (cols(weights) != rows(v)) {
    throw ShapeError("weighted_sum: weights are " + shape_str(weights) + " but V is " +
                     shape_str(v) + "; V needs one row per key");
  }
  return matmul(weights, v);
}

std::vector<Matrix> split_heads(const Matrix& x, std::size_t h) {
  if (h == 0 || cols(x) % h != 0) {
    throw ShapeError("split_heads: " + std::to_string(h) + " heads do not divide the width " +
                     std::to_string(cols(x)));
  }
  const std::size_t d = cols(x) / h;
  std::vector<Matrix> out;
  out.reserve(h);
  for (std::size_t head = 0; head < h; ++head) {
    out.emplace_back(xt::view(x, xt::all(), xt::range(head * d, (head + 1) * d)));
  }
  return out;
}

Matrix merge_heads(const std::vector<Matrix>& heads) {
  if (heads.empty()) throw ShapeError("merge_heads: no heads to merge");
  const std::size_t n = rows(heads[0]), d = cols(heads[0]);
  for (std::size_t i = 1; i < heads.size(); ++i) {
    if (rows(heads[i]) != n || cols(heads[i]) != d) {
      throw ShapeError("merge_heads: head " + std::to_string(i) + " is " + shape_str(heads[i]) +
                       ", head 0 is " + shape_str(heads[0]));
    }
  }
  Matrix out = Matrix::from_shape({n, d * heads.size()});
  for (std::size_t i = 0; i < heads.size(); ++i) {
    xt::view(out, xt::all(), xt::range(i * d, (i + 1) * d)) = heads[i];
  }
  return out;
}

Matrix output_projection(const Matrix& concat, const Matrix& w_o, const Matrix* bias) {
  if (cols(concat) != rows(w_o)) {
    throw ShapeError("output_projection: concat is " + shape_str(concat) + " but W_O is " +
                     shape_str(w_o) + "; W_O needs h·d_v rows");
  }
  Matrix out = matmul(concat, w_o);
  add_bias_rows(out, bias, "output_projection");
  return out;
}

Matrix scaled_dot_product_attention(const Matrix& q, const Matrix& k, const Matrix& v,
                                    const Mask* mask, HeadTrace* trace) {
  if (rows(k) != rows(v)) {
    throw ShapeError("attention: K is " + shape_str(k) + " and V is " + shape_str(v) +
                     "; they need one row per key each");
  }
  Matrix scores = attention_scores(q, k);
  Matrix scaled = scale_scores(scores, cols(q));
  Matrix masked;
  std::vector<std::size_t> empty_rows;
  Matrix weights;
  if (mask) {
    masked = apply_mask(scaled, *mask);
    weights = softmax_rows(masked, &empty_rows);
  } else {
    weights = softmax_rows(scaled, &empty_rows);
  }
  Matrix context = weighted_sum(weights, v);
  if (trace) {
    trace->q = q;
    trace->k = k;
    trace->v = v;
    trace->scores = std::move(scores);
    trace->scaled = std::move(scaled);
    trace->masked = std::move(masked);
    trace->weights = std::move(weights);
    trace->context = context;
    trace->fully_masked_rows = std::move(empty_rows);
  }
  return context;
}

Matrix multi_head_attention(const Matrix& x, const Matrix& kv, const AttentionWeights& w,
                            const Mask* mask, AttentionTrace* trace) {
  if (cols(x) != cols(kv)) {
    throw ShapeError("attention: x is " + shape_str(x) + " and the key/value source is " +
                     shape_str(kv) + "; they need the same d_model");
  }
  validate_weights(w, cols(x));
  if (mask && (rows(*mask) != rows(x) || cols(*mask) != rows(kv))) {
    throw ShapeError("attention: mask is " + shape_str(*mask) + ", expected " +
                     shape_str(rows(x), rows(kv)) + " (n queries × m keys)");
  }
  std::vector<Matrix> contexts;
  contexts.reserve(w.heads.size());
  if (trace) {
    trace->heads.assign(w.heads.size(), HeadTrace{});
    trace->has_mask = mask != nullptr;
    trace->has_output_projection = w.w_o.has_value();
  }
  for (std::size_t i = 0; i < w.heads.size(); ++i) {
    const HeadWeights& hw = w.heads[i];
    Matrix q = project(x, hw.w_q, hw.b_q ? &*hw.b_q : nullptr);
    Matrix k = project(kv, hw.w_k, hw.b_k ? &*hw.b_k : nullptr);
    Matrix v = project(kv, hw.w_v, hw.b_v ? &*hw.b_v : nullptr);
    contexts.push_back(
        scaled_dot_product_attention(q, k, v, mask, trace ? &trace->heads[i] : nullptr));
  }
  Matrix concat = merge_heads(contexts);
  Matrix out = w.w_o ? output_projection(concat, *w.w_o, w.b_o ? &*w.b_o : nullptr) : concat;
  if (trace) {
    trace->fully_masked_rows = trace->heads[0].fully_masked_rows;
    trace->concat = std::move(concat);
    trace->output = out;
  }
  return out;
}

AttentionWeights unpack_heads(const Matrix& w_q, const Matrix& w_k, const Matrix& w_v,
                              std::optional<Matrix> w_o, std::size_t h) {
  if (w_q.shape() != w_k.shape()) {
    throw ShapeError("unpack_heads: W_Q is " + shape_str(w_q) + " but W_K is " + shape_str(w_k));
  }
  std::vector<Matrix> qs = split_heads(w_q, h), ks = split_heads(w_k, h), vs = split_heads(w_v, h);
  AttentionWeights out;
  for (std::size_t i = 0; i < h; ++i) out.heads.push_back({qs[i], ks[i], vs[i], std::nullopt, std::nullopt, std::nullopt});
  out.w_o = std::move(w_o);
  return out;
}

Matrix multi_head_attention_packed(const Matrix& x, const Matrix& kv, const Matrix& w_q,
                                   const Matrix& w_k, const Matrix& w_v, const Matrix& w_o,
                                   std::size_t h, const Mask* mask) {
  // Project all heads with one product each, then split: the same numbers as per-head projections
  // because column block i of X·W depends only on column block i of W.
  std::vector<Matrix> qs = split_heads(project(x, w_q), h);
  std::vector<Matrix> ks = split_heads(project(kv, w_k), h);
  std::vector<Matrix> vs = split_heads(project(kv, w_v), h);
  if (mask && (rows(*mask) != rows(x) || cols(*mask) != rows(kv))) {
    throw ShapeError("attention: mask is " + shape_str(*mask) + ", expected " +
                     shape_str(rows(x), rows(kv)));
  }
  std::vector<Matrix> contexts;
  for (std::size_t i = 0; i < h; ++i)
    contexts.push_back(scaled_dot_product_attention(qs[i], ks[i], vs[i], mask));
  Matrix concat = merge_heads(contexts);
  if (w_o.size() == 0) return concat;
  return output_projection(concat, w_o);
}

}  // namespace attnlab::core
