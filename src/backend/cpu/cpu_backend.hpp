#pragma once
// The CPU backend: host memory (huge-page backed, backend/cpu/buffers.hpp), the ops of
// backend/cpu/ops.hpp (OpenBLAS and attnlab's thread pool), float and double. It is also the reference
// every other backend is tested against (tests/gpu/test_backend_ops.cpp).
#include <memory>

#include "backend/backend.hpp"

namespace attnlab::backend {

// One process-wide instance per element type (the CPU has no per-instance state worth a second copy).
template <typename T>
Ops<T>& cpu_backend();

extern template Ops<float>& cpu_backend<float>();
extern template Ops<double>& cpu_backend<double>();

// The CPU has three implementations of attention. The model runs the first; the other two exist for
// `attnlab bench`'s attention sweep, and are checked against the first through these backends,
// which differ from cpu_backend() in attention alone (tests/backend/test_backend_ops.cpp):
//   Lse            cpu_backend(): per head, scores → softmax → weights·V, keeping the row lse and
//                  recomputing the weights in the backward (backend/cpu/ops.hpp, "the backend contract")
//   StoredWeights  the lessons' form: the forward keeps the whole B × H × Tq × Tk weight matrix and the
//                  backward reads it (cpu::attention_forward/backward); here the backward recomputes it
//                  with the same forward, and the lse comes from the Lse path
//   Tiled          the FlashAttention idea: block_q × block_k tiles and an online softmax, never a
//                  Tq × Tk matrix (cpu::attention_forward_tiled/backward_tiled)
// Neither of the last two takes strides, so these backends copy strided operands (a fused Q/K/V
// buffer, a shared K/V) into packed ones and the results back: a test fixture, not a fast path.
enum class CpuAttention { Lse, StoredWeights, Tiled };
template <typename T>
std::unique_ptr<Ops<T>> make_cpu_backend(CpuAttention attention, int block_q = 0, int block_k = 0);

}  // namespace attnlab::backend
