#pragma once
// Column sums of an N × C row-major matrix on the GPU (a bias gradient; layer norm's γ and β
// gradients), parallel over rows as well as columns, and deterministic.
//
// Why two stages: one thread per column adding all N rows leaves most of the GPU idle (C = 512 is four
// blocks of 128 threads on a GPU of 132 SMs, each thread waiting on N loads one after another), and
// atomics would make the order of the additions, and so the rounding, change from run to run. Instead
// the rows are cut into chunks of kColumnChunkRows: a block sums 32 columns of one chunk into a
// partial sum (stage 1, into scratch: chunks × C floats per array), then one thread per column adds
// its partial sums in chunk order to the gradient (stage 2). The chunks depend on N alone, so every
// addition happens in the same order on every run and every GPU: results repeat bit for bit (they
// differ from the CPU's row-by-row order by rounding, about 1e-7 relative).
//
// Shape legend: src N × C row-major; dst C (accumulated: dst += column sums, or stored: dst = column
// sums, zeros when N = 0); scratch as below.
#include <cstddef>
#include <cstdint>

#include "backend/cuda/device.hpp"

namespace attnlab::cuda {

inline constexpr int kColumnChunkRows = 256;
inline int column_chunks(int N) { return N <= 0 ? 0 : (N + kColumnChunkRows - 1) / kColumnChunkRows; }
// Floats of scratch that `arrays` column sums of an N × C matrix need (a bias: 1; layer norm: 2).
inline std::size_t column_sums_scratch(int N, int C, int arrays) {
  return static_cast<std::size_t>(column_chunks(N)) * static_cast<std::size_t>(C > 0 ? C : 0) * arrays;
}

// dst[c] += Σ_r src[r, c] (add), or dst[c] = Σ_r src[r, c] (not add, which does not read dst); scratch:
// column_sums_scratch(N, C, 1) floats on the device. src float32, or bf16 (raw bits, widened as read: a
// bf16 linear layer's bias gradient), summed in float32 either way.
void column_sums(float* dst, const float* src, int N, int C, float* scratch, Stream stream = nullptr,
                 bool add = true);
void column_sums(float* dst, const std::uint16_t* src, int N, int C, float* scratch, Stream stream = nullptr,
                 bool add = true);

// Stage 2 on its own, for a stage 1 of another kernel (layer norm's): dst0[c] += Σ_k partials[k·C + c]
// and, when dst1 is not null, dst1[c] += Σ_k partials[(chunks + k)·C + c], k = 0 … chunks − 1 in order;
// = instead of += when not add (then chunks = 0 stores zeros).
void add_column_partials(float* dst0, float* dst1, const float* partials, int chunks, int C, Stream stream = nullptr,
                         bool add = true);

namespace detail {
// Threads of a stage-1 block: 32 columns × kColumnRowThreads rows at a time.
inline constexpr int kColumnRowThreads = 8;
}  // namespace detail

}  // namespace attnlab::cuda
