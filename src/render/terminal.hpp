#pragma once
// What the output terminal can do: colour and width.
#include <cstddef>
#include <string>
#include <string_view>

namespace attnlab::render {

enum class ColorMode { None, Ansi256, TrueColor };

struct Terminal {
  ColorMode color = ColorMode::None;
  std::size_t width = 80;  // columns available for one line
  bool is_tty = false;
};

// Detects the terminal behind stdout. Colour is off when stdout is not a TTY, when NO_COLOR is set
// (any value, see no-color.org), when TERM=dumb, or when the caller passes no_color. Truecolour
// when COLORTERM says so, else 256 colours. Width from COLUMNS, else the TTY, else 80 (a pipe is
// given `fallback_width`, so redirected output is stable).
Terminal detect_terminal(bool no_color, std::size_t fallback_width = 80);

// Number of terminal columns a UTF-8 string takes (one per code point; good enough for the Latin
// scripts of the lessons, where "garçon" is 6 columns but 7 bytes). Escape sequences (attnlab's own
// colours) take none.
std::size_t display_width(std::string_view s);

// Cuts a UTF-8 string to at most `width` columns, ending in "…" when cut. Escape sequences are kept
// whole, never cut in two, and a cut string that held one ends with a reset (ESC[0m), so a colour
// cannot leak past it.
std::string fit_width(std::string_view s, std::size_t width);

// Word-wraps one line of text to `width` columns (display_width): breaks at spaces only, the first
// line starting with `first` and every later one with `rest` (a hanging indent). A word wider than a
// whole line is cut into pieces that fit, so no line is ever wider than `width` (given indents
// narrower than it). `measure` may replace display_width for words (the lessons' prose skips the "**"
// of bold). No trailing newline.
std::string wrap_words(std::string_view text, std::size_t width, std::string_view first = "", std::string_view rest = "",
                       std::size_t (*measure)(std::string_view) = nullptr);

// Every line of `text` that is wider than `width` wrapped by wrap_words, its continuation indented
// like the line itself, two more after a "- " or "✓ "/"✗ " marker. Lines that fit are unchanged.
std::string wrap_lines(std::string_view text, std::size_t width);

// Prints `text` to stdout through wrap_lines at the width of the terminal behind it (a command's own
// messages: hints, watch's notices).
void print_wrapped(std::string_view text);

// Text from a user or a file, made safe to print: attnlab::visible_text (util/shown.hpp), the one
// function every message goes through, under the name the render code has always used.
std::string visible_controls(std::string_view s, bool keep_newlines = false);

}  // namespace attnlab::render
