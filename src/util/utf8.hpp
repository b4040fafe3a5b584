#pragma once
// UTF-8, decoded and encoded in one place: the word tokenizer and the BPE (text/), the safe printing
// of messages (util/shown.hpp) and the terminal's column counts (render/terminal.hpp) all read text
// through decode_at, so they agree on what is valid.
//
// Valid means the Unicode standard's well-formed sequences (Table 3-7): no overlong form, no
// surrogate (U+D800–DFFF), nothing above U+10FFFF, no truncated sequence. Every byte that does not
// start a valid sequence is read on its own, as one invalid unit of length 1, so a reader always makes
// progress and never reads past the end.
#include <cstddef>
#include <string>
#include <string_view>

namespace attnlab::utf8 {

struct CodePoint {
  char32_t value = 0;      // the code point (0 when invalid)
  std::size_t length = 1;  // bytes taken: 1–4, and 1 for a byte that is not part of valid UTF-8
  bool valid = false;
};

inline constexpr char32_t kReplacement = 0xFFFD;

// The code point at s[i] (i < s.size()).
inline CodePoint decode_at(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return {b0, 1, true};
  std::size_t n = 0;
  char32_t cp = 0, min = 0;
  if ((b0 & 0xE0) == 0xC0) n = 2, cp = b0 & 0x1F, min = 0x80;
  else if ((b0 & 0xF0) == 0xE0) n = 3, cp = b0 & 0x0F, min = 0x800;
  else if ((b0 & 0xF8) == 0xF0) n = 4, cp = b0 & 0x07, min = 0x10000;
  else return {};
  if (i + n > s.size()) return {};
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, n, true};
}

// The code point at s[i], advancing i past it; U+FFFD for an invalid byte.
inline char32_t next(std::string_view s, std::size_t& i) {
  const CodePoint c = decode_at(s, i);
  i += c.length;
  return c.valid ? c.value : kReplacement;
}

// Appends cp (a Unicode scalar value) as UTF-8.
inline void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace attnlab::utf8
