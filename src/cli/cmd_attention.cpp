// attnlab attention --input FILE.json [--format text|json]
// Runs the attention core on a small problem and prints every intermediate matrix.
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

void run_attention(const AttentionOptions& o) {
  const io::Problem p = io::load_problem(o.input);
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
  sub->add_option("-f,--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->add_flag("--no-color", opts->no_color, "Plain text without colour (also when NO_COLOR is set or stdout is not a terminal)");
  sub->add_flag("--full", opts->full, "Print every column even when the matrix is wider than the terminal");
  sub->add_option("--precision", opts->precision, "Digits after the decimal point in text output")
      ->check(whole_number(0, 8))
      ->capture_default_str();
  sub->footer(
      "Input schema: {\"tokens\": [..], \"x\": n × d_model, \"memory\": m × d_model (optional), \"memory_tokens\": [..],\n"
      "  \"heads\": [{\"w_q\", \"w_k\": d_model × d_k, \"w_v\": d_model × d_v}, ..], \"w_o\": h·d_v × d_model (optional),\n"
      "  \"mask\": \"none\" | \"causal\" | n × m array of 0/1 (1 = may attend)}\n"
      "Example: attnlab attention --input data/examples/causal_four_tokens.json");
  sub->callback([opts] { run_attention(*opts); });
}

}  // namespace attnlab::cli
