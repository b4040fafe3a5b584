// The linear layer (see linear.hpp): cuBLAS products (matmul.hpp) and the bias gradient (column_sums.hpp).
#include "backend/cuda/linear.hpp"

#include <algorithm>
#include <string>

#include "backend/cuda/column_sums.hpp"
#include "backend/cuda/elementwise.hpp"

namespace attnlab::cuda {

namespace {

void check_shape(const char* what, int N, int IC, int OC) {
  if (N < 0 || IC < 0 || OC < 1)
    throw ShapeError(std::string(what) + ": N = " + std::to_string(N) + ", IC = " + std::to_string(IC) + ", OC = " +
                     std::to_string(OC) + " (need N, IC ≥ 0 and OC ≥ 1)");
}

}  // namespace

void linear_forward(Blas& blas, float* out, const float* inp, const float* w, const float* bias, int N, int IC,
                    int OC, Math math, bool relu) {
  check_shape("cuda::linear_forward", N, IC, OC);
  const std::size_t n = static_cast<std::size_t>(N) * OC;
  if (n == 0) return;
  if (bias) {
    gemm_bias(blas, math, N, OC, IC, inp, std::max(1, IC), w, OC, bias, out, OC, relu);
  } else {
    gemm(blas, math, false, false, N, OC, IC, 1.0f, inp, std::max(1, IC), w, OC, 0.0f, out, OC);
    if (relu) relu_forward(out, out, n, blas.stream());
  }
}

void linear_backward(Blas& blas, float* dinp, float* dw, float* dbias, const float* dout, const float* inp,
                     const float* w, int N, int IC, int OC, Math math, float* scratch, backend::GradMode dinp_mode,
                     backend::GradMode param_mode) {
  check_shape("cuda::linear_backward", N, IC, OC);
  const float dinp_beta = dinp_mode == backend::GradMode::Add ? 1.0f : 0.0f;
  const bool add_params = param_mode == backend::GradMode::Add;
  if (dinp && IC > 0) gemm(blas, math, false, true, N, IC, OC, 1.0f, dout, OC, w, OC, dinp_beta, dinp, IC);
  // gemm's k = 0 (N = 0) scales C by beta: zeros under Write.
  if (dw && IC > 0) gemm(blas, math, true, false, IC, OC, N, 1.0f, inp, IC, dout, OC, add_params ? 1.0f : 0.0f, dw, OC);
  if (dbias) column_sums(dbias, dout, N, OC, scratch, blas.stream(), add_params);
}

void linear_forward_bf16(Blas& blas, std::uint16_t* out, const std::uint16_t* inp, const std::uint16_t* w,
                         const float* bias, int N, int IC, int OC, bool relu) {
  check_shape("cuda::linear_forward_bf16", N, IC, OC);
  gemm_bias_bf16_storage(blas, N, OC, IC, inp, w, bias, out, relu);
}

namespace {
// dinp: bf16 bits or float; gemm_bf16_storage has both forms of C.
template <typename Dinp>
void linear_backward_bf16_to(Blas& blas, Dinp* dinp, float* dw, float* dbias, const std::uint16_t* dout,
                             const std::uint16_t* inp, const std::uint16_t* w, int N, int IC, int OC, float* scratch,
                             backend::GradMode dinp_mode, backend::GradMode param_mode) {
  check_shape("cuda::linear_backward_bf16", N, IC, OC);
  const float dinp_beta = dinp_mode == backend::GradMode::Add ? 1.0f : 0.0f;
  const bool add_params = param_mode == backend::GradMode::Add;
  if (N > 0 && IC > 0) {
    if (dinp) gemm_bf16_storage(blas, false, true, N, IC, OC, 1.0f, dout, OC, w, OC, dinp_beta, dinp, IC);
    if (dw)
      gemm_bf16_storage(blas, true, false, IC, OC, N, 1.0f, inp, IC, dout, OC, add_params ? 1.0f : 0.0f, dw, OC);
  } else if (dw && IC > 0 && !add_params) {
    // A product over no rows, stored: zeros (gemm_bf16_storage refuses k = 0; float32 gemm scales by beta).
    gemm(blas, Math::Fp32, true, false, IC, OC, 0, 1.0f, nullptr, IC, nullptr, OC, 0.0f, dw, OC);
  }
  if (dbias) column_sums(dbias, dout, N, OC, scratch, blas.stream(), add_params);
}
}  // namespace

void linear_backward_bf16(Blas& blas, std::uint16_t* dinp, float* dw, float* dbias, const std::uint16_t* dout,
                          const std::uint16_t* inp, const std::uint16_t* w, int N, int IC, int OC, float* scratch,
                          backend::GradMode dinp_mode, backend::GradMode param_mode) {
  linear_backward_bf16_to(blas, dinp, dw, dbias, dout, inp, w, N, IC, OC, scratch, dinp_mode, param_mode);
}

void linear_backward_bf16(Blas& blas, float* dinp, float* dw, float* dbias, const std::uint16_t* dout,
                          const std::uint16_t* inp, const std::uint16_t* w, int N, int IC, int OC, float* scratch,
                          backend::GradMode dinp_mode, backend::GradMode param_mode) {
  linear_backward_bf16_to(blas, dinp, dw, dbias, dout, inp, w, N, IC, OC, scratch, dinp_mode, param_mode);
}

}  // namespace attnlab::cuda
