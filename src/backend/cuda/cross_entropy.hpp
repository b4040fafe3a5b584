#pragma once
// Cross-entropy with label smoothing on the GPU, mirroring model::cross_entropy_forward /
// cross_entropy_backward (backend/cpu/ops.hpp): the target distribution is (1 − ε)·onehot(target) + ε/V on
// every class, as torch.nn.CrossEntropyLoss(label_smoothing=ε) defines it, and rows whose target is
// ignore_index (padding) carry no loss and no gradient.
// One difference from the CPU path: these kernels save the N × V probabilities and their backward
// accumulates into dlogits; the CPU forward keeps only each row's log-sum-exp and its backward writes
// (tests/gpu/test_cuda_kernels.cpp rebuilds the probabilities and the accumulation to compare).
//
// Shape legend: N rows (B·T tokens), V vocabulary.
//   logits, probs, dlogits  N × V        targets  N int32        row_loss  N        loss, count  1
#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

// probs = softmax(logits) per row (saved for the backward); row_loss[r] = −(1 − ε)·log p_target −
// ε/V·Σ_c log p_c (0 for an ignored row); then *loss = mean of row_loss over the non-ignored rows
// (0 when there are none) and *count = their number, both written on the device (loss and count are
// device pointers to one value each), so nothing waits for the GPU. Row sums are accumulated in double,
// like the CPU's. A target outside [0, V) that is not ignore_index makes that row's loss NaN.
void cross_entropy_forward(float* probs, float* row_loss, float* loss, int* count, const float* logits,
                           const int* targets, int N, int V, float smoothing, int ignore_index,
                           Stream stream = nullptr);

// dlogits += (probs − target distribution) · dloss / count for every non-ignored row; nothing when
// *count is 0. count is the device value written by cross_entropy_forward.
void cross_entropy_backward(float* dlogits, const float* probs, const int* targets, const int* count, int N, int V,
                            float smoothing, int ignore_index, float dloss, Stream stream = nullptr);

}  // namespace attnlab::cuda
