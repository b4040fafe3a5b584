#include "render/html_page.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "render/colormap.hpp"
#include "render/explorer_assets.hpp"
#include "util/shown.hpp"

namespace attnlab::render {

namespace {

// JSON safe to inline in <script type="application/json">: '<', '>' and '&' occur only inside
// strings, where \u escapes mean the same characters, so "</script>" can never end the element early.
std::string inline_json(const nlohmann::json& j) {
  const std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size() + 64);
  for (char c : s) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else out += c;
  }
  return out;
}

// Text as valid UTF-8 (invalid bytes become U+FFFD), escaped for XML and HTML.
std::string escape_xml(const std::string& raw) {
  const std::string s = nlohmann::json::parse(nlohmann::json(raw).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
                            .get<std::string>();
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters are not allowed in XML 1.0; the tokens reaching here are already made
        // visible (render/terminal.hpp), so any left are dropped.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') break;
        out += c;
    }
  }
  return out;
}

nlohmann::json stops_json(const std::vector<Rgb>& stops) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : stops) a.push_back({s[0], s[1], s[2]});
  return a;
}

}  // namespace

nlohmann::json attention_set(const AttentionSetInfo& info, const std::function<const float*(int, int)>& at) {
  const std::size_t R = info.rows.size(), C = info.columns.size();
  nlohmann::json weights = nlohmann::json::array();
  for (int l : info.layers) {
    nlohmann::json per_head = nlohmann::json::array();
    for (int h : info.heads) {
      const float* a = at(l, h);
      nlohmann::json mat = nlohmann::json::array();
      for (std::size_t i = 0; i < R; ++i) {
        nlohmann::json row = nlohmann::json::array();
        for (std::size_t j = 0; j < C; ++j) row.push_back(std::round(static_cast<double>(a[i * C + j]) * 1e6) / 1e6);
        mat.push_back(std::move(row));
      }
      per_head.push_back(std::move(mat));
    }
    weights.push_back(std::move(per_head));
  }
  return {{"name", info.name},       {"kind", info.kind},   {"description", info.description},
          {"row_title", info.row_title}, {"column_title", info.column_title},
          {"rows", info.rows},       {"columns", info.columns}, {"layers", info.layers},
          {"heads", info.heads},     {"weights", std::move(weights)}};
}

std::string explorer_page(const nlohmann::json& doc, const PageInfo& info) {
  const nlohmann::json meta = {{"title", info.title},          {"subtitle", info.subtitle},
                               {"command", info.command},      {"notes", info.notes},
                               {"version", ATTNLAB_VERSION},   {"viridis", stops_json(viridis_stops())},
                               {"diverging", stops_json(diverging_stops())}, {"head_colours", head_colours()},
                               {"line_min", 0.01},             {"live", info.live}};
  std::string page;
  page += "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<meta name=\"generator\" content=\"attnlab " ATTNLAB_VERSION "\">\n";
  page += "<title>" + escape_xml(info.title) + "</title>\n<style>\n";
  page += assets::kExplorerCss;
  page += "</style>\n</head>\n<body>\n<main id=\"app\"></main>\n";
  page += "<noscript><p>This page draws its pictures with JavaScript; the data is in the attnlab-data element of its source.</p></noscript>\n";
  page += "<script id=\"attnlab-meta\" type=\"application/json\">" + inline_json(meta) + "</script>\n";
  page += "<script id=\"attnlab-data\" type=\"application/json\">" + inline_json(doc) + "</script>\n";
  page += "<script>\n";
  page += assets::kExplorerJs;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

std::string heatmap_svg(const std::string& title, const core::Matrix& m, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels, bool weights) {
  const std::size_t R = m.shape()[0], C = m.shape()[1];
  double lo = 0, hi = 1;
  if (!weights) {
    lo = INFINITY;
    hi = -INFINITY;
    for (float v : m)
      if (std::isfinite(v)) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
    if (!std::isfinite(lo)) lo = 0, hi = 1;
  }
  const bool diverging = lo < 0 && hi > 0;
  const double span = diverging ? std::max(-lo, hi) : (hi - lo > 0 ? hi - lo : 1.0);
  auto t_of = [&](double v) { return diverging ? (v / span + 1) / 2 : (v - lo) / span; };
  const auto& stops = diverging ? diverging_stops() : viridis_stops();
  auto longest = [](const std::vector<std::string>& v) {
    std::size_t n = 1;
    for (const auto& s : v) n = std::max(n, s.size());
    return static_cast<double>(std::min<std::size_t>(n, 24));
  };
  const double cell = C <= 16 ? 40 : C <= 32 ? 24 : 16;
  const double left = 10 + 7.5 * longest(row_labels), top = 34 + 6 * longest(col_labels);
  // Wide enough for the title too (about 7.5 px a character at 14 px).
  const double title_width = 16 + 7.5 * static_cast<double>(std::min<std::size_t>(title.size(), 400));
  const double width = std::max(left + cell * static_cast<double>(C) + 120, title_width), height = top + cell * static_cast<double>(R) + 16;
  std::string s;
  s += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
                   "font-family=\"DejaVu Sans, sans-serif\" font-size=\"13\" role=\"img\">\n",
                   width, height);
  s += "<title>" + escape_xml(title) + "</title>\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  s += fmt::format("<text x=\"8\" y=\"18\" font-size=\"14\">{}</text>\n", escape_xml(title));
  for (std::size_t j = 0; j < C; ++j) {
    const double x = left + cell * (static_cast<double>(j) + 0.5), y = top - 6;
    s += fmt::format("<text class=\"col\" x=\"{0:.1f}\" y=\"{1:.1f}\" transform=\"rotate(-50 {0:.1f} {1:.1f})\">{2}</text>\n", x, y,
                     escape_xml(j < col_labels.size() ? col_labels[j] : std::to_string(j)));
  }
  for (std::size_t i = 0; i < R; ++i) {
    s += fmt::format("<text class=\"row\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                     top + cell * (static_cast<double>(i) + 0.5) + 4,
                     escape_xml(i < row_labels.size() ? row_labels[i] : std::to_string(i)));
    for (std::size_t j = 0; j < C; ++j) {
      const double v = m(i, j);
      const double x = left + cell * static_cast<double>(j), y = top + cell * static_cast<double>(i);
      const std::string fill = std::isfinite(v) ? hex(ramp(stops, t_of(v))) : "#dddddd";
      s += fmt::format("<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{} → {}: {:.4g}</title></rect>\n",
                       x, y, cell - 1, cell - 1, fill, escape_xml(i < row_labels.size() ? row_labels[i] : ""),
                       escape_xml(j < col_labels.size() ? col_labels[j] : ""), v);
      if (C <= 16 && std::isfinite(v)) {
        const double t = t_of(v);
        const bool dark = diverging ? std::abs(t - 0.5) > 0.3 : t < 0.55;
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{}\">{:.2f}</text>\n",
                         x + cell / 2, y + cell / 2 + 4, dark ? "#ffffff" : "#000000", v);
      }
    }
  }
  // The colour scale, top to bottom from the largest value to the smallest.
  const double lx = left + cell * static_cast<double>(C) + 24, ly = top, lh = std::max(80.0, cell * static_cast<double>(R));
  for (int k = 0; k < 40; ++k) {
    const double t = 1.0 - k / 39.0;
    s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"{:.2f}\" fill=\"{}\"/>\n", lx, ly + lh * k / 40.0,
                     lh / 40.0 + 0.5, hex(ramp(stops, t)));
  }
  const double vmax = diverging ? span : hi, vmin = diverging ? -span : lo;
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{:.3g}</text>\n", lx + 18, ly + 9, vmax);
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{:.3g}</text>\n", lx + 18, ly + lh, vmin);
  s += "</svg>\n";
  return s;
}

std::string write_picture(const std::string& option, const std::string& path, const std::string& content,
                          const std::string& what) {
  io::write_output_file(path, content, option);
  return fmt::format("attnlab: wrote {} ({}, {:.0f} KB)", shown_path(path), what, std::ceil(static_cast<double>(content.size()) / 1024.0));
}

}  // namespace attnlab::render
