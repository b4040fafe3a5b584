#pragma once
// The two array types of the attention core.
//
// Row-vector convention throughout (as in the lessons): a sequence of n tokens is an n × d matrix,
// one token per row, and a projection is a right-multiplication, Q = X · W_Q with W_Q of shape
// d_model × d_k. Matrices are dense, row-major and contiguous, so they can be handed to BLAS as is.
#include <cstddef>
#include <cstdint>
#include <string>

#include <xtensor/xtensor.hpp>

namespace attnlab::core {

// A float32 matrix, rows × cols, row-major.
using Matrix = xt::xtensor<float, 2>;

// An attention mask, n × m: 1 = query i may attend to key j, 0 = hidden from it.
using Mask = xt::xtensor<std::uint8_t, 2>;

inline std::size_t rows(const Matrix& a) { return a.shape()[0]; }
inline std::size_t cols(const Matrix& a) { return a.shape()[1]; }
inline std::size_t rows(const Mask& a) { return a.shape()[0]; }
inline std::size_t cols(const Mask& a) { return a.shape()[1]; }

// "3 × 4", used in every shape message.
inline std::string shape_str(std::size_t r, std::size_t c) {
  return std::to_string(r) + " × " + std::to_string(c);
}
inline std::string shape_str(const Matrix& a) { return shape_str(rows(a), cols(a)); }
inline std::string shape_str(const Mask& a) { return shape_str(rows(a), cols(a)); }

}  // namespace attnlab::core
