// attnlab attention --input FILE.json [--format text|json]
// Runs the attention core on a small problem and prints every intermediate matrix.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "core/attention.hpp"
#include "io/problem.hpp"
#include "io/trace_json.hpp"
#include "render/matrix_print.hpp"
#include "render/terminal.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"

namespace attnlab::cli {

struct AttentionOptions {
  std::string input;
  std::string format = "text";
  bool no_color = false;
  bool full = false;
  int precision = 4;
};

namespace {

std::string join_rows(const std::vector<std::size_t>& v, const std::vector<std::string>& labels) {
  std::string out;
  for (std::size_t i : v) out += (out.empty() ? "" : ", ") + fmt::format("{} ({})", i, labels[i]);
  return out;
}

void print_text(const io::Problem& p, const core::AttentionTrace& t, const AttentionOptions& o) {
  const render::Terminal term = render::detect_terminal(o.no_color);
  render::PrintOptions po;
  po.precision = o.precision;
  po.max_width = term.width;
  po.full = o.full;
  po.color = term.color;
  render::PrintOptions heat = po;
  heat.heatmap = true;

  const auto q_labels = p.tokens.empty() ? io::default_labels(p.n()) : p.tokens;
  const auto k_labels = p.memory ? (p.memory_tokens.empty() ? io::default_labels(p.m()) : p.memory_tokens) : q_labels;
  const std::size_t d_k = core::cols(p.weights.heads[0].w_q), d_v = core::cols(p.weights.heads[0].w_v);
  const std::size_t h = p.weights.heads.size();
  std::ostream& os = std::cout;
  const char* mask_name = p.mask_kind == io::MaskKind::Causal ? "causal" : p.mask_kind == io::MaskKind::Explicit ? "explicit 0/1 matrix" : "none";

  os << fmt::format("{}: n = {} queries, m = {} keys, d_model = {}, h = {} head{} (d_k = {}, d_v = {}), mask: {}, W_O: {}\n",
                    p.memory ? "cross-attention (Q from x, K and V from memory)" : "self-attention",
                    p.n(), p.m(), p.d_model(), h, h == 1 ? "" : "s", d_k, d_v, mask_name,
                    p.weights.w_o ? "yes" : "no (output = concat)");
  os << "Rows are queries (" << (p.memory ? "x" : "tokens") << "), columns of the n × m matrices are keys ("
     << (p.memory ? "memory" : "the same tokens") << ").\n\n";

  if (p.memory && p.mask_kind == io::MaskKind::Causal) {
    os << "note: a causal mask on cross-attention: query i sees memory positions 0…i only. Decoders mask their\n"
          "      self-attention; cross-attention normally sees the whole source, so check that this is meant.\n\n";
  }
  const std::string kv = p.memory ? "M" : "X";
  for (std::size_t i = 0; i < t.heads.size(); ++i) {
    const core::HeadTrace& ht = t.heads[i];
    os << fmt::format("── head {} of {} ──\n", i, h);
    // The labels name the biases when the problem gives them: the printed numbers include them.
    const core::HeadWeights& hw = p.weights.heads[i];
    render::print_matrix(os, hw.b_q ? "Q = X · W_Q + b_Q" : "Q = X · W_Q", ht.q, q_labels, render::numbered_labels("q", d_k), po);
    os << '\n';
    render::print_matrix(os, "K = " + kv + " · W_K" + (hw.b_k ? " + b_K" : ""), ht.k, k_labels, render::numbered_labels("k", d_k), po);
    os << '\n';
    render::print_matrix(os, "V = " + kv + " · W_V" + (hw.b_v ? " + b_V" : ""), ht.v, k_labels, render::numbered_labels("v", d_v), po);
    os << '\n';
    render::print_matrix(os, "scores = Q · Kᵀ", ht.scores, q_labels, k_labels, po);
    os << '\n';
    render::print_matrix(os, fmt::format("scaled = scores / √d_k  (√{} = {:.4f})", d_k, std::sqrt(double(d_k))), ht.scaled, q_labels, k_labels, po);
    os << '\n';
    if (t.has_mask) {
      render::print_matrix(os, "masked = scaled with -inf where the mask hides a key", ht.masked, q_labels, k_labels, po);
      os << '\n';
    }
    render::print_matrix(os,
                 t.fully_masked_rows.empty()
                     ? "weights = softmax of each row (each row sums to 1)"
                     : "weights = softmax of each row (each row sums to 1, except fully masked rows: all 0, see the note below)",
                 ht.weights, q_labels, k_labels, heat);
    os << '\n';
    render::print_matrix(os, "context = weights · V", ht.context, q_labels, render::numbered_labels("v", d_v), po);
    os << '\n';
  }
  os << "── all heads ──\n";
  render::print_matrix(os, h == 1 ? std::string("concat = context_0 (one head)") : fmt::format("concat = [context_0 | … | context_{}]", h - 1), t.concat, q_labels,
               render::numbered_labels("c", core::cols(t.concat)), po);
  if (p.weights.w_o) {
    os << '\n';
    render::print_matrix(os, p.weights.b_o ? "output = concat · W_O + b_O" : "output = concat · W_O", t.output, q_labels,
                 render::numbered_labels("d", core::cols(t.output)), po);
  }
  if (!t.fully_masked_rows.empty()) {
    os << fmt::format("\nnote: fully masked row{} {}: every key is hidden, so the weights are set to all zeros "
                      "(not NaN) and the context is zero.\n",
                      t.fully_masked_rows.size() == 1 ? "" : "s", join_rows(t.fully_masked_rows, q_labels));
  }
}

// What tracing a problem takes, estimated from its shapes before any work (round three's item 11: a
// 376 KB problem of 4,096 tokens, within the reader's limits, reached 2.8 GB and printed 565 MB of
// JSON). docs/errors.md states the bounds.
constexpr double kMaxOutputBytes = 64.0 * 1024 * 1024;  // what one run may print
constexpr double kJsonBytesPerNumber = 13;  // a float32's shortest text and ", " (about 11 to 14)
constexpr double kJsonTreeBytesPerNumber = 48;  // one value of the JSON tree, its share of the rows' arrays and the text

struct TraceSize {
  double numbers = 0;      // in the trace
  double memory = 0;       // bytes held at once
  double output = 0;       // bytes printed
};

TraceSize estimate_trace(const io::Problem& p, const AttentionOptions& o, std::size_t term_width) {
  const double n = static_cast<double>(p.n()), m = static_cast<double>(p.m()), dm = static_cast<double>(p.d_model());
  const double h = static_cast<double>(p.weights.heads.size());
  const double dk = static_cast<double>(core::cols(p.weights.heads[0].w_q)), dv = static_cast<double>(core::cols(p.weights.heads[0].w_v));
  const bool masked = p.mask.has_value();
  const double nm_matrices = masked ? 4 : 3;  // scores, scaled, (masked,) weights
  TraceSize t;
  t.numbers = h * (n * dk + m * dk + m * dv + nm_matrices * n * m + n * dv) + n * h * dv + n * dm;
  // The float32 trace and the 0/1 mask, and the temporaries of computing it: measured at 3 times the
  // trace's own floats (216 MB at n = m = 2048, 823 MB at 4096, one head, text output).
  t.memory = 3.0 * 4.0 * t.numbers + (masked ? n * m : 0.0);
  if (o.format == "json") {
    const double mask_numbers = masked ? n * m : 0.0;  // the mask is printed too, "1, " each
    t.output = kJsonBytesPerNumber * t.numbers + 3.0 * mask_numbers;
    t.memory += kJsonTreeBytesPerNumber * (t.numbers + mask_numbers) + t.output;
  } else {
    // Each matrix prints a row per query (n, or m for K and V) and a header; a row is the whole of its
    // numbers with --full, else at most the terminal's width (several bytes a column: the UTF-8 of
    // "…", colour codes of the heatmap).
    const double cell = o.precision + 6.0;
    auto rows_bytes = [&](double rows, double cols) {
      const double line = o.full ? 16.0 + cols * cell : std::min(16.0 + cols * cell, 4.0 * static_cast<double>(term_width));
      return (rows + 3) * (line + 24.0 * (o.full ? cols : std::min(cols, static_cast<double>(term_width) / cell)));
    };
    double per_head = rows_bytes(n, dk) + rows_bytes(m, dk) + rows_bytes(m, dv) + nm_matrices * rows_bytes(n, m) + rows_bytes(n, dv);
    t.output = h * per_head + rows_bytes(n, h * dv) + rows_bytes(n, dm);
  }
  return t;
}

void check_trace_size(const io::Problem& p, const AttentionOptions& o, std::size_t term_width) {
  const TraceSize t = estimate_trace(p, o, term_width);
  const std::string what = o.input == "-" ? "standard input" : o.input;
  const std::string shape = fmt::format("h · n · m = {} · {} · {}", p.weights.heads.size(), p.n(), p.m());
  if (t.output > kMaxOutputBytes) {
    throw InputError(fmt::format("{}: the trace of this problem ({}) would print about {} {}, more than the limit of {} of "
                                 "output; give a smaller problem (fewer tokens or heads){}",
                                 what, shape, human_size(t.output), o.format == "json" ? "of JSON" : "of text",
                                 human_size(kMaxOutputBytes),
                                 o.format == "json" ? ", or use --format text, which shortens wide matrices"
                                 : o.full          ? ", or leave out --full"
                                                   : ""));
  }
  const MemoryBudget budget = memory_budget();
  if (budget.bytes > 0 && t.memory > budget.bytes) {
    throw InputError(fmt::format("{}: tracing this problem ({}) needs about {} of memory, more than {}; give a smaller "
                                 "problem (fewer tokens or heads)",
                                 what, shape, human_size(t.memory), budget.what));
  }
}

void run_attention(const AttentionOptions& o) {
  const io::Problem p = io::load_problem(o.input);
  check_trace_size(p, o, render::detect_terminal(o.no_color).width);
  core::AttentionTrace trace;
  core::multi_head_attention(p.x, p.kv(), p.weights, p.mask ? &*p.mask : nullptr, &trace);
  io::check_trace_finite(trace);
  if (o.format == "json") {
    std::cout << io::dump_json(io::trace_to_json(p, trace));
  } else {
    print_text(p, trace, o);
  }
  std::cout.flush();
}

}  // namespace

void setup_attention(CLI::App& app) {
  auto opts = std::make_shared<AttentionOptions>();
  CLI::App* sub = app.add_subcommand(
      "attention", "Run multi-head attention on a small JSON problem and print every intermediate matrix");
  sub->add_option("-i,--input", opts->input, "Problem file (JSON; '-' reads standard input). See data/examples/.")
      ->required();
  add_format_option(*sub, opts->format);
  add_view_flags(*sub, opts->no_color, opts->full);
  sub->add_option("--precision", opts->precision, "Digits after the decimal point in text output")
      ->transform(whole_number(0, 8))
      ->capture_default_str();
  sub->footer(
      "Input schema: {\"tokens\": [..], \"x\": n × d_model, \"memory\": m × d_model (optional), \"memory_tokens\": [..],\n"
      "  \"heads\": [{\"w_q\", \"w_k\": d_model × d_k, \"w_v\": d_model × d_v}, ..], \"w_o\": h·d_v × d_model (optional),\n"
      "  \"mask\": \"none\" | \"causal\" | n × m array of 0/1 (1 = may attend)}\n"
      "Example: attnlab attention --input data/examples/causal_four_tokens.json");
  sub->callback([opts] { run_attention(*opts); });
}

}  // namespace attnlab::cli
