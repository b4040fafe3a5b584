#pragma once
// The one host-side table the model needs from outside the backends: sinusoidal positional encoding,
// interleaved as in the paper,
//   PE(pos, 2i) = sin(pos / 10000^(2i/C)),   PE(pos, 2i+1) = cos(pos / 10000^(2i/C)),
// as a max_len × C row-major table. The model builds it once and uploads it to its backend; the
// lessons print it; the CUDA backend's kernel (backend/cuda/embedding.cu) computes the same values
// on the device. It lives with the backend interface so that the model, the lessons and every backend
// may use it without the model knowing where a backend's code lives.
#include <cmath>
#include <cstddef>
#include <vector>

namespace attnlab::backend {

template <typename T>
std::vector<T> positional_encoding(int max_len, int C) {
  std::vector<T> pe(static_cast<std::size_t>(max_len) * static_cast<std::size_t>(C));
  for (int pos = 0; pos < max_len; ++pos) {
    for (int i = 0; 2 * i < C; ++i) {
      // Computed in double so the float table is correctly rounded.
      const double angle = pos / std::pow(10000.0, (2.0 * i) / C);
      pe[static_cast<std::size_t>(pos) * C + 2 * i] = static_cast<T>(std::sin(angle));
      if (2 * i + 1 < C) pe[static_cast<std::size_t>(pos) * C + 2 * i + 1] = static_cast<T>(std::cos(angle));
    }
  }
  return pe;
}

}  // namespace attnlab::backend
