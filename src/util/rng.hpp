#pragma once
// splitmix64: a tiny, fully specified random generator. Every random choice that must be identical
// across compilers and standard libraries (weight init, dropout masks, data order, sampling in
// `generate`) draws from it, because std::uniform_*_distribution and std::shuffle are
// implementation-defined. They appear only where no result depends on the exact values: the exercise
// graders' random test matrices (exercises/grading) and the inputs of a GPU timing (cuda/matmul.cu);
// the corpus draws from std::mt19937_64 with its own fixed conversions (corpus/random.hpp).
#include <cstdint>
#include <string_view>

namespace attnlab {

// Advances the state and returns the next 64 random bits.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform double in [0, 1) with 53 random bits.
inline double uniform01(std::uint64_t& state) { return (splitmix64(state) >> 11) * (1.0 / 9007199254740992.0); }

// An unbiased integer in [0, n) from a source of 64 random bits (`draw()`), by rejection: draws at or
// above the largest multiple of n are thrown away, so every residue is equally likely. n must be ≥ 1.
template <class Draw>
std::uint64_t bounded(Draw&& draw, std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // accept draws in [0, limit)
  std::uint64_t x;
  do x = draw();
  while (x >= limit);
  return x % n;
}

// 64-bit FNV-1a hash of a byte string: a fixed function of its bytes (std::hash is
// implementation-defined), used for checkpoint checksums, the corpus's held-out rule and seeds.
inline std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace attnlab
