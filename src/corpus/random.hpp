#pragma once
// Random numbers that are the same on every compiler and standard library.
//
// std::mt19937_64's output sequence is fixed by the C++ standard, but std::uniform_int_distribution,
// std::shuffle and friends are not (libstdc++, libc++ and MSVC give different values for the same
// engine). The corpus must be reproducible from its seed alone, so everything that turns engine
// output into choices lives here, written out.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "util/rng.hpp"

namespace attnlab::corpus {

using Rng = std::mt19937_64;

// SplitMix64 (Steele, Lea, Flood 2014): a good 64-bit mixer, used to derive independent seeds.
inline std::uint64_t splitmix64(std::uint64_t x) { return attnlab::splitmix64(x); }  // x is the state, copied

// A seed for stream number `stream` of the user's seed. Each split gets its own stream, so the test
// split depends only on the seed and the test size, not on how large the training split is.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) {
  return splitmix64(seed ^ splitmix64(stream + 0x5851F42D4C957F2DULL));
}

// A uniform integer in [0, n), n > 0, by rejection: draws above the largest multiple of n are
// discarded, so every value is exactly equally likely (plain modulo would favour small values).
inline std::size_t uniform_below(Rng& rng, std::size_t n) {
  return static_cast<std::size_t>(attnlab::bounded([&] { return rng(); }, static_cast<std::uint64_t>(n)));
}

// True with probability percent/100.
inline bool chance(Rng& rng, unsigned percent) { return uniform_below(rng, 100) < percent; }

// A uniformly chosen element of a non-empty vector.
template <class T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[uniform_below(rng, v.size())];
}

// An index drawn with probability proportional to weights[i] (integer weights, at least one > 0).
inline std::size_t pick_weighted(Rng& rng, const std::vector<unsigned>& weights) {
  std::uint64_t total = 0;
  for (unsigned w : weights) total += w;
  std::uint64_t r = uniform_below(rng, static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return weights.size() - 1;  // unreachable when total > 0
}

// Fisher–Yates shuffle with uniform_below.
template <class T>
void shuffle(Rng& rng, std::vector<T>& v) {
  for (std::size_t i = v.size(); i > 1; --i) {
    const std::size_t j = uniform_below(rng, i);
    using std::swap;
    swap(v[i - 1], v[j]);
  }
}

using attnlab::fnv1a;

}  // namespace attnlab::corpus
