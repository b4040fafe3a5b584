// The cuBLAS wrapper (see matmul.hpp).
#include "backend/cuda/matmul.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/common.cuh"

#if !defined(ATTNLAB_CUDA_EMULATED)
#include <dlfcn.h>
#endif

namespace attnlab::cuda {

namespace {

// The two products' signatures (cuBLAS's headers overload these names for C++, so decltype cannot).
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType_t, int, const void*, cudaDataType_t, int, const void*, void*,
                                    cudaDataType_t, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                  const void*, const void*, cudaDataType_t, int, long long, const void*,
                                                  cudaDataType_t, int, long long, const void*, void*, cudaDataType_t, int,
                                                  long long, int, cublasComputeType_t, cublasGemmAlgo_t);

#if defined(ATTNLAB_CUDA_EMULATED)
// The emulator's cuBLAS (emulation/cublas_v2.h) is part of the program.
struct CublasApi {
  decltype(&cublasCreate) create = &cublasCreate;
  decltype(&cublasDestroy) destroy = &cublasDestroy;
  decltype(&cublasSetStream) set_stream = &cublasSetStream;
  GemmExFn gemm_ex = &cublasGemmEx;
  GemmStridedBatchedExFn gemm_strided_batched_ex = &cublasGemmStridedBatchedEx;
  decltype(&cublasGetStatusString) status_string = &cublasGetStatusString;
};
const CublasApi* cublas_if_loaded() {
  static const CublasApi api;
  return &api;
}
const CublasApi& cublas() { return *cublas_if_loaded(); }
#else
// cuBLAS loaded on first use (see CMakeLists.txt): libcublas.so.<major of the headers>, found as the
// program's own libraries are (its run path), else next to the CUDA runtime it was linked with.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  GemmExFn gemm_ex = nullptr;
  GemmStridedBatchedExFn gemm_strided_batched_ex = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  std::string error;  // why it could not be loaded
};
const CublasApi& load_cublas() {
  static const CublasApi api = [] {
    CublasApi a;
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      Dl_info info{};
      if (dladdr(reinterpret_cast<void*>(static_cast<cudaError_t (*)(void**, std::size_t)>(&cudaMalloc)), &info) && info.dli_fname) {
        std::string dir = info.dli_fname;
        dir = dir.substr(0, dir.find_last_of('/') + 1);
        lib = dlopen((dir + name).c_str(), RTLD_NOW | RTLD_LOCAL);
      }
    }
    if (!lib) {
      const char* why = dlerror();
      a.error = "cannot load " + name + " (" + (why ? why : "not found") + ")";
      return a;
    }
    auto sym = [&](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
      if (!fn && a.error.empty()) a.error = name + " has no " + symbol;
    };
    sym(a.create, "cublasCreate_v2");
    sym(a.destroy, "cublasDestroy_v2");
    sym(a.set_stream, "cublasSetStream_v2");
    sym(a.gemm_ex, "cublasGemmEx");
    sym(a.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx");
    sym(a.status_string, "cublasGetStatusString");
    return a;
  }();
  return api;
}
const CublasApi* cublas_if_loaded() {
  const CublasApi& a = load_cublas();
  return a.error.empty() ? &a : nullptr;
}
const CublasApi& cublas() {
  const CublasApi& a = load_cublas();
  if (!a.error.empty()) throw RuntimeError("cuBLAS: " + a.error + "; the CUDA toolkit's libraries must be installed");
  return a;
}
#endif

cublasComputeType_t compute_type(Math math) {
  switch (math) {
    case Math::Tf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case Math::Bf16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    case Math::Fp32: break;
  }
  return CUBLAS_COMPUTE_32F;
}

void check_gemm(const char* what, bool ta, bool tb, int m, int n, int k, int lda, int ldb, int ldc, int batch) {
  auto bad = [&](const std::string& why) {
    throw ShapeError(std::string(what) + ": " + why + " (m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                     ", k = " + std::to_string(k) + ", lda = " + std::to_string(lda) + ", ldb = " +
                     std::to_string(ldb) + ", ldc = " + std::to_string(ldc) + ")");
  };
  if (m < 0 || n < 0 || k < 0 || batch < 0) bad("negative size");
  if (lda < std::max(1, ta ? m : k)) bad("lda is smaller than A's row length");
  if (ldb < std::max(1, tb ? k : n)) bad("ldb is smaller than B's row length");
  if (ldc < std::max(1, n)) bad("ldc is smaller than C's row length");
}

// k = 0: op(A)·op(B) is an m × n matrix of zeros, so C = beta · C (beta = 0 writes zeros, never
// reading C, as BLAS does). Done here rather than trusting every cuBLAS version with k = 0.
__global__ void scale_kernel(float* c, int m, int n, int ldc, long long stride_c, int batch, float beta) {
  const std::size_t total = static_cast<std::size_t>(batch) * m * n;
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t bi = e / (static_cast<std::size_t>(m) * n), rest = e % (static_cast<std::size_t>(m) * n);
    float* x = c + bi * stride_c + (rest / n) * ldc + rest % n;
    *x = beta == 0.0f ? 0.0f : beta * *x;
  }
}

void scale_c(Blas& blas, float* c, int m, int n, int ldc, long long stride_c, int batch, float beta) {
  const std::size_t total = static_cast<std::size_t>(batch) * m * n;
  if (total == 0) return;
  ATTNLAB_LAUNCH(scale_kernel, detail::grid_for(total, 256), 256, 0, blas.stream())(c, m, n, ldc, stride_c, batch, beta);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Blas::Blas(Stream stream) : stream_(stream) {
  cublasHandle_t h = nullptr;
  CUBLAS_CHECK(cublas().create(&h));
  handle_ = h;
  const cublasStatus_t st = cublas().set_stream(h, stream);
  if (st != CUBLAS_STATUS_SUCCESS) {
    (void)cublas().destroy(h);
    handle_ = nullptr;
    CUBLAS_CHECK(st);
  }
}

Blas::~Blas() {
  if (handle_) (void)cublas().destroy(handle_);
}

void gemm(Blas& blas, Math math, bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  check_gemm("cuda::gemm", ta, tb, m, n, k, lda, ldb, ldc, 1);
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_c(blas, c, m, n, ldc, 0, 1, beta);
  // Row-major C = op(A)·op(B)  ⇔  column-major Cᵀ (n × m) = op(B)ᵀ·op(A)ᵀ, where the column-major view
  // of each row-major buffer is already its transpose: pass B first, with the same transpose flags.
  CUBLAS_CHECK(cublas().gemm_ex(blas.handle(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                            &alpha, b, CUDA_R_32F, ldb, a, CUDA_R_32F, lda, &beta, c, CUDA_R_32F, ldc,
                            compute_type(math), CUBLAS_GEMM_DEFAULT));
}

void gemm_strided_batched(Blas& blas, Math math, bool ta, bool tb, int m, int n, int k, float alpha, const float* a,
                          int lda, long long stride_a, const float* b, int ldb, long long stride_b, float beta,
                          float* c, int ldc, long long stride_c, int batch) {
  check_gemm("cuda::gemm_strided_batched", ta, tb, m, n, k, lda, ldb, ldc, batch);
  if (m == 0 || n == 0 || batch == 0) return;
  if (k == 0) return scale_c(blas, c, m, n, ldc, stride_c, batch, beta);
  CUBLAS_CHECK(cublas().gemm_strided_batched_ex(blas.handle(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          n, m, k, &alpha, b, CUDA_R_32F, ldb, stride_b, a, CUDA_R_32F, lda, stride_a,
                                          &beta, c, CUDA_R_32F, ldc, stride_c, batch, compute_type(math),
                                          CUBLAS_GEMM_DEFAULT));
}

void matmul_nn(Blas& blas, Math math, float* c, const float* a, const float* b, int m, int n, int k) {
  gemm(blas, math, false, false, m, n, k, 1.0f, a, std::max(1, k), b, std::max(1, n), 0.0f, c, std::max(1, n));
}

void matmul_nt(Blas& blas, Math math, float* c, const float* a, const float* b, int m, int n, int k) {
  gemm(blas, math, false, true, m, n, k, 1.0f, a, std::max(1, k), b, std::max(1, k), 0.0f, c, std::max(1, n));
}

void matmul_tn(Blas& blas, Math math, float* c, const float* a, const float* b, int m, int n, int k) {
  gemm(blas, math, true, false, m, n, k, 1.0f, a, std::max(1, m), b, std::max(1, n), 0.0f, c, std::max(1, n));
}

namespace detail {
const char* cublas_status_string(cublasStatus_t st) {
  const CublasApi* api = cublas_if_loaded();
  return api ? api->status_string(st) : "cuBLAS not loaded";
}
}  // namespace detail

}  // namespace attnlab::cuda
