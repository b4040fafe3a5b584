#pragma once
// Matrix products on the GPU through cuBLAS, with the row-major conventions of model::gemm
// (backend/cpu/ops.hpp): C = alpha · op(A) · op(B) + beta · C, where op(X) is X or Xᵀ, all row-major with
// explicit leading dimensions (so heads can be addressed as column blocks of an N × C activation).
//
// Shape legend: op(A) is m × k, op(B) is k × n, C is m × n. Stored (row-major): A is m × k (k × m when
// trans_a) with lda ≥ its column count; likewise B (k × n, or n × k when trans_b) with ldb; C with
// ldc ≥ n. Batched: `batch` products, the i-th at a + i·stride_a, b + i·stride_b, c + i·stride_c.
//
// cuBLAS is column-major; a row-major matrix is its transpose seen column-major, so the product is
// computed as Cᵀ = op(B)ᵀ · op(A)ᵀ: the same call with A and B (and m and n) swapped. No copies.
//
// Math: Fp32 computes in float32 (CUBLAS_COMPUTE_32F); Tf32 lets tensor cores round the inputs to
// TF32 (10-bit mantissa, about 3 decimal digits; CUBLAS_COMPUTE_32F_FAST_TF32) and accumulate in
// float32: several times faster on Ampere/Hopper, relative error ~1e-3 instead of ~1e-6. Bf16 rounds
// the float32 inputs to bfloat16 (7-bit mantissa; CUBLAS_COMPUTE_32F_FAST_16BF) and accumulates in
// float32: twice TF32's tensor-core rate, relative error ~1e-2. The buffers stay float32 either way:
// cuBLAS converts as it reads them.
#include <cstdint>
#include <memory>

#include "backend/cuda/device.hpp"

struct cublasContext;  // cuBLAS's handle type: cublasHandle_t is cublasContext*

namespace attnlab::cuda {

enum class Math { Fp32, Tf32, Bf16 };

// A cuBLAS handle bound to a stream. Creating one is slow (it allocates); keep one per stream.
class Blas {
 public:
  explicit Blas(Stream stream = nullptr);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  cublasContext* handle() const { return handle_; }
  Stream stream() const { return stream_; }

  // gemm_bias through cuBLASLt's bias epilogue (the default), or not: ATTNLAB_CUBLASLT=0 in the
  // environment turns it off for every handle made after, use_cublaslt(false) for this one.
  void use_cublaslt(bool on) { lt_enabled_ = on; }
  // Whether the last gemm_bias (or gemm_bias_bf16_storage) on this handle ran as one cuBLASLt matmul
  // (false: the two-step path).
  bool last_gemm_bias_fused() const { return last_fused_; }

  struct Lt;  // cuBLASLt's handle, workspace and the plans made so far (matmul.cu)
  Lt& lt();

 private:
  friend void gemm_bias(Blas&, Math, int, int, int, const float*, int, const float*, int, const float*, float*, int,
                        bool);
  friend void gemm_bias_bf16_storage(Blas&, int, int, int, const std::uint16_t*, const std::uint16_t*, const float*,
                                     std::uint16_t*, bool);
  cublasContext* handle_ = nullptr;
  Stream stream_ = nullptr;
  bool lt_enabled_ = true, last_fused_ = false;
  std::unique_ptr<Lt> lt_;
};

void gemm(Blas& blas, Math math, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc);

void gemm_strided_batched(Blas& blas, Math math, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                          const float* a, int lda, long long stride_a, const float* b, int ldb, long long stride_b,
                          float beta, float* c, int ldc, long long stride_c, int batch);

// C (m × n, written) = A (m × k) · B (k × n) + bias (n values, added to every row), then ReLU when
// `relu`: a linear layer's forward. One cuBLASLt matmul with the BIAS (or RELU_BIAS) epilogue adds
// the bias and applies ReLU as the product is written, so C is written once; without it (no
// algorithm for these operands, cuBLASLt off, or k = 0) the bias is first written into every row of C,
// the gemm adds the product to it (beta = 1), and ReLU is a pass of its own: C written two or three
// times and read once or twice more. Both add the bias to the float32 product, so they agree to
// rounding (ReLU itself is exact).
void gemm_bias(Blas& blas, Math math, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
               const float* bias, float* c, int ldc, bool relu = false);

// The same product with A and B *stored* in bfloat16 (raw bits: the top half of a float's bits; C
// float32, or bfloat16 in the second overload), read by cuBLAS as they are and accumulated in float32
// (CUDA_R_16BF operands, CUBLAS_COMPUTE_32F): half the bytes of gemm's bf16 math, which reads float32
// and converts. The backend's bf16 ops (linear.hpp's bf16 layer, Ops::gemm_bf16) call it; `attnlab
// bench` times it beside gemm (bf16_storage_seconds below), and the tests check it against the same
// product in double. A bf16 C receives the float32 result rounded to
// nearest, ties to even. k ≥ 1 (ShapeError otherwise).
void gemm_bf16_storage(Blas& blas, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const std::uint16_t* a,
                       int lda, const std::uint16_t* b, int ldb, float beta, float* c, int ldc);
void gemm_bf16_storage(Blas& blas, bool trans_a, bool trans_b, int m, int n, int k, float alpha, const std::uint16_t* a,
                       int lda, const std::uint16_t* b, int ldb, float beta, std::uint16_t* c, int ldc);

// A linear layer's forward on bf16 storage, packed (lda = k, ldb = ldc = n): C (bf16, m × n, written)
// = A · B (bf16, accumulated in float32) + bias (n float32 values; may be null), then ReLU when
// `relu`. One cuBLASLt matmul whose epilogue adds the float32 bias to the float32 product, applies
// ReLU and rounds once as it stores (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = CUDA_R_32F, since the
// default bias type is D's); where cuBLASLt declines (no algorithm for these types or this
// alignment, a bias not 16-byte aligned, cuBLASLt off, or k = 0), the product through
// gemm_bf16_storage, then bf16_storage.hpp's bias_act_bf16 pass: C rounded twice (the product, then
// the sum), and read and written once more. Without a bias or ReLU, the product alone.
// Blas::last_gemm_bias_fused says which ran.
void gemm_bias_bf16_storage(Blas& blas, int m, int n, int k, const std::uint16_t* a, const std::uint16_t* b,
                            const float* bias, std::uint16_t* c, bool relu = false);

// Seconds per call of one bf16 product C (m × n) = A (m × k) · B (k × n, or n × k stored when
// trans_b), packed, stored three ways: float32 A, B, C through gemm with Math::Bf16 (what the model
// does now); bf16 A and B, float32 C; bf16 A, B and C (PyTorch's autocast). The three alternate within
// each of `repeats` rounds (after one warm-up call each), each round timed with CUDA events around
// enough back-to-back calls to take about a millisecond; the medians. On inputs of random values in
// (−1, 1), on a Blas of its own on the default stream. Under the emulator the host's clock (the CPU's
// time, no GPU's).
struct StorageSeconds {
  double fp32 = 0.0, bf16_inputs = 0.0, bf16 = 0.0;
};
StorageSeconds bf16_storage_seconds(int m, int n, int k, bool trans_b, int repeats);

// The three shapes the model uses, on packed matrices (leading dimension = column count), beta = 0:
//   matmul_nn: C (m × n) = A (m × k) · B (k × n)       (a linear layer's forward)
//   matmul_nt: C (m × n) = A (m × k) · Bᵀ, B is n × k  (the input gradient dX = dY · Wᵀ; Q·Kᵀ)
//   matmul_tn: C (m × n) = Aᵀ · B, A is k × m          (the weight gradient dW = Xᵀ · dY)
void matmul_nn(Blas& blas, Math math, float* c, const float* a, const float* b, int m, int n, int k);
void matmul_nt(Blas& blas, Math math, float* c, const float* a, const float* b, int m, int n, int k);
void matmul_tn(Blas& blas, Math math, float* c, const float* a, const float* b, int m, int n, int k);

}  // namespace attnlab::cuda
