// backend/cpu/buffers.hpp: sizing the model's big working buffers (huge-page advice before first touch).
#include <doctest/doctest.h>

#include <cstdlib>
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
