#pragma once
// Helpers shared by the computations behind the <!-- show: NAME --> directives
// (shows_basics.cpp: lessons 1–5, shows_advanced.cpp: lessons 6–9).
#include <map>
#include <string>
#include <vector>

#include "lessons/output.hpp"
#include "lessons/session.hpp"
#include "render/matrix_print.hpp"

namespace attnlab::lessons {

inline MatrixItem item(std::string key, std::string title, Matrix m, std::vector<std::string> row_labels,
                       std::vector<std::string> col_labels) {
  MatrixItem it;
  it.key = std::move(key);
  it.title = std::move(title);
  it.m = std::move(m);
  it.row_labels = std::move(row_labels);
  it.col_labels = std::move(col_labels);
  return it;
}

inline MatrixItem weights_item(std::string key, std::string title, Matrix m, std::vector<std::string> row_labels,
                               std::vector<std::string> col_labels) {
  MatrixItem it = item(std::move(key), std::move(title), std::move(m), std::move(row_labels), std::move(col_labels));
  it.weights = true;
  return it;
}

// A heatmap whose scale is symmetric around zero (for signed matrices such as PE or X).
MatrixItem signed_heat_item(std::string key, std::string title, Matrix m, std::vector<std::string> row_labels,
                            std::vector<std::string> col_labels);

// Index of `word` among the tokens, or the middle token when it is absent.
std::size_t focus_index(const std::vector<std::string>& tokens, const std::string& word);

// Row i of a matrix as a 1 × cols matrix.
Matrix row_of(const Matrix& m, std::size_t i);

void register_basic_shows(std::map<std::string, ShowFn>& r);
void register_advanced_shows(std::map<std::string, ShowFn>& r);

}  // namespace attnlab::lessons
