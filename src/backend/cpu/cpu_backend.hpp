#pragma once
// The CPU backend: host memory (huge-page backed, backend/cpu/buffers.hpp), the ops of
// backend/cpu/ops.hpp (OpenBLAS and attnlab's thread pool), float and double. It is also the reference
// every other backend is tested against (tests/gpu/test_backend_ops.cpp).
#include "backend/backend.hpp"

namespace attnlab::backend {

// One process-wide instance per element type (the CPU has no per-instance state worth a second copy).
template <typename T>
Ops<T>& cpu_backend();

extern template Ops<float>& cpu_backend<float>();
extern template Ops<double>& cpu_backend<double>();

}  // namespace attnlab::backend
