#include "util/shown.hpp"

#include <cstdio>

#include "util/utf8.hpp"

namespace attnlab {

namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const utf8::CodePoint c = utf8::decode_at(s, i);
  return c.valid ? c.length : 0;
}

// U+202A–U+202E (E2 80 AA–AE) and U+2066–U+2069 (E2 81 A6–A9).
bool is_bidi_control(std::string_view s, std::size_t i) {
  const unsigned char b1 = static_cast<unsigned char>(s[i + 1]), b2 = static_cast<unsigned char>(s[i + 2]);
  return (b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) || (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9);
}

}  // namespace

std::string visible_text(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  char buf[12];
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_length(s, i);
    if (n == 0) {  // not UTF-8: the byte's value
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    } else if (n == 1) {
      if ((c < 0x20 && c != '\t' && !(keep_newlines && c == '\n')) || c == 0x7F) {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {  // C1 controls
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(s[i + 1]) & 0xFF);
      out += buf;
      i += 2;
    } else if (n == 3 && c == 0xE2 && is_bidi_control(s, i)) {
      // The bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) reorder the text that
      // follows on the terminal ("Trojan source"): shown, never obeyed.
      const unsigned cp = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
                          (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      out += buf;
      i += 3;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string shown_path(std::string_view path) { return visible_text(path, false); }

}  // namespace attnlab
