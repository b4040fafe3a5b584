#include "render/terminal.hpp"

#include <algorithm>
#include <cstdio>

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "util/shown.hpp"
#include "util/utf8.hpp"

namespace attnlab::render {

Terminal detect_terminal(bool no_color, std::size_t fallback_width) {
  Terminal t;
  t.is_tty = ::isatty(STDOUT_FILENO) == 1;
  const char* nc = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  const bool dumb = term && std::string(term) == "dumb";
  if (!no_color && t.is_tty && !(nc && *nc) && !dumb) {
    const char* ct = std::getenv("COLORTERM");
    const std::string cts = ct ? ct : "";
    t.color = (cts == "truecolor" || cts == "24bit") ? ColorMode::TrueColor : ColorMode::Ansi256;
  }
  t.width = fallback_width;
  if (const char* cols = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long v = std::strtol(cols, &end, 10);
    if (end != cols && *end == '\0' && v >= 20 && v <= 10000) {
      t.width = static_cast<std::size_t>(v);
      return t;
    }
  }
  if (t.is_tty) {
    winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) t.width = ws.ws_col;
  }
  return t;
}

namespace {

// The length of the escape sequence at s[i] (s[i] == ESC): CSI (ESC [ ... final byte 0x40–0x7E),
// OSC (ESC ] ... BEL or ESC followed by a backslash), else ESC and one more byte.
std::size_t escape_length(std::string_view s, std::size_t i) {
  if (i + 1 >= s.size()) return 1;
  if (s[i + 1] == '[') {
    std::size_t j = i + 2;
    while (j < s.size() && !(static_cast<unsigned char>(s[j]) >= 0x40 && static_cast<unsigned char>(s[j]) <= 0x7E)) ++j;
    return std::min(s.size(), j + 1) - i;
  }
  if (s[i + 1] == ']') {
    for (std::size_t j = i + 2; j < s.size(); ++j) {
      if (s[j] == '\a') return j + 1 - i;
      if (s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\') return j + 2 - i;
    }
    return s.size() - i;
  }
  return 2;
}

}  // namespace

std::size_t display_width(std::string_view s) {
  std::size_t w = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0x1B) {
      i += escape_length(s, i) - 1;
      continue;
    }
    ++w;  // one column a code point (util/utf8.hpp; an invalid byte is one of its own)
    i += utf8::decode_at(s, i).length - 1;
  }
  return w;
}

std::string fit_width(std::string_view s, std::size_t width) {
  if (display_width(s) <= width) return std::string(s);
  if (width == 0) return {};
  std::string out;
  std::size_t w = 0;
  bool escaped = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0x1B) {  // a whole escape sequence, no columns
      const std::size_t n = escape_length(s, i);
      out.append(s.substr(i, n));
      escaped = true;
      i += n - 1;
      continue;
    }
    if ((c & 0xC0) != 0x80) {
      if (w + 1 == width) break;  // keep one column for the ellipsis
      ++w;
    }
    out.push_back(s[i]);
  }
  return out + (escaped ? "\x1b[0m…" : "…");
}

std::string wrap_words(std::string_view text, std::size_t width, std::string_view first, std::string_view rest,
                       std::size_t (*measure)(std::string_view)) {
  const auto wid = [&](std::string_view w) { return measure ? measure(w) : display_width(w); };
  std::string out, line(first);
  std::size_t used = display_width(first);
  bool empty = true;
  auto new_line = [&] {
    out += line + "\n";
    line = std::string(rest);
    used = display_width(rest);
    empty = true;
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    // The spaces before a word are kept as they are (aligned columns stay aligned) unless the line
    // breaks there.
    const std::size_t gap_start = pos;
    while (pos < text.size() && text[pos] == ' ') ++pos;
    if (pos == text.size()) break;
    const std::size_t gap = empty ? 0 : std::max<std::size_t>(pos - gap_start, 1);
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    pos = end;
    std::size_t sep = gap;
    if (!empty && used + sep + wid(word) > width) new_line(), sep = 0;
    // A word wider than a line (a long path): cut it where the line ends, by code points.
    while (used + sep + wid(word) > width && used + sep < width) {
      line.append(sep, ' ');
      used += sep;
      sep = 0;
      std::size_t room = width - used, i = 0, cols = 0;
      while (i < word.size() && cols < room) {
        ++i;
        while (i < word.size() && (static_cast<unsigned char>(word[i]) & 0xC0) == 0x80) ++i;
        ++cols;
      }
      line.append(word.substr(0, i));
      word.remove_prefix(i);
      used += cols;
      new_line();
    }
    if (word.empty()) continue;
    line.append(sep, ' ');
    line.append(word);
    used += sep + wid(word);
    empty = false;
  }
  return out + line;
}

std::string wrap_lines(std::string_view text, std::size_t width) {
  std::string out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    const bool last = end == std::string_view::npos;
    if (last) end = text.size();
    const std::string_view l = text.substr(pos, end - pos);
    if (display_width(l) <= width) {
      out.append(l);
    } else {
      const std::size_t lead = std::min(l.find_first_not_of(' '), l.size());
      const std::string_view body = l.substr(lead);
      const bool marker = body.rfind("- ", 0) == 0 || body.rfind("✓ ", 0) == 0 || body.rfind("✗ ", 0) == 0;
      out += wrap_words(body, width, std::string(lead, ' '), std::string(lead + (marker ? 2 : 0), ' '));
    }
    if (last) break;
    out += '\n';
    pos = end + 1;
  }
  return out;
}

void print_wrapped(std::string_view text) {
  const std::string s = wrap_lines(text, detect_terminal(true).width);
  std::fwrite(s.data(), 1, s.size(), stdout);
}

std::string visible_controls(std::string_view s, bool keep_newlines) { return visible_text(s, keep_newlines); }

}  // namespace attnlab::render
