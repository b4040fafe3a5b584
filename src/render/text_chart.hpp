#pragma once
// A small text chart of one series against its points (`attnlab timeline`): one column group per
// point, the value as a marker on a grid of `height` rows between the series' least and greatest
// values (both printed on the axis), the points' labels under it. Points without a value are left
// empty. Plain ASCII; the markers in colour only when `color` is true (NO_COLOR is the caller's, via
// render::detect_terminal). Every line at most `width` columns.
#include <optional>
#include <string>
#include <vector>

namespace attnlab::render {

struct ChartOptions {
  std::size_t width = 80;
  int height = 6;
  int precision = 2;  // decimals of the axis values
  bool color = false;
};

std::vector<std::string> text_chart(const std::string& title, const std::vector<std::optional<double>>& values,
                                    const std::vector<std::string>& labels, const ChartOptions& o);

}  // namespace attnlab::render
