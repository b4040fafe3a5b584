#pragma once
// JSON output of an attention trace (`attnlab attention --format json`).
//
//   {"shapes": {n, m, d_model, d_k, d_v, h}, "tokens": [...], "memory_tokens": [...],
//    "mask": [[0/1...]]                      (when a mask was given)
//    "heads": [{"q", "k", "v", "scores", "scaled", "masked" (with a mask), "weights", "context"}, ...],
//    "concat", "output", "fully_masked_rows": [i, ...] (when any)}
//
// Numbers are float32 written with the shortest text that reads back to the same float; −inf
// (hidden positions in "masked") is written as the string "-inf", since JSON has no infinity.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/attention.hpp"
#include "io/problem.hpp"

namespace attnlab::io {

// A JSON type whose floats are float32, so output is not padded out to 17 digits of double.
using OutJson = nlohmann::basic_json<nlohmann::ordered_map, std::vector, std::string, bool, std::int64_t,
                                     std::uint64_t, float>;

OutJson matrix_to_json(const core::Matrix& m);
OutJson trace_to_json(const Problem& p, const core::AttentionTrace& t);

// Throws NumericError naming the matrix and position of the first inf/NaN in the trace (−inf in a
// "masked" matrix is expected and allowed). Results are checked before anything is printed, so a
// NaN is never shown to the user as an answer.
void check_trace_finite(const core::AttentionTrace& t);

// Pretty JSON for people and scripts alike: objects indented, arrays of scalars (matrix rows) on one
// line each, so a matrix reads as a grid.
std::string dump_json(const OutJson& j);

// Labels for rows/columns when the input gives none: "0", "1", ...
std::vector<std::string> default_labels(std::size_t n);

}  // namespace attnlab::io
