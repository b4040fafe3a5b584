// Mutant: keeps a running maximum but never rescales the earlier sum and accumulator.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix attention_online(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t block) {
  const std::size_t n = q.rows, m = k.rows, d_k = q.cols, d_v = v.cols;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_k));
  std::vector<float> mx(n, -std::numeric_limits<float>::infinity()), sum(n, 0.0f);
  Matrix acc(n, d_v);         // running Σ exp(s − mx)·v_j per query row
  Matrix s(n, block);         // one block of scores: n × block, never n × m
  for (std::size_t start = 0; start < m; start += block) {
    const std::size_t len = std::min(block, m - start);
    for (std::size_t i = 0; i < n; ++i) {
      float block_max = -std::numeric_limits<float>::infinity();
      for (std::size_t b = 0; b < len; ++b) {
        float dot = 0.0f;
        for (std::size_t t = 0; t < d_k; ++t) dot += q(i, t) * k(start + b, t);
        s(i, b) = dot * scale;
        block_max = std::max(block_max, s(i, b));
      }
      const float new_max = std::max(mx[i], block_max);
      // Rescale what was accumulated under the old maximum: exp(s − old) = exp(s − new)·exp(new − old).
      const float correction = 1.0f;  // the bug: should be exp(mx[i] - new_max)
      sum[i] *= correction;
      for (std::size_t t = 0; t < d_v; ++t) acc(i, t) *= correction;
      for (std::size_t b = 0; b < len; ++b) {
        const float e = std::exp(s(i, b) - new_max);
        sum[i] += e;
        for (std::size_t t = 0; t < d_v; ++t) acc(i, t) += e * v(start + b, t);
      }
      mx[i] = new_max;
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < d_v; ++t) acc(i, t) /= sum[i];
  return acc;
}

}  // namespace ex
