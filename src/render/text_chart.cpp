#include "render/text_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "render/terminal.hpp"

namespace attnlab::render {

std::vector<std::string> text_chart(const std::string& title, const std::vector<std::optional<double>>& values,
                                    const std::vector<std::string>& labels, const ChartOptions& o) {
  std::vector<std::string> out = {fit_width(title, o.width)};
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& v : values)
    if (v && std::isfinite(*v)) lo = any ? std::min(lo, *v) : *v, hi = any ? std::max(hi, *v) : *v, any = true;
  if (!any || values.empty()) {
    out.push_back("  (no values)");
    return out;
  }
  const std::string top = fmt::format("{:.{}f}", hi, o.precision), bottom = fmt::format("{:.{}f}", lo, o.precision);
  const std::size_t axis = std::max(top.size(), bottom.size()) + 1;  // the values, then " |"
  const std::size_t n = values.size();
  const std::size_t room = o.width > axis + 3 ? o.width - axis - 2 : 1;
  const std::size_t cw = std::clamp<std::size_t>(room / n, 1, 8);  // columns per point
  const int h = std::max(2, o.height);
  std::vector<std::string> grid(static_cast<std::size_t>(h), std::string(cw * n, ' '));
  std::vector<int> row_of(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (!values[i] || !std::isfinite(*values[i])) continue;
    const double f = hi > lo ? (*values[i] - lo) / (hi - lo) : 0.5;
    const int r = h - 1 - static_cast<int>(std::lround(f * (h - 1)));  // row 0 is the top
    row_of[i] = r;
  }
  const std::string mark_on = o.color ? "\x1b[36m" : "", mark_off = o.color ? "\x1b[0m" : "";
  for (int r = 0; r < h; ++r) {
    std::string line = fmt::format("{:>{}} |", r == 0 ? top : r == h - 1 ? bottom : std::string(), axis);
    for (std::size_t i = 0; i < n; ++i) {
      std::string cell(cw, ' ');
      if (row_of[i] == r) {
        cell[cw / 2] = '*';
        line += cell.substr(0, cw / 2) + mark_on + "*" + mark_off + cell.substr(cw / 2 + 1);
      } else {
        line += cell;
      }
    }
    out.push_back(line);
  }
  out.push_back(std::string(axis + 1, ' ') + "+" + std::string(cw * n, '-'));
  // The labels: each centred under its point, skipped where the previous one is still being written.
  std::string lab(axis + 2 + cw * n + 16, ' ');
  std::size_t free_from = 0;
  for (std::size_t i = 0; i < n && i < labels.size(); ++i) {
    const std::size_t centre = axis + 2 + i * cw + cw / 2;
    const std::size_t start = centre >= labels[i].size() / 2 ? centre - labels[i].size() / 2 : 0;
    if (start < free_from || start + labels[i].size() > o.width) continue;
    lab.replace(start, labels[i].size(), labels[i]);
    free_from = start + labels[i].size() + 1;
  }
  while (!lab.empty() && lab.back() == ' ') lab.pop_back();
  out.push_back(lab);
  return out;
}

}  // namespace attnlab::render
