#pragma once
// nvcuda::wmma (warp matrix multiply-accumulate, the tensor cores' C++ interface) as the emulation
// build provides it: the 16 × 16 × 16 bf16 shapes with float accumulators, the calls the kernels use.
//
// On a GPU a fragment's elements are spread over the 32 lanes in an unspecified way; here every lane
// loads the whole tile (row-major) and computes the whole product, which gives the same values as
// long as a kernel touches fragments only through these calls (all the API promises). What a GPU
// would get wrong must fail here too, so:
//   - loads and products do not synchronise the warp: a lane must __syncwarp() between shared-memory
//     writes and a load_matrix_sync that reads them. A lane that loads too early holds a different
//     tile from the others, and store_matrix_sync, which compares the lanes' tiles, fails the kernel;
//   - store_matrix_sync waits for the whole warp (on a GPU the warp stores together, after every
//     lane's loads and products, so a load-multiply-store of one tile, O += P·V in place, reads the
//     old tile in every lane), then each lane writes only its share (elements lane, lane + 32, …):
//     a lane that reads the stored tile without a __syncwarp() after the store reads elements other
//     lanes have not written yet, and the emulator's two schedules disagree.
// Not caught: a missing __syncwarp() between lanes' reads of shared memory and a store that overwrites
// it (the store's wait orders them here, which a GPU does not promise), nor between writes and a load
// when a store of another tile comes between them.
// Pointers must be 256-bit aligned and ldm a multiple of 16 bytes, as the hardware requires; a
// violation is a kernel error naming the call. Products are exact in float (bf16 × bf16 fits),
// summed in float in k order; the tensor cores' summation order differs, within float rounding.
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda_bf16.h"
#include "emulator.hpp"

namespace nvcuda::wmma {

struct row_major {};
struct col_major {};
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
enum layout_t { mem_row_major, mem_col_major };

namespace emu_detail {
template <class Use, int M, int N, int K>
struct Dims;
template <int M, int N, int K>
struct Dims<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct Dims<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct Dims<accumulator, M, N, K> {
  static constexpr int rows = M, cols = N;
};

template <typename T>
float to_float(T v) {
  if constexpr (sizeof(T) == 2) {
    return __bfloat162float(v);
  } else {
    return static_cast<float>(v);
  }
}

inline void check_operand(const char* call, const void* p, unsigned ldm, std::size_t elem) {
  if (reinterpret_cast<std::uintptr_t>(p) % 32 != 0)
    ::attnlab::cuda::emu::kernel_error(std::string(call) + ": the pointer is not 256-bit aligned");
  if ((ldm * elem) % 16 != 0)
    ::attnlab::cuda::emu::kernel_error(std::string(call) + ": ldm = " + std::to_string(ldm) +
                                       " elements is not a multiple of 16 bytes");
}
}  // namespace emu_detail

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulator has the 16 x 16 x 16 shape only");
  static constexpr int rows = emu_detail::Dims<Use, M, N, K>::rows;
  static constexpr int cols = emu_detail::Dims<Use, M, N, K>::cols;
  static constexpr int num_elements = rows * cols;  // every lane holds the whole tile (see above)
  T x[num_elements];
};

template <class Use, int M, int N, int K, class T, class Layout>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, T value) {
  for (T& e : f.x) e = value;
}

// matrix_a / matrix_b: the layout is the fragment's own.
template <class Use, int M, int N, int K, class T, class Layout>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const T* p, unsigned ldm) {
  static_assert(!std::is_same_v<Use, accumulator>, "an accumulator load names its layout");
  emu_detail::check_operand("wmma::load_matrix_sync", p, ldm, sizeof(T));
  using F = fragment<Use, M, N, K, T, Layout>;
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c)
      f.x[r * F::cols + c] = std::is_same_v<Layout, row_major> ? p[r * ldm + c] : p[c * ldm + r];
}

template <int M, int N, int K, class T>
void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const T* p, unsigned ldm, layout_t layout) {
  emu_detail::check_operand("wmma::load_matrix_sync", p, ldm, sizeof(T));
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) f.x[r * N + c] = layout == mem_row_major ? p[r * ldm + c] : p[c * ldm + r];
}

// See the top of this file: waits for the warp, checks that every lane holds the same tile, and
// writes this lane's share of it.
template <int M, int N, int K, class T>
void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm, layout_t layout) {
  emu_detail::check_operand("wmma::store_matrix_sync", p, ldm, sizeof(T));
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the tile's bytes
  const auto* bytes = reinterpret_cast<const unsigned char*>(f.x);
  for (std::size_t b = 0; b < sizeof f.x; ++b) h = (h ^ bytes[b]) * 1099511628211ull;
  // Every lane posts its hash and reads lane 0's: all lanes have finished their loads and products.
  if (::attnlab::cuda::emu::warp_exchange("wmma::store_matrix_sync", 0xffffffffu, h, 0) != h)
    ::attnlab::cuda::emu::kernel_error(
        "wmma::store_matrix_sync: the lanes of the warp hold different tiles (a lane loaded shared memory before "
        "another lane's write to it: a missing __syncwarp()?)");
  for (int e = ::attnlab::cuda::emu::lane_id(); e < M * N; e += 32) {
    const int r = e / N, c = e % N;
    (layout == mem_row_major ? p[r * ldm + c] : p[c * ldm + r]) = f.x[e];
  }
}

// d = a · b + c (d may be c).
template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC>
void mma_sync(fragment<accumulator, M, N, K, TC>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
              const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, TC>& c) {
  TC out[M * N];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = static_cast<float>(c.x[i * N + j]);
      for (int kk = 0; kk < K; ++kk) acc += emu_detail::to_float(a.x[i * K + kk]) * emu_detail::to_float(b.x[kk * N + j]);
      out[i * N + j] = acc;
    }
  for (int e = 0; e < M * N; ++e) d.x[e] = out[e];
}

}  // namespace nvcuda::wmma
