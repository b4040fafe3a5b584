#include "exercises/grading/grading.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <doctest/doctest.h>
#include <fmt/format.h>

namespace attnlab::grading {

namespace mistakes {
// Each message says what the code did, why it is wrong, and what to write instead.
const Mistake no_scaling{
    "no-scaling",
    "The scores were not scaled. Divide Q·Kᵀ by √d_k (the width of one query/key vector) before the "
    "softmax; without it the dot products grow with d_k and the softmax saturates."};
const Mistake scale_by_dk{"scale-by-dk",
                          "The scores were divided by d_k. Divide by its square root, √d_k, instead."};
const Mistake scale_by_dmodel{
    "scale-by-dmodel",
    "The scores were scaled by 1/√d_model (the full model width). Each head scales by 1/√d_k, the width "
    "of that head's query/key vectors (d_model / h in the usual setup)."};
const Mistake softmax_wrong_axis{
    "softmax-wrong-axis",
    "The softmax normalises each column (over the queries). It must normalise each row: for one query i, "
    "the weights over all keys j sum to 1."};
const Mistake unstable_softmax{
    "unstable-softmax",
    "The softmax overflows on large scores: exp(1000) is inf in float, and inf/inf is NaN. Subtract each "
    "row's maximum before exp(); softmax(s) = softmax(s − max) and then every exponent is ≤ 0."};
const Mistake mask_after_softmax{
    "mask-after-softmax",
    "The mask was applied after the softmax (hidden weights set to 0), so the rows no longer sum to 1. "
    "Mask the scores before the softmax: write -inf into every hidden position, then take the softmax."};
const Mistake mask_zero_fill{
    "mask-zero-fill",
    "Hidden positions were filled with a finite number (0, −100, −1e9, ...) instead of -inf. A finite score "
    "still gets weight exp(score − max) > 0, and all of it when the visible scores are lower still; use "
    "-std::numeric_limits<float>::infinity(), so that exp() gives exactly 0."};
const Mistake causal_hides_diagonal{
    "causal-hides-diagonal",
    "The causal mask hides the diagonal: query i cannot see key i (its own token). Hide only the keys "
    "after it: j > i."};
const Mistake causal_leaks_next{
    "causal-leaks-next",
    "The causal mask lets query i see key i + 1, the next token, which is exactly the word the model "
    "must predict. Hide every key j > i."};
const Mistake causal_hides_past{
    "causal-hides-past",
    "The mask is the wrong triangle: it hides the keys before query i (j < i) and shows the ones after it. "
    "A decoder may look back at what it has written, never ahead: key j is visible when j ≤ i, hidden when "
    "j > i."};
const Mistake mask_from_scores{
    "mask-from-scores",
    "The mask depends on the score values: changing only the scores changed which positions got zero "
    "weight. Build a mask from positions (causal: j > i) or lengths (padding: j ≥ length) only; real "
    "scores can be 0 or negative."};
const Mistake fully_masked_nan{
    "fully-masked-nan",
    "A row whose keys are all hidden came out as NaN (0/0). In attnlab a fully masked row gets all-zero "
    "weights: when a row's maximum is -inf, write zeros instead of dividing."};
const Mistake padding_query_rows{
    "padding-query-rows",
    "Rows of padding queries (i ≥ length) must be all zeros: a padding token attends to nothing. Hide "
    "key j from query i unless both i < length and j < length."};
const Mistake heads_interleaved{
    "heads-interleaved",
    "The heads were split by interleaving columns (head i taking columns i, i + h, ...). Each head owns a "
    "contiguous block: head i takes columns [i·d_k, (i+1)·d_k)."};
const Mistake heads_wrong_order{
    "heads-wrong-order",
    "The heads were concatenated in the wrong order. Concat puts head 0's columns first, then head 1's, "
    "and so on: [head_0 | head_1 | ... | head_{h-1}]."};
const Mistake q_times_k{
    "q-times-k",
    "The scores are Q·K instead of Q·Kᵀ. Score (i, j) is the dot product of query row i with key row j: "
    "the sum over t of q(i, t)·k(j, t), i.e. matmul(q, transpose(k))."};
const Mistake missing_wo{
    "missing-wo",
    "The result is the concatenation of the heads without the output projection. Multiply by W_O: "
    "output = concat · W_O, which mixes the heads back into d_model columns."};
const Mistake cross_kv_from_decoder{
    "cross-kv-from-decoder",
    "Cross-attention took K and V from the decoder side x. Only Q comes from x; K and V come from the "
    "encoder memory (K = memory·W_K, V = memory·W_V), so the weights are n × m."};
const Mistake layernorm_eps_outside{
    "layernorm-eps-outside",
    "ε was added outside the square root: (x − μ)/(√var + ε). Put it inside: (x − μ)/√(var + ε)."};
const Mistake layernorm_wrong_axis{
    "layernorm-wrong-axis",
    "Each column was normalised (one feature across the tokens). Layer norm normalises each row: the "
    "d_model features of one token, with that token's own mean and variance."};
const Mistake layernorm_biased_variance{
    "layernorm-unbiased-variance",
    "The variance was divided by d − 1. Layer norm uses the plain (biased) variance: divide by d."};
const Mistake layernorm_no_affine{
    "layernorm-no-affine",
    "γ and β were not applied. After normalising, scale and shift each feature: y = γ_j·x̂_j + β_j."};
const Mistake input_modified{
    "input-modified",
    "The function changed one of its inputs. The caller still needs them (the residual connection "
    "reuses x, for example): leave inputs untouched and write the result into a new Matrix."};
const Mistake pe_concatenated_halves{
    "pe-concatenated-halves",
    "The sines fill the first half of the columns and the cosines the second half. The paper interleaves "
    "them: column 2i holds sin, column 2i+1 holds cos, both with the same frequency."};
const Mistake pe_sin_cos_swapped{
    "pe-sin-cos-swapped",
    "sin and cos are swapped: even columns (2i) take the sine, odd columns (2i+1) the cosine."};
const Mistake pe_exponent{
    "pe-exponent",
    "The frequency exponent is off. Columns 2i and 2i+1 share the angle pos / 10000^(2i / d_model); "
    "use the even column index 2i (not i, and not the odd index) in the exponent."};
const Mistake backward_missing_scale{
    "backward-missing-scale",
    "dQ and dK are missing the 1/√d_k factor. The scores are S = Q·Kᵀ/√d_k, so dQ = dS·K/√d_k and "
    "dK = dSᵀ·Q/√d_k."};
const Mistake backward_softmax_jacobian{
    "backward-softmax-jacobian",
    "The gradient does not go through the softmax correctly. Row by row, dS_ij = P_ij·(dP_ij − Σ_k P_ik·dP_ik) "
    "with dP = dO·Vᵀ; the subtracted row sum is the part most often forgotten."};
const Mistake backward_dv_transpose{
    "backward-dv-transpose",
    "dV is P·dO; it must be Pᵀ·dO (key j collects the gradient from every query that attended to it)."};
const Mistake online_no_rescale{
    "online-no-rescale",
    "The result is right when one block holds every key but wrong with smaller blocks. When a new block "
    "raises the running maximum from m_old to m_new, multiply the running sum and the running output by "
    "exp(m_old − m_new) before adding the new block."};
const Mistake online_full_matrix{
    "online-full-matrix",
    "The function allocated memory for the whole n × m score matrix. The point of the online softmax is "
    "to keep only one block of scores (n × block) at a time, with a running max, sum and output per row."};
}  // namespace mistakes

// doctest's FAIL_CHECK takes one stream operand; building the text first keeps call sites readable.
void fail(const std::string& message) { FAIL_CHECK(message); }

void report_mistake(const Mistake& m, const std::string& detail) {
  std::string text = std::string("mistake [") + m.tag + "]";
  if (!detail.empty()) text += " in " + detail;
  text += ":\n" + std::string(m.message);
  fail(text);
}

ex::Matrix to_ex(const core::Matrix& m) {
  ex::Matrix out(core::rows(m), core::cols(m));
  std::copy(m.data(), m.data() + m.size(), out.data.begin());
  return out;
}

core::Matrix to_core(const ex::Matrix& m) {
  core::Matrix out = core::Matrix::from_shape({m.rows, m.cols});
  std::copy(m.data.begin(), m.data.end(), out.data());
  return out;
}

ex::Matrix from_rows(const std::vector<std::vector<float>>& r) {
  ex::Matrix out(r.size(), r.empty() ? 0 : r[0].size());
  for (std::size_t i = 0; i < out.rows; ++i)
    for (std::size_t j = 0; j < out.cols; ++j) out(i, j) = r[i][j];
  return out;
}

ex::Matrix Rng::matrix(std::size_t r, std::size_t c, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  ex::Matrix out(r, c);
  for (float& x : out.data) x = dist(gen_);
  return out;
}

std::vector<float> Rng::vector(std::size_t n, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> out(n);
  for (float& x : out) x = dist(gen_);
  return out;
}

bool all_finite(const ex::Matrix& m) {
  return std::all_of(m.data.begin(), m.data.end(), [](float x) { return std::isfinite(x); });
}

namespace {
bool same_shape(const ex::Matrix& a, const ex::Matrix& b) {
  return a.rows == b.rows && a.cols == b.cols && a.data.size() == a.rows * a.cols &&
         b.data.size() == b.rows * b.cols;
}

bool close_value(double a, double b, double tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= tol * (1.0 + std::abs(b));
}

std::string fmt_value(float x) { return fmt::format("{:.6g}", x); }
}  // namespace

bool close(const ex::Matrix& a, const ex::Matrix& b, double tol) {
  if (!same_shape(a, b)) return false;
  for (std::size_t i = 0; i < a.data.size(); ++i)
    if (!close_value(a.data[i], b.data[i], tol)) return false;
  return true;
}

bool expect_match(const std::string& what, const ex::Matrix& got, const ex::Matrix& want,
                  const std::vector<Candidate>& candidates, const Mistake* if_nonfinite, double tol) {
  if (same_shape(got, want) && close(got, want, tol)) return true;
  // Every distinct mistake that reproduces the learner's numbers. On some inputs two mistakes give the
  // same result (with d_model = 4 and d_k = 2, √d_model = d_k): then name them all rather than guess.
  std::vector<const Mistake*> matched;
  for (const Candidate& c : candidates) {
    if (std::find(matched.begin(), matched.end(), c.mistake) == matched.end() && close(got, c.value, tol)) {
      matched.push_back(c.mistake);
    }
  }
  if (matched.size() == 1) {
    report_mistake(*matched[0], what);
    return false;
  }
  if (matched.size() > 1) {
    std::string text = what + ": on this input, " + std::to_string(matched.size()) +
                       " different mistakes give exactly your numbers; one of them is yours:";
    for (const Mistake* m : matched) text += std::string("\nmistake [") + m->tag + "]: " + m->message;
    fail(text);
    return false;
  }
  if (!same_shape(got, want)) {
    if (got.data.size() != got.rows * got.cols) {
      fail(what + ": the result says it is " + got.shape() + " but holds " +
                 std::to_string(got.data.size()) + " numbers; create it with Matrix(rows, cols).");
    } else if (got.rows == 0 && got.cols == 0) {
      static bool said_once = false;  // the stub's empty result fails every test: explain it once
      fail(what + ": the result is empty (0 × 0), expected " + want.shape() + "." +
           (said_once ? "" : " Has this exercise been started? Replace the TODO in exercise.cpp."));
      said_once = true;
    } else {
      fail(what + ": the result is " + got.shape() + ", expected " + want.shape() + ".");
    }
    return false;
  }
  if (!all_finite(got) && all_finite(want)) {
    if (if_nonfinite) {
      report_mistake(*if_nonfinite, what);
      return false;
    }
  }
  std::size_t worst = 0;
  for (std::size_t i = 0; i < got.data.size(); ++i) {
    if (!close_value(got.data[i], want.data[i], tol)) {
      worst = i;
      break;
    }
  }
  const std::size_t r = worst / want.cols, c = worst % want.cols;
  std::ostringstream row_got, row_want;
  for (std::size_t j = 0; j < want.cols && j < 8; ++j) {
    row_got << (j ? " " : "") << fmt_value(got(r, j));
    row_want << (j ? " " : "") << fmt_value(want(r, j));
  }
  fail(what + ": entry (" + std::to_string(r) + ", " + std::to_string(c) + ") is " +
             fmt_value(got.data[worst]) + ", expected " + fmt_value(want.data[worst]) + ".\n" +
             "  your row " + std::to_string(r) + ":     " + row_got.str() + (want.cols > 8 ? " ..." : "") +
             "\n  expected row " + std::to_string(r) + ": " + row_want.str() + (want.cols > 8 ? " ..." : ""));
  return false;
}

namespace {
// The inputs the current guard watches, by address, for ex::matrix_name (an index error names them).
std::vector<std::pair<const ex::Matrix*, const char*>>& named_inputs() {
  static std::vector<std::pair<const ex::Matrix*, const char*>> inputs;
  return inputs;
}
const char* input_name(const ex::Matrix* m) {
  for (const auto& [p, name] : named_inputs())
    if (p == m) return name;
  return nullptr;
}
}  // namespace

InputGuard::~InputGuard() {
  for (const Entry& e : entries_)
    if (e.m) std::erase_if(named_inputs(), [&](const auto& p) { return p.first == e.m; });
}

InputGuard& InputGuard::add(const char* name, const ex::Matrix& m) {
  entries_.push_back({name, &m, nullptr, m, {}});
  named_inputs().emplace_back(&m, name);
  ex::matrix_name = input_name;
  return *this;
}

InputGuard& InputGuard::add(const char* name, const std::vector<float>& v) {
  entries_.push_back({name, nullptr, &v, {}, v});
  return *this;
}

bool InputGuard::verify(const std::string& function) const {
  for (const Entry& e : entries_) {
    const bool changed = e.m ? (e.m->rows != e.m_copy.rows || e.m->cols != e.m_copy.cols ||
                                e.m->data != e.m_copy.data)
                             : *e.v != e.v_copy;
    if (changed) {
      report_mistake(mistakes::input_modified, function + " changed its input '" + e.name + "'");
      return false;
    }
  }
  return true;
}

// ---- variants -------------------------------------------------------------------------------------

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Softmax of one line of values in place (double), zeros or NaN for an all -inf line.
void softmax_line(std::vector<double>& line, bool nan_for_empty) {
  double mx = kNegInf;
  for (double x : line) mx = std::max(mx, x);
  if (mx == kNegInf) {
    for (double& x : line) x = nan_for_empty ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    return;
  }
  double sum = 0;
  for (double& x : line) sum += (x = std::exp(x - mx));
  for (double& x : line) x /= sum;
}
}  // namespace

ex::Matrix softmax_variant(const ex::Matrix& s, Axis axis, bool nan_for_empty) {
  ex::Matrix out(s.rows, s.cols);
  if (axis == Axis::Rows) {
    for (std::size_t i = 0; i < s.rows; ++i) {
      std::vector<double> line(s.cols);
      for (std::size_t j = 0; j < s.cols; ++j) line[j] = s(i, j);
      softmax_line(line, nan_for_empty);
      for (std::size_t j = 0; j < s.cols; ++j) out(i, j) = static_cast<float>(line[j]);
    }
  } else {
    for (std::size_t j = 0; j < s.cols; ++j) {
      std::vector<double> line(s.rows);
      for (std::size_t i = 0; i < s.rows; ++i) line[i] = s(i, j);
      softmax_line(line, nan_for_empty);
      for (std::size_t i = 0; i < s.rows; ++i) out(i, j) = static_cast<float>(line[i]);
    }
  }
  return out;
}

ex::Matrix masked_softmax(const ex::Matrix& s, const MaskBits& mask, MaskMode mode, bool nan_for_empty, Axis axis) {
  ex::Matrix t = s;
  for (std::size_t i = 0; i < s.rows; ++i)
    for (std::size_t j = 0; j < s.cols; ++j)
      if (!mask[i][j]) {
        if (mode == MaskMode::BeforeSoftmaxNegInf) t(i, j) = -std::numeric_limits<float>::infinity();
        if (mode == MaskMode::BeforeSoftmaxZero) t(i, j) = 0.0f;
      }
  ex::Matrix w = softmax_variant(t, axis, nan_for_empty);
  if (mode == MaskMode::AfterSoftmax) {
    for (std::size_t i = 0; i < s.rows; ++i)
      for (std::size_t j = 0; j < s.cols; ++j)
        if (!mask[i][j]) w(i, j) = 0.0f;
  }
  return w;
}

MaskBits zero_pattern(const ex::Matrix& w) {
  MaskBits out(w.rows, std::vector<std::uint8_t>(w.cols, 0));
  for (std::size_t i = 0; i < w.rows; ++i)
    for (std::size_t j = 0; j < w.cols; ++j) out[i][j] = w.data.size() == w.rows * w.cols && w(i, j) == 0.0f;
  return out;
}

std::optional<HeadOut> attention_variant(const ex::Matrix& q, const ex::Matrix& k, const ex::Matrix& v,
                                         const Variant& var, const MaskBits& mask) {
  const std::size_t n = q.rows, d_k = q.cols;
  std::size_t m = 0;
  if (var.transpose_k) {
    if (k.cols != d_k) return std::nullopt;
    m = k.rows;
  } else {
    if (k.rows != d_k) return std::nullopt;
    m = k.cols;
  }
  if (v.rows != m) return std::nullopt;
  if (!mask.empty() && (mask.size() != n || mask[0].size() != m)) return std::nullopt;
  double c = 1.0;
  switch (var.scale) {
    case Scale::SqrtDk: c = 1.0 / std::sqrt(double(d_k)); break;
    case Scale::None: c = 1.0; break;
    case Scale::Dk: c = 1.0 / double(d_k); break;
    case Scale::Custom: c = var.custom_scale; break;
  }
  ex::Matrix s(n, m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      double acc = 0;
      for (std::size_t t = 0; t < d_k; ++t) acc += double(q(i, t)) * (var.transpose_k ? k(j, t) : k(t, j));
      double val = acc * c;
      if (!mask.empty() && !mask[i][j]) {
        if (var.mask_mode == MaskMode::BeforeSoftmaxNegInf) val = kNegInf;
        if (var.mask_mode == MaskMode::BeforeSoftmaxZero) val = 0.0;
      }
      s(i, j) = static_cast<float>(val);
    }
  HeadOut out;
  out.weights = softmax_variant(s, var.axis, var.nan_for_empty_rows);
  if (!mask.empty() && var.mask_mode == MaskMode::AfterSoftmax) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j)
        if (!mask[i][j]) out.weights(i, j) = 0.0f;
  }
  out.output = ex::Matrix(n, v.cols);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < v.cols; ++j) {
      double acc = 0;
      for (std::size_t t = 0; t < m; ++t) acc += double(out.weights(i, t)) * v(t, j);
      out.output(i, j) = static_cast<float>(acc);
    }
  return out;
}

ex::Matrix head_columns(const ex::Matrix& x, std::size_t head, std::size_t width, std::size_t h, bool interleave) {
  ex::Matrix out(x.rows, width);
  for (std::size_t i = 0; i < x.rows; ++i)
    for (std::size_t t = 0; t < width; ++t) out(i, t) = x(i, interleave ? head + t * h : head * width + t);
  return out;
}

std::optional<ex::Matrix> mha_variant(const ex::Matrix& x, const ex::Matrix& kv, const ex::Matrix& w_q,
                                      const ex::Matrix& w_k, const ex::Matrix& w_v, const ex::Matrix& w_o,
                                      std::size_t h, const MhaVariant& var) {
  if (h == 0 || w_q.cols % h || w_v.cols % h || w_q.cols != w_k.cols) return std::nullopt;
  const ex::Matrix q = ex::matmul(x, w_q), k = ex::matmul(kv, w_k), v = ex::matmul(kv, w_v);
  const std::size_t d_k = w_q.cols / h, d_v = w_v.cols / h;
  ex::Matrix concat(x.rows, h * d_v);
  for (std::size_t head = 0; head < h; ++head) {
    auto r = attention_variant(head_columns(q, head, d_k, h, var.interleave_split),
                               head_columns(k, head, d_k, h, var.interleave_split),
                               head_columns(v, head, d_v, h, var.interleave_split), var.head);
    if (!r) return std::nullopt;
    const std::size_t slot = var.reverse_concat ? h - 1 - head : head;
    for (std::size_t i = 0; i < x.rows; ++i)
      for (std::size_t t = 0; t < d_v; ++t) concat(i, slot * d_v + t) = r->output(i, t);
  }
  if (var.skip_wo || w_o.rows == 0) return concat;
  return ex::matmul(concat, w_o);
}

}  // namespace attnlab::grading
