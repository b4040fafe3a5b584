#include "render/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace attnlab {

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

std::size_t display_width(std::string_view s) {
  std::size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;  // count lead bytes, skip continuation bytes
  return w;
}

std::string fit_width(std::string_view s, std::size_t width) {
  if (display_width(s) <= width) return std::string(s);
  if (width == 0) return {};
  std::string out;
  std::size_t w = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (w + 1 == width) break;  // keep one column for the ellipsis
      ++w;
    }
    out.push_back(s[i]);
  }
  return out + "…";
}

}  // namespace attnlab
