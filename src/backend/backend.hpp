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
// gradient saved). Linear and layer norm backward take a second GradMode for their parameters'
// gradients (dw, dbias; dgamma, dbeta), for the same reason: the model reaches each of those once per
// backward, so it writes them instead of zeroing every gradient first (at Transformer-base, 4 bytes a
// parameter written by the zero fill and 4 read back by the products, about 0.5 GB a step). A null
// gradient pointer means "not needed".
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/bf16.hpp"
#include "util/error.hpp"

namespace attnlab::backend {

// ---- memory -------------------------------------------------------------------------------------

class Memory {
 public:
  virtual ~Memory() = default;
  // "cpu", "cuda", "cuda (emulated)": what `--backend` selected and what the output should say.
  const std::string& name() const { return name_; }
  // Whether memory from allocate() can be read and written by the host directly (the CPU backend).
  // Only tests and diagnostics ask; the model always goes through upload/download.
  bool host_addressable() const { return host_addressable_; }
  virtual void* allocate(std::size_t bytes) = 0;  // nullptr for 0 bytes; throws when out of memory
  virtual void release(void* p) noexcept = 0;     // nullptr is fine
  virtual void upload(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void download(void* host_dst, const void* src, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;  // within the backend
  virtual void zero(void* p, std::size_t bytes) = 0;
  // Waits until every op issued so far has finished, and reports a failure of any of them.
  virtual void synchronize() = 0;

 protected:
  // Facts about a backend that never change: set once by its constructor, not virtual.
  Memory(std::string name, bool host_addressable) : name_(std::move(name)), host_addressable_(host_addressable) {}

 private:
  std::string name_;
  bool host_addressable_;
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

// Which element-wise op Ops::elementwise runs.
enum class Elementwise { Relu, Add, Accumulate, Scale };

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

// The loss of cross_entropy_forward: the mean of its row losses (host memory) over the rows whose
// target is not ignore_index, summed in double in row order, so that it is the same sum, in the same
// order, on every backend and thread count; 0 when no row counts. *count (when given) receives their
// number.
inline double row_loss_mean(const double* row_loss, const int* targets, std::size_t N, int ignore_index,
                            int* count) {
  double total = 0.0;
  int used = 0;
  for (std::size_t r = 0; r < N; ++r) {
    if (targets[r] == ignore_index) continue;
    total += row_loss[r];
    ++used;
  }
  if (count) *count = used;
  return used ? total / used : 0.0;
}

// AdamW's hyper-parameters, the paper's values by default (model::AdamConfig is this struct): the one
// definition the model, the CPU backend and the CUDA kernel all read.
struct AdamHyper {
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f;
  float weight_decay = 0.0f;  // decoupled (AdamW); 0 = plain Adam
};

// One step's update: the hyper-parameters, the step's learning rate and number, and how the
// gradients are scaled as the update reads them.
struct AdamStep : AdamHyper {
  double lr = 0.0;
  std::int64_t step = 1;  // ≥ 1: the bias corrections use it
  // Each gradient is used as grads[i] · grad_scale (one float multiply, as scaling the buffer first
  // would round it): gradient clipping's factor applied as the update reads the gradients, instead of
  // a pass of its own that reads and writes every gradient. 1 leaves them exactly as they are.
  float grad_scale = 1.0f;
  // Or, when set, the factor where clip_factor left it (one double of this backend's memory, holding
  // a float's value), so that the host need not read it first. NaN there, clip_factor's sign of a
  // step whose loss or gradient is not finite, skips the update: params, m and v keep their values
  // (adamw_step_bf16 still writes the bf16 copy of params).
  const double* grad_scale_at = nullptr;
};

// How matrix products (gemm, linear_forward, linear_backward) compute. Fp32: float32 throughout.
// Tf32: tensor cores round each input to TF32 (10 mantissa bits, about 3 decimal digits) and
// accumulate in float32. Bf16: tensor cores round each input to bfloat16 (7 mantissa bits, about 2
// decimal digits) and accumulate in float32: twice TF32's rate on Ampere and Hopper. Either way
// softmax, normalisation, the loss's sums and the optimizer compute in float32, and the stored
// weights and the activations between the backend's float ops stay float32 (the products' inputs are
// rounded as they are read); what a model stores in bf16 it passes through the bf16 ops below (at
// Bf16 model::Transformer keeps its logits, attention and feed-forward activations there).
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
 protected:
  using Memory::Memory;  // (name, host_addressable), for the implementations' constructors

 public:
  // Per-op time on the backend's own clock, for `attnlab bench`'s breakdown where ops run
  // asynchronously (a GPU: host timers would time launches, not kernels). start_op_timing() clears
  // and starts recording; from then every op's time is taken around it on the backend (CUDA events
  // on its stream; an op called inside another, like the download and upload inside
  // embedding_backward's host grouping, counts for the outer one); stop_op_timing() waits for the
  // backend and returns the totals, one row per op called, in the order first called. A backend
  // without such a clock (the CPU's, which has its own profiler in backend/cpu/profile.hpp) returns
  // false and an empty list.
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
  // dinp += dout · wᵀ (= under dinp_mode Write);  dw += inpᵀ · dout;  dbias += column sums of dout (both
  // = under param_mode Write: zeros when N = 0)
  virtual void linear_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int IC,
                               int OC, GradMode dinp_mode = GradMode::Add, GradMode param_mode = GradMode::Add) = 0;

  // out = (x − mean) / √(var + eps) · gamma + beta per row; mean and rstd (N) saved for the backward.
  virtual void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* gamma, const T* beta, int N, int C,
                                 T eps) = 0;
  // dinp += (or =, mode) the input's gradient; dgamma, dbeta += (or =, param_mode) theirs.
  virtual void layernorm_backward(T* dinp, T* dgamma, T* dbeta, const T* dout, const T* inp, const T* gamma,
                                  const T* mean, const T* rstd, int N, int C, GradMode mode = GradMode::Add,
                                  GradMode param_mode = GradMode::Add) = 0;

  // The element-wise ops over n values, one entry (`op` says which; out may be a for every op):
  //   Relu        out = max(a, 0)        Add    out = a + b
  //   Accumulate  out += a               Scale  out *= s
  // b is read by Add only, s by Scale only. The named forms below call it.
  virtual void elementwise(Elementwise op, T* out, const T* a, const T* b, std::size_t n, T s) = 0;
  void relu_forward(T* out, const T* inp, std::size_t n) { elementwise(Elementwise::Relu, out, inp, nullptr, n, T(1)); }
  void add_forward(T* out, const T* a, const T* b, std::size_t n) { elementwise(Elementwise::Add, out, a, b, n, T(1)); }
  void accumulate(T* dst, const T* src, std::size_t n) { elementwise(Elementwise::Accumulate, dst, src, nullptr, n, T(1)); }
  void scale(T* x, std::size_t n, T s) { elementwise(Elementwise::Scale, x, nullptr, nullptr, n, s); }
  // dinp += (or =) dout where x > 0; x: ReLU's input or output
  virtual void relu_backward(T* dinp, const T* dout, const T* x, std::size_t n, GradMode mode = GradMode::Add) = 0;
  // Gradient clipping, left on the backend for AdamW (AdamStep::grad_scale_at) so that nothing waits
  // between the backward and the update. Writes (this backend's memory) *norm = √(Σ x²), the sum in
  // double and the same on every call, and *scale = clip_scale(*norm, max_norm) (backend/
  // clip_scale.hpp), or NaN when the norm or any of the n_check values at check (the loss's rows) is
  // not finite: a step to skip.
  virtual void clip_factor(double* norm, double* scale, const T* x, std::size_t n, double max_norm,
                           const double* check, std::size_t n_check) = 0;

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

  // Cross-entropy with label smoothing over N rows of logits (N × V): lse (N) receives each row's
  // log Σ exp, row_loss (N doubles, the backend's memory) each row's loss, 0 where the target is
  // ignore_index. Nothing is read back, so nothing waits: a trainer queues the backward behind it and
  // reads the loss afterwards, downloading row_loss and averaging it with row_loss_mean (below), the
  // one sum every backend's loss goes through.
  virtual void cross_entropy_forward(T* lse, double* row_loss, const T* logits, const int* targets, int N, int V,
                                     T smoothing, int ignore_index) = 0;
  // dlogits = (softmax − target distribution) · dloss / count; writes (dlogits may alias logits).
  virtual void cross_entropy_backward(T* dlogits, const T* logits, const T* lse, const int* targets, int N, int V,
                                      T smoothing, int ignore_index, int count, T dloss) = 0;
  // probs = exp(logits − lse), row by row.
  virtual void softmax_from_lse(T* probs, const T* logits, const T* lse, int N, int V) = 0;

  // One AdamW update (model/optim.hpp has the formula). decay_mask: n bytes, 1 = decay, or null.
  virtual void adamw_step(T* params, const T* grads, T* m, T* v, const std::uint8_t* decay_mask, std::size_t n,
                          const AdamStep& h) = 0;

  // ---- bf16 storage ------------------------------------------------------------------------------
  // Buffers of Bf16 (backend/bf16.hpp) hold values in 16 bits: an op that reads or writes one moves
  // half the bytes of a T buffer. They are for activations and their gradients, the operands of the
  // matrix products; what a small error would compound in stays T (parameters, their gradients,
  // optimizer moments, the residual stream, softmax and normalisation statistics). Every bf16 op has
  // the contract of its T op on the widened inputs, each bf16 output rounded once from the T result
  // (to nearest, ties to even): the default implementations below do exactly that through the
  // conversions and the T op, so every backend has them and the CPU's are the reference; a backend
  // overrides them where it can read and write the 16 bits directly (the CUDA backend), and is
  // tested against the reference with a bf16 tolerance.

  // dst = src rounded to bf16 (to nearest, ties to even; NaN stays NaN);  dst = src widened (exact).
  virtual void to_bf16(Bf16* dst, const T* src, std::size_t n) = 0;
  virtual void from_bf16(T* dst, const Bf16* src, std::size_t n) = 0;
  // to_bf16 on the C values of each of B × rows rows of a strided operand (row stride ld, batch stride
  // batch, as an attention operand's), leaving the elements between them alone: a fused Q/K/V buffer's
  // other columns belong to other operands. The default calls to_bf16 once per row (or once in all when
  // the rows are contiguous); a device backend should do it in one pass.
  virtual void to_bf16_rows(Bf16* dst, const T* src, int B, int rows, int C, std::int64_t ld, std::int64_t batch);

  // gemm on bf16 A and B (the tied output projection: logits = h · Eᵀ and its gradients), C in bf16
  // (rounded once from alpha · op(A) · op(B) + beta · C) or in T.
  virtual void gemm_bf16(bool trans_a, bool trans_b, int m, int n, int k, T alpha, const Bf16* a, int lda,
                         const Bf16* b, int ldb, T beta, Bf16* c, int ldc);
  virtual void gemm_bf16(bool trans_a, bool trans_b, int m, int n, int k, T alpha, const Bf16* a, int lda,
                         const Bf16* b, int ldb, T beta, T* c, int ldc);

  // linear_forward on bf16 inp (N × IC) and w (IC × OC), the bias T: out = bf16(act(inp · w + bias)).
  virtual void linear_forward_bf16(Bf16* out, const Bf16* inp, const Bf16* w, const T* bias, int N, int IC, int OC,
                                   Activation act = Activation::None);
  // linear_backward on bf16 dout, inp and w: dinp = bf16(dinp + dout · wᵀ) (Add) or bf16(dout · wᵀ)
  // (Write), one rounding either way; dw and dbias are T and accumulate, or are written, by param_mode
  // as in linear_backward.
  virtual void linear_backward_bf16(Bf16* dinp, T* dw, T* dbias, const Bf16* dout, const Bf16* inp, const Bf16* w,
                                    int N, int IC, int OC, GradMode dinp_mode = GradMode::Add,
                                    GradMode param_mode = GradMode::Add);
  // The same with dinp in T (a post-norm sub-layer's input gradient, added to the residual stream's):
  // dinp += dout · wᵀ (Add) or = (Write) in T, from bf16 operands.
  virtual void linear_backward_bf16(T* dinp, T* dw, T* dbias, const Bf16* dout, const Bf16* inp, const Bf16* w, int N,
                                    int IC, int OC, GradMode dinp_mode = GradMode::Add,
                                    GradMode param_mode = GradMode::Add);
  // layernorm_forward with the output rounded to bf16 into out, and kept in T in out_t too when that
  // is not null (a post-norm layer's output is both the next sub-layer's input and the residual
  // stream); mean and rstd T, as the statistics of the T op.
  virtual void layernorm_forward_bf16(Bf16* out, T* out_t, T* mean, T* rstd, const T* inp, const T* gamma,
                                      const T* beta, int N, int C, T eps) {
    const std::size_t n = static_cast<std::size_t>(N) * C;
    Buffer<T> y(*this, out_t ? 0 : n);
    T* full = out_t ? out_t : y.data();
    layernorm_forward(full, mean, rstd, inp, gamma, beta, N, C, eps);
    to_bf16(out, full, n);
  }
  // layernorm_backward with dout in bf16; dinp (by mode), dgamma and dbeta (by param_mode) T.
  virtual void layernorm_backward_bf16(T* dinp, T* dgamma, T* dbeta, const Bf16* dout, const T* inp, const T* gamma,
                                       const T* mean, const T* rstd, int N, int C, GradMode mode = GradMode::Add,
                                       GradMode param_mode = GradMode::Add) {
    const std::size_t n = static_cast<std::size_t>(N) * C;
    Buffer<T> g(*this, n);
    from_bf16(g.data(), dout, n);
    layernorm_backward(dinp, dgamma, dbeta, g.data(), inp, gamma, mean, rstd, N, C, mode, param_mode);
  }
  // relu_backward on bf16: dinp = bf16(dinp + (x > 0 ? dout : 0)) (Add) or bf16(x > 0 ? dout : 0).
  virtual void relu_backward_bf16(Bf16* dinp, const Bf16* dout, const Bf16* x, std::size_t n,
                                  GradMode mode = GradMode::Add) {
    Buffer<T> d(*this, n), g(*this, n), xx(*this, n);
    from_bf16(g.data(), dout, n);
    from_bf16(xx.data(), x, n);
    if (mode == GradMode::Add) from_bf16(d.data(), dinp, n);
    relu_backward(d.data(), g.data(), xx.data(), n, mode);
    to_bf16(dinp, d.data(), n);
  }
  // dropout_forward of a bf16 sub-layer output into the T residual stream: out = residual + inp ⊙ mask.
  virtual void dropout_forward_bf16(T* out, const Bf16* inp, const T* residual, std::size_t n, float p,
                                    std::uint64_t seed) {
    Buffer<T> x(*this, n);
    from_bf16(x.data(), inp, n);
    dropout_forward(out, x.data(), residual, n, p, seed);
  }
  // dropout_backward from the T residual stream's gradient into a bf16 one: dinp = bf16(dinp + dout ⊙
  // mask) (Add) or bf16(dout ⊙ mask) (Write).
  virtual void dropout_backward_bf16(Bf16* dinp, const T* dout, std::size_t n, float p, std::uint64_t seed,
                                     GradMode mode = GradMode::Add) {
    Buffer<T> d(*this, n);
    if (mode == GradMode::Add) from_bf16(d.data(), dinp, n);
    dropout_backward(d.data(), dout, n, p, seed, mode);
    to_bf16(dinp, d.data(), n);
  }
  // Attention on bf16 q, k, v and out (and their gradients), lse T; strides as attention_forward's.
  // The backward's gradients are rounded once (Add: the old value widened, the sum rounded).
  virtual void attention_forward_bf16(Bf16* out, T* lse, const Bf16* q, const Bf16* k, const Bf16* v,
                                      const AttentionShape& s);
  virtual void attention_backward_bf16(Bf16* dq, Bf16* dk, Bf16* dv, const Bf16* dout, const Bf16* out, const T* lse,
                                       const Bf16* q, const Bf16* k, const Bf16* v, const AttentionShape& s,
                                       GradMode mode = GradMode::Add);
  // Cross-entropy on bf16 logits (lse T and row_loss as cross_entropy_forward's); the backward writes
  // bf16 dlogits (dlogits may alias logits).
  virtual void cross_entropy_forward_bf16(T* lse, double* row_loss, const Bf16* logits, const int* targets, int N,
                                          int V, T smoothing, int ignore_index) {
    const std::size_t n = static_cast<std::size_t>(N) * V;
    Buffer<T> x(*this, n);
    from_bf16(x.data(), logits, n);
    cross_entropy_forward(lse, row_loss, x.data(), targets, N, V, smoothing, ignore_index);
  }
  virtual void cross_entropy_backward_bf16(Bf16* dlogits, const Bf16* logits, const T* lse, const int* targets, int N,
                                           int V, T smoothing, int ignore_index, int count, T dloss) {
    const std::size_t n = static_cast<std::size_t>(N) * V;
    Buffer<T> x(*this, n);
    from_bf16(x.data(), logits, n);
    cross_entropy_backward(x.data(), x.data(), lse, targets, N, V, smoothing, ignore_index, count, dloss);
    to_bf16(dlogits, x.data(), n);
  }
  // adamw_step, and params_bf16 = bf16(params) after the update (or after a skipped one): the bf16
  // copy of the weights that the bf16 products read, kept in step with the float32 masters the update
  // works on.
  virtual void adamw_step_bf16(T* params, Bf16* params_bf16, const T* grads, T* m, T* v,
                               const std::uint8_t* decay_mask, std::size_t n, const AdamStep& h) {
    adamw_step(params, grads, m, v, decay_mask, n, h);
    to_bf16(params_bf16, params, n);
  }
};

// ---- the bf16 ops' reference implementations --------------------------------------------------------
// Widen every bf16 input into a T buffer of this backend, run the T op, round the bf16 outputs: the
// contract itself, at the cost of a copy of each operand (and, for an accumulated bf16 output, of
// widening it first so that the sum is rounded once).

template <typename T>
void Ops<T>::linear_forward_bf16(Bf16* out, const Bf16* inp, const Bf16* w, const T* bias, int N, int IC, int OC,
                                 Activation act) {
  const std::size_t n_in = static_cast<std::size_t>(N) * IC, n_w = static_cast<std::size_t>(IC) * OC,
                    n_out = static_cast<std::size_t>(N) * OC;
  Buffer<T> x(*this, n_in), wt(*this, n_w), y(*this, n_out);
  from_bf16(x.data(), inp, n_in);
  from_bf16(wt.data(), w, n_w);
  linear_forward(y.data(), x.data(), wt.data(), bias, N, IC, OC, act);
  to_bf16(out, y.data(), n_out);
}

template <typename T>
void Ops<T>::linear_backward_bf16(Bf16* dinp, T* dw, T* dbias, const Bf16* dout, const Bf16* inp, const Bf16* w,
                                  int N, int IC, int OC, GradMode dinp_mode, GradMode param_mode) {
  // The T-dinp form on a widened dinp (the old gradient too, under Add, so that the sum is rounded once).
  const std::size_t n_in = static_cast<std::size_t>(N) * IC;
  Buffer<T> dx(*this, dinp ? n_in : 0);
  if (dinp && dinp_mode == GradMode::Add) from_bf16(dx.data(), dinp, n_in);
  linear_backward_bf16(dinp ? dx.data() : nullptr, dw, dbias, dout, inp, w, N, IC, OC, dinp_mode, param_mode);
  if (dinp) to_bf16(dinp, dx.data(), n_in);
}

template <typename T>
void Ops<T>::linear_backward_bf16(T* dinp, T* dw, T* dbias, const Bf16* dout, const Bf16* inp, const Bf16* w, int N,
                                  int IC, int OC, GradMode dinp_mode, GradMode param_mode) {
  const std::size_t n_in = static_cast<std::size_t>(N) * IC, n_w = static_cast<std::size_t>(IC) * OC,
                    n_out = static_cast<std::size_t>(N) * OC;
  Buffer<T> g(*this, n_out), x(*this, dw ? n_in : 0), wt(*this, dinp ? n_w : 0);
  from_bf16(g.data(), dout, n_out);
  if (dw) from_bf16(x.data(), inp, n_in);
  if (dinp) from_bf16(wt.data(), w, n_w);
  linear_backward(dinp, dw, dbias, g.data(), dw ? x.data() : nullptr, dinp ? wt.data() : nullptr, N, IC, OC,
                  dinp_mode, param_mode);
}

namespace detail {
// Elements from the first row of batch 0 to the end of the last row's C values: what an attention
// operand with these strides spans (a batch stride of 0: one batch's rows).
inline std::size_t attention_span(int B, int rows, int C, std::int64_t ld, std::int64_t batch) {
  if (B <= 0 || rows <= 0) return 0;
  return static_cast<std::size_t>((B - 1) * batch + (rows - 1) * ld + C);
}
}  // namespace detail

namespace detail {
// Elements a row-major rows × cols matrix with leading dimension ld spans.
inline std::size_t matrix_span(int rows, int cols, int ld) {
  return rows <= 0 || cols <= 0 ? 0 : static_cast<std::size_t>(rows - 1) * ld + cols;
}
}  // namespace detail

template <typename T>
void Ops<T>::gemm_bf16(bool trans_a, bool trans_b, int m, int n, int k, T alpha, const Bf16* a, int lda,
                       const Bf16* b, int ldb, T beta, T* c, int ldc) {
  const std::size_t na = trans_a ? detail::matrix_span(k, m, lda) : detail::matrix_span(m, k, lda),
                    nb = trans_b ? detail::matrix_span(n, k, ldb) : detail::matrix_span(k, n, ldb);
  Buffer<T> wa(*this, na), wb(*this, nb);
  from_bf16(wa.data(), a, na);
  from_bf16(wb.data(), b, nb);
  gemm(trans_a, trans_b, m, n, k, alpha, wa.data(), lda, wb.data(), ldb, beta, c, ldc);
}

template <typename T>
void Ops<T>::gemm_bf16(bool trans_a, bool trans_b, int m, int n, int k, T alpha, const Bf16* a, int lda,
                       const Bf16* b, int ldb, T beta, Bf16* c, int ldc) {
  const std::size_t nc = detail::matrix_span(m, n, ldc);
  Buffer<T> wc(*this, nc);
  if (beta != T(0)) from_bf16(wc.data(), c, nc);  // beta = 0: C is not read, as in gemm
  gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, wc.data(), ldc);
  to_bf16_rows(c, wc.data(), 1, m, n, ldc, static_cast<std::int64_t>(m) * ldc);
}

template <typename T>
void Ops<T>::to_bf16_rows(Bf16* dst, const T* src, int B, int rows, int C, std::int64_t ld, std::int64_t batch) {
  if (ld == C && batch == static_cast<std::int64_t>(rows) * C) {
    to_bf16(dst, src, static_cast<std::size_t>(B) * rows * C);
    return;
  }
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < rows; ++t) {
      const std::int64_t off = b * batch + t * ld;
      to_bf16(dst + off, src + off, static_cast<std::size_t>(C));
    }
}

template <typename T>
void Ops<T>::attention_forward_bf16(Bf16* out, T* lse, const Bf16* q, const Bf16* k, const Bf16* v,
                                    const AttentionShape& s) {
  const AttentionShape r = s.resolved();
  const std::size_t nq = detail::attention_span(s.B, s.Tq, s.C, r.ldq, r.q_batch),
                    nk = detail::attention_span(s.B, s.Tk, s.C, r.ldk, r.k_batch),
                    nv = detail::attention_span(s.B, s.Tk, s.C, r.ldv, r.v_batch),
                    no = detail::attention_span(s.B, s.Tq, s.C, r.ldo, r.o_batch);
  Buffer<T> wq(*this, nq), wk(*this, nk), wv(*this, nv), wo(*this, no);
  from_bf16(wq.data(), q, nq);
  from_bf16(wk.data(), k, nk);
  from_bf16(wv.data(), v, nv);
  attention_forward(wo.data(), lse, wq.data(), wk.data(), wv.data(), s);
  to_bf16_rows(out, wo.data(), s.B, s.Tq, s.C, r.ldo, r.o_batch);
}

template <typename T>
void Ops<T>::attention_backward_bf16(Bf16* dq, Bf16* dk, Bf16* dv, const Bf16* dout, const Bf16* out, const T* lse,
                                     const Bf16* q, const Bf16* k, const Bf16* v, const AttentionShape& s,
                                     GradMode mode) {
  const AttentionShape r = s.resolved();
  const std::size_t nq = detail::attention_span(s.B, s.Tq, s.C, r.ldq, r.q_batch),
                    nk = detail::attention_span(s.B, s.Tk, s.C, r.ldk, r.k_batch),
                    nv = detail::attention_span(s.B, s.Tk, s.C, r.ldv, r.v_batch),
                    no = detail::attention_span(s.B, s.Tq, s.C, r.ldo, r.o_batch);
  Buffer<T> wq(*this, nq), wk(*this, nk), wv(*this, nv), wo(*this, no), wdo(*this, no);
  Buffer<T> gq(*this, dq ? nq : 0), gk(*this, dk ? nk : 0), gv(*this, dv ? nv : 0);
  from_bf16(wq.data(), q, nq);
  from_bf16(wk.data(), k, nk);
  from_bf16(wv.data(), v, nv);
  from_bf16(wo.data(), out, no);
  from_bf16(wdo.data(), dout, no);
  if (mode == GradMode::Add) {  // the sums rounded once
    if (dq) from_bf16(gq.data(), dq, nq);
    if (dk) from_bf16(gk.data(), dk, nk);
    if (dv) from_bf16(gv.data(), dv, nv);
  }
  attention_backward(dq ? gq.data() : nullptr, dk ? gk.data() : nullptr, dv ? gv.data() : nullptr, wdo.data(),
                     wo.data(), lse, wq.data(), wk.data(), wv.data(), s, mode);
  if (dq) to_bf16_rows(dq, gq.data(), s.B, s.Tq, s.C, r.ldq, r.q_batch);
  if (dk) to_bf16_rows(dk, gk.data(), s.B, s.Tk, s.C, r.ldk, r.k_batch);
  if (dv) to_bf16_rows(dv, gv.data(), s.B, s.Tk, s.C, r.ldv, r.v_batch);
}

}  // namespace attnlab::backend
