#pragma once
// The CUDA backend: backend::Ops<float> (backend/backend.hpp) on one device. Memory is cudaMalloc'd;
// every op runs on one stream owned by the backend, with one cuBLAS handle bound to it (float32
// compute: the CPU backend is its reference to 1e-5, tests/backend/test_backend_ops.cpp; or TF32 or
// bf16 matrix products after set_matmul_precision(Tf32 or Bf16), each held to its bound there). In the emulation
// build (-DATTNLAB_CUDA=EMULATE) the same code runs its kernels on the CPU emulator and name() says so.
//
// Ops return when their work is queued, except upload/download (which wait for the copy),
// embedding_backward beyond 16,384 rows (it groups the token ids on the host: cuda/embedding.hpp)
// and synchronize(): no op hands a value to the host. The kernels
// are those of this folder (attention.hpp, cross_entropy.hpp, embedding.hpp, linear.hpp, ...); the
// contract of each op is the interface's. One limit beyond the CPU backend's: attention_backward
// rejects a batch stride of 0 (shared K/V) with ShapeError (attention.hpp says why).
//
// Plain C++: no CUDA header, so the registry and tests compile with the ordinary compiler.
#include <memory>

#include "backend/backend.hpp"

namespace attnlab::backend {

// A backend on the current CUDA device. Throws InputError, saying why and what to do instead, when no
// device can be used (no driver, no GPU); RuntimeError when the device fails while starting up.
std::unique_ptr<Ops<float>> make_cuda_backend();

}  // namespace attnlab::backend
