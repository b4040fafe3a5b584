#include "render/colormap.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attnlab::render {

const std::vector<Rgb>& viridis_stops() {
  // viridis sampled at ten evenly spaced points (matplotlib's and R's viridis scale).
  static const std::vector<Rgb> s = {{0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x4a, 0x89}, {0x31, 0x68, 0x8e},
                                     {0x26, 0x82, 0x8e}, {0x1f, 0x9e, 0x89}, {0x35, 0xb7, 0x79}, {0x6d, 0xcd, 0x59},
                                     {0xb4, 0xde, 0x2c}, {0xfd, 0xe7, 0x25}};
  return s;
}

const std::vector<Rgb>& diverging_stops() {
  // ColorBrewer PuOr with 9 classes, from purple (most negative) through white to orange.
  static const std::vector<Rgb> s = {{0x54, 0x27, 0x88}, {0x80, 0x73, 0xac}, {0xb2, 0xab, 0xd2}, {0xd8, 0xda, 0xeb},
                                     {0xf7, 0xf7, 0xf7}, {0xfe, 0xe0, 0xb6}, {0xfd, 0xb8, 0x63}, {0xe0, 0x82, 0x14},
                                     {0xb3, 0x58, 0x06}};
  return s;
}

const std::vector<std::string>& head_colours() {
  static const std::vector<std::string> c = {"#0072b2", "#e69f00", "#009e73", "#cc79a7",
                                             "#56b4e9", "#d55e00", "#000000", "#f0e442"};
  return c;
}

Rgb ramp(const std::vector<Rgb>& stops, double t) {
  if (!(t >= 0)) t = 0;  // NaN too
  t = std::min(t, 1.0);
  const double x = t * static_cast<double>(stops.size() - 1);
  const std::size_t i = std::min(stops.size() - 2, static_cast<std::size_t>(x));
  const double f = x - static_cast<double>(i);
  Rgb out{};
  for (int k = 0; k < 3; ++k)
    out[k] = static_cast<std::uint8_t>(std::lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f));
  return out;
}

std::string hex(Rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]); }

}  // namespace attnlab::render
