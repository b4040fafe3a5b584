#pragma once
// splitmix64: a tiny, fully specified random generator. Every random choice that must be identical
// across compilers and standard libraries (weight init, dropout masks, data order) draws from it;
// std::uniform_*_distribution and std::shuffle are implementation-defined, so they are never used.
#include <cstdint>

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

}  // namespace attnlab
