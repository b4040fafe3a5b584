// The cuBLAS wrapper (see matmul.hpp).
#include "backend/cuda/matmul.hpp"
#include "backend/cuda/kernel_choice.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <cublasLt.h>
#include <cuda_bf16.h>

#include "backend/cuda/bf16_storage.hpp"
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
  // cuBLASLt (emulation/cublasLt.h)
  decltype(&cublasLtCreate) lt_create = &cublasLtCreate;
  decltype(&cublasLtDestroy) lt_destroy = &cublasLtDestroy;
  decltype(&cublasLtMatmulDescCreate) lt_desc_create = &cublasLtMatmulDescCreate;
  decltype(&cublasLtMatmulDescDestroy) lt_desc_destroy = &cublasLtMatmulDescDestroy;
  decltype(&cublasLtMatmulDescSetAttribute) lt_desc_set = &cublasLtMatmulDescSetAttribute;
  decltype(&cublasLtMatrixLayoutCreate) lt_layout_create = &cublasLtMatrixLayoutCreate;
  decltype(&cublasLtMatrixLayoutDestroy) lt_layout_destroy = &cublasLtMatrixLayoutDestroy;
  decltype(&cublasLtMatmulPreferenceCreate) lt_pref_create = &cublasLtMatmulPreferenceCreate;
  decltype(&cublasLtMatmulPreferenceDestroy) lt_pref_destroy = &cublasLtMatmulPreferenceDestroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) lt_pref_set = &cublasLtMatmulPreferenceSetAttribute;
  decltype(&cublasLtMatmulAlgoGetHeuristic) lt_heuristic = &cublasLtMatmulAlgoGetHeuristic;
  decltype(&cublasLtMatmul) lt_matmul = &cublasLtMatmul;
  std::string lt_error;  // empty: cuBLASLt is there
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
  // cuBLASLt (libcublasLt.so.<major>, which libcublas itself loads): optional, for gemm_bias.
  decltype(&cublasLtCreate) lt_create = nullptr;
  decltype(&cublasLtDestroy) lt_destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) lt_desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) lt_desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) lt_desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) lt_layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) lt_layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) lt_pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) lt_pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) lt_pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) lt_heuristic = nullptr;
  decltype(&cublasLtMatmul) lt_matmul = nullptr;
  std::string lt_error;  // why gemm_bias cannot use cuBLASLt (empty: it can)
};
// dlopen of `name` where the program's own libraries are found (its run path), else in the folder
// of the library that holds `anchor` (the CUDA runtime for cuBLAS, cuBLAS for cuBLASLt).
void* open_library(const std::string& name, const void* anchor) {
  void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  Dl_info info{};
  if (!lib && anchor && dladdr(anchor, &info) && info.dli_fname) {
    std::string dir = info.dli_fname;
    dir = dir.substr(0, dir.find_last_of('/') + 1);
    lib = dlopen((dir + name).c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  return lib;
}
// fn = `symbol` of lib; a missing one is named in `error` (the first only).
template <typename Fn>
void load_symbol(void* lib, const std::string& lib_name, Fn& fn, const char* symbol, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (!fn && error.empty()) error = lib_name + " has no " + symbol;
}

const CublasApi& load_cublas() {
  static const CublasApi api = [] {
    CublasApi a;
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = open_library(name, reinterpret_cast<const void*>(static_cast<cudaError_t (*)(void**, std::size_t)>(&cudaMalloc)));
    if (!lib) {
      const char* why = dlerror();
      a.error = "cannot load " + name + " (" + (why ? why : "not found") + ")";
      return a;
    }
    auto sym = [&](auto& fn, const char* symbol) { load_symbol(lib, name, fn, symbol, a.error); };
    sym(a.create, "cublasCreate_v2");
    sym(a.destroy, "cublasDestroy_v2");
    sym(a.set_stream, "cublasSetStream_v2");
    sym(a.gemm_ex, "cublasGemmEx");
    sym(a.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx");
    sym(a.status_string, "cublasGetStatusString");
    // cuBLASLt: a missing library or symbol only turns the fused bias off.
    const std::string lt_name = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lt = open_library(lt_name, reinterpret_cast<const void*>(a.create));
    if (!lt) {
      a.lt_error = "cannot load " + lt_name;
      return a;
    }
    auto lsym = [&](auto& fn, const char* symbol) { load_symbol(lt, lt_name, fn, symbol, a.lt_error); };
    lsym(a.lt_create, "cublasLtCreate");
    lsym(a.lt_destroy, "cublasLtDestroy");
    lsym(a.lt_desc_create, "cublasLtMatmulDescCreate");
    lsym(a.lt_desc_destroy, "cublasLtMatmulDescDestroy");
    lsym(a.lt_desc_set, "cublasLtMatmulDescSetAttribute");
    lsym(a.lt_layout_create, "cublasLtMatrixLayoutCreate");
    lsym(a.lt_layout_destroy, "cublasLtMatrixLayoutDestroy");
    lsym(a.lt_pref_create, "cublasLtMatmulPreferenceCreate");
    lsym(a.lt_pref_destroy, "cublasLtMatmulPreferenceDestroy");
    lsym(a.lt_pref_set, "cublasLtMatmulPreferenceSetAttribute");
    lsym(a.lt_heuristic, "cublasLtMatmulAlgoGetHeuristic");
    lsym(a.lt_matmul, "cublasLtMatmul");
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

// out[r, c] = bias[c] for every row of a row-major m × n matrix with leading dimension ldc: the
// starting value the gemm adds the product to, where cuBLASLt's bias epilogue is not used.
__global__ void bias_rows_kernel(float* __restrict__ out, const float* __restrict__ bias, int m, int n, int ldc) {
  const std::size_t total = static_cast<std::size_t>(m) * n;
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[(e / n) * ldc + e % n] = bias[e % n];
}

// c[r, c] = max(c[r, c], 0) over a row-major m × n matrix with leading dimension ldc (the columns
// beyond n untouched): gemm_bias's ReLU where cuBLASLt's epilogue is not used. The comparison of
// relu_forward (a NaN becomes 0).
__global__ void relu_rows_kernel(float* __restrict__ c, int m, int n, int ldc) {
  const std::size_t total = static_cast<std::size_t>(m) * n;
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float& x = c[(e / n) * ldc + e % n];
    x = x > 0.0f ? x : 0.0f;
  }
}

// cuBLASLt's workspace: what cuBLAS itself takes by default on Hopper.
constexpr std::size_t kLtWorkspaceBytes = 32u << 20;

}  // namespace

// cuBLASLt state of one Blas: the handle, its workspace, and per shape the descriptors and the
// algorithm the heuristic chose (asking costs tens of microseconds; a training step repeats its
// shapes). A shape cuBLASLt refused is remembered too, and goes the two-step way from then on.
struct Blas::Lt {
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool ok = false;
  };
  cublasLtHandle_t handle = nullptr;
  DeviceArray<unsigned char> workspace;
  // (storage, math, epilogue, m, n, k, lda, ldb, ldc, alignment of a, of b, of c)
  std::map<std::tuple<int, int, int, int, int, int, int, int, int, int, int, int>, Plan> plans;
  bool unusable = false;  // no cuBLASLt, or its handle could not be made

  ~Lt() {
    const CublasApi* api = cublas_if_loaded();
    if (!api) return;
    for (auto& [key, p] : plans) {
      if (p.desc) (void)api->lt_desc_destroy(p.desc);
      for (cublasLtMatrixLayout_t l : {p.a, p.b, p.d})
        if (l) (void)api->lt_layout_destroy(l);
    }
    if (handle) (void)api->lt_destroy(handle);
  }
};

Blas::Lt& Blas::lt() {
  if (!lt_) {
    lt_ = std::make_unique<Lt>();
    const CublasApi& api = cublas();
    if (!api.lt_error.empty() || api.lt_create(&lt_->handle) != CUBLAS_STATUS_SUCCESS) {
      lt_->handle = nullptr;
      lt_->unusable = true;
    } else {
      lt_->workspace = DeviceArray<unsigned char>(kLtWorkspaceBytes);
    }
  }
  return *lt_;
}

namespace {

// The largest power of two (at most 256) that divides a pointer's address.
std::uint32_t alignment(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

// What one cuBLASLt product reads and writes: float32 operands and output, computed as `math` says
// (gemm_bias), or bf16 operands and output computed in float32 with a float32 bias
// (gemm_bias_bf16_storage; the bias's type named, since cuBLASLt's default is D's).
struct LtTypes {
  bool bf16;
  Math math;
};

// One cuBLASLt matmul with the bias epilogue, the ReLU-and-bias one, or ReLU alone (no bias), for
// gemm_bias and gemm_bias_bf16_storage (column-major: D (n × m) = Bᵀ-view · Aᵀ-view + bias per row of
// D, then ReLU). False when cuBLASLt cannot do it, and nothing was launched.
bool lt_matmul_bias(Blas& blas, LtTypes types, int m, int n, int k, const void* a, int lda, const void* b, int ldb,
                    const float* bias, void* c, int ldc, bool relu) {
  Blas::Lt& lt = blas.lt();
  if (lt.unusable) return false;
  // The bias epilogue reads the bias in vectors: an unaligned one (a tiny model's parameter offsets)
  // goes the two-step way rather than trusting every algorithm with it.
  if (bias && alignment(bias) < 16) return false;
  const CublasApi& api = cublas();
  const cublasLtEpilogue_t epilogue =
      bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS) : CUBLASLT_EPILOGUE_RELU;
  // cuBLASLt's heuristic assumes 256-byte-aligned matrices unless told: a weight at an offset in the
  // parameter block, or a column block, is less aligned, so the plan says how aligned each one is.
  const std::uint32_t al_a = alignment(a), al_b = alignment(b), al_c = alignment(c);
  auto [it, fresh] = lt.plans.try_emplace(std::make_tuple(types.bf16 ? 1 : 0, static_cast<int>(types.math),
                                                          static_cast<int>(epilogue), m, n, k, lda, ldb, ldc,
                                                          static_cast<int>(al_a), static_cast<int>(al_b),
                                                          static_cast<int>(al_c)));
  Blas::Lt::Plan& p = it->second;
  if (fresh) {
    // Row-major C = A·B + bias is column-major Cᵀ (n × m) = Bᵀ · Aᵀ, where the column-major view of
    // each row-major buffer is already its transpose: cuBLAS's A is our B (n × k, ld = ldb), its B
    // our A (k × m, ld = lda), D our C (n × m, ld = ldc), and the bias (n values) one per row of D.
    const cublasOperation_t no = CUBLAS_OP_N;
    const cudaDataType_t t = types.bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute = types.bf16 ? CUBLAS_COMPUTE_32F : compute_type(types.math);
    const std::int32_t bias_type = CUDA_R_32F;
    const std::uint64_t ws = kLtWorkspaceBytes;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    bool ok = api.lt_desc_create(&p.desc, compute, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
              api.lt_desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &no, sizeof(no)) == CUBLAS_STATUS_SUCCESS &&
              api.lt_desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof(no)) == CUBLAS_STATUS_SUCCESS &&
              api.lt_desc_set(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)) == CUBLAS_STATUS_SUCCESS &&
              (!bias || api.lt_desc_set(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)) == CUBLAS_STATUS_SUCCESS) &&
              (!bias || !types.bf16 ||
               api.lt_desc_set(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)) == CUBLAS_STATUS_SUCCESS) &&
              api.lt_layout_create(&p.a, t, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(k), ldb) == CUBLAS_STATUS_SUCCESS &&
              api.lt_layout_create(&p.b, t, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(m), lda) == CUBLAS_STATUS_SUCCESS &&
              api.lt_layout_create(&p.d, t, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(m), ldc) == CUBLAS_STATUS_SUCCESS &&
              api.lt_pref_create(&pref) == CUBLAS_STATUS_SUCCESS &&
              api.lt_pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)) == CUBLAS_STATUS_SUCCESS &&
              // cuBLAS's A is our b, its B our a, its C and D our c.
              api.lt_pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_b, sizeof(al_b)) == CUBLAS_STATUS_SUCCESS &&
              api.lt_pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_a, sizeof(al_a)) == CUBLAS_STATUS_SUCCESS &&
              api.lt_pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof(al_c)) == CUBLAS_STATUS_SUCCESS &&
              api.lt_pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof(al_c)) == CUBLAS_STATUS_SUCCESS &&
              api.lt_heuristic(lt.handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &result, &found) == CUBLAS_STATUS_SUCCESS &&
              found > 0 && result.state == CUBLAS_STATUS_SUCCESS && result.workspaceSize <= kLtWorkspaceBytes;
    if (pref) (void)api.lt_pref_destroy(pref);
    p.algo = result.algo;
    p.ok = ok;
  }
  if (!p.ok) return false;
  if (bias && api.lt_desc_set(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)) != CUBLAS_STATUS_SUCCESS) {
    p.ok = false;
    return false;
  }
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t cublasLtMatmul_status = api.lt_matmul(lt.handle, p.desc, &one, b, p.a, a, p.b, &zero, c, p.d, c,
                                                             p.d, &p.algo, lt.workspace.get(), kLtWorkspaceBytes,
                                                             blas.stream());
  if (cublasLtMatmul_status == CUBLAS_STATUS_NOT_SUPPORTED) {
    p.ok = false;
    return false;
  }
  CUBLAS_CHECK(cublasLtMatmul_status);
  return true;
}

}  // namespace

Blas::Blas(Stream stream) : stream_(stream) {
  lt_enabled_ = kernel_choice().cublaslt_epilogue;
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

void gemm_bias(Blas& blas, Math math, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
               const float* bias, float* c, int ldc, bool relu) {
  check_gemm("cuda::gemm_bias", false, false, m, n, k, lda, ldb, ldc, 1);
  blas.last_fused_ = false;
  if (m == 0 || n == 0) return;
  if (!bias) throw ShapeError("cuda::gemm_bias: no bias (use gemm)");
  if (k > 0 && blas.lt_enabled_ && lt_matmul_bias(blas, {false, math}, m, n, k, a, lda, b, ldb, bias, c, ldc, relu)) {
    blas.last_fused_ = true;
    return;
  }
  const std::size_t total = static_cast<std::size_t>(m) * n;
  ATTNLAB_LAUNCH(bias_rows_kernel, detail::grid_for(total, 256), 256, 0, blas.stream())(c, bias, m, n, ldc);
  CUDA_CHECK_LAUNCH();
  gemm(blas, math, false, false, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c, ldc);
  if (relu) {
    ATTNLAB_LAUNCH(relu_rows_kernel, detail::grid_for(total, 256), 256, 0, blas.stream())(c, m, n, ldc);
    CUDA_CHECK_LAUNCH();
  }
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

namespace {
// gemm_bf16_storage's one call: bf16 A and B, C of type c_type, computed in float32.
void gemm_bf16_ex(Blas& blas, bool ta, bool tb, int m, int n, int k, float alpha, const std::uint16_t* a, int lda,
                  const std::uint16_t* b, int ldb, float beta, void* c, cudaDataType_t c_type, int ldc) {
  check_gemm("cuda::gemm_bf16_storage", ta, tb, m, n, k, lda, ldb, ldc, 1);
  if (k == 0) throw ShapeError("cuda::gemm_bf16_storage: k = 0 (a product of nothing; use gemm)");
  if (m == 0 || n == 0) return;
  // The row-major mapping of gemm (B first, the same transpose flags).
  CUBLAS_CHECK(cublas().gemm_ex(blas.handle(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                                &alpha, b, CUDA_R_16BF, ldb, a, CUDA_R_16BF, lda, &beta, c, c_type, ldc,
                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
}  // namespace

void gemm_bf16_storage(Blas& blas, bool ta, bool tb, int m, int n, int k, float alpha, const std::uint16_t* a, int lda,
                       const std::uint16_t* b, int ldb, float beta, float* c, int ldc) {
  gemm_bf16_ex(blas, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, CUDA_R_32F, ldc);
}

void gemm_bf16_storage(Blas& blas, bool ta, bool tb, int m, int n, int k, float alpha, const std::uint16_t* a, int lda,
                       const std::uint16_t* b, int ldb, float beta, std::uint16_t* c, int ldc) {
  gemm_bf16_ex(blas, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, CUDA_R_16BF, ldc);
}

void gemm_bias_bf16_storage(Blas& blas, int m, int n, int k, const std::uint16_t* a, const std::uint16_t* b,
                            const float* bias, std::uint16_t* c, bool relu) {
  check_gemm("cuda::gemm_bias_bf16_storage", false, false, m, n, k, std::max(1, k), n, n, 1);
  blas.last_fused_ = false;
  if (m == 0 || n == 0) return;
  // Nothing to add: the product alone. (k = 0 falls through to bias_act_bf16, which writes zeros.)
  if (!bias && !relu && k > 0) return gemm_bf16_storage(blas, false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  if (k > 0 && blas.lt_enabled_ && lt_matmul_bias(blas, {true, Math::Fp32}, m, n, k, a, k, b, n, bias, c, n, relu)) {
    blas.last_fused_ = true;
    return;
  }
  if (k > 0) gemm_bf16_storage(blas, false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  bias_act_bf16(c, bias, m, n, relu, k > 0, blas.stream());
}

StorageSeconds bf16_storage_seconds(int m, int n, int k, bool trans_b, int repeats) {
  if (m < 1 || n < 1 || k < 1 || repeats < 1)
    throw ShapeError("cuda::bf16_storage_seconds: m, n, k and repeats must be ≥ 1 (m = " + std::to_string(m) +
                     ", n = " + std::to_string(n) + ", k = " + std::to_string(k) + ")");
  const std::size_t na = static_cast<std::size_t>(m) * k, nb = static_cast<std::size_t>(k) * n,
                    nc = static_cast<std::size_t>(m) * n;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> ha(na), hb(nb);
  for (float& x : ha) x = u(rng);
  for (float& x : hb) x = u(rng);
  std::vector<std::uint16_t> ha16(na), hb16(nb);
  for (std::size_t i = 0; i < na; ++i) ha16[i] = __bfloat16_as_ushort(__float2bfloat16_rn(ha[i]));
  for (std::size_t i = 0; i < nb; ++i) hb16[i] = __bfloat16_as_ushort(__float2bfloat16_rn(hb[i]));
  DeviceArray<float> a(ha), b(hb), c(nc);
  DeviceArray<std::uint16_t> a16(ha16), b16(hb16), c16(nc);
  Blas blas;
  const int ldb = trans_b ? k : n;
  auto run = [&](int variant) {
    if (variant == 0)
      gemm(blas, Math::Bf16, false, trans_b, m, n, k, 1.0f, a.get(), k, b.get(), ldb, 0.0f, c.get(), n);
    else if (variant == 1)
      gemm_bf16_storage(blas, false, trans_b, m, n, k, 1.0f, a16.get(), k, b16.get(), ldb, 0.0f, c.get(), n);
    else
      gemm_bf16_storage(blas, false, trans_b, m, n, k, 1.0f, a16.get(), k, b16.get(), ldb, 0.0f, c16.get(), n);
  };
  struct Event {  // destroyed however the function leaves
    cudaEvent_t e = nullptr;
    Event() { CUDA_CHECK(cudaEventCreate(&e)); }
    ~Event() { (void)cudaEventDestroy(e); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
  } start, stop;
  // Seconds of `calls` back-to-back calls of one variant. The emulator's events carry no time (its
  // work is done when issued): there the host's clock, which times the CPU, never a GPU.
  const bool emulated = cuda_emulated();
  auto timed = [&](int variant, int calls) {
    if (emulated) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) run(variant);
      device_synchronize();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    CUDA_CHECK(cudaEventRecord(start.e, blas.stream()));
    for (int i = 0; i < calls; ++i) run(variant);
    CUDA_CHECK(cudaEventRecord(stop.e, blas.stream()));
    CUDA_CHECK(cudaEventSynchronize(stop.e));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.e, stop.e));
    return static_cast<double>(ms) / 1e3;
  };
  int calls[3];
  for (int v = 0; v < 3; ++v) {  // warm-up (cuBLAS picks its kernel), and the calls a round takes
    const double once = timed(v, 1);
    calls[v] = std::clamp(static_cast<int>(1e-3 / std::max(once, 1e-6)), 1, 50);
  }
  std::vector<double> s[3];
  for (int r = 0; r < repeats; ++r)
    for (int v = 0; v < 3; ++v) s[v].push_back(timed(v, calls[v]) / calls[v]);
  auto median = [](std::vector<double>& x) {
    std::sort(x.begin(), x.end());
    return x.size() % 2 ? x[x.size() / 2] : 0.5 * (x[x.size() / 2 - 1] + x[x.size() / 2]);
  };
  StorageSeconds out;
  out.fp32 = median(s[0]);
  out.bf16_inputs = median(s[1]);
  out.bf16 = median(s[2]);
  return out;
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
