#pragma once
// Reading JSON text with user-facing errors, shared by every reader of JSON files (problems, run
// configs, the progress file, checkpoint headers).
#include <exception>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace attnlab::io {

// Parses `text`. Throws InputError "SOURCE: malformed JSON: parse error at line L, column C: ..."
// without nlohmann's "[json.exception.parse_error.101]" tag; when the error is at a NaN or Infinity
// token (which JSON does not have) the message says so; a number beyond double range (1e400) is
// reported as such.
nlohmann::json parse_json_text(std::string_view text, const std::string& source);

// No attnlab file nests arrays and objects more than a few levels deep. Deeper text is refused before
// parsing: nlohmann parses any depth, but copying, comparing or printing a value recurses once per
// level, so a 100000-level file would overflow the stack later (seen under AddressSanitizer with a
// run config). kMaxJsonDepth leaves room for any hand-written file.
inline constexpr int kMaxJsonDepth = 256;

// nlohmann::json::parse with that depth limit, for every reader of JSON files. Too deep a text throws
// nlohmann::json::parse_error like any other malformed text ("parse error at byte N: arrays and objects
// nested more than 256 levels deep"), so callers keep one catch.
nlohmann::json parse_json_bounded(std::string_view text);

// The message of an exception, without nlohmann's "[json.exception.KIND.N] " tag when it has one.
std::string json_error_text(const std::exception& e);

// A short description of a JSON value for an error message: scalars as written (cut at 40
// characters), arrays and objects by kind and size. Never recursive, so a deeply nested value (which
// dump() would walk recursively) cannot overflow the stack or flood the terminal.
std::string json_brief(const nlohmann::json& j);

}  // namespace attnlab::io
