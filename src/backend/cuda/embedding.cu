// Embedding and positional-encoding kernels (see embedding.hpp): one thread per output element for
// the forward and the positions; the backward one block per distinct token, grouped on the device
// by a one-block bitonic sort, or on the host.
#include "backend/cuda/embedding.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"

namespace attnlab::cuda {

namespace {

constexpr unsigned kThreads = 256;

__global__ void positional_encoding_kernel(float* __restrict__ pe, int L, int C) {
  const int half = (C + 1) / 2;  // pairs (2i, 2i+1); the last one has no cosine when C is odd
  const std::size_t n = static_cast<std::size_t>(L) * half;
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int pos = static_cast<int>(e / half), i = static_cast<int>(e % half);
    const double angle = pos / pow(10000.0, (2.0 * i) / C);
    float* row = pe + static_cast<std::size_t>(pos) * C;
    row[2 * i] = static_cast<float>(sin(angle));
    if (2 * i + 1 < C) row[2 * i + 1] = static_cast<float>(cos(angle));
  }
}

__global__ void embedding_forward_kernel(float* __restrict__ out, const int* __restrict__ tokens,
                                         const float* __restrict__ wte, const float* __restrict__ pe, int T, int C,
                                         int V, float scale, std::size_t n) {
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = e / C;
    const int c = static_cast<int>(e % C), t = static_cast<int>(r % T);
    const int tok = tokens[r];
    out[e] = (tok >= 0 && tok < V) ? wte[static_cast<std::size_t>(tok) * C + c] * scale + pe[static_cast<std::size_t>(t) * C + c]
                                   : __int_as_float(0x7fffffff);  // NaN
  }
}

// Adds a group's `count` rows of dout, row_of(0), row_of(1), …, in that order into d, the token's row
// of dwte: thread c owns column c (and c + blockDim, …), so no two threads write one element, and
// every sum has the CPU's order. Both backward kernels sum through here, so the host's grouping and
// the device's give the same bits.
template <typename RowOf>
__device__ void add_group_rows(float* __restrict__ d, const float* __restrict__ dout, int count, RowOf row_of, int C,
                               float scale) {
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    float acc = d[c];
    for (int e = 0; e < count; ++e) acc += dout[static_cast<std::size_t>(row_of(e)) * C + c] * scale;
    d[c] = acc;
  }
}

// One block per group (distinct token id), on the host's grouping.
__global__ void embedding_backward_kernel(float* __restrict__ dwte, const float* __restrict__ dout,
                                          const int* __restrict__ rows, const int* __restrict__ starts,
                                          const int* __restrict__ ids, int groups, int C, float scale) {
  for (int g = blockIdx.x; g < groups; g += gridDim.x) {
    const int r0 = starts[g];
    add_group_rows(dwte + static_cast<std::size_t>(ids[g]) * C, dout, starts[g + 1] - r0,
                   [&](int e) { return rows[r0 + e]; }, C, scale);
  }
}

// Threads a block for the backward's C columns: a warp's multiple, at most 256.
unsigned backward_threads(int C) { return C >= 256 ? 256u : static_cast<unsigned>((C + 31) / 32 * 32); }

// ---- the grouping on the device ------------------------------------------------------------------
// Row r with a valid id t becomes the key t·n + r (n = B·T rows), an invalid id kNoRow. The keys are
// distinct, so sorted they have one order only: grouped by token id, rows increasing within a group,
// the host's stable counting sort exactly, whatever the sort's own order of comparisons.
constexpr unsigned kNoRow = 0xffffffffu;
constexpr int kSortThreads = 1024;

// One block sorts every key in dynamic shared memory (4 bytes a key: up to kMaxDeviceGroupedRows, 64 KB)
// with a bitonic network over the next power of two (the padding is kNoRow, which sorts last), writes the n sorted
// keys and, where asked, how many groups they form (the op timer's bytes). Each thread owns the
// pairs (i, i ^ stride) with i < i ^ stride of its indices, so no two threads touch one element between
// barriers.
__global__ void sort_token_rows_kernel(unsigned* __restrict__ keys, int* __restrict__ groups,
                                       const int* __restrict__ tokens, int n, int padded, int V) {
  unsigned* s = detail::dynamic_shared<unsigned>();  // padded keys
  for (int i = threadIdx.x; i < padded; i += blockDim.x) {
    unsigned key = kNoRow;
    if (i < n) {
      const int t = tokens[i];
      if (t >= 0 && t < V) key = static_cast<unsigned>(t) * static_cast<unsigned>(n) + static_cast<unsigned>(i);
    }
    s[i] = key;
  }
  __syncthreads();
  for (int size = 2; size <= padded; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int i = threadIdx.x; i < padded; i += blockDim.x) {
        const int j = i ^ stride;
        if (j > i) {
          const unsigned a = s[i], b = s[j];
          if ((a > b) == ((i & size) == 0)) {  // ascending where bit `size` of i is clear
            s[i] = b;
            s[j] = a;
          }
        }
      }
      __syncthreads();
    }
  }
  // Every thread takes the same number of rounds: __syncthreads_count is a barrier.
  int count = 0;
  for (int base = 0; base < padded; base += blockDim.x) {
    const int i = base + static_cast<int>(threadIdx.x);
    bool head = false;
    if (i < n) {
      const unsigned k = s[i];
      keys[i] = k;
      // A valid key's predecessor is smaller, so valid too.
      head = k != kNoRow && (i == 0 || s[i - 1] / static_cast<unsigned>(n) != k / static_cast<unsigned>(n));
    }
    count += __syncthreads_count(head);
  }
  if (groups && threadIdx.x == 0) *groups = count;
}

// Grid-stride over the sorted positions; a block starts work only where a group starts (the first
// key of its token), finds where the group ends and adds it as the grouped kernel above does.
__global__ void embedding_backward_sorted_kernel(float* __restrict__ dwte, const float* __restrict__ dout,
                                                 const unsigned* __restrict__ keys, int n, int C, float scale) {
  const unsigned un = static_cast<unsigned>(n);
  for (int p = blockIdx.x; p < n; p += gridDim.x) {
    const unsigned k = keys[p];
    if (k == kNoRow) return;  // the invalid ids sort last: no group starts here or later
    const unsigned t = k / un;
    if (p > 0 && keys[p - 1] / un == t) continue;
    int count = 1;
    while (p + count < n && keys[p + count] != kNoRow && keys[p + count] / un == t) ++count;
    add_group_rows(dwte + static_cast<std::size_t>(t) * C, dout, count, [&](int e) { return keys[p + e] % un; }, C,
                   scale);
  }
}

void check_shape(const char* what, int B, int T, int C, int V) {
  if (B < 0 || T < 0 || C < 1 || V < 1) {
    throw ShapeError(std::string(what) + ": B = " + std::to_string(B) + ", T = " + std::to_string(T) + ", C = " +
                     std::to_string(C) + ", V = " + std::to_string(V) + " (need B, T ≥ 0 and C, V ≥ 1)");
  }
}

}  // namespace

void positional_encoding(float* pe, int L, int C, Stream stream) {
  if (L < 0 || C < 1) throw ShapeError("cuda::positional_encoding: L = " + std::to_string(L) + ", C = " + std::to_string(C));
  const std::size_t n = static_cast<std::size_t>(L) * ((C + 1) / 2);
  if (n == 0) return;
  ATTNLAB_LAUNCH(positional_encoding_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(pe, L, C);
  CUDA_CHECK_LAUNCH();
}

void embedding_forward(float* out, const int* tokens, const float* wte, const float* pe, int B, int T, int C, int V,
                       float scale, Stream stream) {
  check_shape("cuda::embedding_forward", B, T, C, V);
  const std::size_t n = static_cast<std::size_t>(B) * T * C;
  if (n == 0) return;
  ATTNLAB_LAUNCH(embedding_forward_kernel, detail::grid_for(n, kThreads), kThreads, 0, stream)(out, tokens, wte, pe, T, C, V,
                                                                                    scale, n);
  CUDA_CHECK_LAUNCH();
}

TokenGroups group_by_token(const std::vector<int>& tokens, int V) {
  if (V < 1) throw ShapeError("cuda::group_by_token: V = " + std::to_string(V));
  // Counting sort: how many rows each token has, then where each token's group starts.
  std::vector<int> count(static_cast<std::size_t>(V), 0);
  for (const int t : tokens)
    if (t >= 0 && t < V) ++count[static_cast<std::size_t>(t)];
  TokenGroups g;
  std::vector<int> slot(static_cast<std::size_t>(V), -1);  // group of each token
  g.starts.push_back(0);
  for (int t = 0; t < V; ++t) {
    if (!count[static_cast<std::size_t>(t)]) continue;
    slot[static_cast<std::size_t>(t)] = static_cast<int>(g.ids.size());
    g.ids.push_back(t);
    g.starts.push_back(g.starts.back() + count[static_cast<std::size_t>(t)]);
  }
  g.rows.resize(static_cast<std::size_t>(g.starts.back()));
  std::vector<int> next(g.starts.begin(), g.starts.end() - 1);  // stable: rows placed in increasing order
  for (std::size_t r = 0; r < tokens.size(); ++r) {
    const int t = tokens[r];
    if (t < 0 || t >= V) continue;
    g.rows[static_cast<std::size_t>(next[static_cast<std::size_t>(slot[static_cast<std::size_t>(t)])]++)] =
        static_cast<int>(r);
  }
  return g;
}

void embedding_backward_grouped(float* dwte, const float* dout, const int* rows, const int* starts, const int* ids,
                                int groups, int C, float scale, Stream stream) {
  if (groups < 0 || C < 1)
    throw ShapeError("cuda::embedding_backward_grouped: groups = " + std::to_string(groups) + ", C = " + std::to_string(C));
  if (groups == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min(groups, 65535 * 8));
  ATTNLAB_LAUNCH(embedding_backward_kernel, blocks, backward_threads(C), 0, stream)(dwte, dout, rows, starts, ids,
                                                                                    groups, C, scale);
  CUDA_CHECK_LAUNCH();
}

bool embedding_backward_groups_on_device(std::size_t rows, int V) {
  return rows >= 1 && rows <= static_cast<std::size_t>(kMaxDeviceGroupedRows) && V >= 1 &&
         static_cast<std::uint64_t>(V) * rows <= kNoRow;  // the largest key, V·n − 1, stays below kNoRow
}

void embedding_backward_sorted(float* dwte, const float* dout, const int* tokens, int B, int T, int C, int V,
                               float scale, unsigned* keys, int* groups, Stream stream) {
  check_shape("cuda::embedding_backward_sorted", B, T, C, V);
  const std::size_t n = static_cast<std::size_t>(B) * T;
  if (n == 0) return;
  if (!embedding_backward_groups_on_device(n, V))
    throw ShapeError("cuda::embedding_backward_sorted: " + std::to_string(n) + " rows and V = " + std::to_string(V) +
                     " (need at most " + std::to_string(kMaxDeviceGroupedRows) + " rows and V · rows < 2^32)");
  const int padded = static_cast<int>(std::bit_ceil(n));  // the bitonic network's size
  const unsigned sort_threads = static_cast<unsigned>(std::min(kSortThreads, std::max(32, padded)));
  const std::size_t bytes = static_cast<std::size_t>(padded) * sizeof(unsigned);
  if (bytes > 48 * 1024)  // above the default limit: every GPU since sm_75 allows at least 64 KB on request
    CUDA_CHECK(cudaFuncSetAttribute(sort_token_rows_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)));
  ATTNLAB_LAUNCH(sort_token_rows_kernel, 1, sort_threads, bytes, stream)(keys, groups, tokens, static_cast<int>(n),
                                                                         padded, V);
  CUDA_CHECK_LAUNCH();
  ATTNLAB_LAUNCH(embedding_backward_sorted_kernel, static_cast<unsigned>(n), backward_threads(C), 0,
                 stream)(dwte, dout, keys, static_cast<int>(n), C, scale);
  CUDA_CHECK_LAUNCH();
}

void embedding_backward(float* dwte, const float* dout, const int* tokens, int B, int T, int C, int V, float scale,
                        Stream stream) {
  check_shape("cuda::embedding_backward", B, T, C, V);
  const std::size_t n = static_cast<std::size_t>(B) * T;
  if (n == 0) return;
  std::vector<int> host(n);
  CUDA_CHECK(cudaStreamSynchronize(stream));  // the tokens may still be being written on `stream`
  copy_to_host(host.data(), tokens, n * sizeof(int));
  const TokenGroups g = group_by_token(host, V);
  if (g.groups() == 0) return;
  DeviceArray<int> rows(g.rows), starts(g.starts), ids(g.ids);
  embedding_backward_grouped(dwte, dout, rows.get(), starts.get(), ids.get(), g.groups(), C, scale, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));  // before the grouping's arrays are freed
}

}  // namespace attnlab::cuda
