#pragma once
// The JSON problem format of `attnlab attention --input` (also used by lessons' --weights).
//
//   {
//     "tokens":  ["The", "cat", "sat"],           optional row labels for x (n strings)
//     "x":       [[...], ...],                    n × d_model
//     "memory":  [[...], ...],                    optional m × d_model: cross-attention (K, V from here)
//     "memory_tokens": [...],                     optional labels for memory (m strings)
//     "heads":   [{"w_q": [[...]], "w_k": [[...]], "w_v": [[...]]}, ...]   d_model × d_k, d_model × d_v
//                each head may add biases "b_q", "b_k" (d_k numbers) and "b_v" (d_v numbers)
//     "w_o":     [[...]],                         optional (h·d_v) × d_model
//     "b_o":     [...],                           optional d_model numbers (only with w_o)
//     "mask":    "none" | "causal" | [[1, 0, ...], ...]    optional; 1 = may attend; n × m
//   }
//
// Every check happens here, before any maths, and every failure is an InputError whose message names
// the field (e.g. "heads[1].w_q"), the expected shape and the actual one.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/attention.hpp"

namespace attnlab::io {

enum class MaskKind { None, Causal, Explicit };

struct Problem {
  std::vector<std::string> tokens;          // n labels (empty when not given)
  core::Matrix x;                                 // n × d_model
  std::optional<core::Matrix> memory;             // m × d_model, cross-attention only
  std::vector<std::string> memory_tokens;   // m labels (empty when not given)
  core::AttentionWeights weights;
  MaskKind mask_kind = MaskKind::None;
  std::optional<core::Mask> mask;                 // n × m, built for "causal" too

  std::size_t n() const { return core::rows(x); }
  std::size_t m() const { return memory ? core::rows(*memory) : core::rows(x); }
  std::size_t d_model() const { return core::cols(x); }
  const core::Matrix& kv() const { return memory ? *memory : x; }
};

// Limits that keep a "small problem" small: the trace holds several n × m matrices per head.
struct ProblemLimits {
  std::size_t max_file_bytes = 64u << 20;
  std::size_t max_tokens = 4096;          // n and m
  std::size_t max_width = 4096;           // d_model, d_k, d_v
  std::size_t max_heads = 256;
  std::size_t max_trace_elements = 1u << 24;  // h · n · m
};

// Validates and converts parsed JSON. Throws InputError.
Problem parse_problem(const nlohmann::json& j, const ProblemLimits& limits = {});

// Parses JSON text; `source` (a file name or "standard input") prefixes every message.
Problem parse_problem_text(std::string_view text, const std::string& source,
                           const ProblemLimits& limits = {});

// Reads and parses a file ("-" = standard input).
Problem load_problem(const std::string& path, const ProblemLimits& limits = {});

// Converts a problem back to the JSON schema above (used to write examples and by tests).
nlohmann::json problem_to_json(const Problem& p);

}  // namespace attnlab::io
