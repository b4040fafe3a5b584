#pragma once
// Large working buffers backed by transparent huge pages where the kernel offers them.
//
// Why: the model's big matrices (the (B·T) × V logits and their gradient, 303 MB each at
// Transformer-base, the feed-forward activations, the attention weights) are written by sgemm in
// tiles whose rows lie a whole row stride apart, so with 4 KiB pages nearly every row of a tile is
// another TLB entry. With 2 MiB pages the output projection's sgemm ran 5–12 % faster on the project's
// machines (docs/performance.md). Linux's default THP mode here is "madvise": a region gets huge pages
// only if asked with madvise(MADV_HUGEPAGE) *before* its pages are first touched, which a plain
// std::vector::resize does at once (it zero-fills). So these helpers reserve first, advise, then resize.
//
// Only for buffers whose old contents do not matter: when a buffer must grow past its capacity, its
// values are discarded (the new storage is zero-filled), never copied. Sizes stay the same from one
// training step to the next, so that happens once; later calls neither allocate nor touch memory.
// Where huge pages are unavailable (THP "never", another OS) the advice fails silently and nothing else
// changes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attnlab::cpu {

// False when the environment sets ATTNLAB_HUGE_PAGES=0 (to measure the difference, or to rule it out).
inline bool huge_pages_wanted() {
  static const bool wanted = [] {
    const char* e = std::getenv("ATTNLAB_HUGE_PAGES");
    return !(e && std::string_view(e) == "0");
  }();
  return wanted;
}

// The kernel's transparent-huge-page mode ("always", "madvise", "never"), or "" where there is none
// (not Linux, or no /sys/kernel/mm/transparent_hugepage). For `attnlab doctor`.
inline std::string kernel_thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(in, line)) return "";
  const auto open = line.find('['), close = line.find(']');
  return open != std::string::npos && close != std::string::npos && close > open ? line.substr(open + 1, close - open - 1)
                                                                                 : "";
}

// Asks for huge pages on the 2 MiB-aligned part of [p, p + bytes); a no-op below 4 MiB.
inline void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (bytes < 2 * kHuge || !huge_pages_wanted()) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// v.size() becomes n. Existing values survive only while n fits the current capacity; a buffer that
// must grow is reallocated empty (no copy), advised, then zero-filled.
template <class T>
void size_buffer(std::vector<T>& v, std::size_t n) {
  if (n > v.capacity()) {
    std::vector<T>().swap(v);  // release first: no copy of stale values, and no peak of both
    v.reserve(n);              // allocated, not yet touched (glibc maps large blocks fresh)
    advise_huge_pages(v.data(), n * sizeof(T));
  }
  v.resize(n);
}

// size_buffer, then every value set to zero (the replacement for v.assign(n, T(0))).
template <class T>
void zeroed_buffer(std::vector<T>& v, std::size_t n) {
  const std::size_t kept = std::min(v.size(), n);
  size_buffer(v, n);
  std::fill(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(kept), T(0));  // the rest is new: zero already
}

}  // namespace attnlab::cpu
