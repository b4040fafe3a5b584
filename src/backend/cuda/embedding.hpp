#pragma once
// Token embeddings and sinusoidal positions on the GPU, mirroring model::positional_encoding,
// embedding_forward and embedding_backward (backend/cpu/ops.hpp).
//
// Shape legend: B batch, T tokens per sequence, C channels (d_model), V vocabulary, L positions.
//   tokens  B × T int32          wte, dwte  V × C          pe  L × C (L ≥ T)          out, dout  (B·T) × C
#include <cstddef>
#include <vector>

#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

// The paper's interleaved table: pe[pos, 2i] = sin(pos / 10000^(2i/C)), pe[pos, 2i+1] = cos(…),
// computed in double and rounded to float, like the CPU's (so the two tables agree to the last bit
// or one rounding step).
void positional_encoding(float* pe, int L, int C, Stream stream = nullptr);

// out[b,t,:] = wte[tokens[b,t], :] · scale + pe[t, :]   (scale = √C in the paper). A token id outside
// [0, V) gives a row of NaN (the CPU would read out of bounds), so it cannot pass unnoticed.
void embedding_forward(float* out, const int* tokens, const float* wte, const float* pe, int B, int T, int C, int V,
                       float scale, Stream stream = nullptr);

// The backward, deterministically: dwte[tokens[b,t], :] += dout[b,t,:] · scale, where every row of dwte
// sums its contributions in token order (b·T + t increasing), exactly as the CPU loop does, so the
// result repeats bit for bit and matches the CPU's (no float atomics). The rows of dout are grouped
// by token id (below: on the host, or for up to 16,384 rows on the device), then one block per
// distinct token walks its group in order, one thread per column.
//
// The grouping, a stable counting sort of the row indices by token id (CSR):
//   rows    the B·T row indices r, grouped by tokens[r], increasing within each group
//   starts  groups + 1 offsets into rows: group g is rows[starts[g] .. starts[g+1])
//   ids     the token id of each group
// Token ids outside [0, V) are left out (their rows add nothing), as the forward's NaN rows say.
struct TokenGroups {
  std::vector<int> rows, starts, ids;
  int groups() const { return static_cast<int>(ids.size()); }
};
TokenGroups group_by_token(const std::vector<int>& tokens, int V);

// The kernel on a grouping already on the device (rows, starts, ids as above).
void embedding_backward_grouped(float* dwte, const float* dout, const int* rows, const int* starts, const int* ids,
                                int groups, int C, float scale, Stream stream = nullptr);

// The grouping done on the device instead, so that nothing waits for the host: one block sorts the
// keys tokens[r]·n + r (n = B·T; an id outside [0, V) sorts last and adds nothing) in shared memory,
// which groups the rows by id, increasing within each group, as group_by_token does; then one block
// per group start adds its rows as embedding_backward_grouped does. The same sums in the same order:
// the same bits as the host's grouping (tests/gpu/test_cuda_kernels.cpp holds them to it). Possible
// for 1 ≤ n ≤ kMaxDeviceGroupedRows rows with V·n < 2^32 (the keys are 32-bit); otherwise it throws
// ShapeError, and callers group on the host.
//   keys    n unsigned ints of scratch (the sorted keys)
//   groups  null, or one int the sort sets to the number of distinct valid ids (the op timer's
//           bytes: each such row of dwte is read and written once)
constexpr int kMaxDeviceGroupedRows = 16384;  // 64 KB of shared memory; Transformer-base's 16 × 128 is 2,048
bool embedding_backward_groups_on_device(std::size_t rows, int V);
void embedding_backward_sorted(float* dwte, const float* dout, const int* tokens, int B, int T, int C, int V,
                               float scale, unsigned* keys, int* groups = nullptr, Stream stream = nullptr);

// All of it: downloads the tokens (synchronising), groups them, uploads the grouping to temporary
// device arrays and waits for the kernel before freeing them. For tests and one-off calls; the
// backend (cuda_backend.cu) keeps its grouping buffers between calls instead.
void embedding_backward(float* dwte, const float* dout, const int* tokens, int B, int T, int C, int V, float scale,
                        Stream stream = nullptr);

}  // namespace attnlab::cuda
