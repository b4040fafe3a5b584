#pragma once
// CUDA backend: one tensor-core product through the register layout of tensor_core.cuh, for tests.
//
// Shape legend: A 16 × 16, B 16 × 8, C and D 16 × 8; row-major float32 in device memory.
//
// The register-tile attention kernel relies on PTX's documented fragment layout of
// mma.sync.m16n8k16 (which lane holds which element of A, B and D). The emulator implements the
// instruction from that same description, so a kernel and the emulator could agree on a wrong layout
// and every emulated test pass. mma_layout_probe makes the layout itself testable on a GPU: one warp
// loads A, B and C into registers exactly as tensor_core.cuh's comment says, runs one product and
// stores D the same way; the result must be A·B + C (A and B rounded to bf16).
#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

void mma_layout_probe(float* d, const float* a, const float* b, const float* c, Stream stream = nullptr);

}  // namespace attnlab::cuda
