#include "io/trace_json.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace attnlab::io {

OutJson matrix_to_json(const core::Matrix& m) {
  OutJson out = OutJson::array();
  for (std::size_t r = 0; r < core::rows(m); ++r) {
    OutJson row = OutJson::array();
    for (std::size_t c = 0; c < core::cols(m); ++c) {
      const float v = m(r, c);
      if (std::isinf(v) && v < 0) row.push_back("-inf");
      else row.push_back(v);
    }
    out.push_back(std::move(row));
  }
  return out;
}

namespace {
void dump_rec(const OutJson& j, std::string& out, int indent) {
  const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
  const std::string pad_in(static_cast<std::size_t>(indent + 1) * 2, ' ');
  if (j.is_object()) {
    if (j.empty()) { out += "{}"; return; }
    out += "{\n";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out += ",\n";
      first = false;
      out += pad_in + OutJson(it.key()).dump() + ": ";
      dump_rec(it.value(), out, indent + 1);
    }
    out += "\n" + pad + "}";
  } else if (j.is_array()) {
    bool scalars = true;
    for (const auto& e : j) scalars = scalars && !e.is_structured();
    if (scalars) { out += j.dump(); return; }
    out += "[\n";
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (i) out += ",\n";
      out += pad_in;
      dump_rec(j[i], out, indent + 1);
    }
    out += "\n" + pad + "]";
  } else {
    out += j.dump();
  }
}
}  // namespace

std::string dump_json(const OutJson& j) {
  std::string out;
  dump_rec(j, out, 0);
  out += '\n';
  return out;
}

std::vector<std::string> default_labels(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

OutJson trace_to_json(const Problem& p, const core::AttentionTrace& t) {
  OutJson j = OutJson::object();
  const std::size_t h = p.weights.heads.size();
  j["shapes"] = {{"n", p.n()},
                 {"m", p.m()},
                 {"d_model", p.d_model()},
                 {"d_k", core::cols(p.weights.heads[0].w_q)},
                 {"d_v", core::cols(p.weights.heads[0].w_v)},
                 {"h", h}};
  j["cross_attention"] = p.memory.has_value();
  j["tokens"] = p.tokens.empty() ? default_labels(p.n()) : p.tokens;
  if (p.memory) j["memory_tokens"] = p.memory_tokens.empty() ? default_labels(p.m()) : p.memory_tokens;
  if (p.mask) {
    OutJson mj = OutJson::array();
    for (std::size_t r = 0; r < core::rows(*p.mask); ++r) {
      OutJson row = OutJson::array();
      for (std::size_t c = 0; c < core::cols(*p.mask); ++c) row.push_back(static_cast<int>((*p.mask)(r, c)));
      mj.push_back(std::move(row));
    }
    j["mask"] = std::move(mj);
  }
  OutJson heads = OutJson::array();
  for (const core::HeadTrace& ht : t.heads) {
    OutJson hj = OutJson::object();
    hj["q"] = matrix_to_json(ht.q);
    hj["k"] = matrix_to_json(ht.k);
    hj["v"] = matrix_to_json(ht.v);
    hj["scores"] = matrix_to_json(ht.scores);
    hj["scaled"] = matrix_to_json(ht.scaled);
    if (t.has_mask) hj["masked"] = matrix_to_json(ht.masked);
    hj["weights"] = matrix_to_json(ht.weights);
    hj["context"] = matrix_to_json(ht.context);
    heads.push_back(std::move(hj));
  }
  j["heads"] = std::move(heads);
  j["concat"] = matrix_to_json(t.concat);
  j["output"] = matrix_to_json(t.output);
  j["output_projection"] = t.has_output_projection;
  if (!t.fully_masked_rows.empty()) j["fully_masked_rows"] = t.fully_masked_rows;
  return j;
}

void check_trace_finite(const core::AttentionTrace& t) {
  auto check = [](const core::Matrix& m, const std::string& name, bool allow_neg_inf) {
    for (std::size_t r = 0; r < core::rows(m); ++r)
      for (std::size_t c = 0; c < core::cols(m); ++c) {
        const float v = m(r, c);
        if (std::isfinite(v) || (allow_neg_inf && std::isinf(v) && v < 0)) continue;
        throw NumericError(name + "[" + std::to_string(r) + "][" + std::to_string(c) +
                           "] overflowed float32 (" + (std::isnan(v) ? "NaN" : "inf") +
                           "); the inputs or weights are too large, scale them down");
      }
  };
  for (std::size_t i = 0; i < t.heads.size(); ++i) {
    const core::HeadTrace& h = t.heads[i];
    const std::string at = "heads[" + std::to_string(i) + "].";
    check(h.q, at + "q", false);
    check(h.k, at + "k", false);
    check(h.v, at + "v", false);
    check(h.scores, at + "scores", false);
    check(h.scaled, at + "scaled", false);
    check(h.masked, at + "masked", true);
    check(h.weights, at + "weights", false);
    check(h.context, at + "context", false);
  }
  check(t.concat, "concat", false);
  check(t.output, "output", false);
}

}  // namespace attnlab::io
