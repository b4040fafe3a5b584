#include "io/problem.hpp"

#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "io/json_text.hpp"
#include "util/error.hpp"

namespace attnlab::io {

namespace {

using nlohmann::json;

std::string type_name(const json& j) {
  if (j.is_string()) return "the string " + json_brief(j);
  if (j.is_boolean()) return std::string("the boolean ") + (j.get<bool>() ? "true" : "false");
  if (j.is_null()) return "null";
  if (j.is_number()) return "the number " + j.dump();
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array of " + std::to_string(j.size());
  return j.type_name();
}

float read_number(const json& v, const std::string& where) {
  if (!v.is_number()) throw InputError(where + ": expected a number, got " + type_name(v));
  const double d = v.get<double>();
  const float f = static_cast<float>(d);
  if (!std::isfinite(d) || !std::isfinite(f)) {
    throw InputError(where + ": " + v.dump() + " is not a finite float32 number (|x| must be below " +
                     fmt::format("{:.3g}", static_cast<double>(std::numeric_limits<float>::max())) + ")");
  }
  return f;
}

// Reads an array of equally long rows of numbers. `what` says what the matrix is ("n × d_model").
core::Matrix read_matrix(const json& j, const std::string& field, const std::string& what,
                   const ProblemLimits& lim) {
  if (!j.is_array()) {
    throw InputError(field + ": expected an array of rows (" + what + "), got " + type_name(j));
  }
  if (j.empty()) throw InputError(field + ": is empty; expected " + what + " with at least one row");
  if (j.size() > lim.max_tokens && j.size() > lim.max_width) {
    throw InputError(field + ": has " + std::to_string(j.size()) + " rows, more than the limit of " +
                     std::to_string(std::max(lim.max_tokens, lim.max_width)));
  }
  const json& first = j[0];
  if (!first.is_array()) {
    throw InputError(field + "[0]: expected a row (an array of numbers), got " + type_name(first));
  }
  const std::size_t c = first.size();
  if (c == 0) throw InputError(field + "[0]: is an empty row; expected " + what + " with at least one column");
  if (c > lim.max_width && c > lim.max_tokens) {
    throw InputError(field + ": rows have " + std::to_string(c) + " numbers, more than the limit of " +
                     std::to_string(std::max(lim.max_tokens, lim.max_width)));
  }
  core::Matrix m = core::Matrix::from_shape({j.size(), c});
  for (std::size_t r = 0; r < j.size(); ++r) {
    const std::string at = field + "[" + std::to_string(r) + "]";
    const json& row = j[r];
    if (!row.is_array()) throw InputError(at + ": expected a row (an array of numbers), got " + type_name(row));
    if (row.size() != c) {
      throw InputError(at + ": has " + std::to_string(row.size()) + (row.size() == 1 ? " number" : " numbers") + ", expected " +
                       std::to_string(c) + " like " + field + "[0] (rows must all have the same length)");
    }
    for (std::size_t k = 0; k < c; ++k) m(r, k) = read_number(row[k], at + "[" + std::to_string(k) + "]");
  }
  return m;
}

std::vector<std::string> read_labels(const json& j, const std::string& field, std::size_t want,
                                      const std::string& what) {
  if (!j.is_array()) throw InputError(field + ": expected an array of strings, got " + type_name(j));
  if (j.size() != want) {
    throw InputError(field + ": has " + std::to_string(j.size()) + (j.size() == 1 ? " label" : " labels") + ", expected " +
                     std::to_string(want) + " (one per row of " + what + ")");
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) {
      throw InputError(field + "[" + std::to_string(i) + "]: expected a string, got " + type_name(j[i]));
    }
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

void reject_unknown_keys(const json& obj, const std::string& where, const std::set<std::string>& known) {
  for (const auto& [key, value] : obj.items()) {
    if (!known.count(key)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw InputError((where.empty() ? std::string() : where + ": ") + "unknown field \"" + key +
                       "\"; expected one of: " + list);
    }
  }
}

std::string shape_of(std::size_t r, std::size_t c) { return core::shape_str(r, c); }

// A bias: an array of `width` numbers, returned as a 1 × width row.
core::Matrix read_bias(const json& j, const std::string& field, std::size_t width, const std::string& what) {
  if (!j.is_array()) throw InputError(field + ": expected an array of " + std::to_string(width) + " numbers (" + what + "), got " + type_name(j));
  if (j.size() != width) {
    throw InputError(field + ": expected " + std::to_string(width) + " numbers (" + what + "), got " + std::to_string(j.size()));
  }
  core::Matrix b = core::Matrix::from_shape({1, width});
  for (std::size_t i = 0; i < width; ++i) b(0, i) = read_number(j[i], field + "[" + std::to_string(i) + "]");
  return b;
}

// Phase 1: the input x (n × d_model) and the optional memory (m × d_model, the keys' and values' side
// of cross-attention), checked against the limits, and their optional row labels.
void read_inputs(const json& j, const ProblemLimits& lim, Problem& p) {
  if (!j.contains("x")) throw InputError("x: missing; expected the n × d_model input matrix");
  p.x = read_matrix(j["x"], "x", "n × d_model", lim);
  const std::size_t n = core::rows(p.x), d_model = core::cols(p.x);
  if (n > lim.max_tokens) {
    throw InputError("x: has " + std::to_string(n) + " rows (tokens), more than the limit of " + std::to_string(lim.max_tokens));
  }
  if (d_model > lim.max_width) {
    throw InputError("x: d_model = " + std::to_string(d_model) + " is more than the limit of " + std::to_string(lim.max_width));
  }

  if (j.contains("memory") && !j["memory"].is_null()) {
    p.memory = read_matrix(j["memory"], "memory", "m × d_model", lim);
    if (core::cols(*p.memory) != d_model) {
      throw InputError("memory: expected m × " + std::to_string(d_model) + " (d_model from x), got " +
                       core::shape_str(*p.memory));
    }
    if (core::rows(*p.memory) > lim.max_tokens) {
      throw InputError("memory: has " + std::to_string(core::rows(*p.memory)) + " rows, more than the limit of " +
                       std::to_string(lim.max_tokens));
    }
  }
  const std::size_t m = p.m();

  if (j.contains("tokens") && !j["tokens"].is_null()) p.tokens = read_labels(j["tokens"], "tokens", n, "x");
  if (j.contains("memory_tokens") && !j["memory_tokens"].is_null()) {
    if (!p.memory) throw InputError("memory_tokens: given, but there is no \"memory\" to label");
    p.memory_tokens = read_labels(j["memory_tokens"], "memory_tokens", m, "memory");
  }
}

// Phase 2, one head: heads[h]'s projections and optional biases. d_k and d_v are taken from heads[0]
// (h == 0) and every later head must share them; each error says where the expected shape came from.
core::HeadWeights read_head(const json& hj, std::size_t h, std::size_t d_model, std::size_t& d_k, std::size_t& d_v,
                      const ProblemLimits& lim) {
  const std::string at = "heads[" + std::to_string(h) + "]";
  if (!hj.is_object()) throw InputError(at + ": expected an object with \"w_q\", \"w_k\", \"w_v\", got " + type_name(hj));
  reject_unknown_keys(hj, at, {"w_q", "w_k", "w_v", "b_q", "b_k", "b_v"});
  for (const char* key : {"w_q", "w_k", "w_v"}) {
    if (!hj.contains(key)) {
      throw InputError(at + "." + key + ": missing; expected a d_model × " + (key[2] == 'v' ? "d_v" : "d_k") + " matrix");
    }
  }
  core::HeadWeights hw;
  hw.w_q = read_matrix(hj["w_q"], at + ".w_q", "d_model × d_k", lim);
  hw.w_k = read_matrix(hj["w_k"], at + ".w_k", "d_model × d_k", lim);
  hw.w_v = read_matrix(hj["w_v"], at + ".w_v", "d_model × d_v", lim);
  if (h == 0) {
    d_k = core::cols(hw.w_q);
    d_v = core::cols(hw.w_v);
  }
  auto check = [&](const core::Matrix& w, const char* key, std::size_t want_c, const char* dim) {
    if (core::rows(w) == d_model && core::cols(w) == want_c) return;
    std::string why = std::string("d_model × ") + dim + ", with d_model = " + std::to_string(d_model) + " from x";
    if (h > 0 || key[2] != 'q') why += std::string(" and ") + dim + " = " + std::to_string(want_c) + " from heads[0]." + (dim[2] == 'v' ? "w_v" : "w_q");
    std::string hint;
    if (core::rows(w) == d_model && h > 0) hint = "; all heads must share d_k and d_v";
    throw InputError(at + "." + key + ": expected " + shape_of(d_model, want_c) + " (" + why + "), got " + core::shape_str(w) + hint);
  };
  check(hw.w_q, "w_q", d_k, "d_k");
  check(hw.w_k, "w_k", d_k, "d_k");
  check(hw.w_v, "w_v", d_v, "d_v");
  if (hj.contains("b_q")) hw.b_q = read_bias(hj["b_q"], at + ".b_q", d_k, "d_k");
  if (hj.contains("b_k")) hw.b_k = read_bias(hj["b_k"], at + ".b_k", d_k, "d_k");
  if (hj.contains("b_v")) hw.b_v = read_bias(hj["b_v"], at + ".b_v", d_v, "d_v");
  return hw;
}

// Phase 2: the heads array (at least one, at most the limit), each read by read_head into
// p.weights.heads; then the limits on the whole: d_k and d_v, and the h · n · m attention weights a
// trace holds. Sets d_k and d_v (heads[0]'s).
void read_heads(const json& j, std::size_t d_model, const ProblemLimits& lim, Problem& p, std::size_t& d_k,
                std::size_t& d_v) {
  if (!j.contains("heads")) throw InputError("heads: missing; expected an array of {\"w_q\", \"w_k\", \"w_v\"} objects");
  const json& heads = j["heads"];
  if (!heads.is_array()) throw InputError("heads: expected an array of {\"w_q\", \"w_k\", \"w_v\"} objects, got " + type_name(heads));
  if (heads.empty()) throw InputError("heads: is empty; expected at least one head");
  if (heads.size() > lim.max_heads) {
    throw InputError("heads: " + std::to_string(heads.size()) + " heads, more than the limit of " + std::to_string(lim.max_heads));
  }
  for (std::size_t h = 0; h < heads.size(); ++h) p.weights.heads.push_back(read_head(heads[h], h, d_model, d_k, d_v, lim));
  const std::size_t h = p.weights.heads.size(), n = p.n(), m = p.m();
  if (d_k > lim.max_width || d_v > lim.max_width) {
    throw InputError("heads: d_k = " + std::to_string(d_k) + ", d_v = " + std::to_string(d_v) +
                     "; the limit is " + std::to_string(lim.max_width));
  }
  if (h * n * m > lim.max_trace_elements) {
    throw InputError("the problem is too large to trace: h · n · m = " + std::to_string(h) + " · " +
                     std::to_string(n) + " · " + std::to_string(m) + " exceeds " +
                     std::to_string(lim.max_trace_elements) + " weights");
  }
}

// Phase 3: the optional output projection w_o (h·d_v × d_model) and its bias b_o, which needs w_o.
void read_output_projection(const json& j, std::size_t d_model, std::size_t d_v, const ProblemLimits& lim,
                            Problem& p) {
  const std::size_t h = p.weights.heads.size();
  if (j.contains("w_o") && !j["w_o"].is_null()) {
    core::Matrix w_o = read_matrix(j["w_o"], "w_o", "h·d_v × d_model", lim);
    if (core::rows(w_o) != h * d_v || core::cols(w_o) != d_model) {
      throw InputError("w_o: expected " + shape_of(h * d_v, d_model) + " (h·d_v × d_model = " + std::to_string(h) +
                       "·" + std::to_string(d_v) + " × " + std::to_string(d_model) + "), got " + core::shape_str(w_o));
    }
    p.weights.w_o = std::move(w_o);
  }
  if (j.contains("b_o") && !j["b_o"].is_null()) {
    if (!p.weights.w_o) throw InputError("b_o: given without \"w_o\"; the output bias belongs to the output projection");
    p.weights.b_o = read_bias(j["b_o"], "b_o", d_model, "d_model");
  }
}

// Phase 4: the mask, "none", "causal" or an n × m array of 0/1 (or booleans); sets p.mask_kind and p.mask.
void read_mask(const json& mj, Problem& p) {
  const std::size_t n = p.n(), m = p.m();
  if (mj.is_string()) {
    const std::string name = mj.get<std::string>();
    if (name == "none") {
      p.mask_kind = MaskKind::None;
    } else if (name == "causal") {
      p.mask_kind = MaskKind::Causal;
      p.mask = core::causal_mask(n, m);
    } else {
      throw InputError("mask: unknown mask \"" + name + "\"; expected \"none\", \"causal\" or a 0/1 array of shape " +
                       shape_of(n, m) + " (n × m, 1 = may attend)");
    }
  } else if (mj.is_array()) {
    const std::string want = shape_of(n, m) + " (n × m" + (p.memory ? ", m from memory" : ", m = n in self-attention") + ")";
    if (mj.size() != n) throw InputError("mask: expected " + want + ", got " + std::to_string(mj.size()) + " rows");
    core::Mask mask = core::Mask::from_shape({n, m});
    for (std::size_t i = 0; i < n; ++i) {
      const std::string at = "mask[" + std::to_string(i) + "]";
      if (!mj[i].is_array()) throw InputError(at + ": expected a row of 0/1, got " + type_name(mj[i]));
      if (mj[i].size() != m) {
        throw InputError("mask: expected " + want + ", but " + at + " has " + std::to_string(mj[i].size()) + " entries");
      }
      for (std::size_t k = 0; k < m; ++k) {
        const json& v = mj[i][k];
        const std::string vat = at + "[" + std::to_string(k) + "]";
        if (v.is_boolean()) {
          mask(i, k) = v.get<bool>() ? 1 : 0;
        } else if (v.is_number() && (v == 0 || v == 1)) {
          mask(i, k) = v == 1 ? 1 : 0;
        } else {
          throw InputError(vat + ": expected 0 or 1 (1 = may attend), got " + type_name(v));
        }
      }
    }
    p.mask_kind = MaskKind::Explicit;
    p.mask = std::move(mask);
  } else {
    throw InputError("mask: expected \"none\", \"causal\" or a 0/1 array of shape " + shape_of(n, m) + ", got " + type_name(mj));
  }
}

}  // namespace

// The phases in order, each reading what the ones before it fixed: the inputs (n, m, d_model), the heads
// (d_k, d_v), the output projection, the mask. It is also the order of the checks, which decides the one
// error a file with several is reported with (tests/errors/cases.json pins those messages).
Problem parse_problem(const json& j, const ProblemLimits& lim) {
  if (!j.is_object()) throw InputError("the input must be a JSON object with at least \"x\" and \"heads\", got " + type_name(j));
  reject_unknown_keys(j, "", {"tokens", "x", "memory", "memory_tokens", "heads", "w_o", "b_o", "mask"});
  Problem p;
  read_inputs(j, lim, p);
  const std::size_t d_model = core::cols(p.x);
  std::size_t d_k = 0, d_v = 0;
  read_heads(j, d_model, lim, p, d_k, d_v);
  read_output_projection(j, d_model, d_v, lim, p);
  if (j.contains("mask") && !j["mask"].is_null()) read_mask(j["mask"], p);
  return p;
}

Problem parse_problem_text(std::string_view text, const std::string& source, const ProblemLimits& lim) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw InputError(source + ": is empty; expected a JSON object with \"x\" and \"heads\" (see data/examples/)");
  }
  const json j = parse_json_text(text, source);
  try {
    return parse_problem(j, lim);
  } catch (const InputError& e) {
    throw InputError(source + ": " + e.what());
  }
}

Problem load_problem(const std::string& path, const ProblemLimits& lim) {
  const std::string text = read_text_file(path, lim.max_file_bytes);
  return parse_problem_text(text, path == "-" ? std::string("standard input") : path, lim);
}

json problem_to_json(const Problem& p) {
  auto mat = [](const core::Matrix& m) {
    json rows_j = json::array();
    for (std::size_t r = 0; r < core::rows(m); ++r) {
      json row = json::array();
      for (std::size_t c = 0; c < core::cols(m); ++c) row.push_back(m(r, c));
      rows_j.push_back(row);
    }
    return rows_j;
  };
  json j;
  if (!p.tokens.empty()) j["tokens"] = p.tokens;
  j["x"] = mat(p.x);
  if (p.memory) j["memory"] = mat(*p.memory);
  if (!p.memory_tokens.empty()) j["memory_tokens"] = p.memory_tokens;
  j["heads"] = json::array();
  auto bias_row = [](const core::Matrix& b) {
    json r = json::array();
    for (std::size_t c = 0; c < core::cols(b); ++c) r.push_back(b(0, c));
    return r;
  };
  for (const core::HeadWeights& hw : p.weights.heads) {
    json h = {{"w_q", mat(hw.w_q)}, {"w_k", mat(hw.w_k)}, {"w_v", mat(hw.w_v)}};
    if (hw.b_q) h["b_q"] = bias_row(*hw.b_q);
    if (hw.b_k) h["b_k"] = bias_row(*hw.b_k);
    if (hw.b_v) h["b_v"] = bias_row(*hw.b_v);
    j["heads"].push_back(h);
  }
  if (p.weights.w_o) j["w_o"] = mat(*p.weights.w_o);
  if (p.weights.b_o) j["b_o"] = bias_row(*p.weights.b_o);
  if (p.mask_kind == MaskKind::Causal) j["mask"] = "causal";
  if (p.mask_kind == MaskKind::Explicit) {
    json mj = json::array();
    for (std::size_t r = 0; r < core::rows(*p.mask); ++r) {
      json row = json::array();
      for (std::size_t c = 0; c < core::cols(*p.mask); ++c) row.push_back(static_cast<int>((*p.mask)(r, c)));
      mj.push_back(row);
    }
    j["mask"] = mj;
  }
  return j;
}

}  // namespace attnlab::io
