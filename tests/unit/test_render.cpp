// Matrix printing: labels, alignment, abbreviation to the terminal width, colour only when asked.
#include <doctest/doctest.h>

#include <limits>
#include <sstream>

#include "render/text_chart.hpp"
#include "render/matrix_print.hpp"
#include "render/terminal.hpp"
#include "render/colormap.hpp"
#include "render/html_page.hpp"

#include <nlohmann/json.hpp>

using namespace attnlab;

TEST_CASE("labels on rows and columns, fixed precision, -inf spelled out") {
  core::Matrix m = core::Matrix::from_shape({2, 2});
  m(0, 0) = 0.5f;
  m(0, 1) = -std::numeric_limits<float>::infinity();
  m(1, 0) = 1.0f / 3.0f;
  m(1, 1) = -0.00001f;
  std::ostringstream os;
  render::PrintOptions po;
  render::print_matrix(os, "weights", m, {"The", "garçon"}, {"The", "garçon"}, po);
  const std::string s = os.str();
  CHECK(s == "weights  (2 × 2)\n"
             "          The garçon\n"
             "The    0.5000   -inf\n"
             "garçon 0.3333 0.0000\n");
}

TEST_CASE("wide matrices get an ellipsis column unless --full") {
  core::Matrix m = core::Matrix::from_shape({1, 40});
  for (std::size_t j = 0; j < 40; ++j) m(0, j) = static_cast<float>(j);
  render::PrintOptions po;
  po.max_width = 60;
  std::ostringstream os;
  render::print_matrix(os, "wide", m, {"r"}, {}, po);
  std::string line;
  std::istringstream in(os.str());
  // The title wraps to the width too; its last line ends with the abbreviation note.
  std::string title;
  while (std::getline(in, line) && (title += line + "\n", line.find("--full shows all)") == std::string::npos)) CHECK(render::display_width(line) <= 60);
  CHECK(title.find("--full") != std::string::npos);
  while (std::getline(in, line)) {
    CHECK(render::display_width(line) <= 60);
    CHECK(line.find("…") != std::string::npos);
    CHECK(line.find("39") != std::string::npos);  // the last column is kept
  }
  po.full = true;
  std::ostringstream full;
  render::print_matrix(full, "wide", m, {"r"}, {}, po);
  CHECK(full.str().find("…") == std::string::npos);
  CHECK(full.str().find("20.0000") != std::string::npos);
}

TEST_CASE("no escape codes without colour, heatmap escapes with it") {
  core::Matrix m = core::Matrix::from_shape({1, 2});
  m(0, 0) = 0.2f;
  m(0, 1) = 0.8f;
  render::PrintOptions po;
  po.heatmap = true;
  std::ostringstream plain;
  render::print_matrix(plain, "w", m, {}, {}, po);
  CHECK(plain.str().find('\x1b') == std::string::npos);
  po.color = render::ColorMode::Ansi256;
  std::ostringstream col;
  render::print_matrix(col, "w", m, {}, {}, po);
  CHECK(col.str().find("\x1b[") != std::string::npos);
}

TEST_CASE("UTF-8 display width and fitting") {
  CHECK(render::display_width("garçon") == 6);
  CHECK(render::display_width("entraîne") == 8);
  CHECK(render::fit_width("entraîne", 5) == "entr…");
  CHECK(render::fit_width("chiot", 5) == "chiot");
}

TEST_CASE("visible_controls shows control characters and bad bytes, keeps text") {
  CHECK(render::visible_controls("garçon, l'animal") == "garçon, l'animal");
  CHECK(render::visible_controls("a\x1b[2Jb") == "a\\x1b[2Jb");
  CHECK(render::visible_controls(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(render::visible_controls("tab\there") == "tab\there");
  CHECK(render::visible_controls("two\nlines") == "two\\x0alines");
  CHECK(render::visible_controls("two\nlines", true) == "two\nlines");
  CHECK(render::visible_controls("del\x7f") == "del\\x7f");
  CHECK(render::visible_controls("c1 \xc2\x9b csi") == "c1 \\u009b csi");
  CHECK(render::visible_controls("bad \xff\xc3 utf8") == "bad \\xff\\xc3 utf8");
  CHECK(render::visible_controls("\xc2\xa0nbsp") == "\xc2\xa0nbsp");  // U+00A0 is not a control
}

TEST_CASE("display_width and fit_width: escape sequences take no columns and are never cut") {
  const std::string red = "\x1b[31mred\x1b[0m";
  CHECK(render::display_width(red) == 3);
  CHECK(render::fit_width(red, 3) == red);
  const std::string cut = render::fit_width("\x1b[31mcoloured\x1b[0m", 4);
  CHECK(cut == "\x1b[31mcol\x1b[0m…");  // the colour is reset before the ellipsis
  CHECK(render::fit_width("garçon", 4) == "gar…");
}

TEST_CASE("visible_controls shows the bidirectional overrides and isolates (\"Trojan source\")") {
  CHECK(attnlab::render::visible_controls("a\u202eb\u2066c\u2069d\u202ae") == "a\\u202eb\\u2066c\\u2069d\\u202ae");
  CHECK(attnlab::render::visible_controls("\u2014 \u2065 \u202f") == "\u2014 \u2065 \u202f");  // neighbours stay
}

TEST_CASE("colour scales: viridis and PuOr end points, clamping, NaN") {
  using namespace attnlab::render;
  CHECK(hex(ramp(viridis_stops(), 0.0)) == "#440154");
  CHECK(hex(ramp(viridis_stops(), 1.0)) == "#fde725");
  CHECK(hex(ramp(viridis_stops(), 7.0)) == "#fde725");
  CHECK(hex(ramp(viridis_stops(), std::numeric_limits<double>::quiet_NaN())) == "#440154");
  CHECK(hex(ramp(diverging_stops(), 0.5)) == "#f7f7f7");  // white at 0
  CHECK(head_colours().size() == 8);
}

TEST_CASE("attention_set: the explorer's JSON form, weights rounded to 6 decimals") {
  using namespace attnlab::render;
  const std::vector<float> w = {0.1234567f, 0.8765433f, 1.0f, 0.0f};
  AttentionSetInfo si{"s", "self", "d", "r", "c", {"a", "b"}, {"a", "b"}, {3}, {0, 2}};
  const nlohmann::json j = attention_set(si, [&](int l, int h) {
    CHECK(l == 3);
    CHECK((h == 0 || h == 2));
    return w.data();
  });
  CHECK(j["weights"].size() == 1);
  CHECK(j["weights"][0].size() == 2);
  CHECK(j["weights"][0][1][0][0].get<double>() == 0.123457);
  CHECK(j["weights"][0][1][1][0].get<double>() == 1.0);
  CHECK(j["layers"] == nlohmann::json::array({3}));
}

TEST_CASE("explorer page: self-contained, data round-trips, nothing in the data can end the script element") {
  using namespace attnlab::render;
  const nlohmann::json doc = {{"tokens", {"</script><script>alert(1)</script>", "a&b", "bad\xff"}}, {"x", 1}};
  const std::string page = explorer_page(doc, {"T <b>", "sub", "cmd", {"note"}});
  CHECK(page.rfind("<!doctype html>", 0) == 0);
  CHECK(page.find("alert(1)</script>") == std::string::npos);
  CHECK(page.find("<title>T &lt;b&gt;</title>") != std::string::npos);
  const std::string open = "<script id=\"attnlab-data\" type=\"application/json\">";
  const auto a = page.find(open), b = page.find("</script>", a);
  REQUIRE(a != std::string::npos);
  const auto back = nlohmann::json::parse(page.substr(a + open.size(), b - a - open.size()));
  CHECK(back["tokens"][0] == "</script><script>alert(1)</script>");
  CHECK(back["tokens"][2] == "bad\xef\xbf\xbd");  // invalid UTF-8 replaced
  CHECK(back["x"] == 1);
  CHECK(page.find("<script src") == std::string::npos);
}

TEST_CASE("heatmap_svg: one cell per entry, labels escaped, weights on a 0…1 scale, values in small maps") {
  using namespace attnlab::render;
  attnlab::core::Matrix m = attnlab::core::Matrix::from_shape({2, 3});
  m(0, 0) = 0; m(0, 1) = 1; m(0, 2) = 0.5f;
  m(1, 0) = 0.25f; m(1, 1) = 0.25f; m(1, 2) = 0.5f;
  const std::string svg = heatmap_svg("t & <u>", m, {"r<1>", "r2"}, {"a", "b\"", "c"}, true);
  std::size_t cells = 0;
  for (auto p = svg.find("class=\"cell\""); p != std::string::npos; p = svg.find("class=\"cell\"", p + 1)) ++cells;
  CHECK(cells == 6);
  CHECK(svg.find("r&lt;1&gt;") != std::string::npos);
  CHECK(svg.find("b&quot;") != std::string::npos);
  CHECK(svg.find("t &amp; &lt;u&gt;") != std::string::npos);
  CHECK(svg.find("fill=\"#440154\"><title>r&lt;1&gt; → a") != std::string::npos);  // 0 is viridis' first colour
  CHECK(svg.find("fill=\"#fde725\"><title>r&lt;1&gt; → b") != std::string::npos);  // 1 its last
  CHECK(svg.find(">0.50<") != std::string::npos);
  // Signed values: a diverging scale centred on 0 (white).
  attnlab::core::Matrix s = attnlab::core::Matrix::from_shape({1, 3});
  s(0, 0) = -2; s(0, 1) = 0; s(0, 2) = 1;
  const std::string d = heatmap_svg("s", s, {"x"}, {"a", "b", "c"}, false);
  CHECK(d.find("fill=\"#f7f7f7\"><title>x → b") != std::string::npos);
}

TEST_CASE("text_chart: each value on the row of its place between the least and the greatest, labels under, within the width") {
  attnlab::render::ChartOptions o;
  o.width = 40;
  o.height = 5;
  o.precision = 1;
  // 1 → bottom row (4), 3 → top row (0), 2 → the middle (2); the missing value leaves its column empty.
  const auto lines = attnlab::render::text_chart("t", {1.0, 3.0, 2.0, std::nullopt}, {"0", "10", "100", "1000"}, o);
  REQUIRE(lines.size() == 1 + 5 + 2);
  CHECK(lines[0] == "t");
  CHECK(lines[1].rfind(" 3.0 |", 0) == 0);
  CHECK(lines[5].rfind(" 1.0 |", 0) == 0);
  // axis " 3.0" (4) + " |" = 6 columns, then 4 points of min(8, (40 − 6) / 4) = 8 columns, the marker at 4.
  const std::size_t x0 = 6 + 4, cw = 8;
  CHECK(lines[5].at(x0) == '*');
  CHECK(lines[1].at(x0 + cw) == '*');
  CHECK(lines[3].at(x0 + 2 * cw) == '*');
  for (int r = 1; r <= 5; ++r) CHECK(lines[static_cast<std::size_t>(r)].find('*', x0 + 3 * cw) == std::string::npos);
  CHECK(lines[7].find("1000") != std::string::npos);
  for (const auto& l : lines) CHECK(l.size() <= 40);
  // One value, or all equal: the middle row; no value at all: said so.
  CHECK(attnlab::render::text_chart("t", {2.0, 2.0}, {"a", "b"}, o)[3].find('*') != std::string::npos);
  CHECK(attnlab::render::text_chart("t", {std::nullopt}, {"a"}, o)[1] == "  (no values)");
}
