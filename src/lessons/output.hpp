#pragma once
// Where a lesson's steps go: a terminal (TextOutput) or one JSON document (JsonOutput).
//
// The runner walks lesson.md and calls begin_lesson / begin_step / prose / begin_show; the
// computations behind the show directives call matrix(), side_by_side() and line(). Every matrix is
// checked before it is shown: a non-finite number is an error (NumericError), except −inf in a
// matrix marked `masked` and anything in a matrix marked `broken_demo` (the naive softmax of
// lesson 4, which exists to show the failure and is labelled as wrong wherever it appears).
#include <iosfwd>
#include <string>
#include <vector>

// The full header, not json_fwd.hpp: JsonOutput holds its documents (OutJson) by value.
#include <nlohmann/json.hpp>

#include "core/matrix.hpp"
#include "io/trace_json.hpp"
#include "lessons/lesson_doc.hpp"
#include "render/terminal.hpp"

namespace attnlab::lessons {

// Lesson-style Markdown prose (paragraphs, "- " and "1. " lists, code kept verbatim) re-wrapped to
// `width` columns; `attnlab hint` wraps the hints with it too.
std::string wrap_prose(const std::string& md, std::size_t width);

struct MatrixItem {
  std::string key;    // stable name in JSON, e.g. "scores"
  std::string title;  // printed above the matrix
  core::Matrix m;
  std::vector<std::string> row_labels, col_labels;  // empty = 0, 1, 2, ...
  bool weights = false;       // attention weights in [0, 1]: coloured cells and a heatmap
  bool heatmap = false;       // also draw a heatmap over [lo, hi]
  float lo = 0.0f, hi = 1.0f;
  bool masked = false;        // may hold −inf (hidden positions)
  bool broken_demo = false;   // a deliberately wrong result: may hold inf/NaN, flagged in text and JSON
  int precision = -1;         // −1: the output's default
  std::vector<std::string> focus_cols;  // column labels the step is about: kept when columns must be left out
};

struct RenderSettings {
  render::Terminal term;
  bool full = false;
  int precision = 3;
};

class Output {
 public:
  virtual ~Output() = default;
  virtual void begin_lesson(const LessonDoc& doc, const io::OutJson& settings, const std::string& status) = 0;
  virtual void prose(const std::string& markdown) = 0;
  virtual void begin_step(std::size_t index, std::size_t count, const std::string& title) = 0;
  virtual void begin_show(const std::string& name) = 0;
  virtual void end_show() = 0;
  virtual void end_lesson() = 0;
  // Writes everything out (JSON prints its one document here).
  virtual void finish() {}

  // Checks the numbers, then renders.
  void matrix(const MatrixItem& item);
  // Several matrices next to each other when the terminal is wide enough, else one below another.
  void side_by_side(const std::vector<MatrixItem>& items);
  // A computed line of text (a measurement, a percentage).
  virtual void line(const std::string& text) = 0;
  // A named scalar or small structure for JSON (text output shows it through line() instead).
  virtual void value(const std::string& key, io::OutJson v) = 0;

 protected:
  virtual void do_matrix(const MatrixItem& item) = 0;
  virtual void do_side_by_side(const std::vector<MatrixItem>& items) = 0;
};

class TextOutput : public Output {
 public:
  TextOutput(std::ostream& os, RenderSettings rs) : os_(os), rs_(rs) {}
  void begin_lesson(const LessonDoc& doc, const io::OutJson& settings, const std::string& status) override;
  void prose(const std::string& markdown) override;
  void begin_step(std::size_t index, std::size_t count, const std::string& title) override;
  void begin_show(const std::string&) override {}
  void end_show() override {}
  void end_lesson() override;
  void line(const std::string& text) override;
  void value(const std::string&, io::OutJson) override {}
  std::ostream& stream() { return os_; }
  const RenderSettings& settings() const { return rs_; }

 protected:
  void do_matrix(const MatrixItem& item) override;
  void do_side_by_side(const std::vector<MatrixItem>& items) override;

 private:
  std::string render(const MatrixItem& item, bool as_heatmap, bool short_title = false) const;
  std::ostream& os_;
  RenderSettings rs_;
};

// {"attnlab_version", "lessons": [{"number", "name", "title", "summary", "settings", "status",
//   "steps": [{"title", "blocks": [{"type": "text", "text"} | {"type": "show", "name",
//   "matrices": [{"key", "title", "rows", "cols", "row_labels", "col_labels", "data",
//   "broken_demo"?}], "lines": [...], "values": {...}}]}]}]}
// Matrix entries that are not finite are written as the strings "-inf", "inf" or "nan".
class JsonOutput : public Output {
 public:
  explicit JsonOutput(std::ostream& os);
  void begin_lesson(const LessonDoc& doc, const io::OutJson& settings, const std::string& status) override;
  void prose(const std::string& markdown) override;
  void begin_step(std::size_t index, std::size_t count, const std::string& title) override;
  void begin_show(const std::string& name) override;
  void end_show() override;
  void end_lesson() override;
  void line(const std::string& text) override;
  void value(const std::string& key, io::OutJson v) override;
  void finish() override;

 protected:
  void do_matrix(const MatrixItem& item) override;
  void do_side_by_side(const std::vector<MatrixItem>& items) override;

 private:
  io::OutJson& blocks();
  std::ostream& os_;
  io::OutJson doc_, lesson_, show_;
  bool in_show_ = false;
};

}  // namespace attnlab::lessons
