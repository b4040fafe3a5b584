#pragma once
// Cross-entropy with label smoothing on the GPU, mirroring cpu::cross_entropy_forward /
// cross_entropy_backward / softmax_from_lse (backend/cpu/ops.hpp): the target distribution is
// (1 − ε)·onehot(target) + ε/V on every class, as torch.nn.CrossEntropyLoss(label_smoothing=ε)
// defines it, and rows whose target is ignore_index (padding) carry no loss and no gradient. Like the
// CPU, the forward keeps only each row's log-sum-exp (never an N × V probability matrix) and the
// backward writes its gradient from the logits and that lse.
//
// Shape legend: N rows (B·T tokens), V vocabulary.
//   logits, dlogits, probs  N × V        targets  N int32        lse  N        row_loss  N doubles
#include <cstddef>
#include <cstdint>

#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

// lse[r] = log Σ_c exp(logits[r, c]) (written); row_loss[r] = −(1 − ε)·log p_target − ε/V·Σ_c log p_c
// in double (written; 0 for an ignored row, NaN for a target outside [0, V)). One block per row; the
// row's sums are accumulated in double, like the CPU's. The mean over rows is left to the host
// (backend::row_loss_mean), so the loss is the same sum in the same order as on the CPU.
void cross_entropy_forward(float* lse, double* row_loss, const float* logits, const int* targets, int N, int V,
                           float smoothing, int ignore_index, Stream stream = nullptr);

// dlogits = (exp(logits − lse) − target distribution) · dloss / count, written (not accumulated),
// zero for ignored rows and everywhere when count is 0. dlogits may be logits (in place: each
// element is read and then written by the same thread).
void cross_entropy_backward(float* dlogits, const float* logits, const float* lse, const int* targets, int N, int V,
                            float smoothing, int ignore_index, int count, float dloss, Stream stream = nullptr);

// The same two on bf16 logits and dlogits (raw bits; backend::Ops::cross_entropy_forward_bf16 /
// backward_bf16): the logits widened as read, the gradient computed in float32 and stored rounded.
void cross_entropy_forward_bf16(float* lse, double* row_loss, const std::uint16_t* logits, const int* targets, int N,
                                int V, float smoothing, int ignore_index, Stream stream = nullptr);
void cross_entropy_backward_bf16(std::uint16_t* dlogits, const std::uint16_t* logits, const float* lse,
                                 const int* targets, int N, int V, float smoothing, int ignore_index, int count,
                                 float dloss, Stream stream = nullptr);

// probs = exp(logits − lse), row by row (written).
void softmax_from_lse(float* probs, const float* logits, const float* lse, int N, int V, Stream stream = nullptr);

}  // namespace attnlab::cuda
