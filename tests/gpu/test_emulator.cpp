// The CUDA emulator earns its keep: copies of the backend's kernels with known bugs planted in them
// (a removed __syncthreads, a wrong shuffle partner, an off-by-one bound on device and on shared
// memory, a swapped cuBLAS transpose flag, a shuffle waiting for an exited lane, a host pointer as a
// kernel argument, launch limits, a tensor-core tile loaded or read back without its __syncwarp, or
// misaligned) must each be caught, and the unmodified copies must pass, so the
// catching is not a false alarm. Also the intrinsics' semantics against what the CUDA Programming
// Guide specifies. Built only in the emulation build (-DATTNLAB_CUDA=EMULATE), compiled like the .cu
// files (the emulator's headers, AddressSanitizer with the shared-memory section).
//
// Bugs that AddressSanitizer catches end the process, so they run in a forked child whose report
// the parent reads.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/launch.cuh"
#include "cublas_v2.h"
#include "cuda_bf16.h"
#include "cuda_runtime.h"
#include "mma.h"

namespace {

constexpr unsigned kFull = 0xffffffffu;

// ---- helpers ---------------------------------------------------------------------------------------
template <typename T>
T* dev(const std::vector<T>& host) {
  T* p = nullptr;
  REQUIRE(cudaMalloc(&p, host.size() * sizeof(T)) == cudaSuccess);
  REQUIRE(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  return p;
}
template <typename T>
std::vector<T> host(const T* p, std::size_t n) {
  std::vector<T> h(n);
  REQUIRE(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
  return h;
}

// The launch's outcome: the error cudaGetLastError reports (and the emulator's account of it). A
// caught kernel leaves the sticky error; cudaDeviceReset clears it for the next case.
struct Outcome {
  cudaError_t err;
  std::string detail;
};
Outcome outcome() {
  const cudaError_t e = cudaGetLastError();
  Outcome o{e, e == cudaSuccess ? "" : cudaGetErrorString(e)};
  if (e != cudaSuccess) cudaDeviceReset();
  return o;
}

// Runs f in a child process; returns its stderr and whether it died or failed.
struct Child {
  bool failed;
  std::string err;
};
template <typename F>
Child in_child(F f) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The child dies by the sanitizer's report: without doctest's crash handlers (inherited from the
    // parent) and with its stdout out of the parent's report.
    std::signal(SIGABRT, SIG_DFL);
    std::signal(SIGSEGV, SIG_DFL);
    dup2(fds[1], 2);
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1);
    close(fds[0]);
    f();
    cudaError_t e = cudaDeviceSynchronize();
    _exit(e == cudaSuccess ? 0 : 3);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t r;
  while ((r = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(r));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {!(WIFEXITED(status) && WEXITSTATUS(status) == 0), out};
}

// ---- kernels: a row sum through a block reduction (softmax.cu / common.cuh), right and wrong ------
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kFull, v, o);
  return v;
}
// Planted bug: __shfl_down_sync instead of __shfl_xor_sync. Only lane 0 ends with the full sum.
__device__ float warp_sum_down(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(kFull, v, o);
  return v;
}

template <bool kBarrier, bool kXor>
__device__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = kXor ? warp_sum(v) : warp_sum_down(v);
  if (lane == 0) scratch[warp] = v;
  if (kBarrier) __syncthreads();  // planted bug when false: warps read partials not yet written
  v = lane < warps ? scratch[lane] : 0.0f;
  v = kXor ? warp_sum(v) : warp_sum_down(v);
  __syncthreads();
  return v;
}

template <bool kBarrier, bool kXor>
__global__ void row_sum_kernel(float* out, const float* in, int m) {
  __shared__ float scratch[32];
  const float* row = in + static_cast<std::size_t>(blockIdx.x) * m;
  float s = 0.0f;
  for (int j = threadIdx.x; j < m; j += blockDim.x) s += row[j];
  s = block_sum<kBarrier, kXor>(s, scratch);
  if (threadIdx.x == blockDim.x - 1) out[blockIdx.x] = s;  // the last thread, not thread 0, writes
}

// An elementwise add (elementwise.cu) with the right bound and with `<=` (planted off-by-one).
template <bool kOffByOne>
__global__ void add_kernel(float* out, const float* a, const float* b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; kOffByOne ? i <= n : i < n; i += gridDim.x * blockDim.x)
    out[i] = a[i] + b[i];
}

// A shared tile shifted by one (planted off-by-one on shared memory: thread 31 writes tile[32]).
template <bool kOffByOne>
__global__ void shift_kernel(float* out, const float* in) {
  __shared__ float tile[32];
  tile[threadIdx.x + (kOffByOne ? 1 : 0)] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 32];
}

// Half the warp leaves before a full-mask shuffle: the shuffle waits for lanes that never come.
__global__ void early_exit_shuffle_kernel(float* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(kFull, 1.0f, 1);
}

__global__ void touch_kernel(float* p) { p[threadIdx.x] = 1.0f; }

__global__ void dynamic_smem_kernel(float* out, int n) {
  float* buf = attnlab::cuda::detail::dynamic_shared<float>();
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int i = 0; i < n; ++i) s += buf[i];
    out[0] = s;
  }
}

__global__ void intrinsics_kernel(int* out) {
  const int t = threadIdx.x, lane = t % 32;
  int* o = out + t * 8;
  o[0] = __shfl_sync(kFull, t, 3);             // lane 3 of this warp
  o[1] = __shfl_xor_sync(kFull, t, 5);         // lane ^ 5
  o[2] = __shfl_down_sync(kFull, t, 4);        // lane + 4, own value past the end
  o[3] = __shfl_up_sync(kFull, t, 4);          // lane − 4, own value before the start
  o[4] = __shfl_down_sync(kFull, t, 2, 8);     // width 8: stays inside groups of 8
  o[5] = static_cast<int>(__ballot_sync(kFull, lane % 3 == 0));
  o[6] = __syncthreads_count(t % 2);
  o[7] = __syncthreads_or(t == 37) + 2 * __syncthreads_and(t < 1000);
}

__global__ void atomic_kernel(float* sum, int* count) {
  atomicAdd(sum, 0.5f);
  atomicAdd(count, 1);
}

std::vector<float> row_sums_ref(const std::vector<float>& in, int rows, int m) {
  std::vector<float> r(static_cast<std::size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    double s = 0;
    for (int j = 0; j < m; ++j) s += in[static_cast<std::size_t>(i) * m + j];
    r[static_cast<std::size_t>(i)] = static_cast<float>(s);
  }
  return r;
}

bool near(const std::vector<float>& a, const std::vector<float>& b, float tol = 1e-4f) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= tol * std::max(1.0f, std::fabs(b[i])))) return false;
  return true;
}

template <bool kBarrier, bool kXor>
std::pair<Outcome, bool> run_row_sum() {
  const int rows = 5, m = 300;
  std::mt19937 rng(7);
  std::normal_distribution<float> d;
  std::vector<float> in(static_cast<std::size_t>(rows) * m);
  for (float& x : in) x = d(rng);
  float* din = dev(in);
  float* dout = dev(std::vector<float>(rows, 0.0f));
  ATTNLAB_LAUNCH((row_sum_kernel<kBarrier, kXor>), rows, 128, 0, nullptr)(dout, din, m);
  const Outcome o = outcome();
  bool right = false;
  if (o.err == cudaSuccess) {
    right = near(host(dout, rows), row_sums_ref(in, rows, m));
    cudaFree(din);
    cudaFree(dout);
  }
  return {o, right};
}

// Row-major C = A·B through column-major cuBLAS, as backend/cuda/matmul.cu maps it; kSwap plants
// the bug of passing each operand's transpose flag to the other.
template <bool kSwap>
cublasStatus_t row_major_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const float* a, int lda,
                              const float* b, int ldb, float* c, int ldc) {
  const float one = 1.0f, zero = 0.0f;
  const bool first = kSwap ? ta : tb, second = kSwap ? tb : ta;
  return cublasGemmEx(h, first ? CUBLAS_OP_T : CUBLAS_OP_N, second ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, b,
                      CUDA_R_32F, ldb, a, CUDA_R_32F, lda, &zero, c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT);
}

template <bool kSwap>
bool gemm_right(bool ta, bool tb, int m, int n, int k) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d;
  const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  std::vector<float> a(static_cast<std::size_t>(ar) * ac), b(static_cast<std::size_t>(br) * bc);
  for (float& x : a) x = d(rng);
  for (float& x : b) x = d(rng);
  std::vector<float> want(static_cast<std::size_t>(m) * n, 0.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p)
        s += static_cast<double>(ta ? a[static_cast<std::size_t>(p) * ac + i] : a[static_cast<std::size_t>(i) * ac + p]) *
             (tb ? b[static_cast<std::size_t>(j) * bc + p] : b[static_cast<std::size_t>(p) * bc + j]);
      want[static_cast<std::size_t>(i) * n + j] = static_cast<float>(s);
    }
  cublasHandle_t h;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  float *da = dev(a), *db = dev(b), *dc = dev(std::vector<float>(want.size(), 0.0f));
  const cublasStatus_t st = row_major_gemm<kSwap>(h, ta, tb, m, n, k, da, ac, db, bc, dc, n);
  bool right = st == CUBLAS_STATUS_SUCCESS && cudaGetLastError() == cudaSuccess && near(host(dc, want.size()), want);
  cudaDeviceReset();
  cublasDestroy(h);
  return right;
}

// ---- a tensor-core product (wmma, as attention.cu's bf16 forward uses it), right and wrong -----------
// One warp: the lanes stage A and B (16 × 16, bf16) in shared memory, share by share; the tensor cores
// multiply them into C in shared memory; each lane then copies one row of C (16 values, most of them
// stored by other lanes) to out. Planted bugs: no __syncwarp between staging and the loads, or between
// the store and the copy. kOffset shifts A's pointer by one element (2 bytes): not 256-bit aligned.
template <bool kSyncBeforeLoad, bool kSyncAfterStore, int kOffset = 0>
__global__ void wmma_kernel(float* out, const float* a, const float* b) {
  namespace wmma = nvcuda::wmma;
  __shared__ __nv_bfloat16 As[16 * 16 + 16], Bs[16 * 16];
  __shared__ float Cs[16 * 16];
  const int lane = threadIdx.x;
  for (int e = lane; e < 256; e += 32) {
    As[kOffset + e] = __float2bfloat16_rn(a[e]);
    Bs[e] = __float2bfloat16_rn(b[e]);
  }
  if (kSyncBeforeLoad) __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, As + kOffset, 16);
  wmma::load_matrix_sync(fb, Bs, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(Cs, fc, 16, wmma::mem_row_major);
  if (kSyncAfterStore) __syncwarp();
  if (lane < 16)
    for (int c = 0; c < 16; ++c) out[lane * 16 + c] = Cs[lane * 16 + c];
}

template <bool kSyncBeforeLoad, bool kSyncAfterStore, int kOffset = 0>
std::pair<Outcome, bool> run_wmma() {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> small(-4, 4);  // products and sums exact in bf16 and float
  std::vector<float> a(256), b(256);
  for (float& x : a) x = static_cast<float>(small(rng));
  for (float& x : b) x = static_cast<float>(small(rng));
  float* da = dev(a);
  float* db = dev(b);
  float* dout = dev(std::vector<float>(256, 0.0f));
  ATTNLAB_LAUNCH((wmma_kernel<kSyncBeforeLoad, kSyncAfterStore, kOffset>), 1, 32, 0, nullptr)(dout, da, db);
  const Outcome o = outcome();
  bool right = false;
  if (o.err == cudaSuccess) {  // a failed launch's cudaDeviceReset (outcome()) freed everything
    const auto got = host(dout, 256);
    right = true;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j) {
        float want = 0.0f;
        for (int k = 0; k < 16; ++k) want += a[i * 16 + k] * b[k * 16 + j];
        right = right && got[i * 16 + j] == want;
      }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dout);
  }
  return {o, right};
}

}  // namespace

TEST_CASE("wmma: the right use passes with the exact product; a missing __syncwarp either side, or a misaligned tile, is caught") {
  const auto [ok, right] = run_wmma<true, true>();
  CHECK_MESSAGE(ok.err == cudaSuccess, ok.detail);
  CHECK(right);
  const auto [early_load, r1] = run_wmma<false, true>();
  CHECK(early_load.err == cudaErrorLaunchFailure);
  CHECK(early_load.detail.find("hold different tiles") != std::string::npos);
  MESSAGE("no __syncwarp before the loads: " << early_load.detail);
  const auto [early_read, r2] = run_wmma<true, false>();
  CHECK(early_read.err == cudaErrorLaunchFailure);
  CHECK(early_read.detail.find("depends on the thread schedule") != std::string::npos);
  MESSAGE("no __syncwarp after the store: " << early_read.detail);
  const auto [misaligned, r3] = run_wmma<true, true, 1>();
  CHECK(misaligned.err == cudaErrorLaunchFailure);
  CHECK(misaligned.detail.find("256-bit aligned") != std::string::npos);
}

TEST_CASE("the unmodified copies pass: no false alarms") {
  const auto [o, right] = run_row_sum<true, true>();
  CHECK_MESSAGE(o.err == cudaSuccess, o.detail);
  CHECK(right);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) CHECK(gemm_right<false>(ta, tb, 7, 5, 3));
  const Child add = in_child([] {
    float* a = dev(std::vector<float>(1000, 1.0f));
    float* out = dev(std::vector<float>(1000, 0.0f));
    ATTNLAB_LAUNCH(add_kernel<false>, 4, 256, 0, nullptr)(out, a, a, 1000);
  });
  CHECK_MESSAGE(!add.failed, add.err);
  const Child shift = in_child([] {
    float* in = dev(std::vector<float>(32, 1.0f));
    float* out = dev(std::vector<float>(32, 0.0f));
    ATTNLAB_LAUNCH(shift_kernel<false>, 1, 32, 0, nullptr)(out, in);
  });
  CHECK_MESSAGE(!shift.failed, shift.err);
}

TEST_CASE("planted: a removed __syncthreads is caught (schedules disagree, or unwritten shared memory is read)") {
  const auto [o, right] = run_row_sum<false, true>();
  CHECK((o.err != cudaSuccess || !right));
  MESSAGE("caught by: " << (o.err != cudaSuccess ? o.detail : std::string("the reference comparison")));
  CHECK(o.err == cudaErrorLaunchFailure);  // the emulator itself names it
}

TEST_CASE("planted: a wrong shuffle partner (__shfl_down_sync for __shfl_xor_sync) is caught") {
  const auto [o, right] = run_row_sum<true, false>();
  CHECK((o.err != cudaSuccess || !right));
  MESSAGE("caught by: " << (o.err != cudaSuccess ? o.detail : std::string("the reference comparison (wrong sums)")));
}

TEST_CASE("planted: an off-by-one bound on device memory is caught by AddressSanitizer") {
  const Child c = in_child([] {
    float* a = dev(std::vector<float>(1000, 1.0f));
    float* out = dev(std::vector<float>(1000, 0.0f));
    ATTNLAB_LAUNCH(add_kernel<true>, 4, 256, 0, nullptr)(out, a, a, 1000);
  });
  CHECK(c.failed);
  CHECK(c.err.find("heap-buffer-overflow") != std::string::npos);
  MESSAGE("child's report starts: " << c.err.substr(0, 200));
}

TEST_CASE("planted: an off-by-one index into a __shared__ array is caught by AddressSanitizer") {
  const Child c = in_child([] {
    float* in = dev(std::vector<float>(32, 1.0f));
    float* out = dev(std::vector<float>(32, 0.0f));
    ATTNLAB_LAUNCH(shift_kernel<true>, 1, 32, 0, nullptr)(out, in);
  });
  CHECK(c.failed);
  // ASan's report, or, where UBSan's bounds check is on too (scripts/test-sanitize.sh), UBSan's,
  // which comes first for an array of known size.
  const bool asan = c.err.find("global-buffer-overflow") != std::string::npos;
  const bool ubsan = c.err.find("out of bounds for type 'float [32]'") != std::string::npos;
  CHECK((asan || ubsan));
  MESSAGE("child's report starts: " << c.err.substr(0, 200));
}

TEST_CASE("planted: a swapped cuBLAS transpose flag is caught") {
  // Square shapes would hide nothing here either: the flags pick different elements. Non-square ones
  // may also be refused by cuBLAS's own leading-dimension checks, which counts as caught as well.
  int caught = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      if (ta != tb) caught += !gemm_right<true>(ta, tb, 7, 5, 3);
  CHECK(caught == 2);
}

TEST_CASE("cublasGemmEx with bf16 storage: the combinations cuBLAS documents, sized in bf16 elements") {
  // A 2 × 3 times 3 × 2 of small integers (exact in bf16); the buffers hold exactly their bf16
  // elements, so an emulator that sized them as floats would call them out of bounds.
  auto bits = [](std::vector<float> v) {
    std::vector<std::uint16_t> out;
    for (float x : v) out.push_back(__bfloat16_as_ushort(__float2bfloat16_rn(x)));
    return out;
  };
  const std::vector<float> a{1, 2, 3, 4, 5, 6}, b{1, -1, 2, 0, -2, 3};  // row-major 2 × 3 and 3 × 2
  std::uint16_t* da = dev(bits(a));
  std::uint16_t* db = dev(bits(b));
  float* dc = dev(std::vector<float>(4, 0.0f));
  std::uint16_t* dc16 = dev(std::vector<std::uint16_t>(4, 0));
  cublasHandle_t h;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  const float one = 1.0f, zero = 0.0f;
  // Row-major C = A·B as column-major Cᵀ = Bᵀ·Aᵀ (matmul.cu's mapping).
  auto gemm = [&](cudaDataType_t at, cudaDataType_t bt, void* c, cudaDataType_t ct, cublasComputeType_t compute) {
    return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, db, bt, 2, da, at, 3, &zero, c, ct, 2, compute,
                        CUBLAS_GEMM_DEFAULT);
  };
  const std::vector<float> want{-1, 8, 2, 14};
  CHECK(gemm(CUDA_R_16BF, CUDA_R_16BF, dc, CUDA_R_32F, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_SUCCESS);
  CHECK(host(dc, 4) == want);
  CHECK(gemm(CUDA_R_16BF, CUDA_R_16BF, dc16, CUDA_R_16BF, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_SUCCESS);
  CHECK(host(dc16, 4) == bits(want));
  // Mixed operands, or a FAST_16BF compute on bf16 inputs: not a combination cuBLAS offers.
  CHECK(gemm(CUDA_R_16BF, CUDA_R_32F, dc, CUDA_R_32F, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(CUDA_R_32F, CUDA_R_32F, dc16, CUDA_R_16BF, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(CUDA_R_16BF, CUDA_R_16BF, dc, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16BF) == CUBLAS_STATUS_NOT_SUPPORTED);
  cublasDestroy(h);
  cudaDeviceReset();
}

TEST_CASE("a full-mask shuffle waiting for lanes that exited is reported, not hung") {
  float* out = dev(std::vector<float>(32, 0.0f));
  ATTNLAB_LAUNCH(early_exit_shuffle_kernel, 1, 32, 0, nullptr)(out);
  const Outcome o = outcome();
  CHECK(o.err == cudaErrorLaunchFailure);
  CHECK(o.detail.find("exited") != std::string::npos);
}

TEST_CASE("a host pointer passed to a kernel is an illegal address") {
  std::vector<float> h(32);
  ATTNLAB_LAUNCH(touch_kernel, 1, 32, 0, nullptr)(h.data());
  const Outcome o = outcome();
  CHECK(o.err == cudaErrorIllegalAddress);
  CHECK(h[0] == 0.0f);  // and nothing ran
}

TEST_CASE("launch limits give the errors a device gives") {
  float* p = dev(std::vector<float>(2048, 0.0f));
  ATTNLAB_LAUNCH(touch_kernel, 1, 1025, 0, nullptr)(p);
  CHECK(outcome().err == cudaErrorInvalidConfiguration);
  ATTNLAB_LAUNCH(touch_kernel, 1, dim3(32, 1, 65), 0, nullptr)(p);
  CHECK(outcome().err == cudaErrorInvalidConfiguration);
  ATTNLAB_LAUNCH(touch_kernel, dim3(1, 65536), 32, 0, nullptr)(p);
  CHECK(outcome().err == cudaErrorInvalidConfiguration);
  ATTNLAB_LAUNCH(touch_kernel, 0, 32, 0, nullptr)(p);
  CHECK(outcome().err == cudaErrorInvalidConfiguration);
  // Dynamic shared memory over 48 KB needs the opt-in; with it the same launch runs.
  const int n = 16 * 1024;  // 64 KB of floats
  p = dev(std::vector<float>(1, 0.0f));
  ATTNLAB_LAUNCH(dynamic_smem_kernel, 1, 256, n * sizeof(float), nullptr)(p, n);
  CHECK(outcome().err == cudaErrorInvalidValue);
  p = dev(std::vector<float>(1, 0.0f));
  REQUIRE(cudaFuncSetAttribute(dynamic_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, n * 4) == cudaSuccess);
  ATTNLAB_LAUNCH(dynamic_smem_kernel, 1, 256, n * sizeof(float), nullptr)(p, n);
  const Outcome o = outcome();
  CHECK_MESSAGE(o.err == cudaSuccess, o.detail);
  CHECK(host(p, 1)[0] == static_cast<float>(n));
  cudaDeviceReset();
}

TEST_CASE("intrinsics follow the CUDA Programming Guide") {
  const int threads = 64;
  int* out = dev(std::vector<int>(threads * 8, -7));
  ATTNLAB_LAUNCH(intrinsics_kernel, 1, threads, 0, nullptr)(out);
  const Outcome o = outcome();
  REQUIRE_MESSAGE(o.err == cudaSuccess, o.detail);
  const auto h = host(out, threads * 8);
  unsigned ballot = 0;
  for (int l = 0; l < 32; l += 3) ballot |= 1u << l;
  for (int t = 0; t < threads; ++t) {
    CAPTURE(t);
    const int lane = t % 32, base = t - lane;
    const int* r = h.data() + t * 8;
    CHECK(r[0] == base + 3);
    CHECK(r[1] == base + (lane ^ 5));
    CHECK(r[2] == (lane + 4 < 32 ? t + 4 : t));
    CHECK(r[3] == (lane >= 4 ? t - 4 : t));
    CHECK(r[4] == (lane % 8 + 2 < 8 ? t + 2 : t));
    CHECK(static_cast<unsigned>(r[5]) == ballot);
    CHECK(r[6] == threads / 2);
    CHECK(r[7] == 1 + 2);
  }
  float* sum = dev(std::vector<float>(1, 0.0f));
  int* count = dev(std::vector<int>(1, 0));
  ATTNLAB_LAUNCH(atomic_kernel, 3, 100, 0, nullptr)(sum, count);
  REQUIRE(outcome().err == cudaSuccess);
  CHECK(host(sum, 1)[0] == 150.0f);
  CHECK(host(count, 1)[0] == 300);
  cudaDeviceReset();
}

TEST_CASE("memory: poisoned on allocation, copies and memsets checked against the allocation") {
  float* p = nullptr;
  REQUIRE(cudaMalloc(&p, 16 * sizeof(float)) == cudaSuccess);
  CHECK(std::isnan(host(p, 16)[5]));
  std::vector<float> big(17, 1.0f);
  CHECK(cudaMemcpy(p, big.data(), big.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemset(p + 8, 0, 9 * sizeof(float)) == cudaErrorInvalidValue);
  CHECK(cudaFree(p) == cudaSuccess);
  CHECK(cudaFree(p) == cudaErrorInvalidValue);  // freed twice
  (void)cudaGetLastError();
}
