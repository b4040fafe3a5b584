#pragma once
// CUDA backend: the masked, numerically stable row softmax on a GPU.
//
// Shape legend (same as core/attention.hpp; row-vector convention, one query per row):
//   n   query tokens (rows of the scores)        m   key tokens (columns of the scores)
//   scores  n × m   scaled scores Q·Kᵀ/√d_k, float32, row-major
//   mask    n × m   1 = query i may attend to key j, 0 = key j is hidden from query i (optional)
//   result  n × m   weights; each row sums to 1 over its visible keys, hidden keys get exactly 0
//
// This header is plain C++ on purpose: it includes no CUDA header, so the CLI and the tests compile
// with the ordinary C++ compiler and only src/backend/cuda/softmax.cu goes through nvcc. All device
// memory is allocated, copied and freed inside the calls below; callers only ever see host
// matrices.
//
// Errors: every CUDA call is checked. A failure (no driver, out of memory, a bad launch) throws
// attnlab::RuntimeError naming the file, line and CUDA's own error string; bad shapes throw
// ShapeError and inf/NaN scores throw NumericError, exactly as the CPU softmax_rows does.
#include <cstddef>
#include <string>
#include <vector>

#include "core/matrix.hpp"

namespace attnlab::cuda {

// (Whether a device is there at all: cuda::cuda_device_available, backend/cuda/device.hpp.)


// Row softmax on the GPU with the same semantics as the CPU path softmax_rows(apply_mask(scores,
// mask)): within row i only the visible keys (mask(i, j) != 0, or every key when mask is null) take
// part; the row's max over those is subtracted before exponentiating, so nothing overflows; hidden
// keys get weight exactly 0. A row with no visible key (or whose visible scores are all −inf)
// yields all-zero weights, never NaN, and its index is appended to *fully_masked_rows (when given)
// in increasing order. Throws ShapeError if the mask is not n × m, NumericError if a visible score
// is +inf or NaN, RuntimeError if any CUDA call fails.
core::Matrix cuda_softmax_rows(const core::Matrix& scores, const core::Mask* mask,
                               std::vector<std::size_t>* fully_masked_rows);

namespace detail {

// The implementation behind cuda_softmax_rows, with one extra switch for the tests. With
// poison_output the device output buffer is filled with NaN (every bit set) before the kernel runs,
// so an element the kernel forgets to write comes back as NaN instead of as whatever cudaMalloc
// happened to hand out (often zeros, which would look like a correct hidden weight). Production
// code calls cuda_softmax_rows, which skips that extra memset.
core::Matrix softmax_rows(const core::Matrix& scores, const core::Mask* mask,
                          std::vector<std::size_t>* fully_masked_rows, bool poison_output);

}  // namespace detail

}  // namespace attnlab::cuda
