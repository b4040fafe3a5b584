// The CUDA backend (see cuda_backend.hpp): memory and the ops of backend::Ops<float>, each delegating
// to a launcher of this folder on the backend's stream.
#include "backend/cuda/cuda_backend.hpp"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cuda/adamw.hpp"
#include "backend/cuda/attention.hpp"
#include "backend/cuda/bf16_storage.hpp"
#include "backend/cuda/check.hpp"
#include "backend/cuda/column_sums.hpp"
#include "backend/cuda/cross_entropy.hpp"
#include "backend/cuda/device.hpp"
#include "backend/cuda/elementwise.hpp"
#include "backend/cuda/embedding.hpp"
#include "backend/cuda/layernorm.hpp"
#include "backend/cuda/linear.hpp"
#include "backend/cuda/matmul.hpp"
#include "backend/cuda/op_timer.hpp"

namespace attnlab::backend {

namespace {

// The backend's stream, created first and destroyed last (after the cuBLAS handle bound to it).
class OwnedStream {
 public:
  OwnedStream() {
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreate(&s));
    stream_ = s;
  }
  ~OwnedStream() {
    if (stream_) (void)cudaStreamDestroy(stream_);
  }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  cuda::Stream get() const { return stream_; }

 private:
  cuda::Stream stream_ = nullptr;
};

// Device scratch that grows to the largest size asked for and is kept between calls.
template <typename U>
class Scratch {
 public:
  U* get(std::size_t n) {
    if (n > arr_.size()) arr_ = cuda::DeviceArray<U>(n);
    return arr_.get();
  }

 private:
  cuda::DeviceArray<U> arr_;
};

// Shape names for the op timer's per-shape rows: "m×k · k×n" (a transposed operand marked ᵀ), and
// attention's batch, lengths, width and heads.
std::string product_shape(int m, int k, int n, bool ta = false, bool tb = false) {
  return std::to_string(m) + "×" + std::to_string(k) + (ta ? "ᵀ" : "") + " · " + std::to_string(k) + "×" +
         std::to_string(n) + (tb ? "ᵀ" : "");
}
std::string attention_shape(const AttentionShape& sh) {
  return "B " + std::to_string(sh.B) + ", Tq " + std::to_string(sh.Tq) + ", Tk " + std::to_string(sh.Tk) + ", C " +
         std::to_string(sh.C) + ", H " + std::to_string(sh.H) + (sh.causal ? ", causal" : "");
}

// Bytes an op's contract moves (backend::OpTime): floats of 4 bytes, token ids and lengths of 4,
// loss rows of 8; an output that accumulates counts twice (read, then written).
constexpr double kF = sizeof(float), kI = sizeof(int);
double floats(double n) { return kF * n; }
double passes(GradMode m) { return m == GradMode::Add ? 2.0 : 1.0; }  // a gradient output's
constexpr double kH = sizeof(Bf16);  // a bf16 element's bytes

// A bf16 buffer as the launchers take it: its raw bits (bf16.hpp: Bf16 is exactly those 2 bytes).
std::uint16_t* bits(Bf16* p) { return reinterpret_cast<std::uint16_t*>(p); }
const std::uint16_t* bits(const Bf16* p) { return reinterpret_cast<const std::uint16_t*>(p); }

// The operands of one attention call, in elements: q-shaped (q, out, dq, dout: B·Tq rows of C),
// k-shaped (k, v, dk, dv: B·Tk rows) and lse (B·H·Tq); plus the key lengths' bytes where masked.
struct AttentionSizes {
  double q, k, lse, key_len_bytes;
};

AttentionSizes attention_sizes(const AttentionShape& sh) {
  return {1.0 * sh.B * sh.Tq * sh.C, 1.0 * sh.B * sh.Tk * sh.C, 1.0 * sh.B * sh.H * sh.Tq, sh.key_len ? kI * sh.B : 0.0};
}
// What attention's forward and backward move by their contracts, with q, k, v, out, dout and the
// gradients `elem` bytes an element (float32 or bf16 storage); lse and the key lengths as they are.
// Forward: q, k, v read, out written. Backward: dout, out, q, k, v and lse read; each gradient asked
// for accumulated (read and written) or written.
double attention_forward_bytes(const AttentionShape& sh, double elem) {
  const AttentionSizes z = attention_sizes(sh);
  return elem * (2.0 * z.q + 2.0 * z.k) + floats(z.lse) + z.key_len_bytes;
}
double attention_backward_bytes(const AttentionShape& sh, double elem, GradMode mode, bool dq, bool dk, bool dv) {
  const AttentionSizes z = attention_sizes(sh);
  const double per = passes(mode);
  return elem * (3.0 * z.q + 2.0 * z.k + (dq ? per * z.q : 0.0) + (dk ? per * z.k : 0.0) + (dv ? per * z.k : 0.0)) +
         floats(z.lse) + z.key_len_bytes;
}

class CudaBackend final : public Ops<float> {
 public:
  CudaBackend()
      : Ops<float>(cuda::cuda_emulated() ? "cuda (emulated)" : "cuda", false), blas_(stream_.get()), timer_(stream_.get()) {}
  ~CudaBackend() override {
    try {
      synchronize();  // nothing queued may outlive the scratch buffers
    } catch (...) {
    }
  }


  // ---- memory ----
  void* allocate(std::size_t bytes) override { return cuda::device_malloc(bytes); }
  void release(void* p) noexcept override { cuda::device_free(p); }
  // Both wait for the stream, so the copy sees every op issued before and the host buffer is free
  // (or filled) when they return.
  void upload(void* dst, const void* src, std::size_t bytes) override {
    cuda::TimedOp t(timer_, "upload", static_cast<double>(bytes));  // over the bus, not device memory
    if (!bytes) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s()));
    CUDA_CHECK(cudaStreamSynchronize(s()));
  }
  void download(void* dst, const void* src, std::size_t bytes) override {
    cuda::TimedOp t(timer_, "download", static_cast<double>(bytes));
    if (!bytes) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s()));
    CUDA_CHECK(cudaStreamSynchronize(s()));
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (!bytes || dst == src) return;
    cuda::TimedOp t(timer_, "copy", 2.0 * static_cast<double>(bytes));
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s()));
  }
  void zero(void* p, std::size_t bytes) override {
    cuda::TimedOp t(timer_, "zero", static_cast<double>(bytes));
    cuda::device_memset(p, 0, bytes, s());
  }
  // The whole device (cuBLAS and the copies run on the backend's stream too); a kernel's failure
  // surfaces here as CUDA reports it, a sticky error.
  void synchronize() override { cuda::device_synchronize(); }

  // ---- ops ----
  void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override {
    cuda::TimedOp t(timer_, "gemm", 2.0 * m * n * k, floats(1.0 * m * k + 1.0 * k * n + (beta != 0.0f ? 2.0 : 1.0) * m * n),
                    [&] { return product_shape(m, k, n, ta, tb); });
    cuda::gemm(blas_, math_, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void gemm_bf16(bool ta, bool tb, int m, int n, int k, float alpha, const Bf16* a, int lda, const Bf16* b, int ldb,
                 float beta, Bf16* c, int ldc) override {
    gemm_bf16_to(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, kH);
  }
  void gemm_bf16(bool ta, bool tb, int m, int n, int k, float alpha, const Bf16* a, int lda, const Bf16* b, int ldb,
                 float beta, float* c, int ldc) override {
    gemm_bf16_to(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, kF);
  }
  void set_matmul_precision(MatmulPrecision p) override {
    math_ = p == MatmulPrecision::Tf32 ? cuda::Math::Tf32 : p == MatmulPrecision::Bf16 ? cuda::Math::Bf16 : cuda::Math::Fp32;
  }
  bool start_op_timing() override {
    timer_.start();
    return true;
  }
  std::vector<OpTime> stop_op_timing() override { return timer_.stop(); }

  MatmulPrecision matmul_precision() const override {
    return math_ == cuda::Math::Tf32   ? MatmulPrecision::Tf32
           : math_ == cuda::Math::Bf16 ? MatmulPrecision::Bf16
                                       : MatmulPrecision::Fp32;
  }

  void embedding_forward(float* out, const int* tokens, const float* wte, const float* pe, int B, int Tn, int C,
                         float scale) override {
    const double rows = 1.0 * B * Tn;  // wte rows and pe rows read, out written, one id per row
    cuda::TimedOp t(timer_, "embedding_forward", floats(2.0 * rows * C + 1.0 * Tn * C) + kI * rows);
    // The interface does not pass V, so token ids are not checked against it (negative ones still
    // give NaN rows); the CPU does not check them either.
    cuda::embedding_forward(out, tokens, wte, pe, B, Tn, C, INT_MAX, scale, s());
  }
  void embedding_backward(float* dwte, const float* dout, const int* tokens, int B, int Tn, int C, int V,
                          float scale) override {
    // dout and the ids read; the rows of dwte that receive (one per distinct id) added once the
    // grouping below has counted them.
    cuda::TimedOp t(timer_, "embedding_backward", floats(1.0 * B * Tn * C) + kI * B * Tn);
    if (B < 0 || Tn < 0 || C < 1 || V < 1)
      throw ShapeError("cuda embedding_backward: B = " + std::to_string(B) + ", T = " + std::to_string(Tn) +
                       ", C = " + std::to_string(C) + ", V = " + std::to_string(V));
    const std::size_t n = static_cast<std::size_t>(B) * Tn;
    if (n == 0) return;
    // Grouped by token id on the device where one block can sort the ids (up to 16,384 rows): nothing
    // waits. kernel_choice().embedding_groups_on_device = false (ATTNLAB_EMBEDDING_GROUPS=host) keeps the host's grouping, for timing one against the other.
    if (group_on_device_ && cuda::embedding_backward_groups_on_device(n, V)) {
      int* groups = t.deferred_count(floats(2.0 * C));
      cuda::embedding_backward_sorted(dwte, dout, tokens, B, Tn, C, V, scale, keys_.get(n), groups, s());
      return;
    }
    // Otherwise the grouping is built on the host from the B·T ids (a few KB), then uploaded as one
    // block [rows | starts | ids] into scratch kept between calls: a download and an upload, each
    // waiting for the stream.
    host_tokens_.resize(n);
    download(host_tokens_.data(), tokens, n * sizeof(int));
    const cuda::TokenGroups g = cuda::group_by_token(host_tokens_, V);
    if (g.groups() == 0) return;
    t.add_bytes(floats(2.0 * g.groups() * C));
    host_groups_.clear();
    host_groups_.insert(host_groups_.end(), g.rows.begin(), g.rows.end());
    host_groups_.insert(host_groups_.end(), g.starts.begin(), g.starts.end());
    host_groups_.insert(host_groups_.end(), g.ids.begin(), g.ids.end());
    int* dev = groups_.get(host_groups_.size());
    upload(dev, host_groups_.data(), host_groups_.size() * sizeof(int));  // waits: host_groups_ is reused
    const int* rows = dev;
    const int* starts = rows + g.rows.size();
    const int* ids = starts + g.starts.size();
    cuda::embedding_backward_grouped(dwte, dout, rows, starts, ids, g.groups(), C, scale, s());
  }

  void linear_forward(float* out, const float* inp, const float* w, const float* bias, int N, int IC, int OC,
                      Activation act = Activation::None) override {
    const bool relu = act == Activation::Relu;
    // The output written once: the bias and ReLU in cuBLASLt's epilogue. Where it declined, gemm_bias's
    // two-step path writes the bias into the output first and the gemm reads it back (beta = 1), and
    // ReLU is a pass of its own (without a bias always): each a read and a write more. (Without a bias
    // no gemm_bias runs, so its fused flag is from an earlier call: hence `bias &&` below.)
    cuda::TimedOp t(timer_, "linear_forward", 2.0 * N * IC * OC,
                    floats(1.0 * N * IC + 1.0 * IC * OC + 1.0 * N * OC + (bias ? OC : 0)),
                    [&] { return product_shape(N, IC, OC) + (relu ? ", ReLU" : ""); });
    cuda::linear_forward(blas_, out, inp, w, bias, N, IC, OC, math_, relu);
    const bool fused = bias && blas_.last_gemm_bias_fused();
    if (!fused) t.add_bytes(floats(((bias ? 2.0 : 0.0) + (relu ? 2.0 : 0.0)) * N * OC));
  }
  void linear_backward(float* dinp, float* dw, float* dbias, const float* dout, const float* inp, const float* w,
                       int N, int IC, int OC, GradMode dinp_mode = GradMode::Add,
                       GradMode param_mode = GradMode::Add) override {
    // dout read once; w for dinp, inp for dw; each gradient read and written (it accumulates; only
    // written under GradMode::Write).
    const double bytes =
        floats(1.0 * N * OC + (dinp ? 1.0 * IC * OC + passes(dinp_mode) * N * IC : 0.0) +
               (dw ? 1.0 * N * IC + passes(param_mode) * IC * OC : 0.0) + (dbias ? passes(param_mode) * OC : 0.0));
    cuda::TimedOp t(timer_, "linear_backward", 2.0 * N * IC * OC * ((dinp ? 1 : 0) + (dw ? 1 : 0)), bytes,
                    [&] { return product_shape(N, IC, OC); });
    float* scratch = dbias ? column_partials_.get(cuda::column_sums_scratch(N, OC, 1)) : nullptr;
    cuda::linear_backward(blas_, dinp, dw, dbias, dout, inp, w, N, IC, OC, math_, scratch, dinp_mode, param_mode);
  }

  // ---- bf16 storage: the 16 bits read and written directly ----
  void to_bf16(Bf16* dst, const float* src, std::size_t n) override {
    cuda::TimedOp t(timer_, "to_bf16", floats(1.0 * n) + kH * n);
    cuda::to_bf16(bits(dst), src, n, s());
  }
  void from_bf16(float* dst, const Bf16* src, std::size_t n) override {
    cuda::TimedOp t(timer_, "from_bf16", floats(1.0 * n) + kH * n);
    cuda::from_bf16(dst, bits(src), n, s());
  }
  void to_bf16_rows(Bf16* dst, const float* src, int B, int rows, int C, std::int64_t ld,
                    std::int64_t batch) override {
    const double n = 1.0 * B * rows * C;
    cuda::TimedOp t(timer_, "to_bf16_rows", floats(n) + kH * n);
    cuda::to_bf16_rows(bits(dst), src, B, rows, C, ld, batch, s());
  }
  void linear_forward_bf16(Bf16* out, const Bf16* inp, const Bf16* w, const float* bias, int N, int IC, int OC,
                           Activation act = Activation::None) override {
    const bool relu = act == Activation::Relu;
    // The product's operands and output in 16 bits; the bias and ReLU in cuBLASLt's epilogue, or,
    // where it declined, a pass of their own that reads and writes the output once more.
    cuda::TimedOp t(timer_, "linear_forward_bf16", 2.0 * N * IC * OC,
                    kH * (1.0 * N * IC + 1.0 * IC * OC + 1.0 * N * OC) + (bias ? floats(OC) : 0.0),
                    [&] { return product_shape(N, IC, OC) + (relu ? ", ReLU" : ""); });
    cuda::linear_forward_bf16(blas_, bits(out), bits(inp), bits(w), bias, N, IC, OC, relu);
    if ((bias || relu) && IC > 0 && !blas_.last_gemm_bias_fused()) t.add_bytes(kH * 2.0 * N * OC);
  }
  void linear_backward_bf16(Bf16* dinp, float* dw, float* dbias, const Bf16* dout, const Bf16* inp, const Bf16* w,
                            int N, int IC, int OC, GradMode dinp_mode = GradMode::Add,
                            GradMode param_mode = GradMode::Add) override {
    linear_backward_bf16_on(bits(dinp), kH, dw, dbias, dout, inp, w, N, IC, OC, dinp_mode, param_mode);
  }
  void linear_backward_bf16(float* dinp, float* dw, float* dbias, const Bf16* dout, const Bf16* inp, const Bf16* w,
                            int N, int IC, int OC, GradMode dinp_mode = GradMode::Add,
                            GradMode param_mode = GradMode::Add) override {
    linear_backward_bf16_on(dinp, kF, dw, dbias, dout, inp, w, N, IC, OC, dinp_mode, param_mode);
  }
  void relu_backward_bf16(Bf16* dinp, const Bf16* dout, const Bf16* x, std::size_t n,
                          GradMode mode = GradMode::Add) override {
    cuda::TimedOp t(timer_, "relu_backward_bf16", kH * (2.0 + passes(mode)) * n);
    cuda::relu_backward_bf16(bits(dinp), bits(dout), bits(x), n, mode, s());
  }
  void dropout_forward_bf16(float* out, const Bf16* inp, const float* residual, std::size_t n, float p,
                            std::uint64_t seed) override {
    cuda::TimedOp t(timer_, "dropout_forward_bf16", kH * n + floats((residual ? 2.0 : 1.0) * n));
    cuda::dropout_forward_bf16(out, bits(inp), residual, n, p, seed, s());
  }
  void dropout_backward_bf16(Bf16* dinp, const float* dout, std::size_t n, float p, std::uint64_t seed,
                             GradMode mode = GradMode::Add) override {
    cuda::TimedOp t(timer_, "dropout_backward_bf16", floats(1.0 * n) + kH * passes(mode) * n);
    cuda::dropout_backward_bf16(bits(dinp), dout, n, p, seed, mode, s());
  }

  void layernorm_forward_bf16(Bf16* out, float* out_t, float* mean, float* rstd, const float* inp, const float* gamma,
                              const float* beta, int N, int C, float eps) override {
    cuda::TimedOp t(timer_, "layernorm_forward_bf16",
                    floats((out_t ? 2.0 : 1.0) * N * C + 2.0 * C + 2.0 * N) + kH * N * C);
    cuda::layernorm_forward_bf16(bits(out), out_t, mean, rstd, inp, gamma, beta, N, C, eps, s());
  }
  void layernorm_backward_bf16(float* dinp, float* dgamma, float* dbeta, const Bf16* dout, const float* inp,
                               const float* gamma, const float* mean, const float* rstd, int N, int C,
                               GradMode mode = GradMode::Add, GradMode param_mode = GradMode::Add) override {
    cuda::TimedOp t(timer_, "layernorm_backward_bf16",
                    floats((1.0 + passes(mode)) * N * C + (1.0 + 2.0 * passes(param_mode)) * C + 2.0 * N) +
                        kH * N * C);
    cuda::layernorm_backward_bf16(dinp, dgamma, dbeta, bits(dout), inp, gamma, mean, rstd, N, C,
                                  column_partials_.get(cuda::column_sums_scratch(N, C, 2)), mode, param_mode, s());
  }

  // Both gemm_bf16 overloads: C of c_bytes a value (bf16 bits or a float). k = 0 (C = beta · C, which
  // cuBLAS's bf16 product refuses) through Ops' default.
  template <typename C>
  void gemm_bf16_to(bool ta, bool tb, int m, int n, int k, float alpha, const Bf16* a, int lda, const Bf16* b,
                    int ldb, float beta, C* c, int ldc, double c_bytes) {
    if (k == 0) {
      Ops<float>::gemm_bf16(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
      return;
    }
    cuda::TimedOp t(timer_, "gemm_bf16", 2.0 * m * n * k,
                    kH * (1.0 * m * k + 1.0 * k * n) + c_bytes * (beta != 0.0f ? 2.0 : 1.0) * m * n,
                    [&] { return product_shape(m, k, n, ta, tb); });
    if constexpr (std::is_same_v<C, Bf16>)
      cuda::gemm_bf16_storage(blas_, ta, tb, m, n, k, alpha, bits(a), lda, bits(b), ldb, beta, bits(c), ldc);
    else
      cuda::gemm_bf16_storage(blas_, ta, tb, m, n, k, alpha, bits(a), lda, bits(b), ldb, beta, c, ldc);
  }

  // Both linear_backward_bf16 overloads: dinp of dinp_bytes a value (bf16 bits or a float).
  template <typename Dinp>
  void linear_backward_bf16_on(Dinp* dinp, double dinp_bytes, float* dw, float* dbias, const Bf16* dout,
                               const Bf16* inp, const Bf16* w, int N, int IC, int OC, GradMode dinp_mode,
                               GradMode param_mode) {
    // As linear_backward's, with dout, w and inp in 16 bits.
    const double bytes = kH * (1.0 * N * OC + (dinp ? 1.0 * IC * OC : 0.0) + (dw ? 1.0 * N * IC : 0.0)) +
                         (dinp ? dinp_bytes * passes(dinp_mode) * N * IC : 0.0) +
                         floats(passes(param_mode) * ((dw ? 1.0 * IC * OC : 0.0) + (dbias ? 1.0 * OC : 0.0)));
    cuda::TimedOp t(timer_, "linear_backward_bf16", 2.0 * N * IC * OC * ((dinp ? 1 : 0) + (dw ? 1 : 0)), bytes,
                    [&] { return product_shape(N, IC, OC); });
    float* scratch = dbias ? column_partials_.get(cuda::column_sums_scratch(N, OC, 1)) : nullptr;
    cuda::linear_backward_bf16(blas_, dinp, dw, dbias, bits(dout), bits(inp), bits(w), N, IC, OC, scratch, dinp_mode,
                               param_mode);
  }

  void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* gamma,
                         const float* beta, int N, int C, float eps) override {
    cuda::TimedOp t(timer_, "layernorm_forward", floats(2.0 * N * C + 2.0 * C + 2.0 * N));
    cuda::layernorm_forward(out, mean, rstd, inp, gamma, beta, N, C, eps, s());
  }
  void layernorm_backward(float* dinp, float* dgamma, float* dbeta, const float* dout, const float* inp,
                          const float* gamma, const float* mean, const float* rstd, int N, int C,
                          GradMode mode = GradMode::Add, GradMode param_mode = GradMode::Add) override {
    // dout and inp read, dinp accumulated (or written); gamma, mean, rstd read; dgamma and dbeta
    // accumulated (or written).
    cuda::TimedOp t(timer_, "layernorm_backward",
                    floats((2.0 + passes(mode)) * N * C + (1.0 + 2.0 * passes(param_mode)) * C + 2.0 * N));
    cuda::layernorm_backward(dinp, dgamma, dbeta, dout, inp, gamma, mean, rstd, N, C,
                             column_partials_.get(cuda::column_sums_scratch(N, C, 2)), mode, param_mode, s());
  }

  void elementwise(Elementwise op, float* out, const float* a, const float* b, std::size_t n, float f) override {
    switch (op) {
      case Elementwise::Relu: {
        cuda::TimedOp t(timer_, "relu_forward", floats(2.0 * n));
        cuda::relu_forward(out, a, n, s());
        return;
      }
      case Elementwise::Add: {
        cuda::TimedOp t(timer_, "add_forward", floats(3.0 * n));
        cuda::add_forward(out, a, b, n, s());
        return;
      }
      case Elementwise::Accumulate: {
        cuda::TimedOp t(timer_, "accumulate", floats(3.0 * n));
        cuda::accumulate(out, a, n, s());
        return;
      }
      case Elementwise::Scale: {
        cuda::TimedOp t(timer_, "scale", floats(2.0 * n));
        cuda::scale(out, n, f, s());
        return;
      }
    }
  }
  void relu_backward(float* dinp, const float* dout, const float* x, std::size_t n,
                     GradMode mode = GradMode::Add) override {
    cuda::TimedOp t(timer_, "relu_backward", floats((2.0 + passes(mode)) * n));
    cuda::relu_backward(dinp, dout, x, n, mode, s());
  }
  void clip_factor(double* norm, double* scale, const float* x, std::size_t n, double max_norm, const double* check,
                   std::size_t n_check) override {
    // x and the check values read, the norm and the factor written.
    cuda::TimedOp t(timer_, "clip_factor", floats(1.0 * n) + sizeof(double) * (n_check + 2.0));
    cuda::clip_factor(norm, scale, partials_.get(cuda::kSumSquaresBlocks), x, n, max_norm, check, n_check, s());
  }

  void dropout_forward(float* out, const float* inp, const float* residual, std::size_t n, float p,
                       std::uint64_t seed) override {
    cuda::TimedOp t(timer_, "dropout_forward", floats((residual ? 3.0 : 2.0) * n));
    cuda::dropout_forward(out, inp, residual, n, p, seed, s());
  }
  void dropout_backward(float* dinp, const float* dout, std::size_t n, float p, std::uint64_t seed,
                        GradMode mode = GradMode::Add) override {
    cuda::TimedOp t(timer_, "dropout_backward", floats((1.0 + passes(mode)) * n));
    cuda::dropout_backward(dinp, dout, n, p, seed, mode, s());
  }

  void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                         const AttentionShape& sh) override {
    cuda::TimedOp t(timer_, "attention_forward", 4.0 * sh.B * sh.Tq * sh.Tk * sh.C, attention_forward_bytes(sh, kF),
                    [&] { return attention_shape(sh); });
    // bf16: the two products of attention on tensor cores too, where the head width allows (a
    // multiple of 16).
    if (math_ == cuda::Math::Bf16 && sh.H > 0 && sh.C % sh.H == 0 && (sh.C / sh.H) % 16 == 0)
      cuda::attention_forward_bf16(out, lse, q, k, v, sh, s());
    else
      cuda::attention_forward(out, lse, q, k, v, sh, s());
  }
  // bf16 storage: at --precision bf16, where the register-tile kernel takes the head width, it reads
  // q, k, v and writes out in bf16 directly; otherwise the default (widen, attention_forward, round).
  void attention_forward_bf16(Bf16* out, float* lse, const Bf16* q, const Bf16* k, const Bf16* v,
                              const AttentionShape& sh) override {
    if (math_ != cuda::Math::Bf16 || !cuda::attention_forward_bf16_storage_takes(sh)) {
      Ops<float>::attention_forward_bf16(out, lse, q, k, v, sh);
      return;
    }
    cuda::TimedOp t(timer_, "attention_forward_bf16", 4.0 * sh.B * sh.Tq * sh.Tk * sh.C,
                    attention_forward_bytes(sh, kH), [&] { return attention_shape(sh); });
    cuda::attention_forward_bf16_storage(bits(out), lse, bits(q), bits(k), bits(v), sh, s());
  }
  void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                          const float* q, const float* k, const float* v, const AttentionShape& sh,
                          GradMode mode = GradMode::Add) override {
    cuda::TimedOp t(timer_, "attention_backward", 10.0 * sh.B * sh.Tq * sh.Tk * sh.C,
                    attention_backward_bytes(sh, kF, mode, dq, dk, dv), [&] { return attention_shape(sh); });
    // bf16: tensor cores for the backward's five products too, where the head width allows (a
    // multiple of 16 up to 64: the kernels' shared memory).
    if (math_ == cuda::Math::Bf16 && sh.H > 0 && sh.C % sh.H == 0 && (sh.C / sh.H) % 16 == 0 && sh.C / sh.H <= 64)
      cuda::attention_backward_bf16(dq, dk, dv, dout, out, lse, q, k, v, sh, mode, s());
    else
      cuda::attention_backward(dq, dk, dv, dout, out, lse, q, k, v, sh, mode, s());
  }
  // bf16 storage: at --precision bf16, where the register-tile kernels take the head width (32, 64),
  // they read the bf16 operands and store each gradient rounded once; otherwise the default (widen,
  // attention_backward, round).
  void attention_backward_bf16(Bf16* dq, Bf16* dk, Bf16* dv, const Bf16* dout, const Bf16* out, const float* lse,
                               const Bf16* q, const Bf16* k, const Bf16* v, const AttentionShape& sh,
                               GradMode mode = GradMode::Add) override {
    if (math_ != cuda::Math::Bf16 || !cuda::attention_backward_bf16_storage_takes(sh)) {
      Ops<float>::attention_backward_bf16(dq, dk, dv, dout, out, lse, q, k, v, sh, mode);
      return;
    }
    cuda::TimedOp t(timer_, "attention_backward_bf16", 10.0 * sh.B * sh.Tq * sh.Tk * sh.C,
                    attention_backward_bytes(sh, kH, mode, dq, dk, dv), [&] { return attention_shape(sh); });
    cuda::attention_backward_bf16_storage(bits(dq), bits(dk), bits(dv), bits(dout), bits(out), lse, bits(q), bits(k),
                                          bits(v), sh, mode, s());
  }
  void attention_weights(float* att, const float* lse, const float* q, const float* k,
                         const AttentionShape& sh) override {
    // q, k and lse read; the B·H·Tq·Tk weights written.
    const AttentionSizes z = attention_sizes(sh);
    const double bytes = floats(z.q + z.k + z.lse + z.lse * sh.Tk) + z.key_len_bytes;
    cuda::TimedOp t(timer_, "attention_weights", 2.0 * sh.B * sh.Tq * sh.Tk * sh.C, bytes, [&] { return attention_shape(sh); });
    cuda::attention_weights(att, lse, q, k, sh, s());
  }

  void cross_entropy_forward(float* lse, double* row_loss, const float* logits, const int* targets, int N, int V,
                             float smoothing, int ignore_index) override {
    // logits and targets read; lse and each row's loss (double) written.
    cuda::TimedOp t(timer_, "cross_entropy_forward", floats(1.0 * N * V + N) + kI * N + sizeof(double) * N);
    cuda::cross_entropy_forward(lse, row_loss, logits, targets, N, V, smoothing, ignore_index, s());
  }
  void cross_entropy_forward_bf16(float* lse, double* row_loss, const Bf16* logits, const int* targets, int N, int V,
                                  float smoothing, int ignore_index) override {
    cuda::TimedOp t(timer_, "cross_entropy_forward_bf16",
                    kH * N * V + floats(1.0 * N) + kI * N + sizeof(double) * N);
    cuda::cross_entropy_forward_bf16(lse, row_loss, bits(logits), targets, N, V, smoothing, ignore_index, s());
  }
  void cross_entropy_backward(float* dlogits, const float* logits, const float* lse, const int* targets, int N, int V,
                              float smoothing, int ignore_index, int count, float dloss) override {
    cuda::TimedOp t(timer_, "cross_entropy_backward", floats(2.0 * N * V + N) + kI * N);
    cuda::cross_entropy_backward(dlogits, logits, lse, targets, N, V, smoothing, ignore_index, count, dloss, s());
  }
  void cross_entropy_backward_bf16(Bf16* dlogits, const Bf16* logits, const float* lse, const int* targets, int N,
                                   int V, float smoothing, int ignore_index, int count, float dloss) override {
    cuda::TimedOp t(timer_, "cross_entropy_backward_bf16", kH * 2.0 * N * V + floats(1.0 * N) + kI * N);
    cuda::cross_entropy_backward_bf16(bits(dlogits), bits(logits), lse, targets, N, V, smoothing, ignore_index, count,
                                      dloss, s());
  }
  void softmax_from_lse(float* probs, const float* logits, const float* lse, int N, int V) override {
    cuda::TimedOp t(timer_, "softmax_from_lse", floats(2.0 * N * V + N));
    cuda::softmax_from_lse(probs, logits, lse, N, V, s());
  }

  void adamw_step(float* params, const float* grads, float* m, float* v, const std::uint8_t* decay_mask,
                  std::size_t n, const AdamStep& h) override {
    // params, m and v read and written, grads read, one mask byte per parameter.
    cuda::TimedOp t(timer_, "adamw_step", floats(7.0 * n) + (decay_mask ? 1.0 * n : 0.0));
    cuda::adamw_step(params, grads, m, v, decay_mask, n, h, s());
  }
  void adamw_step_bf16(float* params, Bf16* params_bf16, const float* grads, float* m, float* v,
                       const std::uint8_t* decay_mask, std::size_t n, const AdamStep& h) override {
    // adamw_step's bytes and the bf16 copy written in the same pass.
    cuda::TimedOp t(timer_, "adamw_step_bf16", floats(7.0 * n) + kH * n + (decay_mask ? 1.0 * n : 0.0));
    cuda::adamw_step(params, grads, m, v, decay_mask, n, h, s(), bits(params_bf16));
  }

 private:
  cuda::Stream s() const { return stream_.get(); }

  OwnedStream stream_;  // first: destroyed last
  cuda::Blas blas_;
  cuda::OpTimer timer_;  // start_op_timing
  cuda::Math math_ = cuda::Math::Fp32;  // set_matmul_precision
  Scratch<double> partials_;
  Scratch<float> column_partials_;  // the two-stage column sums' partial sums (column_sums.hpp)
  Scratch<int> groups_;
  Scratch<unsigned> keys_;  // the device grouping's sorted keys
  // Unless kernel_choice() says otherwise (ATTNLAB_EMBEDDING_GROUPS=host): the embedding backward
  // groups its rows on the device.
  bool group_on_device_ = cuda::kernel_choice().embedding_groups_on_device;
  std::vector<int> host_tokens_, host_groups_;
};

}  // namespace

std::unique_ptr<Ops<float>> make_cuda_backend() {
  std::string why;
  if (!cuda::cuda_device_available(&why)) {
    throw InputError("--backend cuda: no usable CUDA device (" + why +
                     "). Run with --backend cpu, or on a machine with an NVIDIA GPU and a driver recent enough "
                     "for this build's CUDA toolkit (`attnlab doctor` shows what it finds).");
  }
  return std::make_unique<CudaBackend>();
}

}  // namespace attnlab::backend
