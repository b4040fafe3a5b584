#pragma once
// Printing labelled matrices for people: aligned, fixed precision, abbreviated to the terminal width,
// optionally shaded as a heatmap (for attention weights, whose values lie in [0, 1]).
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "core/matrix.hpp"
#include "render/terminal.hpp"

namespace attnlab::render {

struct PrintOptions {
  int precision = 4;              // digits after the decimal point
  std::size_t max_width = 80;     // terminal columns; wider matrices leave columns out (" …"): for
                                  // heatmaps those with the smallest weights, else the middle ones
  std::size_t max_rows = 0;       // more rows than this (when > 0): the first ones, "⋮", the last two
  std::vector<std::size_t> keep_cols;  // columns kept first when some must be left out (the focus words)
  bool full = false;              // never abbreviate
  ColorMode color = ColorMode::None;
  bool heatmap = false;           // shade cells by value (expects values in [0, 1]); needs colour
  std::size_t max_label_width = 12;
};

// Prints `title`, a header row of column labels, then one line per row: its label and its values.
// −inf prints as "-inf". Empty label vectors mean "use 0, 1, 2, ...".
void print_matrix(std::ostream& os, std::string_view title, const core::Matrix& m,
                  const std::vector<std::string>& row_labels,
                  const std::vector<std::string>& col_labels, const PrintOptions& opt);

// Column labels "prefix0", "prefix1", ... (e.g. "d0".."d3" for the feature columns of Q).
std::vector<std::string> numbered_labels(std::string_view prefix, std::size_t n);

// ---- heatmaps ---------------------------------------------------------------

struct HeatmapOptions {
  float lo = 0.0f, hi = 1.0f;     // value range mapped onto the colour / shade scale (clamped)
  std::size_t max_width = 80;     // wider heatmaps leave columns out (" …"), like print_matrix
  bool weights = false;           // attention weights: leave out the columns with the smallest ones
  std::size_t max_rows = 0;       // as in PrintOptions
  std::vector<std::size_t> keep_cols;  // as in PrintOptions
  bool full = false;
  ColorMode color = ColorMode::None;
  std::size_t max_label_width = 12;
};

// The Unicode shade for a position t in [0, 1] on the five-step scale " ░▒▓█" (space = lowest): five
// equal bins, so t ≥ 0.8 is █.
std::string_view shade_glyph(float t);

// Prints a matrix as a grid of shaded cells under the same row/column labels as print_matrix: with
// colour, each cell is a block of background colour (truecolour or the 256-colour grey ramp); without
// colour, each cell is filled with one of the shades " ░▒▓█", so the view needs no escape codes at
// all. A legend line gives the value range of the scale.
void print_heatmap(std::ostream& os, std::string_view title, const core::Matrix& m,
                   const std::vector<std::string>& row_labels,
                   const std::vector<std::string>& col_labels, const HeatmapOptions& opt);

// ---- layout -----------------------------------------------------------------

// Terminal columns a line takes once ANSI escape sequences are skipped: display_width (terminal.hpp).
std::size_t visible_width(std::string_view line);

// Places already-rendered blocks (multi-line strings) next to each other, `gap` columns apart, when
// together they fit in `max_width` (or `full` is set); otherwise prints them one below the other with
// a blank line between. Lines are padded by their visible width, so coloured blocks align too.
void print_side_by_side(std::ostream& os, const std::vector<std::string>& blocks, std::size_t gap,
                        std::size_t max_width, bool full);

}  // namespace attnlab::render
