#pragma once
// The only header an exercise file needs: a small row-major float matrix and two helpers.
//
// It is deliberately light (no xtensor, no BLAS) so that `attnlab check` compiles your exercise.cpp in
// about a second. Conventions are those of the lessons: one token per row, so a sequence of n tokens
// of width d is an n × d Matrix, and a projection is a right-multiplication Q = X · W_Q.
//
//   Matrix a(2, 3);          // 2 × 3, all zeros
//   a(0, 2) = 1.5f;          // row 0, column 2
//   a.rows, a.cols           // its shape
//   a.data                   // the rows × cols numbers, row after row (a(i, j) is data[i * cols + j])
//
// a(i, j) checks its indices: reading outside the matrix throws an exception that names the matrix
// shape and the index, instead of silently reading garbage. The grader reports it as a failed test.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace ex {

struct Matrix;
// The grader names the matrices it passes to your function (scaled_scores, q, k, …) through this hook,
// so that an index error can say which matrix it was. You never need to set it.
inline const char* (*matrix_name)(const Matrix*) = nullptr;

struct Matrix {
  std::size_t rows = 0, cols = 0;
  std::vector<float> data;  // row-major: element (i, j) at data[i * cols + j]

  Matrix() = default;
  Matrix(std::size_t r, std::size_t c, float fill = 0.0f) : rows(r), cols(c), data(r * c, fill) {}

  float& operator()(std::size_t i, std::size_t j) { return data[index(i, j)]; }
  float operator()(std::size_t i, std::size_t j) const { return data[index(i, j)]; }

  std::string shape() const { return std::to_string(rows) + " × " + std::to_string(cols); }

 private:
  std::size_t index(std::size_t i, std::size_t j) const {
    if (i >= rows || j >= cols || data.size() != rows * cols) {
      const char* name = matrix_name ? matrix_name(this) : nullptr;
      throw std::out_of_range("index (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside " +
                              (name ? "the " + shape() + " input matrix '" + name + "'" : "a " + shape() + " matrix your code made") +
                              (data.size() != rows * cols ? ", whose data has the wrong length" : ""));
    }
    return i * cols + j;
  }
};

// a · b: a is r × k, b is k × c; the result is r × c. Throws when the inner sizes differ.
inline Matrix matmul(const Matrix& a, const Matrix& b) {
  if (a.cols != b.rows) {
    throw std::invalid_argument("matmul: cannot multiply " + a.shape() + " by " + b.shape() +
                                " (the first matrix's columns must equal the second's rows)");
  }
  Matrix out(a.rows, b.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t t = 0; t < a.cols; ++t) {
      const float ait = a.data[i * a.cols + t];
      for (std::size_t j = 0; j < b.cols; ++j) out.data[i * out.cols + j] += ait * b.data[t * b.cols + j];
    }
  return out;
}

// aᵀ: r × c becomes c × r.
inline Matrix transpose(const Matrix& a) {
  Matrix out(a.cols, a.rows);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) out.data[j * out.cols + i] = a.data[i * a.cols + j];
  return out;
}

// Gradients of one attention head (exercise: attention backward).
struct AttentionGrads {
  Matrix d_q, d_k, d_v;  // same shapes as q, k, v
};

}  // namespace ex
