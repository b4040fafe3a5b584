#include "lessons/output.hpp"

#include <algorithm>

#include <cctype>
#include <cmath>
#include <ostream>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "render/matrix_print.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

namespace {

void check_finite(const MatrixItem& it) {
  if (it.broken_demo) return;
  for (std::size_t r = 0; r < core::rows(it.m); ++r)
    for (std::size_t c = 0; c < core::cols(it.m); ++c) {
      const float v = it.m(r, c);
      if (std::isfinite(v) || (it.masked && std::isinf(v) && v < 0)) continue;
      throw NumericError(it.key + "[" + std::to_string(r) + "][" + std::to_string(c) + "] is " +
                         (std::isnan(v) ? "NaN" : "infinite") +
                         ": the numbers overflowed float32; use smaller weights or a smaller --d-model");
    }
}

void check_labels(const MatrixItem& it) {
  if ((!it.row_labels.empty() && it.row_labels.size() != core::rows(it.m)) ||
      (!it.col_labels.empty() && it.col_labels.size() != core::cols(it.m))) {
    throw ShapeError("matrix '" + it.key + "' is " + core::shape_str(it.m) + " but has " + std::to_string(it.row_labels.size()) +
                     " row and " + std::to_string(it.col_labels.size()) + " column labels");
  }
}

// Markdown to terminal text: **bold** becomes bold (or loses its stars without colour).
std::string render_prose(const std::string& md, bool color) {
  std::string out;
  bool bold = false;
  for (std::size_t i = 0; i < md.size(); ++i) {
    if (md.compare(i, 2, "**") == 0) {
      if (color) out += bold ? "\x1b[0m" : "\x1b[1m";
      bold = !bold;
      ++i;
    } else {
      out += md[i];
    }
  }
  if (bold && color) out += "\x1b[0m";
  return out;
}

// Lesson Markdown is hard-wrapped at about 100 columns in its files; on the terminal each paragraph
// is joined and wrapped again to the width (a list item with a hanging indent). Blocks that are laid
// out by hand are left alone: code (fenced or indented), tables, headings, and lines of a paragraph
// that begin with "|" or ">". Widths skip the "**" of bold, which render_prose removes.
std::size_t prose_width(std::string_view word) {
  std::string plain;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word.compare(i, 2, "**") == 0) {
      ++i;
      continue;
    }
    plain += word[i];
  }
  return render::display_width(plain);
}

std::string wrap_words(const std::string& text, std::size_t width, const std::string& first, const std::string& rest) {
  return render::wrap_words(text, width, first, rest, prose_width);
}

}  // namespace

std::string wrap_prose(const std::string& md, std::size_t width) {
  std::vector<std::string> lines;
  {
    std::istringstream in(md);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  auto list_marker = [](const std::string& l) -> std::size_t {  // the marker's width, 0 if none
    std::size_t i = 0;
    while (i < l.size() && l[i] == ' ') ++i;
    if (i + 1 < l.size() && (l[i] == '-' || l[i] == '*') && l[i + 1] == ' ' && l.compare(i, 2, "**") != 0) return i + 2;
    std::size_t d = i;
    while (d < l.size() && std::isdigit(static_cast<unsigned char>(l[d]))) ++d;
    if (d > i && d + 1 < l.size() && (l[d] == '.' || l[d] == ')') && l[d + 1] == ' ') return d + 2;
    return 0;
  };
  auto verbatim = [](const std::string& l) {
    return l.rfind("    ", 0) == 0 || l.rfind("\t", 0) == 0 || l.rfind("|", 0) == 0 || l.rfind("#", 0) == 0 ||
           l.rfind(">", 0) == 0 || l.rfind("<!--", 0) == 0;
  };
  std::string out;
  bool fenced = false;
  for (std::size_t i = 0; i < lines.size();) {
    const std::string& l = lines[i];
    if (l.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || l.rfind("```", 0) == 0 || l.empty() || verbatim(l)) {
      out += l + "\n";
      ++i;
      continue;
    }
    // A paragraph or a list item: this line and the following ones up to a blank line, a verbatim
    // line or the next list item.
    const std::size_t marker = list_marker(l);
    std::string text = l.substr(marker);
    std::size_t j = i + 1;
    while (j < lines.size() && !lines[j].empty() && !verbatim(lines[j]) && lines[j].rfind("```", 0) != 0 &&
           list_marker(lines[j]) == 0) {
      std::size_t k = 0;
      while (k < lines[j].size() && lines[j][k] == ' ') ++k;
      text += ' ';
      text.append(lines[j], k, std::string::npos);
      ++j;
    }
    out += wrap_words(text, width, l.substr(0, marker), std::string(marker, ' ')) + "\n";
    i = j;
  }
  if (!md.empty() && md.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

namespace {

io::OutJson cell_json(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return v;
}

}  // namespace

// ---- Output -------------------------------------------------------------------

void Output::matrix(const MatrixItem& item) {
  check_labels(item);
  check_finite(item);
  do_matrix(item);
}

void Output::side_by_side(const std::vector<MatrixItem>& items) {
  for (const MatrixItem& it : items) {
    check_labels(it);
    check_finite(it);
  }
  do_side_by_side(items);
}

// ---- text -----------------------------------------------------------------------

void TextOutput::begin_lesson(const LessonDoc& doc, const io::OutJson&, const std::string& status) {
  const bool color = rs_.term.color != render::ColorMode::None;
  // Lesson files may come from ATTNLAB_DATA_DIR: their control characters are shown, not obeyed.
  const std::string head = render::visible_controls(fmt::format("Lesson {}: {}", doc.number, doc.title));
  const std::string rule(std::min<std::size_t>(render::display_width(head), rs_.term.width), '=');
  if (color) os_ << "\x1b[1m" << head << "\x1b[0m\n";
  else os_ << head << '\n';
  os_ << rule << '\n';
  // Each status line wrapped like the prose (a model's description runs long).
  const std::size_t width = std::clamp<std::size_t>(rs_.term.width, 20, 100);
  std::istringstream lines(render::visible_controls(status, /*keep_newlines=*/true));
  for (std::string l; std::getline(lines, l);) os_ << wrap_words(l, width, "", "") << '\n';
  os_ << '\n';
}

void TextOutput::prose(const std::string& markdown) {
  // Wrapped to the terminal, at most 100 columns (longer lines are harder to read).
  const std::size_t width = std::clamp<std::size_t>(rs_.term.width, 20, 100);
  os_ << render_prose(wrap_prose(render::visible_controls(markdown, /*keep_newlines=*/true), width),
                      rs_.term.color != render::ColorMode::None)
      << '\n';
}

void TextOutput::begin_step(std::size_t index, std::size_t count, const std::string& title) {
  std::string head = fmt::format("── Step {}/{}: {} ", index + 1, count, render::visible_controls(title));
  if (render::display_width(head) > rs_.term.width) head = render::wrap_words(head, rs_.term.width, "", "   ");
  // A wrapped header gets no rule.
  const std::size_t w = head.find('\n') == std::string::npos ? render::display_width(head) : SIZE_MAX;
  const std::string line = head + (w < std::min<std::size_t>(rs_.term.width, 80) ? [&] {
    std::string s;
    for (std::size_t i = w; i < std::min<std::size_t>(rs_.term.width, 80); ++i) s += "─";
    return s;
  }() : std::string());
  if (rs_.term.color != render::ColorMode::None) os_ << "\x1b[1;36m" << line << "\x1b[0m\n\n";
  else os_ << line << "\n\n";
}

void TextOutput::end_lesson() { os_ << '\n'; }

void TextOutput::line(const std::string& text) {
  // Computed lines are wrapped to the terminal like the prose; a continuation is indented two more
  // columns than the line's own indent, so an indented list of measurements stays readable.
  std::istringstream lines(render::visible_controls(text, /*keep_newlines=*/true));
  std::string l;
  bool any = false;
  while (std::getline(lines, l)) {
    any = true;
    if (render::display_width(l) <= rs_.term.width) {
      os_ << l << '\n';
      continue;
    }
    const std::size_t indent = l.find_first_not_of(' ') == std::string::npos ? 0 : l.find_first_not_of(' ');
    os_ << render::wrap_words(l.substr(indent), rs_.term.width, std::string(indent, ' '), std::string(indent + 2, ' ')) << '\n';
  }
  if (!any) os_ << '\n';
}

// Matrices taller than this (a 64-row weight matrix) show their first rows, "⋮" and the last two;
// --full shows every row.
constexpr std::size_t kMaxRows = 24;

namespace {
std::vector<std::size_t> focus_indices(const MatrixItem& it) {
  std::vector<std::size_t> out;
  for (std::size_t j = 0; j < it.col_labels.size(); ++j)
    if (std::find(it.focus_cols.begin(), it.focus_cols.end(), it.col_labels[j]) != it.focus_cols.end()) out.push_back(j);
  return out;
}
}  // namespace

std::string TextOutput::render(const MatrixItem& it, bool as_heatmap, bool short_title) const {
  std::ostringstream ss;
  std::string title = short_title ? std::string("the same as a heatmap") : it.title;
  if (it.broken_demo) title = "WRONG (demonstration of the failure, not an answer): " + title;
  if (as_heatmap) {
    render::HeatmapOptions ho;
    ho.lo = it.lo;
    ho.hi = it.hi;
    ho.max_width = rs_.term.width;
    ho.max_rows = kMaxRows;
    ho.keep_cols = focus_indices(it);
    ho.weights = it.weights;
    ho.full = rs_.full;
    ho.color = rs_.term.color;
    print_heatmap(ss, title, it.m, it.row_labels, it.col_labels, ho);
  } else {
    render::PrintOptions po;
    po.precision = it.precision >= 0 ? it.precision : rs_.precision;
    po.max_width = rs_.term.width;
    po.max_rows = kMaxRows;
    po.keep_cols = focus_indices(it);
    po.full = rs_.full;
    po.color = rs_.term.color;
    po.heatmap = it.weights;
    render::print_matrix(ss, title, it.m, it.row_labels, it.col_labels, po);
  }
  return ss.str();
}

void TextOutput::do_matrix(const MatrixItem& it) {
  const bool heat = it.weights || it.heatmap;
  if (heat) {
    render::print_side_by_side(os_, {render(it, false), render(it, true, true)}, 4, rs_.term.width, false);
  } else {
    os_ << render(it, false);
  }
  os_ << '\n';
}

void TextOutput::do_side_by_side(const std::vector<MatrixItem>& items) {
  std::vector<std::string> blocks;
  for (const MatrixItem& it : items) blocks.push_back(render(it, false));
  render::print_side_by_side(os_, blocks, 2, rs_.term.width, rs_.full);
  os_ << '\n';
  bool any_heat = false;
  for (const MatrixItem& it : items) any_heat = any_heat || it.weights || it.heatmap;
  if (any_heat) {
    blocks.clear();
    for (const MatrixItem& it : items)
      if (it.weights || it.heatmap) blocks.push_back(render(it, true));
    render::print_side_by_side(os_, blocks, 2, rs_.term.width, rs_.full);
    os_ << '\n';
  }
}

// ---- JSON -----------------------------------------------------------------------

JsonOutput::JsonOutput(std::ostream& os) : os_(os) {
  doc_ = io::OutJson::object();
  doc_["attnlab_version"] = ATTNLAB_VERSION;
  doc_["lessons"] = io::OutJson::array();
}

void JsonOutput::begin_lesson(const LessonDoc& doc, const io::OutJson& settings, const std::string& status) {
  lesson_ = io::OutJson::object();
  lesson_["number"] = doc.number;
  lesson_["name"] = doc.slug;
  lesson_["title"] = doc.title;
  lesson_["summary"] = doc.summary;
  lesson_["settings"] = settings;
  lesson_["status"] = status;
  lesson_["intro"] = io::OutJson::array();
  lesson_["steps"] = io::OutJson::array();
}

io::OutJson& JsonOutput::blocks() {
  return lesson_["steps"].empty() ? lesson_["intro"] : lesson_["steps"].back()["blocks"];
}

void JsonOutput::prose(const std::string& markdown) {
  blocks().push_back(io::OutJson{{"type", "text"}, {"text", markdown}});
}

void JsonOutput::begin_step(std::size_t, std::size_t, const std::string& title) {
  lesson_["steps"].push_back(io::OutJson{{"title", title}, {"blocks", io::OutJson::array()}});
}

void JsonOutput::begin_show(const std::string& name) {
  show_ = io::OutJson{{"type", "show"}, {"name", name}, {"matrices", io::OutJson::array()}, {"lines", io::OutJson::array()},
                  {"values", io::OutJson::object()}};
  in_show_ = true;
}

void JsonOutput::end_show() {
  blocks().push_back(std::move(show_));
  in_show_ = false;
}

void JsonOutput::end_lesson() { doc_["lessons"].push_back(std::move(lesson_)); }

void JsonOutput::line(const std::string& text) {
  if (in_show_) show_["lines"].push_back(text);
}

void JsonOutput::value(const std::string& key, io::OutJson v) {
  if (in_show_) show_["values"][key] = std::move(v);
}

void JsonOutput::do_matrix(const MatrixItem& it) {
  io::OutJson j = io::OutJson::object();
  j["key"] = it.key;
  j["title"] = it.title;
  j["rows"] = core::rows(it.m);
  j["cols"] = core::cols(it.m);
  j["row_labels"] = it.row_labels.empty() ? io::default_labels(core::rows(it.m)) : it.row_labels;
  j["col_labels"] = it.col_labels.empty() ? io::default_labels(core::cols(it.m)) : it.col_labels;
  io::OutJson data = io::OutJson::array();
  for (std::size_t r = 0; r < core::rows(it.m); ++r) {
    io::OutJson row = io::OutJson::array();
    for (std::size_t c = 0; c < core::cols(it.m); ++c) row.push_back(cell_json(it.m(r, c)));
    data.push_back(std::move(row));
  }
  j["data"] = std::move(data);
  if (it.weights) j["kind"] = "weights";
  if (it.broken_demo) j["broken_demo"] = true;
  if (in_show_) show_["matrices"].push_back(std::move(j));
}

void JsonOutput::do_side_by_side(const std::vector<MatrixItem>& items) {
  for (const MatrixItem& it : items) do_matrix(it);
}

void JsonOutput::finish() {
  os_ << io::dump_json(doc_);
  os_.flush();
}

}  // namespace attnlab::lessons
