#pragma once
// Strict checks for numeric flag values, shared by every subcommand.
//
// CLI11 2.1's own checks are not enough for a user-facing tool: CLI::Range lets "nan" through (every
// comparison with NaN is false), PositiveNumber prints a 300-digit upper bound, a non-number reads
// as "Value abc not in range", and "-1" converts to an unsigned option as 2^64 - 1. These validators
// run before conversion and accept only a plain decimal number in range; the message names the
// accepted range and the value given. CLI11 prefixes it with the flag: "--steps: ...".
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace attnlab::cli {

// A whole number in [lo, hi] (no sign for lo >= 0, no exponent, no trailing text).
inline CLI::Validator whole_number(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
          return fmt::format("expected a whole number from {} to {}, got '{}'", lo, hi, text);
        }
        if (ec == std::errc::result_out_of_range || value < lo || value > hi) {
          return fmt::format("{} is out of range; use a whole number from {} to {}", text, lo, hi);
        }
        return {};
      },
      fmt::format("INT {}..{}", lo, hi));
}

// A finite decimal number in [lo, hi] ("nan" and "inf" are refused).
inline CLI::Validator real_number(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec == std::errc::invalid_argument || ptr != end || !std::isfinite(value)) {
          return fmt::format("expected a number from {:g} to {:g}, got '{}'", lo, hi, text);
        }
        if (ec == std::errc::result_out_of_range || value < lo || value > hi) {
          return fmt::format("{} is out of range; use a number from {:g} to {:g}", text, lo, hi);
        }
        return {};
      },
      fmt::format("NUMBER {:g}..{:g}", lo, hi));
}

// A seed: a whole number from 0 to 2^64 - 1.
inline CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec != std::errc() || ptr != end) {
          return "seed must be a whole number from 0 to 18446744073709551615, got '" + text + "'";
        }
        return {};
      },
      "UINT64");
}

}  // namespace attnlab::cli
