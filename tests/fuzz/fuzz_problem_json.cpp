// Fuzz target: the JSON problem reader of `attnlab attention --input` (io/problem.hpp), and the
// attention, its JSON trace and its text rendering on every problem the reader accepts.
//
// Bad input must end in an attnlab::Error (InputError from the reader, NumericError when the numbers
// overflow float32 on the way); anything else is a bug. On accepted problems it also checks what
// must hold for every input: the shapes the reader promised, attention weights in [0, 1] whose rows
// sum to 1 (or are all zero, for rows the mask hides completely, reported in fully_masked_rows and
// agreeing with the double-precision reference), zero weight wherever the mask hides a key, the
// problem surviving problem_to_json → parse_problem, and the rendered text being valid UTF-8 (labels
// are cut to a column width, which must not split a character).
//
// Sizes are bounded by small ProblemLimits, so one input costs at most a few milliseconds.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/attention.hpp"
#include "io/problem.hpp"
#include "io/trace_json.hpp"
#include "reference/naive_attention.hpp"
#include "render/matrix_print.hpp"
#include "fuzz_support.hpp"

using namespace attnlab;

namespace {

reference::Mat to_ref(const core::Matrix& m) {
  reference::Mat r(core::rows(m), std::vector<double>(core::cols(m)));
  for (std::size_t i = 0; i < core::rows(m); ++i)
    for (std::size_t j = 0; j < core::cols(m); ++j) r[i][j] = m(i, j);
  return r;
}

std::vector<double> bias_row(const std::optional<core::Matrix>& b) {
  std::vector<double> r;
  if (b)
    for (std::size_t j = 0; j < core::cols(*b); ++j) r.push_back((*b)(0, j));
  return r;
}

void check_problem(const io::Problem& p, const io::ProblemLimits& lim) {
  const std::size_t n = p.n(), m = p.m(), d = p.d_model(), h = p.weights.heads.size();
  FUZZ_CHECK(n >= 1 && n <= lim.max_tokens && m >= 1 && m <= lim.max_tokens);
  FUZZ_CHECK(d >= 1 && d <= lim.max_width);
  FUZZ_CHECK(h >= 1 && h <= lim.max_heads && h * n * m <= lim.max_trace_elements);
  FUZZ_CHECK(p.tokens.empty() || p.tokens.size() == n);
  FUZZ_CHECK(p.memory_tokens.empty() || p.memory_tokens.size() == m);
  FUZZ_CHECK(!p.mask || (core::rows(*p.mask) == n && core::cols(*p.mask) == m));
  FUZZ_CHECK((p.mask_kind == io::MaskKind::None) == !p.mask.has_value());
}

void check_trace(const io::Problem& p, const core::AttentionTrace& t, const core::Matrix& out) {
  const std::size_t n = p.n(), m = p.m(), h = p.weights.heads.size();
  const std::size_t d_v = core::cols(p.weights.heads[0].w_v);
  FUZZ_CHECK(t.heads.size() == h);
  FUZZ_CHECK(core::rows(out) == n && core::cols(out) == (p.weights.w_o ? p.d_model() : h * d_v));
  FUZZ_CHECK(core::rows(t.concat) == n && core::cols(t.concat) == h * d_v);
  for (const core::HeadTrace& ht : t.heads) {
    FUZZ_CHECK(core::rows(ht.weights) == n && core::cols(ht.weights) == m);
    FUZZ_CHECK(ht.fully_masked_rows == t.fully_masked_rows);
    std::size_t next_masked = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool fully_masked = next_masked < t.fully_masked_rows.size() && t.fully_masked_rows[next_masked] == i;
      if (fully_masked) ++next_masked;
      double sum = 0;
      for (std::size_t j = 0; j < m; ++j) {
        const float w = ht.weights(i, j);
        FUZZ_CHECK(w >= 0.0f && w <= 1.0f);
        if (p.mask && (*p.mask)(i, j) == 0) FUZZ_CHECK(w == 0.0f);
        sum += w;
      }
      if (fully_masked) {
        FUZZ_CHECK(sum == 0.0);
      } else {
        FUZZ_CHECK(std::abs(sum - 1.0) <= 1e-5 * static_cast<double>(m) + 1e-5);
      }
    }
    FUZZ_CHECK(next_masked == t.fully_masked_rows.size());
  }
  // Which rows are fully masked depends only on the mask: the reference must find the same ones.
  std::vector<reference::Head> rh;
  for (const core::HeadWeights& hw : p.weights.heads)
    rh.push_back({to_ref(hw.w_q), to_ref(hw.w_k), to_ref(hw.w_v), bias_row(hw.b_q), bias_row(hw.b_k), bias_row(hw.b_v)});
  reference::MaskMat mask;
  if (p.mask) {
    mask.assign(n, std::vector<std::uint8_t>(m));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j) mask[i][j] = (*p.mask)(i, j);
  }
  const reference::Result r = reference::attention(to_ref(p.x), to_ref(p.kv()), rh,
                                                   p.weights.w_o ? to_ref(*p.weights.w_o) : reference::Mat{}, mask,
                                                   bias_row(p.weights.b_o));
  FUZZ_CHECK(r.fully_masked_rows == t.fully_masked_rows);
}

void render_all(const io::Problem& p, const core::AttentionTrace& t, std::size_t salt) {
  std::ostringstream os;
  render::PrintOptions po;
  po.precision = static_cast<int>(salt % 9);
  po.max_width = 10 + salt % 120;
  po.full = salt % 5 == 0;
  po.max_label_width = 1 + salt % 16;
  po.color = static_cast<render::ColorMode>(salt % 3);
  const auto& q_labels = p.tokens;
  const auto& k_labels = p.memory ? p.memory_tokens : p.tokens;
  for (const core::HeadTrace& ht : t.heads) {
    render::print_matrix(os, "scores", ht.scores, q_labels, k_labels, po);
    if (t.has_mask) render::print_matrix(os, "masked", ht.masked, q_labels, k_labels, po);
    render::HeatmapOptions hm;
    hm.max_width = po.max_width;
    hm.full = po.full;
    hm.color = po.color;
    hm.max_label_width = po.max_label_width;
    print_heatmap(os, "weights", ht.weights, q_labels, k_labels, hm);
  }
  render::print_matrix(os, "output", t.output, q_labels, render::numbered_labels("d", core::cols(t.output)), po);
  FUZZ_CHECK(fuzz::valid_utf8(os.str()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  io::ProblemLimits lim;
  lim.max_tokens = 24;
  lim.max_width = 24;
  lim.max_heads = 6;
  lim.max_trace_elements = 2048;
  fuzz::only_attnlab_errors([&] {
    const io::Problem p = io::parse_problem_text(text, "fuzz", lim);
    check_problem(p, lim);

    // What problem_to_json writes must read back as the same problem.
    const io::Problem again = io::parse_problem(io::problem_to_json(p), lim);
    FUZZ_CHECK(again.tokens == p.tokens && again.memory_tokens == p.memory_tokens && again.x == p.x);
    FUZZ_CHECK(again.mask_kind == p.mask_kind && again.weights.heads.size() == p.weights.heads.size());
    FUZZ_CHECK(again.mask.has_value() == p.mask.has_value() && (!p.mask || *again.mask == *p.mask));

    core::AttentionTrace trace;
    const core::Matrix out = core::multi_head_attention(p.x, p.kv(), p.weights, p.mask ? &*p.mask : nullptr, &trace);
    io::check_trace_finite(trace);  // NumericError when the inputs overflow float32: an expected answer
    check_trace(p, trace, out);
    const std::string json = io::dump_json(io::trace_to_json(p, trace));
    FUZZ_CHECK(!json.empty() && fuzz::valid_utf8(json));
    render_all(p, trace, size);
  });
  return 0;
}
