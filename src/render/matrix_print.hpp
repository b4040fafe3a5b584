#pragma once
// Printing labelled matrices for people: aligned, fixed precision, abbreviated to the terminal width,
// optionally shaded as a heatmap (for attention weights, whose values lie in [0, 1]).
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "core/matrix.hpp"
#include "render/terminal.hpp"

namespace attnlab {

struct PrintOptions {
  int precision = 4;              // digits after the decimal point
  std::size_t max_width = 80;     // terminal columns; wider matrices get an ellipsis column
  bool full = false;              // never abbreviate
  ColorMode color = ColorMode::None;
  bool heatmap = false;           // shade cells by value (expects values in [0, 1]); needs colour
  std::size_t max_label_width = 12;
};

// Prints `title`, a header row of column labels, then one line per row: its label and its values.
// −inf prints as "-inf". Empty label vectors mean "use 0, 1, 2, ...".
void print_matrix(std::ostream& os, std::string_view title, const Matrix& m,
                  const std::vector<std::string>& row_labels,
                  const std::vector<std::string>& col_labels, const PrintOptions& opt);

// Column labels "prefix0", "prefix1", ... (e.g. "d0".."d3" for the feature columns of Q).
std::vector<std::string> numbered_labels(std::string_view prefix, std::size_t n);

}  // namespace attnlab
