#pragma once
// The backend interface: where the model's buffers live and who runs its operations.
//
// The transformer (src/model/) is written once against this interface and never touches its
// activations or parameters directly; a backend owns the memory and runs every op the model and the
// optimizer need, each a forward/backward pair with one contract on every backend (the ggml-backend
// idea, sized for this project). Two implementations, one folder each:
//   backend/cpu/    host memory, OpenBLAS and attnlab's thread pool (float and double: the finite-
//                   difference checks run the whole model in double)
//   backend/cuda/   device memory, CUDA kernels and cuBLAS (float), or the same kernels on the CPU in
//                   the emulation build
// backend/registry.hpp picks one by name (`--backend cpu|cuda`).
//
// Shape legend (as in backend/cpu/ops.hpp):
//   B  batch (sequences)          T  tokens per sequence (padded)   N = B·T rows of activations
//   C  channels (d_model)         H  heads, each of width C / H     F  feed-forward width (d_ff)
//   V  vocabulary size            Tq, Tk  query and key lengths in attention (cross-attention: Tk = S)
// Activations are N × C row-major matrices, one token per row. Linear layers: out = inp · W + b with
// W of shape IC × OC. Pointers passed to ops are the backend's own (from allocate(), or offsets into
// such a block); integer inputs (tokens, targets, key lengths) live on the backend too.
//
// Every backward op *accumulates* into its gradient outputs (+=) so that a tensor used twice collects
// both contributions; the one exception is cross_entropy_backward, which writes (it is always the
// graph's last op). The ops whose input gradient is often the first to reach a buffer (linear, layer
// norm, ReLU and dropout backward) take a GradMode for it: Write stores instead of adding, so the
// caller does not zero the buffer first and the op does not read it back (two passes over the
// gradient saved). Parameter gradients always accumulate. A null gradient pointer means "not needed".
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace attnlab::backend {

// ---- memory -------------------------------------------------------------------------------------

class Memory {
 public:
  virtual ~Memory() = default;
  // "cpu", "cuda", "cuda (emulated)": what `--backend` selected and what the output should say.
  virtual std::string name() const = 0;
  // Whether memory from allocate() can be read and written by the host directly (the CPU backend).
  // Only tests and diagnostics ask; the model always goes through upload/download.
  virtual bool host_addressable() const = 0;
  virtual void* allocate(std::size_t bytes) = 0;  // nullptr for 0 bytes; throws when out of memory
  virtual void release(void* p) noexcept = 0;     // nullptr is fine
  virtual void upload(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void download(void* host_dst, const void* src, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;  // within the backend
  virtual void zero(void* p, std::size_t bytes) = 0;
  // Waits until every op issued so far has finished, and reports a failure of any of them.
  virtual void synchronize() = 0;
};

// A typed array owned by a backend. resize() keeps the allocation when it is large enough, so buffers
// sized the same way every training step allocate once; their contents after resize() are unspecified
// (call zero()). Move-only.
template <typename U>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(Memory& mem, std::size_t n = 0) : mem_(&mem) { resize(n); }
  ~Buffer() { reset(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept
      : mem_(std::exchange(o.mem_, nullptr)), p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)),
        cap_(std::exchange(o.cap_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      mem_ = std::exchange(o.mem_, nullptr);
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
      cap_ = std::exchange(o.cap_, 0);
    }
    return *this;
  }

  void bind(Memory& mem) {
    if (mem_ != &mem) {
      reset();
      mem_ = &mem;
    }
  }
  void resize(std::size_t n) {
    if (n > cap_) {
      if (!mem_) throw RuntimeError("backend::Buffer: resize before bind");
      void* fresh = mem_->allocate(n * sizeof(U));
      mem_->release(p_);
      p_ = static_cast<U*>(fresh);
      cap_ = n;
    }
    n_ = n;
  }
  // resize(n), then every element zero.
  void assign_zero(std::size_t n) {
    resize(n);
    zero();
  }
  void zero() {
    if (n_) mem_->zero(p_, n_ * sizeof(U));
  }
  void upload(const std::vector<U>& host) {
    resize(host.size());
    if (n_) mem_->upload(p_, host.data(), n_ * sizeof(U));
  }
  std::vector<U> download() const { return download(0, n_); }
  // Elements [offset, offset + count).
  std::vector<U> download(std::size_t offset, std::size_t count) const {
    if (offset > n_ || count > n_ - offset) throw ShapeError("backend::Buffer::download: range outside the buffer");
    std::vector<U> host(count);
    if (count) mem_->download(host.data(), p_ + offset, count * sizeof(U));
    return host;
  }

  U* data() { return p_; }
  const U* data() const { return p_; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  Memory* memory() const { return mem_; }

 private:
  void reset() noexcept {
    if (mem_) mem_->release(p_);
    p_ = nullptr;
    n_ = cap_ = 0;
  }
  Memory* mem_ = nullptr;
  U* p_ = nullptr;
  std::size_t n_ = 0, cap_ = 0;
};

// ---- operations ---------------------------------------------------------------------------------

// How a backward op stores an input's gradient: Add (+=, the default) or Write (=, whatever the
// buffer held before is ignored and may be uninitialised).
enum class GradMode { Add, Write };

// What a linear layer applies to its output (Ops::linear_forward).
enum class Activation { None, Relu };

// Where attention finds its rows. Row r of batch b of Q starts at q + b·q_batch + r·ldq (likewise K,
// V and the output), head h at column h·C/H of that row. The defaults (ld = C, batch stride = T·C) are
// the model's N × C activations; other strides let attention read a fused Q/K/V buffer or the
// key/value cache in place (a batch stride of 0 shares one K/V among all queries' batches: the
// cross-attention cache of beam search).
struct AttentionShape {
  int B = 1, Tq = 1, Tk = 1, C = 1, H = 1;
  std::int64_t ldq = 0, ldk = 0, ldv = 0, ldo = 0;              // 0: C
  std::int64_t q_batch = -1, k_batch = -1, v_batch = -1, o_batch = -1;  // −1: rows × ld
  const int* key_len = nullptr;  // B lengths on the backend, or null (all Tk keys visible)
  bool causal = false;           // key j visible to query i only if j ≤ i

  // The strides with the defaults filled in.
  AttentionShape resolved() const {
    AttentionShape s = *this;
    if (!s.ldq) s.ldq = C;
    if (!s.ldk) s.ldk = C;
    if (!s.ldv) s.ldv = C;
    if (!s.ldo) s.ldo = C;
    if (s.q_batch < 0) s.q_batch = s.ldq * Tq;
    if (s.k_batch < 0) s.k_batch = s.ldk * Tk;
    if (s.v_batch < 0) s.v_batch = s.ldv * Tk;
    if (s.o_batch < 0) s.o_batch = s.ldo * Tq;
    return s;
  }
};

// AdamW hyper-parameters for one step (model/optim.hpp's AdamConfig plus the step's learning rate).
struct AdamStep {
  double lr = 0.0;
  std::int64_t step = 1;  // ≥ 1: the bias corrections use it
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f, weight_decay = 0.0f;
  // Each gradient is used as grads[i] · grad_scale (one float multiply, as scaling the buffer first
  // would round it): gradient clipping's factor applied as the update reads the gradients, instead of
  // a pass of its own that reads and writes every gradient. 1 leaves them exactly as they are.
  float grad_scale = 1.0f;
};

// How matrix products (gemm, linear_forward, linear_backward) compute. Fp32: float32 throughout.
// Tf32: tensor cores round each input to TF32 (10 mantissa bits, about 3 decimal digits) and
// accumulate in float32. Bf16: tensor cores round each input to bfloat16 (7 mantissa bits, about 2
// decimal digits) and accumulate in float32: twice TF32's rate on Ampere and Hopper. Either way
// attention, softmax, normalisation, the loss and the optimizer stay float32, and so do the stored
// weights and every activation between ops (the products' inputs are rounded as they are read).
enum class MatmulPrecision { Fp32, Tf32, Bf16 };
inline const char* precision_name(MatmulPrecision p) {
  return p == MatmulPrecision::Tf32 ? "tf32" : p == MatmulPrecision::Bf16 ? "bf16" : "fp32";
}
// "fp32", "tf32" or "bf16"; InputError naming the value otherwise.
inline MatmulPrecision parse_precision(const std::string& name) {
  if (name == "fp32") return MatmulPrecision::Fp32;
  if (name == "tf32") return MatmulPrecision::Tf32;
  if (name == "bf16") return MatmulPrecision::Bf16;
  throw InputError("--precision: expected fp32, tf32 or bf16, got \"" + name + "\"");
}

// One row of a backend's own per-op timing (start_op_timing / stop_op_timing below): an op of this
// interface (or a Memory call: "zero", "copy", "upload", "download"), its calls, the time it ran on
// the backend's clock, the matrix-product FLOPs it did, counted as bench/bench.hpp counts them (0 for
// ops without products), and the bytes its contract makes it move: every input element read once,
// every output written once, and an output that accumulates (+=) read once more. That is the least
// traffic any implementation of the op has (a kernel that re-reads, or spills a tile, moves more), so
// bytes / seconds is a lower bound on the bandwidth the op achieved, and the element-wise ops, which
// are bound by memory, can be set against the device's copy bandwidth. For those that multiply
// matrices the same split by shape (which product is slow: the feed-forward's, the vocabulary
// projection's).
struct OpShapeTime {
  std::string shape;  // e.g. "4096×512 · 512×2048" for a linear layer
  std::int64_t calls = 0;
  double seconds = 0.0;
  double flops = 0.0;
  double bytes = 0.0;
};
struct OpTime {
  std::string op;
  std::int64_t calls = 0;
  double seconds = 0.0;
  double flops = 0.0;
  double bytes = 0.0;
  std::vector<OpShapeTime> shapes;  // the ops that multiply matrices: the same per shape
};

template <typename T>
class Ops : public Memory {
 public:
  // Per-op time on the backend's own clock, for `attnlab bench`'s breakdown where ops run
  // asynchronously (a GPU: host timers would time launches, not kernels). start_op_timing() clears
  // and starts recording; from then every op's time is taken around it on the backend (CUDA events
  // on its stream; an op called inside another, like the download inside cross_entropy_forward,
  // counts for the outer one); stop_op_timing() waits for the backend and returns the totals, one
  // row per op called, in the order first called. A backend without such a clock (the CPU's, which
  // has its own profiler in backend/cpu/profile.hpp) returns false and an empty list.
  virtual bool start_op_timing() { return false; }
  virtual std::vector<OpTime> stop_op_timing() { return {}; }

  // The precision of the matrix products from now on (Fp32 until set). A backend without tensor
  // cores has only Fp32 and refuses the others with InputError.
  virtual void set_matmul_precision(MatmulPrecision p) {
    if (p != MatmulPrecision::Fp32)
      throw InputError("--precision " + std::string(precision_name(p)) + ": the " + name() +
                       " backend computes matrix products in float32 only; " + precision_name(p) +
                       " needs --backend cuda");
  }
  virtual MatmulPrecision matmul_precision() const { return MatmulPrecision::Fp32; }

  // C = alpha · op(A) · op(B) + beta · C, row-major, explicit leading dimensions.
  virtual void gemm(bool trans_a, bool trans_b, int m, int n, int k, T alpha, const T* a, int lda, const T* b,
                    int ldb, T beta, T* c, int ldc) = 0;

  // out[b,t,:] = wte[tokens[b,t], :] · scale + pe[t, :]         (pe: at least Tn × C)
  virtual void embedding_forward(T* out, const int* tokens, const T* wte, const T* pe, int B, int Tn, int C,
                                 T scale) = 0;
  // dwte[tokens[b,t], :] += dout[b,t,:] · scale. Deterministic: every row of dwte sums its
  // contributions in token order on every backend (no float atomics), so training repeats bit for bit.
  virtual void embedding_backward(T* dwte, const T* dout, const int* tokens, int B, int Tn, int C, int V,
                                  T scale) = 0;

  // out (N × OC) = act(inp (N × IC) · w (IC × OC) + bias (OC, may be null)), act nothing or ReLU. The
  // feed-forward's first layer asks for ReLU, so a backend can apply it as the product is stored (the
  // CUDA backend: cuBLASLt's ReLU-and-bias epilogue) instead of a pass that reads and writes N × OC
  // again; ReLU's backward needs only the output (> 0 exactly where the input was).
  virtual void linear_forward(T* out, const T* inp, const T* w, const T* bias, int N, int IC, int OC,
                              Activation act = Activation::None) = 0;
  // dinp += dout · wᵀ (= under GradMode::Write);  dw += inpᵀ · dout;  dbias += column sums of dout
  virtual void linear_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int IC,
                               int OC, GradMode dinp_mode = GradMode::Add) = 0;

  // out = (x − mean) / √(var + eps) · gamma + beta per row; mean and rstd (N) saved for the backward.
  virtual void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* gamma, const T* beta, int N, int C,
                                 T eps) = 0;
  // dinp += (or =, mode) the input's gradient; dgamma, dbeta += theirs.
  virtual void layernorm_backward(T* dinp, T* dgamma, T* dbeta, const T* dout, const T* inp, const T* gamma,
                                  const T* mean, const T* rstd, int N, int C, GradMode mode = GradMode::Add) = 0;

  virtual void relu_forward(T* out, const T* inp, std::size_t n) = 0;                   // out may be inp
  // dinp += (or =) dout where x > 0; x: ReLU's input or output
  virtual void relu_backward(T* dinp, const T* dout, const T* x, std::size_t n, GradMode mode = GradMode::Add) = 0;
  virtual void add_forward(T* out, const T* a, const T* b, std::size_t n) = 0;          // out = a + b
  virtual void accumulate(T* dst, const T* src, std::size_t n) = 0;                     // dst += src
  virtual void scale(T* x, std::size_t n, T s) = 0;                                     // x *= s
  // Σ x² in double (for the gradient norm), returned to the host.
  virtual double sum_squares(const T* x, std::size_t n) = 0;

  // Inverted dropout with a counter-based generator (backend/dropout_hash.hpp), fused with the residual
  // add that follows it in the model:
  //   out = residual + inp ⊙ mask      (residual null: out = inp ⊙ mask)
  // with mask_i = 1/(1 − p) where dropout_keep(seed, i, dropout_threshold(p)), else 0; the product is
  // rounded, then the sum (no fused multiply-add), on every backend. The mask is a pure function of
  // (seed, i, p): the same seed drops the same elements on every backend and thread count, and the
  // backward recomputes it rather than reading back a stored one (n floats written and n read saved per
  // call, and the separate add's pass over the dropped values). p = 0 keeps every element; 0 ≤ p < 1.
  virtual void dropout_forward(T* out, const T* inp, const T* residual, std::size_t n, float p,
                               std::uint64_t seed) = 0;
  // dinp += (or =) dout ⊙ mask, the mask of the forward with the same p and seed.
  virtual void dropout_backward(T* dinp, const T* dout, std::size_t n, float p, std::uint64_t seed,
                                GradMode mode = GradMode::Add) = 0;

  // Multi-head scaled dot-product attention: per batch b and head h,
  //   out_bh = softmax(mask(Q_bh · K_bhᵀ / √(C/H))) · V_bh,
  // and lse (B × H × Tq) = log Σ_j exp(s_j) over the visible keys of each row (−inf for a row with no
  // visible key, whose output is zero). lse is all the backward needs: it recomputes the weights.
  virtual void attention_forward(T* out, T* lse, const T* q, const T* k, const T* v, const AttentionShape& s) = 0;
  // dq, dk, dv accumulate, or under Write are stored: every element of their B·Tq (B·Tk) rows' C
  // columns, zeros for a key no query sees (strides as q, k, v; a fused buffer's other columns are
  // left alone). dout and out have the output's strides. A null gradient is not computed.
  virtual void attention_backward(T* dq, T* dk, T* dv, const T* dout, const T* out, const T* lse, const T* q,
                                  const T* k, const T* v, const AttentionShape& s, GradMode mode = GradMode::Add) = 0;
  // The weights themselves (B × H × Tq × Tk, zero where masked) from q, k and the forward's lse, for
  // the lessons and `attnlab attend`: nothing stores them during training.
  virtual void attention_weights(T* att, const T* lse, const T* q, const T* k, const AttentionShape& s) = 0;

  // Cross-entropy with label smoothing over N rows of logits (N × V), averaged over rows whose target
  // is not ignore_index. lse (N) receives each row's log Σ exp; *count the rows counted (host).
  virtual T cross_entropy_forward(T* lse, const T* logits, const int* targets, int N, int V, T smoothing,
                                  int ignore_index, int* count) = 0;
  // dlogits = (softmax − target distribution) · dloss / count; writes (dlogits may alias logits).
  virtual void cross_entropy_backward(T* dlogits, const T* logits, const T* lse, const int* targets, int N, int V,
                                      T smoothing, int ignore_index, int count, T dloss) = 0;
  // probs = exp(logits − lse), row by row.
  virtual void softmax_from_lse(T* probs, const T* logits, const T* lse, int N, int V) = 0;

  // One AdamW update (model/optim.hpp has the formula). decay_mask: n bytes, 1 = decay, or null.
  virtual void adamw_step(T* params, const T* grads, T* m, T* v, const std::uint8_t* decay_mask, std::size_t n,
                          const AdamStep& h) = 0;
};

}  // namespace attnlab::backend
