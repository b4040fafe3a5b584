#pragma once
// Token embeddings and sinusoidal positions on the GPU, mirroring model::positional_encoding,
// embedding_forward and embedding_backward (backend/cpu/ops.hpp).
//
// Shape legend: B batch, T tokens per sequence, C channels (d_model), V vocabulary, L positions.
//   tokens  B × T int32          wte, dwte  V × C          pe  L × C (L ≥ T)          out, dout  (B·T) × C
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
// by token id on the host (the token ids are few: B·T ints), then one block per distinct token walks
// its group in order, one thread per column.
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

// All of it: downloads the tokens (synchronising), groups them, uploads the grouping to temporary
// device arrays and waits for the kernel before freeing them. For tests and one-off calls; the
// backend (cuda_backend.cu) keeps its grouping buffers between calls instead.
void embedding_backward(float* dwte, const float* dout, const int* tokens, int B, int T, int C, int V, float scale,
                        Stream stream = nullptr);

}  // namespace attnlab::cuda
