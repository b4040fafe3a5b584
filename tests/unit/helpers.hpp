#pragma once
// Shared helpers for the unit tests: random matrices, conversions to the reference's types, and a
// relative-error measure.
#include <algorithm>
#include <cmath>
#include <random>

#include "core/attention.hpp"
#include "reference/naive_attention.hpp"
#include "util/error.hpp"

namespace attnlab::test {

inline core::Matrix random_matrix(std::mt19937& rng, std::size_t r, std::size_t c, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  core::Matrix m = core::Matrix::from_shape({r, c});
  for (auto& v : m) v = dist(rng);
  return m;
}

inline core::Matrix make(std::initializer_list<std::initializer_list<float>> rows_) {
  const std::size_t r = rows_.size(), c = rows_.begin()->size();
  core::Matrix m = core::Matrix::from_shape({r, c});
  std::size_t i = 0;
  for (const auto& row : rows_) {
    std::size_t j = 0;
    for (float v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

inline reference::Mat to_ref(const core::Matrix& m) {
  reference::Mat out(core::rows(m), std::vector<double>(core::cols(m)));
  for (std::size_t i = 0; i < core::rows(m); ++i)
    for (std::size_t j = 0; j < core::cols(m); ++j) out[i][j] = m(i, j);
  return out;
}

inline reference::MaskMat to_ref(const core::Mask& m) {
  reference::MaskMat out(core::rows(m), std::vector<std::uint8_t>(core::cols(m)));
  for (std::size_t i = 0; i < core::rows(m); ++i)
    for (std::size_t j = 0; j < core::cols(m); ++j) out[i][j] = m(i, j);
  return out;
}

// max |a − b| / max |b| (with a floor so all-zero references compare absolutely).
inline double rel_error(const core::Matrix& a, const reference::Mat& b) {
  if (core::rows(a) != b.size()) return INFINITY;
  double diff = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (core::cols(a) != b[i].size()) return INFINITY;
    for (std::size_t j = 0; j < b[i].size(); ++j) {
      const double d = std::fabs(static_cast<double>(a(i, j)) - b[i][j]);
      if (std::isnan(d)) return INFINITY;
      diff = std::max(diff, d);
      ref = std::max(ref, std::fabs(b[i][j]));
    }
  }
  return diff / std::max(ref, 1e-12);
}

inline double rel_error(const core::Matrix& a, const core::Matrix& b) { return rel_error(a, to_ref(b)); }

}  // namespace attnlab::test
