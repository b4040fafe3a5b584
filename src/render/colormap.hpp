#pragma once
// The colour scales of attnlab's pictures (the HTML explorer and --svg files), in one place:
//  - viridis, perceptually uniform and readable with colour vision deficiency, for values of one sign
//    (attention weights: 0 → dark purple, 1 → yellow);
//  - ColorBrewer's PuOr, a colour-blind-safe diverging scale (purple < 0 < orange, white at 0), for
//    signed values such as scores;
//  - the Okabe–Ito palette for telling heads apart, ordered so that its faintest colour on white
//    (yellow) comes last.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::render {

using Rgb = std::array<std::uint8_t, 3>;

const std::vector<Rgb>& viridis_stops();
const std::vector<Rgb>& diverging_stops();
const std::vector<std::string>& head_colours();  // "#rrggbb"

// The colour at t in [0, 1] (clamped; NaN → 0) by linear interpolation between the stops.
Rgb ramp(const std::vector<Rgb>& stops, double t);
std::string hex(Rgb c);  // "#rrggbb"

}  // namespace attnlab::render
