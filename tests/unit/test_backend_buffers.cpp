// backend/cpu/buffers.hpp: sizing the model's big working buffers (huge-page advice before first touch).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/buffers.hpp"

using attnlab::cpu::size_buffer;
using attnlab::cpu::zeroed_buffer;

TEST_CASE("size_buffer: shrinking and regrowing within capacity keep storage and values; growth starts from zeros") {
  std::vector<float> v;
  size_buffer(v, 5u << 20);  // 20 MiB: large enough to be advised
  REQUIRE(v.size() == (5u << 20));
  CHECK(v.front() == 0.0f);
  CHECK(v.back() == 0.0f);
  v[7] = 3.0f;
  const float* data = v.data();
  size_buffer(v, 100);  // shrink: same storage, values kept
  CHECK(v.data() == data);
  CHECK(v[7] == 3.0f);
  size_buffer(v, 5u << 20);  // regrow within the capacity: still no reallocation
  CHECK(v.data() == data);
  CHECK(v[7] == 3.0f);
  CHECK(v.back() == 0.0f);
  size_buffer(v, 6u << 20);  // past the capacity: new storage, old values discarded, all zero
  REQUIRE(v.size() == (6u << 20));
  CHECK(v[7] == 0.0f);
  zeroed_buffer(v, 6u << 20);
  v[9] = 1.0f;
  zeroed_buffer(v, 1000);  // zeroed_buffer zeroes what it keeps
  CHECK(v[9] == 0.0f);
  zeroed_buffer(v, 6u << 20);
  for (std::size_t i = 0; i < v.size(); i += 4099) CHECK(v[i] == 0.0f);
}

TEST_CASE("advise_huge_pages leaves the contents alone, on aligned and unaligned ranges") {
  std::vector<unsigned char> big(9u << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<unsigned char>(i * 131u);
  attnlab::cpu::advise_huge_pages(big.data() + 1, big.size() - 1);  // the 2 MiB-aligned middle is advised
  attnlab::cpu::advise_huge_pages(big.data(), 100);                 // below 4 MiB: nothing to do
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < big.size(); ++i) wrong += big[i] != static_cast<unsigned char>(i * 131u);
  CHECK(wrong == 0);
}

namespace buffers_test {

// The /proc/self/smaps entry of the mapping that holds `p`: its VmFlags line and its AnonHugePages (kB).
struct Mapping {
  bool found = false;
  std::string flags;
  long anon_huge_kb = -1;
};
Mapping mapping_of(const void* p) {
  Mapping m;
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      if (m.found) break;  // the next mapping
      inside = lo <= at && at < hi;
      m.found = inside;
      continue;
    }
    if (!inside) continue;
    if (line.rfind("AnonHugePages:", 0) == 0) m.anon_huge_kb = std::stol(line.substr(14));
    if (line.rfind("VmFlags:", 0) == 0) m.flags = line.substr(8) + " ";
  }
  return m;
}

}  // namespace buffers_test

TEST_CASE("advise_huge_pages gives a big buffer transparent huge pages where the kernel offers them") {
  // The case above cannot tell advice that works from advice that does nothing; this one asks the
  // kernel. Where THP is "never" (or absent) there is nothing to check, whoever runs it.
  const std::string mode = attnlab::cpu::kernel_thp_mode();
  if (mode.empty()) ATTNLAB_SKIP_EVEN_IN_CI("this kernel has no transparent huge pages (no /sys/kernel/mm/transparent_hugepage/enabled)");
  if (mode == "never") ATTNLAB_SKIP_EVEN_IN_CI("the kernel's transparent-huge-page mode is \"never\" (/sys/kernel/mm/transparent_hugepage/enabled)");
  if (!attnlab::cpu::huge_pages_wanted()) ATTNLAB_SKIP_EVEN_IN_CI("ATTNLAB_HUGE_PAGES=0 turns the advice off");
  if (!std::ifstream("/proc/self/smaps")) ATTNLAB_SKIP("/proc/self/smaps cannot be read here");
  std::vector<float> v;
  size_buffer(v, 16u << 20);  // 64 MiB: reserved, advised, then zero-filled (the first touch)
  // The 2 MiB-aligned address inside the buffer: the advised part starts there.
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto aligned = (reinterpret_cast<std::uintptr_t>(v.data()) + kHuge - 1) & ~(kHuge - 1);
  const buffers_test::Mapping m = buffers_test::mapping_of(reinterpret_cast<const void*>(aligned + kHuge));
  INFO("THP mode " << mode << ", VmFlags:" << m.flags << " AnonHugePages: " << m.anon_huge_kb << " kB");
  REQUIRE(m.found);
  // The advice took: the kernel marked the mapping MADV_HUGEPAGE ("hg" in VmFlags)...
  CHECK(m.flags.find(" hg ") != std::string::npos);
  // ...and the first touch got huge pages for it (a 64 MiB buffer spans at least 30 whole 2 MiB pages).
  CHECK(m.anon_huge_kb >= 2048);
  CHECK(v[v.size() / 2] == 0.0f);
}
