#pragma once
// Token embeddings and sinusoidal positions on the GPU, mirroring model::positional_encoding,
// embedding_forward and embedding_backward (backend/cpu/ops.hpp).
//
// Shape legend: B batch, T tokens per sequence, C channels (d_model), V vocabulary, L positions.
//   tokens  B × T int32          wte, dwte  V × C          pe  L × C (L ≥ T)          out, dout  (B·T) × C
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

// dwte[tokens[b,t], :] += dout[b,t,:] · scale, scattered with atomicAdd (a token that occurs twice
// gets both contributions; their order, and so the last bits of the sum, may vary between runs).
// Token ids outside [0, V) are skipped.
void embedding_backward(float* dwte, const float* dout, const int* tokens, int B, int T, int C, int V, float scale,
                        Stream stream = nullptr);

}  // namespace attnlab::cuda
