#include "backend/cpu/cpu_backend.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "backend/cpu/buffers.hpp"
#include "backend/cpu/ops.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/cpu/profile.hpp"

namespace attnlab::backend {
namespace {

template <typename T>
class CpuBackend final : public Ops<T> {
 public:
  std::string name() const override { return "cpu"; }
  bool host_addressable() const override { return true; }

  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    // 64-byte alignment for the vector loops; blocks of 4 MiB and more start on a 2 MiB boundary so
    // that all of them can be huge pages (backend/cpu/buffers.hpp says why that pays).
    const std::size_t align = bytes >= (std::size_t{4} << 20) ? (std::size_t{2} << 20) : 64;
    void* p = nullptr;
    if (posix_memalign(&p, align, bytes) != 0) throw std::bad_alloc();
    util::advise_huge_pages(p, bytes);
    return p;
  }
  void release(void* p) noexcept override { std::free(p); }
  void upload(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }
  void download(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes && dst != src) std::memmove(dst, src, bytes);
  }
  void zero(void* p, std::size_t bytes) override {
    if (bytes) std::memset(p, 0, bytes);
  }
  void synchronize() override {}

  void gemm(bool ta, bool tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c,
            int ldc) override {
    cpu::gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void embedding_forward(T* out, const int* tokens, const T* wte, const T* pe, int B, int Tn, int C, T scale) override {
    cpu::embedding_forward<T>(out, tokens, wte, pe, B, Tn, C, scale);
  }
  void embedding_backward(T* dwte, const T* dout, const int* tokens, int B, int Tn, int C, int, T scale) override {
    cpu::embedding_backward<T>(dwte, dout, tokens, B, Tn, C, scale);  // one thread, token order: deterministic
  }
  void linear_forward(T* out, const T* inp, const T* w, const T* bias, int N, int IC, int OC) override {
    cpu::linear_forward<T>(out, inp, w, bias, N, IC, OC);
  }
  void linear_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int IC,
                       int OC) override {
    cpu::linear_backward<T>(dinp, dw, dbias, dout, inp, w, N, IC, OC);
  }
  void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* gamma, const T* beta, int N, int C,
                         T eps) override {
    cpu::layernorm_forward<T>(out, mean, rstd, inp, gamma, beta, N, C, eps);
  }
  void layernorm_backward(T* dinp, T* dgamma, T* dbeta, const T* dout, const T* inp, const T* gamma, const T* mean,
                          const T* rstd, int N, int C) override {
    cpu::layernorm_backward<T>(dinp, dgamma, dbeta, dout, inp, gamma, mean, rstd, N, C);
  }
  void relu_forward(T* out, const T* inp, std::size_t n) override { cpu::relu_forward<T>(out, inp, n); }
  void relu_backward(T* dinp, const T* dout, const T* x, std::size_t n) override {
    cpu::relu_backward<T>(dinp, dout, x, n);
  }
  void add_forward(T* out, const T* a, const T* b, std::size_t n) override { cpu::add_forward<T>(out, a, b, n); }
  void accumulate(T* dst, const T* src, std::size_t n) override { cpu::accumulate<T>(dst, src, n); }
  void scale(T* x, std::size_t n, T s) override {
    prof::Scope prof_scope(prof::Op::Optimizer);
    for (std::size_t i = 0; i < n; ++i) x[i] *= s;
  }
  double sum_squares(const T* x, std::size_t n) override { return cpu::sum_squares<T>(x, n); }
  void dropout_forward(T* out, T* mask, const T* inp, std::size_t n, float p, std::uint64_t seed) override {
    cpu::dropout_forward_hashed<T>(out, mask, inp, n, p, seed);
  }
  void dropout_backward(T* dinp, const T* dout, const T* mask, std::size_t n) override {
    cpu::dropout_backward<T>(dinp, dout, mask, n);
  }
  void attention_forward(T* out, T* lse, const T* q, const T* k, const T* v, const AttentionShape& s) override {
    util::size_buffer(scratch_, cpu::attention_lse_scratch<T>(s.Tq, s.Tk));
    cpu::attention_forward_lse<T>(out, lse, scratch_.data(), q, k, v, s);
  }
  void attention_backward(T* dq, T* dk, T* dv, const T* dout, const T*, const T*, const T* q, const T* k, const T* v,
                          const AttentionShape& s) override {
    // The CPU recomputes each head's weights exactly as its forward did (backend/cpu/ops.hpp), so it
    // needs neither the output nor the lse: the results equal those of a stored weight matrix.
    util::size_buffer(scratch_, cpu::attention_lse_scratch<T>(s.Tq, s.Tk));
    cpu::attention_backward_lse<T>(dq, dk, dv, scratch_.data(), dout, q, k, v, s);
  }
  void attention_weights(T* att, const T*, const T* q, const T* k, const AttentionShape& s) override {
    cpu::attention_weights_recompute<T>(att, q, k, s);
  }
  T cross_entropy_forward(T* lse, const T* logits, const int* targets, int N, int V, T smoothing, int ignore_index,
                          int* count) override {
    return cpu::cross_entropy_forward<T>(lse, logits, targets, N, V, smoothing, ignore_index, count);
  }
  void cross_entropy_backward(T* dlogits, const T* logits, const T* lse, const int* targets, int N, int V, T smoothing,
                              int ignore_index, int count, T dloss) override {
    cpu::cross_entropy_backward<T>(dlogits, logits, lse, targets, N, V, smoothing, ignore_index, count, dloss);
  }
  void softmax_from_lse(T* probs, const T* logits, const T* lse, int N, int V) override {
    cpu::softmax_from_lse<T>(probs, logits, lse, N, V);
  }
  void adamw_step(T* params, const T* grads, T* m, T* v, const std::uint8_t* decay_mask, std::size_t n,
                  const AdamStep& h) override {
    cpu::adamw_step<T>(params, grads, m, v, decay_mask, n, h);
  }

 private:
  std::vector<T> scratch_;  // attention's per-thread score tiles, kept between calls
};

}  // namespace

template <typename T>
Ops<T>& cpu_backend() {
  static CpuBackend<T> instance;
  return instance;
}

template Ops<float>& cpu_backend<float>();
template Ops<double>& cpu_backend<double>();

}  // namespace attnlab::backend
