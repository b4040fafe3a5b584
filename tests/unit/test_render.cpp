// Matrix printing: labels, alignment, abbreviation to the terminal width, colour only when asked.
#include <doctest/doctest.h>

#include <limits>
#include <sstream>

#include "render/matrix_print.hpp"
#include "render/terminal.hpp"

using namespace attnlab;

TEST_CASE("labels on rows and columns, fixed precision, -inf spelled out") {
  Matrix m = Matrix::from_shape({2, 2});
  m(0, 0) = 0.5f;
  m(0, 1) = -std::numeric_limits<float>::infinity();
  m(1, 0) = 1.0f / 3.0f;
  m(1, 1) = -0.00001f;
  std::ostringstream os;
  PrintOptions po;
  print_matrix(os, "weights", m, {"The", "garçon"}, {"The", "garçon"}, po);
  const std::string s = os.str();
  CHECK(s == "weights  (2 × 2)\n"
             "          The garçon\n"
             "The    0.5000   -inf\n"
             "garçon 0.3333 0.0000\n");
}

TEST_CASE("wide matrices get an ellipsis column unless --full") {
  Matrix m = Matrix::from_shape({1, 40});
  for (std::size_t j = 0; j < 40; ++j) m(0, j) = static_cast<float>(j);
  PrintOptions po;
  po.max_width = 60;
  std::ostringstream os;
  print_matrix(os, "wide", m, {"r"}, {}, po);
  std::string line;
  std::istringstream in(os.str());
  std::getline(in, line);
  CHECK(line.find("--full") != std::string::npos);
  while (std::getline(in, line)) {
    CHECK(display_width(line) <= 60);
    CHECK(line.find("…") != std::string::npos);
    CHECK(line.find("39") != std::string::npos);  // the last column is kept
  }
  po.full = true;
  std::ostringstream full;
  print_matrix(full, "wide", m, {"r"}, {}, po);
  CHECK(full.str().find("…") == std::string::npos);
  CHECK(full.str().find("20.0000") != std::string::npos);
}

TEST_CASE("no escape codes without colour, heatmap escapes with it") {
  Matrix m = Matrix::from_shape({1, 2});
  m(0, 0) = 0.2f;
  m(0, 1) = 0.8f;
  PrintOptions po;
  po.heatmap = true;
  std::ostringstream plain;
  print_matrix(plain, "w", m, {}, {}, po);
  CHECK(plain.str().find('\x1b') == std::string::npos);
  po.color = ColorMode::Ansi256;
  std::ostringstream col;
  print_matrix(col, "w", m, {}, {}, po);
  CHECK(col.str().find("\x1b[") != std::string::npos);
}

TEST_CASE("UTF-8 display width and fitting") {
  CHECK(display_width("garçon") == 6);
  CHECK(display_width("entraîne") == 8);
  CHECK(fit_width("entraîne", 5) == "entr…");
  CHECK(fit_width("chiot", 5) == "chiot");
}

TEST_CASE("visible_controls shows control characters and bad bytes, keeps text") {
  CHECK(visible_controls("garçon, l'animal") == "garçon, l'animal");
  CHECK(visible_controls("a\x1b[2Jb") == "a\\x1b[2Jb");
  CHECK(visible_controls(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(visible_controls("tab\there") == "tab\there");
  CHECK(visible_controls("two\nlines") == "two\\x0alines");
  CHECK(visible_controls("two\nlines", true) == "two\nlines");
  CHECK(visible_controls("del\x7f") == "del\\x7f");
  CHECK(visible_controls("c1 \xc2\x9b csi") == "c1 \\u009b csi");
  CHECK(visible_controls("bad \xff\xc3 utf8") == "bad \\xff\\xc3 utf8");
  CHECK(visible_controls("\xc2\xa0nbsp") == "\xc2\xa0nbsp");  // U+00A0 is not a control
}

TEST_CASE("display_width and fit_width: escape sequences take no columns and are never cut") {
  const std::string red = "\x1b[31mred\x1b[0m";
  CHECK(display_width(red) == 3);
  CHECK(fit_width(red, 3) == red);
  const std::string cut = fit_width("\x1b[31mcoloured\x1b[0m", 4);
  CHECK(cut == "\x1b[31mcol\x1b[0m…");  // the colour is reset before the ellipsis
  CHECK(fit_width("garçon", 4) == "gar…");
}

TEST_CASE("visible_controls shows the bidirectional overrides and isolates (\"Trojan source\")") {
  CHECK(attnlab::visible_controls("a\u202eb\u2066c\u2069d\u202ae") == "a\\u202eb\\u2066c\\u2069d\\u202ae");
  CHECK(attnlab::visible_controls("\u2014 \u2065 \u202f") == "\u2014 \u2065 \u202f");  // neighbours stay
}
