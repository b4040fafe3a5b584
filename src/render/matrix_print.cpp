#include "render/matrix_print.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

namespace attnlab::render {

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

// Which columns to show, in their order, when not all fit in max_width (each shown column takes
// cell_w + 1, each run of left-out columns " …"): for weights, the columns holding the largest weights
// (ranked by each column's largest value: what a step is about, e.g. the source word "il" attends to),
// else the first ones and the last. Returns how many were left out.
std::size_t choose_columns(const core::Matrix& m, bool by_weight, const std::vector<std::size_t>& keep, std::size_t label_w,
                           std::size_t cell_w, std::size_t max_width, bool full, std::vector<std::size_t>& shown) {
  const std::size_t nc = core::cols(m), nr = core::rows(m);
  shown.clear();
  const std::size_t full_w = label_w + nc * (cell_w + 1);
  if (full || full_w <= max_width || nc <= 2) {
    for (std::size_t j = 0; j < nc; ++j) shown.push_back(j);
    return 0;
  }
  std::vector<std::size_t> order(nc);
  for (std::size_t j = 0; j < nc; ++j) order[j] = j;
  if (by_weight) {
    std::vector<float> top(nc, -INFINITY);
    for (std::size_t i = 0; i < nr; ++i)
      for (std::size_t j = 0; j < nc; ++j)
        if (std::isfinite(m(i, j))) top[j] = std::max(top[j], m(i, j));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return top[a] > top[b]; });
  } else {
    std::rotate(order.begin() + 1, order.end() - 1, order.end());  // 0, last, 1, 2, ...
  }
  // The columns a step names come first, in the order given.
  for (auto it = keep.rbegin(); it != keep.rend(); ++it) {
    const auto at = std::find(order.begin(), order.end(), *it);
    if (at != order.end()) std::rotate(order.begin(), at, at + 1);
  }
  auto width_of = [&](const std::vector<std::size_t>& sorted) {
    std::size_t w = label_w + sorted.size() * (cell_w + 1), gaps = 0;
    for (std::size_t k = 0; k <= sorted.size(); ++k) {
      const std::size_t from = k == 0 ? 0 : sorted[k - 1] + 1, to = k == sorted.size() ? nc : sorted[k];
      gaps += to > from ? 1 : 0;
    }
    return w + 2 * gaps;
  };
  for (std::size_t j : order) {
    std::vector<std::size_t> next = shown;
    next.insert(std::upper_bound(next.begin(), next.end(), j), j);
    if (shown.size() >= 2 && width_of(next) > max_width) break;
    shown = std::move(next);
  }
  return nc - shown.size();
}

// Which rows to show: all, or (max_rows > 0 and more rows than that) the first max_rows − 3, then the
// last two, with a "⋮" line between.
std::vector<std::size_t> choose_rows(std::size_t nr, std::size_t max_rows, bool full) {
  std::vector<std::size_t> shown;
  if (full || max_rows == 0 || nr <= max_rows || max_rows < 4) {
    for (std::size_t i = 0; i < nr; ++i) shown.push_back(i);
    return shown;
  }
  for (std::size_t i = 0; i + 3 < max_rows; ++i) shown.push_back(i);
  shown.push_back(nr - 2);
  shown.push_back(nr - 1);
  return shown;
}

// The note in a title when something was left out.
std::string abbreviation_note(std::size_t cols_out, std::size_t nc, bool by_weight, std::size_t rows_out) {
  if (!cols_out && !rows_out) return "";
  std::string note = ", abbreviated:";
  if (cols_out)
    note += fmt::format(" {} of {} columns{}", nc - cols_out, nc, by_weight ? " (the focus words and the largest weights)" : "");
  if (rows_out) note += fmt::format("{} {} rows left out", cols_out ? "," : "", rows_out);
  return note + "; --full shows all";
}

// The title (bold with colour) and its shape note, wrapped to the width at word boundaries with a
// two-column hanging indent; the note stays in plain text. Without a width limit (0) it is one line.
void print_title(std::ostream& os, std::string_view title, const std::string& note, std::size_t width, bool color) {
  const std::string t = visible_controls(title);
  if (width == 0 || display_width(t) + display_width(note) <= width) {
    if (color) os << "\x1b[1m" << t << "\x1b[0m" << note << '\n';
    else os << t << note << '\n';
    return;
  }
  // Wrap title and note together, then bold what belongs to the title: the first display_width(t)
  // columns of text, whatever lines they fall on.
  // The shape "(6 × 256" never breaks inside: its spaces are held by a placeholder while wrapping.
  std::string glued = note;
  for (std::size_t at = glued.find(" × "); at != std::string::npos; at = glued.find(" × ", at))
    glued.replace(at, std::string(" × ").size(), "\x01×\x01");
  std::string wrapped = wrap_words(t + glued, width, "", "  ");
  std::replace(wrapped.begin(), wrapped.end(), '\x01', ' ');
  if (!color) {
    os << wrapped << '\n';
    return;
  }
  std::size_t title_chars = 0;  // non-space bytes of the title, counted as the wrapped text is copied
  std::size_t title_nonspace = 0;
  for (char ch : t) title_nonspace += ch != ' ';
  bool bold = false;
  std::string out;
  for (char ch : wrapped) {
    const bool in_title = title_chars < title_nonspace;
    if (ch != ' ' && ch != '\n' && in_title && !bold) out += "\x1b[1m", bold = true;
    if ((ch == '\n' || !in_title) && bold) out += "\x1b[0m", bold = false;
    out += ch;
    if (ch != ' ' && ch != '\n' && in_title) ++title_chars;
  }
  if (bold) out += "\x1b[0m";
  os << out << '\n';
}

// " …" before column k of `shown` when columns were left out just before it (and after the last).
bool gap_before(const std::vector<std::size_t>& shown, std::size_t k) {
  return k < shown.size() ? (k == 0 ? shown[0] != 0 : shown[k] != shown[k - 1] + 1) : false;
}

}  // namespace

std::string_view shade_glyph(float t) {
  static constexpr std::string_view kShades[] = {" ", "░", "▒", "▓", "█"};
  // Five equal bins of [0, 1]: [0, 0.2) blank … [0.8, 1] full. (Rounding t·4 gave ▓ up to 0.875, so a
  // weight of 0.86, nearly all of a row, did not look full.)
  const float c = std::clamp(std::isfinite(t) ? t : 0.0f, 0.0f, 1.0f);
  return kShades[std::min<std::size_t>(4, static_cast<std::size_t>(c * 5.0f))];
}

namespace {
std::vector<std::string> safe_labels(std::vector<std::string> labels) {
  for (auto& l : labels) l = visible_controls(l);
  return labels;
}
}  // namespace

void print_heatmap(std::ostream& os, std::string_view title, const core::Matrix& m,
                   const std::vector<std::string>& row_labels_in,
                   const std::vector<std::string>& col_labels_in, const HeatmapOptions& opt) {
  const std::size_t nr = core::rows(m), nc = core::cols(m);
  // Labels are tokens of the user's sentence or a file's: their control characters shown, not obeyed.
  const auto row_labels = safe_labels(row_labels_in.empty() ? numbered_labels("", nr) : row_labels_in);
  const auto col_labels = safe_labels(col_labels_in.empty() ? numbered_labels("", nc) : col_labels_in);
  const bool color = opt.color != ColorMode::None;
  const float span = opt.hi > opt.lo ? opt.hi - opt.lo : 1.0f;

  // Cells as wide as the column labels (clipped to 3..6 columns) so that labels stay readable.
  std::size_t cell_w = 3;
  for (const auto& l : col_labels) cell_w = std::max(cell_w, std::min<std::size_t>(display_width(l), 6));
  std::size_t label_w = 0;
  for (const auto& l : row_labels) label_w = std::max(label_w, std::min(display_width(l), opt.max_label_width));
  std::vector<std::size_t> shown;
  const std::size_t cols_out = choose_columns(m, opt.weights, opt.keep_cols, label_w, cell_w, opt.max_width, opt.full, shown);
  const std::vector<std::size_t> shown_rows = choose_rows(nr, opt.max_rows, opt.full);
  const bool tail = !shown.empty() && shown.back() + 1 != nc;

  print_title(os, title, fmt::format("  ({} × {}, heatmap{})", nr, nc, abbreviation_note(cols_out, nc, opt.weights, nr - shown_rows.size())),
              opt.max_width, color);
  os << std::string(label_w, ' ');
  for (std::size_t k = 0; k < shown.size(); ++k) {
    if (gap_before(shown, k)) os << " …";
    const std::string l = fit_width(col_labels[shown[k]], cell_w);
    os << ' ' << (k + 1 == shown.size() && !tail ? l : pad_right(l, cell_w));  // no trailing blanks
  }
  if (tail) os << " …";
  os << '\n';
  for (std::size_t r = 0; r < shown_rows.size(); ++r) {
    const std::size_t i = shown_rows[r];
    if (r > 0 && i != shown_rows[r - 1] + 1) os << pad_right("⋮", label_w) << '\n';
    std::string line = pad_right(fit_width(row_labels[i], opt.max_label_width), label_w);
    for (std::size_t k = 0; k < shown.size(); ++k) {
      if (gap_before(shown, k)) line += " …";
      const float t = (m(i, shown[k]) - opt.lo) / span;
      line += ' ';
      if (color) {
        line += heat_escape(t, opt.color) + std::string(cell_w, ' ') + "\x1b[0m";
      } else {
        const std::string_view g = shade_glyph(t);
        for (std::size_t c = 0; c < cell_w; ++c) line += g;
      }
    }
    if (tail) line += " …";
    if (!color)
      while (!line.empty() && line.back() == ' ') line.pop_back();  // blank (lowest) shades at the end
    os << line << '\n';
  }
  os << std::string(label_w, ' ') << " scale: " << fmt::format("{:.2f}", opt.lo);
  if (color) {
    for (int s = 0; s <= 4; ++s) os << ' ' << heat_escape(static_cast<float>(s) / 4.0f, opt.color) << "  " << "\x1b[0m";
  } else {
    os << " [";
    for (int s = 0; s <= 4; ++s) os << shade_glyph(static_cast<float>(s) / 4.0f);
    os << ']';
  }
  os << ' ' << fmt::format("{:.2f}", opt.hi) << '\n';
}

std::size_t visible_width(std::string_view line) { return display_width(line); }

void print_side_by_side(std::ostream& os, const std::vector<std::string>& blocks, std::size_t gap,
                        std::size_t max_width, bool full) {
  std::vector<std::vector<std::string>> lines(blocks.size());
  std::vector<std::size_t> widths(blocks.size(), 0);
  std::size_t total = 0, height = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    std::size_t start = 0;
    const std::string& s = blocks[b];
    while (start < s.size()) {
      std::size_t end = s.find('\n', start);
      if (end == std::string::npos) end = s.size();
      lines[b].push_back(s.substr(start, end - start));
      widths[b] = std::max(widths[b], visible_width(lines[b].back()));
      start = end + 1;
    }
    total += widths[b] + (b ? gap : 0);
    height = std::max(height, lines[b].size());
  }
  if (!full && total > max_width) {
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (b) os << '\n';
      for (const auto& l : lines[b]) os << l << '\n';
    }
    return;
  }
  for (std::size_t r = 0; r < height; ++r) {
    std::string out;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const std::string cell = r < lines[b].size() ? lines[b][r] : std::string();
      if (b) out += std::string(gap, ' ');
      out += cell;
      if (b + 1 < blocks.size()) out += std::string(widths[b] - visible_width(cell), ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    os << out << '\n';
  }
}

std::vector<std::string> numbered_labels(std::string_view prefix, std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::string(prefix) + std::to_string(i));
  return out;
}

void print_matrix(std::ostream& os, std::string_view title, const core::Matrix& m,
                  const std::vector<std::string>& row_labels_in,
                  const std::vector<std::string>& col_labels_in, const PrintOptions& opt) {
  const std::size_t nr = core::rows(m), nc = core::cols(m);
  // Labels are tokens of the user's sentence or a file's: their control characters shown, not obeyed.
  const auto row_labels = safe_labels(row_labels_in.empty() ? numbered_labels("", nr) : row_labels_in);
  const auto col_labels = safe_labels(col_labels_in.empty() ? numbered_labels("", nc) : col_labels_in);
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

  std::vector<std::size_t> shown;
  const std::size_t cols_out = choose_columns(m, opt.heatmap, opt.keep_cols, label_w, cell_w, opt.max_width, opt.full, shown);
  const std::vector<std::size_t> shown_rows = choose_rows(nr, opt.max_rows, opt.full);
  const bool tail = !shown.empty() && shown.back() + 1 != nc;

  print_title(os, title, fmt::format("  ({} × {}{})", nr, nc, abbreviation_note(cols_out, nc, opt.heatmap, nr - shown_rows.size())),
              opt.max_width, color);

  // Header.
  os << std::string(label_w, ' ');
  for (std::size_t k = 0; k < shown.size(); ++k) {
    if (gap_before(shown, k)) os << " …";
    os << ' ' << pad_left(fit_width(col_labels[shown[k]], cell_w), cell_w);
  }
  if (tail) os << " …";
  os << '\n';
  for (std::size_t r = 0; r < shown_rows.size(); ++r) {
    const std::size_t i = shown_rows[r];
    if (r > 0 && i != shown_rows[r - 1] + 1) os << pad_left("⋮", label_w) << '\n';
    os << pad_right(fit_width(row_labels[i], opt.max_label_width), label_w);
    for (std::size_t k = 0; k < shown.size(); ++k) {
      if (gap_before(shown, k)) os << " …";
      const std::size_t j = shown[k];
      os << ' ';
      if (color && opt.heatmap) {
        os << heat_escape(m(i, j), opt.color) << pad_left(cells[i * nc + j], cell_w) << "\x1b[0m";
      } else {
        os << pad_left(cells[i * nc + j], cell_w);
      }
    }
    if (tail) os << " …";
    os << '\n';
  }
}

}  // namespace attnlab::render
