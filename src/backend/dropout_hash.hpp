#pragma once
// The dropout mask as a pure function of (seed, element index): a counter-based generator, so every
// backend, thread count and launch shape draws the same mask for the same seed (a sequential generator
// would tie the mask to the order in which elements are visited). The model derives one seed per
// dropout site per training step (model/transformer.cpp), so masks never repeat.
//
// The mixing function is splitmix64's finaliser (util/rng.hpp) applied to seed + (i + 1)·φ, φ the
// 64-bit golden ratio: consecutive indices land on well-separated states, and the finaliser is a
// bijection with full avalanche, which is what a counter-based generator needs. Plain integer
// arithmetic, so the same header compiles for the host and, under nvcc, for the device.
#include <cstdint>
#include <string>

#include "util/error.hpp"

#if defined(__CUDACC__)
#define ATTNLAB_HOST_DEVICE __host__ __device__
#else
#define ATTNLAB_HOST_DEVICE
#endif

namespace attnlab::backend {

ATTNLAB_HOST_DEVICE inline std::uint64_t dropout_bits(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The threshold below which an element is dropped: p · 2³², computed once per call on the host.
// p ∈ [0, 1); the top 32 bits of dropout_bits are compared against it.
inline std::uint32_t dropout_threshold(float p) {
  if (!(p > 0.0f)) return 0;
  const double t = static_cast<double>(p) * 4294967296.0;
  return t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(t);
}

// What every backend's dropout needs for one call, computed once on the host: the kept elements'
// scale 1/(1 − p), rounded once from double to T (1 for p = 0), and the threshold. ShapeError naming
// `op` unless 0 ≤ p < 1. One definition, so the backends cannot round the scale differently.
template <typename T>
struct DropoutParams {
  T keep_scale;
  std::uint32_t threshold;
};
template <typename T>
DropoutParams<T> dropout_params(const char* op, float p) {
  if (!(p >= 0.0f && p < 1.0f))
    throw ShapeError(std::string(op) + ": p = " + std::to_string(p) + " (need 0 ≤ p < 1)");
  return {p > 0.0f ? static_cast<T>(1.0 / (1.0 - p)) : T(1), dropout_threshold(p)};
}

ATTNLAB_HOST_DEVICE inline bool dropout_keep(std::uint64_t seed, std::uint64_t i, std::uint32_t threshold) {
  return static_cast<std::uint32_t>(dropout_bits(seed, i) >> 32) >= threshold;
}

}  // namespace attnlab::backend
