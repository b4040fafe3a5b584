#pragma once
// Shared by the fuzz targets (tests/fuzz/fuzz_*.cpp) and their plain regression driver.
//
// The contract every target checks: for any input bytes, the code under test either succeeds or
// throws an attnlab::Error (the typed errors of util/error.hpp, which main() turns into a message and
// an exit code). Anything else is a bug: another exception type (std::out_of_range, nlohmann's
// json::exception, std::bad_alloc, ...), a crash, a sanitizer report, a hang, or a broken invariant
// (FUZZ_CHECK). Both end in abort(), which libFuzzer reports with the input that caused it and which
// the regression driver (regress_main.cpp) turns into a failed ctest test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <typeinfo>

#include "util/error.hpp"

namespace attnlab::fuzz {

[[noreturn]] inline void fail(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz: invariant broken at %s:%d: %s\n", file, line, what);
  std::abort();
}

// Runs f(): returns true when it finished, false when it threw an attnlab::Error (the expected answer
// to bad input). Any other exception aborts, naming its type and message.
template <class F>
bool only_attnlab_errors(F&& f) {
  try {
    f();
    return true;
  } catch (const attnlab::Error&) {
    return false;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: unexpected exception %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz: unexpected exception of a type not derived from std::exception\n");
    std::abort();
  }
}

}  // namespace attnlab::fuzz

// An invariant of the code under test; checked in every build (not an assert()).
#define FUZZ_CHECK(cond) ((cond) ? (void)0 : ::attnlab::fuzz::fail(#cond, __FILE__, __LINE__))

namespace attnlab::fuzz {

// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
// Written here, independently of text/tokenizer.cpp's decoder, so the two can check each other.
inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t len;
    std::uint32_t cp;
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      len = 2, cp = b & 0x1Fu;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3, cp = b & 0x0Fu;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4, cp = b & 0x07u;
    } else {
      return false;
    }
    if (s.size() - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return false;
    i += len;
  }
  return true;
}

}  // namespace attnlab::fuzz
