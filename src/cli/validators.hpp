#pragma once
// Strict checks for numeric flag values, shared by every subcommand.
//
// CLI11 2.1's own checks are not enough for a user-facing tool: CLI::Range lets "nan" through (every
// comparison with NaN is false), PositiveNumber prints a 300-digit upper bound, a non-number reads
// as "Value abc not in range", and "-1" converts to an unsigned option as 2^64 - 1. These validators
// run before conversion and accept only a plain decimal number in range, and hand CLI11 that number
// back without leading zeros ("010" is 10: CLI11 converts with strtoll in base 0, octal 8), so they are
// added with ->transform(...), not ->check(...), which may not change the text. The message names the
// accepted range and the value given; CLI11 prefixes it with the flag: "--steps: ...". Every number
// option of every command goes through one of them (tests/cli/test_cli.cpp reads each command's --help).
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
        // CLI11 then converts the text with strtoll in base 0, which reads "010" as 8: hand it the plain
        // decimal number that was checked.
        text = std::to_string(value);
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

// A seed: a whole number from 0 to 2^64 - 1, in decimal ("-1" is not 2^64 - 1, "0x10" is not 16).
inline CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (digits && ec == std::errc::result_out_of_range)
          return text + " is out of range; use a whole number from 0 to 18446744073709551615";
        if (!digits || ec != std::errc() || ptr != end)
          return "expected a whole number from 0 to 18446744073709551615, got '" + text + "'";
        text = std::to_string(value);  // "010" is 10 (CLI11's strtoull in base 0 would read 8)
        return {};
      },
      "UINT64");
}

// --seed, the one way every command that takes a seed reads it (lesson, tour, corpus, generate): the
// same values accepted and refused everywhere, with the same message.
inline CLI::Option* add_seed_option(CLI::App& sub, std::uint64_t& seed, const std::string& help) {
  return sub.add_option("--seed", seed, help)->transform(seed_number())->capture_default_str();
}

}  // namespace attnlab::cli
