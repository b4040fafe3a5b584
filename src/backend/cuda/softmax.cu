// CUDA backend: the masked, numerically stable row softmax (see softmax.hpp for the contract).
//
// Shape legend: scores, mask and weights are n × m, row-major; row i holds query i's scores over
// the m keys. The kernel gives each row to one thread block, and sizes the block to the row: a row
// of up to 32 keys gets a single warp (32 threads, so short rows waste no idle warps), a longer row
// up to kMaxThreads threads that stride along it. The block makes three passes over its row:
//   1. max over the visible keys (block reduction), and a flag if a visible score is +inf or NaN;
//   2. e_j = exp(s_j − max) for visible keys (0 for hidden ones), written out, and their sum
//      (block reduction);
//   3. w_j = e_j · (1 / sum).
// A row with no visible key has max = −inf after pass 1; it is written as zeros and reported
// instead of computing exp(−inf − (−inf)) = exp(NaN).
//
// Build note: do not compile this file with --use_fast_math. It would replace expf by the
// approximate __expf and flush denormals to zero, and the results would no longer agree with the
// CPU path to float precision.
#include "backend/cuda/softmax.hpp"

#include <cuda_runtime.h>

#include "backend/cuda/launch.cuh"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <cmath>
#include <string>

#include "util/error.hpp"

namespace attnlab::cuda {
namespace {

// Turns a failed CUDA call into the library's RuntimeError, naming where it happened and what CUDA
// said, so a user on a broken driver sees "CUDA error at softmax.cu:123 in cudaMalloc(...): out of
// memory" rather than a crash or a silent wrong answer.
void check_cuda(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  throw RuntimeError(std::string("CUDA error at ") + file + ":" + std::to_string(line) + " in " +
                     call + ": " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")");
}

}  // namespace
}  // namespace attnlab::cuda

// Wraps every CUDA runtime call. After a kernel launch use ATTNLAB_CUDA_CHECK(cudaGetLastError()):
// launches return nothing, and a bad configuration is only reported through the last-error state.
#define ATTNLAB_CUDA_CHECK(call) ::attnlab::cuda::check_cuda((call), #call, __FILE__, __LINE__)

namespace attnlab::cuda {
namespace {

// Per-row outcome, written by the kernel and read back by the host. The host pre-fills the array
// with 0xFF, so a row the kernel never reached is caught as an internal error instead of being
// silently taken as "ok".
enum RowStatus : unsigned char { kRowOk = 0, kRowFullyMasked = 1, kRowBadScore = 2 };

constexpr unsigned kWarpSize = 32;
// Threads per block for long rows. A multiple of the warp size (the reductions rely on it); 256
// threads keep enough loads in flight per row while leaving room for several blocks per SM.
constexpr unsigned kMaxThreads = 256;

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ double operator()(double a, double b) const { return a + b; }
};

// Butterfly reduction within one warp: after it every lane holds the result.
template <typename T, typename Op>
__device__ T warp_reduce(T v, Op op) {
  for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduction over the whole block; every thread gets the result. Each warp reduces its own values,
// lane 0 parks the warp's partial in `scratch` (one slot per warp, at most 32 warps), and then
// every warp reduces the partials itself, which saves a broadcast step. Requirements: blockDim.x is
// a multiple of 32 and every thread of the block calls this (it contains barriers). The trailing
// barrier lets the caller reuse `scratch` for its next reduction right away.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity, T* scratch) {
  const unsigned lane = threadIdx.x % kWarpSize;
  const unsigned warp = threadIdx.x / kWarpSize;
  const unsigned warps = blockDim.x / kWarpSize;
  v = warp_reduce(v, op);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : identity;
  v = warp_reduce(v, op);
  __syncthreads();
  return v;
}

// mask may be null (every key visible). status[i] receives row i's RowStatus.
//
// Why the sum is accumulated in double: the CPU softmax_rows (the reference this backend must
// match) accumulates its normaliser in double, and doing the same here makes the two agree to the
// rounding of the final float product, whatever the row length. A float sum would also be adequate
// (each thread adds only m / blockDim.x terms before the tree reduction), but its error would grow
// with m and differ from the CPU's in a way the tests would have to budget for. The cost is nil
// where it matters: this kernel is bound by memory traffic, and one double add per element is cheap
// even on GPUs with slow FP64 (and Ampere/Hopper, the architectures built for, have fast FP64).
__global__ void masked_softmax_rows_kernel(const float* __restrict__ scores,
                                           const unsigned char* __restrict__ mask,
                                           float* __restrict__ out,
                                           unsigned char* __restrict__ status, std::size_t n,
                                           std::size_t m) {
  __shared__ float max_scratch[kWarpSize];
  __shared__ double sum_scratch[kWarpSize];
  const float neg_inf = -INFINITY;

  // Normally gridDim.x == n and each block does one row; the loop only matters if n exceeds the
  // grid limit. The conditions that end an iteration early are uniform across the block, so every
  // thread always reaches the same barriers.
  for (std::size_t row = blockIdx.x; row < n; row += gridDim.x) {
    const float* in = scores + row * m;
    const unsigned char* visible = mask ? mask + row * m : nullptr;
    float* w = out + row * m;

    // Pass 1: max over visible keys. A hidden key's score is never read, so whatever is stored
    // there (even NaN) cannot leak into the row, just as apply_mask overwrites it on the CPU.
    float mx = neg_inf;
    int bad = 0;
    for (std::size_t j = threadIdx.x; j < m; j += blockDim.x) {
      if (visible && visible[j] == 0) continue;
      const float s = in[j];
      if (isnan(s) || s == INFINITY) bad = 1;
      mx = fmaxf(mx, s);
    }
    if (__syncthreads_or(bad)) {  // the host turns this into a NumericError
      if (threadIdx.x == 0) status[row] = kRowBadScore;
      continue;
    }
    mx = block_reduce(mx, MaxOp{}, neg_inf, max_scratch);

    if (mx == neg_inf) {  // no visible key (or all visible scores are −inf): zeros, reported
      for (std::size_t j = threadIdx.x; j < m; j += blockDim.x) w[j] = 0.0f;
      if (threadIdx.x == 0) status[row] = kRowFullyMasked;
      continue;
    }

    // Pass 2: exponentials. s − max ≤ 0, so expf never overflows; the max itself contributes
    // exp(0) = 1, so sum ≥ 1 and the division below is safe. Hidden keys are written as exactly 0.
    double sum = 0.0;
    for (std::size_t j = threadIdx.x; j < m; j += blockDim.x) {
      const float e = (visible && visible[j] == 0) ? 0.0f : expf(in[j] - mx);
      w[j] = e;
      sum += e;
    }
    sum = block_reduce(sum, SumOp{}, 0.0, sum_scratch);

    // Pass 3: normalise. Each thread rescales exactly the elements it wrote in pass 2, so no
    // barrier is needed between the two passes.
    const float inv = static_cast<float>(1.0 / sum);
    for (std::size_t j = threadIdx.x; j < m; j += blockDim.x) w[j] *= inv;
    if (threadIdx.x == 0) status[row] = kRowOk;
  }
}

// Owns one cudaMalloc'd buffer, so every early exit (a thrown error included) frees device memory.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) {
    if (bytes > 0) ATTNLAB_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  // A destructor must not throw, and a failing cudaFree here could only follow an error that is
  // already being reported, so its result is deliberately dropped.
  ~DeviceBuffer() {
    if (ptr_) (void)cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

}  // namespace

core::Matrix cuda_softmax_rows(const core::Matrix& scores, const core::Mask* mask,
                         std::vector<std::size_t>* fully_masked_rows) {
  return detail::softmax_rows(scores, mask, fully_masked_rows, /*poison_output=*/false);
}

core::Matrix detail::softmax_rows(const core::Matrix& scores, const core::Mask* mask,
                                 std::vector<std::size_t>* fully_masked_rows, bool poison_output) {
  const std::size_t n = core::rows(scores), m = core::cols(scores);
  if (mask && (core::rows(*mask) != n || core::cols(*mask) != m)) {
    throw ShapeError("cuda_softmax_rows: mask is " + core::shape_str(*mask) + " but the scores are " +
                     core::shape_str(scores));
  }
  core::Matrix out = core::Matrix::from_shape({n, m});
  if (n == 0) return out;
  if (m == 0) {  // no keys at all: every row is fully masked, as on the CPU; nothing to launch
    if (fully_masked_rows)
      for (std::size_t i = 0; i < n; ++i) fully_masked_rows->push_back(i);
    return out;
  }

  const std::size_t count = n * m;
  const std::size_t value_bytes = count * sizeof(float);
  DeviceBuffer d_scores(value_bytes);
  DeviceBuffer d_out(value_bytes);
  DeviceBuffer d_mask(mask ? count * sizeof(unsigned char) : 0);
  DeviceBuffer d_status(n);

  ATTNLAB_CUDA_CHECK(
      cudaMemcpy(d_scores.as<void>(), scores.data(), value_bytes, cudaMemcpyHostToDevice));
  if (mask) {
    static_assert(sizeof(*mask->data()) == sizeof(unsigned char), "Mask holds one byte per entry");
    ATTNLAB_CUDA_CHECK(cudaMemcpy(d_mask.as<void>(), mask->data(), count, cudaMemcpyHostToDevice));
  }
  // All bits set is NaN as a float and an invalid RowStatus, so anything the kernel leaves
  // unwritten is visible on the host.
  if (poison_output) ATTNLAB_CUDA_CHECK(cudaMemset(d_out.as<void>(), 0xFF, value_bytes));
  ATTNLAB_CUDA_CHECK(cudaMemset(d_status.as<void>(), 0xFF, n));

  const unsigned threads =
      static_cast<unsigned>(std::min<std::size_t>((m + kWarpSize - 1) / kWarpSize * kWarpSize,
                                                  kMaxThreads));
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(n, INT_MAX));
  ATTNLAB_LAUNCH(masked_softmax_rows_kernel, blocks, threads, 0, nullptr)(d_scores.as<const float>(),
                                                  mask ? d_mask.as<const unsigned char>() : nullptr,
                                                  d_out.as<float>(), d_status.as<unsigned char>(),
                                                  n, m);
  ATTNLAB_CUDA_CHECK(cudaGetLastError());

  // cudaMemcpy waits for the kernel, so an error while it ran surfaces here.
  std::vector<unsigned char> status(n);
  ATTNLAB_CUDA_CHECK(cudaMemcpy(status.data(), d_status.as<void>(), n, cudaMemcpyDeviceToHost));

  // Walk the rows in order, like the CPU loop: fully-masked rows before a bad row are reported
  // before the error is thrown.
  for (std::size_t i = 0; i < n; ++i) {
    switch (status[i]) {
      case kRowOk:
        break;
      case kRowFullyMasked:
        if (fully_masked_rows) fully_masked_rows->push_back(i);
        break;
      case kRowBadScore:
        throw NumericError("softmax (CUDA): row " + std::to_string(i) +
                           " holds a score of inf or NaN (the scores overflowed float32); "
                           "scale the inputs or weights down");
      default:
        throw RuntimeError("softmax (CUDA): internal error, the kernel did not finish row " +
                           std::to_string(i));
    }
  }
  // Only now: a row with a bad score is left unwritten (its error is thrown above), and copying it
  // would read device memory nothing wrote (compute-sanitizer's initcheck flagged it on an H100).
  ATTNLAB_CUDA_CHECK(cudaMemcpy(out.data(), d_out.as<void>(), value_bytes, cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace attnlab::cuda
