#include "render/matrix_print.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

namespace attnlab {

namespace {

std::string format_value(float v, int precision) {
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (std::isnan(v)) return "nan";
  std::string s = fmt::format("{:.{}f}", v, precision);
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);  // no "-0.0000"
  return s;
}

std::string pad_left(const std::string& s, std::size_t w) {
  const std::size_t dw = display_width(s);
  return dw >= w ? s : std::string(w - dw, ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t w) {
  const std::size_t dw = display_width(s);
  return dw >= w ? s : s + std::string(w - dw, ' ');
}

// Background colour for a weight in [0, 1] and a readable foreground on it.
std::string heat_escape(float v, ColorMode mode) {
  const float t = std::clamp(std::isfinite(v) ? v : 0.0f, 0.0f, 1.0f);
  if (mode == ColorMode::TrueColor) {
    // Dark blue (low) to warm yellow (high).
    const int r = static_cast<int>(std::lround(20 + t * (250 - 20)));
    const int g = static_cast<int>(std::lround(30 + t * (200 - 30)));
    const int b = static_cast<int>(std::lround(70 + t * (60 - 70)));
    const char* fg = t > 0.55f ? "30" : "97";
    return fmt::format("\x1b[{};48;2;{};{};{}m", fg, r, g, b);
  }
  // 256 colours: the 24-step grey ramp 232 (near black) … 255 (near white).
  const int idx = 232 + static_cast<int>(std::lround(t * 23));
  const char* fg = t > 0.55f ? "30" : "97";
  return fmt::format("\x1b[{};48;5;{}m", fg, idx);
}

}  // namespace

std::vector<std::string> numbered_labels(std::string_view prefix, std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::string(prefix) + std::to_string(i));
  return out;
}

void print_matrix(std::ostream& os, std::string_view title, const Matrix& m,
                  const std::vector<std::string>& row_labels_in,
                  const std::vector<std::string>& col_labels_in, const PrintOptions& opt) {
  const std::size_t nr = rows(m), nc = cols(m);
  const auto row_labels = row_labels_in.empty() ? numbered_labels("", nr) : row_labels_in;
  const auto col_labels = col_labels_in.empty() ? numbered_labels("", nc) : col_labels_in;
  const bool color = opt.color != ColorMode::None;

  std::vector<std::string> cells(nr * nc);
  std::size_t cell_w = 1;
  for (std::size_t i = 0; i < nr; ++i)
    for (std::size_t j = 0; j < nc; ++j) {
      cells[i * nc + j] = format_value(m(i, j), opt.precision);
      cell_w = std::max(cell_w, cells[i * nc + j].size());
    }
  std::size_t col_label_w = 0;
  for (const auto& l : col_labels) col_label_w = std::max(col_label_w, display_width(l));
  cell_w = std::max(cell_w, std::min(col_label_w, std::max<std::size_t>(cell_w, 10)));
  std::size_t label_w = 0;
  for (const auto& l : row_labels) label_w = std::max(label_w, std::min(display_width(l), opt.max_label_width));

  // Which columns to show: all, or the first `left` ones, an ellipsis, and the last one.
  std::vector<std::size_t> shown;
  bool ellipsis = false;
  const std::size_t full_w = label_w + nc * (cell_w + 1);
  if (opt.full || full_w <= opt.max_width || nc <= 2) {
    for (std::size_t j = 0; j < nc; ++j) shown.push_back(j);
  } else {
    const std::size_t budget = opt.max_width > label_w + 2 ? opt.max_width - label_w - 2 : 0;  // " …"
    std::size_t fit = budget / (cell_w + 1);
    fit = std::max<std::size_t>(fit, 2);
    const std::size_t left = fit - 1;
    for (std::size_t j = 0; j < left; ++j) shown.push_back(j);
    shown.push_back(nc - 1);
    ellipsis = true;
  }

  if (color) os << "\x1b[1m" << title << "\x1b[0m";
  else os << title;
  os << "  (" << nr << " × " << nc << (ellipsis ? ", abbreviated: --full shows every column" : "") << ")\n";

  // Header.
  os << std::string(label_w, ' ');
  for (std::size_t k = 0; k < shown.size(); ++k) {
    if (ellipsis && k + 1 == shown.size()) os << " …";
    os << ' ' << pad_left(fit_width(col_labels[shown[k]], cell_w), cell_w);
  }
  os << '\n';
  for (std::size_t i = 0; i < nr; ++i) {
    os << pad_right(fit_width(row_labels[i], opt.max_label_width), label_w);
    for (std::size_t k = 0; k < shown.size(); ++k) {
      if (ellipsis && k + 1 == shown.size()) os << " …";
      const std::size_t j = shown[k];
      os << ' ';
      if (color && opt.heatmap) {
        os << heat_escape(m(i, j), opt.color) << pad_left(cells[i * nc + j], cell_w) << "\x1b[0m";
      } else {
        os << pad_left(cells[i * nc + j], cell_w);
      }
    }
    os << '\n';
  }
}

}  // namespace attnlab
