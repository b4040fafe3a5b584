// Every op of the backend interface (backend/backend.hpp) on every backend this build has, against the
// CPU backend, forward and gradient: the idea of ggml's test-backend-ops, sized for this project. It is
// the one op test: the CUDA kernels, the CPU's three attention paths and the gradients of every
// backward op are all checked through the table below.
//
// One table of cases (cases()): each names an op (or a forward/backward pair) with its shapes, masks,
// strides and tolerance, and is a function of a backend that draws its inputs from a seed, runs the
// op(s) and records what they wrote. Three checks use it:
//
//  1. Backends against the reference. The case runs once on cpu_backend<T>() (the reference) and once
//     on each backend under test with the same seed, so both see the same inputs; every recorded array
//     is compared by its normwise relative error (kernel_check.hpp: compare)
//       max_i |got_i − want_i| / max(max_i |want_i|, floor)
//     against the case's tolerance (float) or kDoubleTol (double). Backends under test:
//       float:  the CPU backend itself, its stored-weights and tiled attention variants
//               (backend/cpu/cpu_backend.hpp: make_cpu_backend; tiles of 1×1, 4×7 and 16×32, so tile
//               edges fall everywhere), and the CUDA backend when it is built and a device (or the
//               emulator) answers;
//       double: the CPU backend and its two attention variants (1e-10: only the summation order
//               differs).
//     Outputs an op writes are filled with NaN before the call, so an element it forgets fails (on the
//     reference too: the reference must come back without NaN); gradients it accumulates into start
//     from random values, so overwriting instead of adding fails. Dropout's outputs and masks must agree
//     bit for bit (the same counter-based mask on every backend).
//  2. Gradients by central differences, in double on the CPU backend: a case declares its loss
//     L = Σ dout·out over its differentiable outputs (loss_term, loss_value) and which recorded result
//     is the gradient of L with respect to which input (gradient). Every element of that input (at most
//     kFdPoints of them, evenly spread) is moved by ±h and the whole case re-run:
//       |(L(x+h) − L(x−h)) / 2h − analytic| / max(1, |numeric| + |analytic|) < kFdTol.
//     Since (1) holds every backend to the CPU's results, this checks every backend's gradients.
//  3. Properties no comparison can see (dropout's share, memory ops, refusals), as plain test cases.
//  4. The bf16 ops (Ops' bf16 storage, backend/bf16.hpp), as plain test cases ("bf16 …"): the host's
//     rounding against a slow search for the nearest bf16, the conversions on every backend bit for
//     bit, the linear layer on every backend against the exact result in double, and the other bf16
//     ops against their T op on the same backend with the widened inputs, rounded once.
//
// Shapes are small by default (B ≤ 3, T ≤ 130, C ≤ 64, V ≤ 50), so that the emulation build (the CUDA
// kernels on the CPU emulator, as CI runs them) finishes in seconds. The large cases (widths to 768,
// V = 50,257, head widths to 128, sequences to 256) run when the CUDA backend is a real GPU, or with
// --large; there is no finite-difference pass on them (the small cases cover the formulas).
//
// Options (before doctest's own):
//   --backends=cpu   the CPU backend and its variants, float and double, and the finite differences
//                    (ctest: backend_ops)
//   --backends=cuda  the CUDA backend in float against the CPU backend; exits 77 (ctest: skipped) when
//                    no device answers, 1 when a GPU is there but CUDA cannot use it (ctest: cuda_backend_ops)
//   --backends=all   both (the default)
//   --large / --small   the large cases on or off (default: on for a real GPU)
//   --seed=N         the table's first seed (default 20240611; each case takes the next)
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "backend/clip_scale.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/dropout_hash.hpp"
#include "backend/registry.hpp"
#include "kernel_check.hpp"
#include "util/error.hpp"

namespace {

using attnlab::backend::Activation;
using attnlab::backend::AdamStep;
using attnlab::backend::AttentionShape;
using attnlab::backend::Buffer;
using attnlab::backend::CpuAttention;
using attnlab::backend::GradMode;
using attnlab::backend::Ops;
using namespace attnlab::gputest;

// ---- options ----------------------------------------------------------------------------------------

struct Options {
  bool cpu = true, cuda = true;
  int large = -1;  // −1: when the CUDA backend is a real GPU
  std::uint32_t seed = 20240611u;
};
Options& options() {
  static Options o;
  return o;
}

// ---- the backends -----------------------------------------------------------------------------------

Ops<float>*& cuda_slot() {
  static Ops<float>* cuda = nullptr;
  return cuda;
}

template <typename T>
Ops<T>& reference() {
  return attnlab::backend::cpu_backend<T>();
}

// The CPU backend's attention variants (made once: they keep their scratch buffers between calls).
template <typename T>
std::vector<Ops<T>*> cpu_variants() {
  static std::vector<std::unique_ptr<Ops<T>>> made;
  if (made.empty()) {
    made.push_back(attnlab::backend::make_cpu_backend<T>(CpuAttention::StoredWeights));
    made.push_back(attnlab::backend::make_cpu_backend<T>(CpuAttention::Tiled, 1, 1));
    made.push_back(attnlab::backend::make_cpu_backend<T>(CpuAttention::Tiled, 4, 7));
    made.push_back(attnlab::backend::make_cpu_backend<T>(CpuAttention::Tiled, 16, 32));
  }
  std::vector<Ops<T>*> out;
  for (auto& b : made) out.push_back(b.get());
  return out;
}

// Which backends run a case of type T (attention: whether the case calls attention at all; the CPU
// variants differ from the reference only there, so the other cases are not run on them).
template <typename T>
std::vector<Ops<T>*> backends_under_test(bool attention) {
  std::vector<Ops<T>*> all;
  if (options().cpu) {
    all.push_back(&reference<T>());
    if (attention)
      for (Ops<T>* b : cpu_variants<T>()) all.push_back(b);
  }
  if constexpr (std::is_same_v<T, float>)
    if (options().cuda && cuda_slot()) all.push_back(cuda_slot());
  return all;
}

// ---- one run of a case on one backend ---------------------------------------------------------------

template <typename T>
T poison() {
  if constexpr (std::is_same_v<T, float>) return poison_value();
  else return std::numeric_limits<double>::quiet_NaN();
}

// What a case recorded: a named array (scalars as one element) and how to compare it.
struct Result {
  std::string name;
  std::vector<double> values;
  double floor = 1.0;  // the scale of the inputs (compare's floor); 0: plain relative
  bool exact = false;  // must match the reference bit for bit
};

// A gradient a case declares: the result `name` is dL/d(the input made `ordinal`-th), except at the
// elements marked in `skip` (a kink, where the two one-sided derivatives differ).
struct Gradient {
  std::string name;
  std::size_t ordinal;
  std::vector<double> analytic;
  std::vector<bool> skip;
};

// For the finite differences: the input made `ordinal`-th gets `delta` added at `index`.
struct Perturbation {
  std::size_t ordinal = 0, index = 0;
  double delta = 0.0;
};

// The buffers of one run, all on one backend, and the seeded generator its inputs come from: the same
// seed gives the same draws, in the same order, on every backend and in both types (float's inputs are
// double's rounded).
template <typename T>
class Run {
 public:
  using value_type = T;
  Run(Ops<T>& backend, std::uint32_t seed, const Perturbation* p = nullptr) : be(backend), rng(seed), perturb_(p) {}

  // An input of n normal values.
  T* input(std::size_t n, double sd = 1.0, double mean = 0.0) { return put(draw(n, sd, mean)); }
  std::vector<T> draw(std::size_t n, double sd = 1.0, double mean = 0.0) {
    std::normal_distribution<double> dist(mean, sd);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(dist(rng));
    return v;
  }
  T* put(std::vector<T> host) {
    const std::size_t ordinal = made_++;
    if (perturb_ && perturb_->ordinal == ordinal) host.at(perturb_->index) += static_cast<T>(perturb_->delta);
    floats_.emplace_back(be);
    floats_.back().upload(host);
    T* p = floats_.back().data();
    made_at_[p] = {ordinal, host.size()};
    start_[p] = std::move(host);
    return p;
  }
  int* ints(const std::vector<int>& host) {
    ints_.emplace_back(be);
    ints_.back().upload(host);
    return ints_.back().data();
  }
  std::uint8_t* bytes(const std::vector<std::uint8_t>& host) {
    bytes_.emplace_back(be);
    bytes_.back().upload(host);
    return bytes_.back().data();
  }
  std::vector<int> draw_ints(std::size_t n, int lo, int hi) { return random_ints(rng, n, lo, hi); }
  // Doubles the op reads, and n doubles it writes (each row's loss): NaN until it does.
  double* doubles(const std::vector<double>& host) {
    doubles_.emplace_back(be);
    doubles_.back().upload(host);
    return doubles_.back().data();
  }
  double* doubles_written(std::size_t n) { return doubles(std::vector<double>(n, std::numeric_limits<double>::quiet_NaN())); }
  // An output the op writes: NaN until it does.
  T* written(std::size_t n) { return put(std::vector<T>(n, poison<T>())); }
  // A gradient the op accumulates into: random start values.
  T* accumulated(std::size_t n) { return input(n); }

  std::vector<T> fetch(const T* p, std::size_t n) {
    std::vector<T> host(n);
    if (n) be.download(host.data(), p, n * sizeof(T));
    return host;
  }
  void record(std::string name, const T* p, std::size_t n, double floor = 1.0) {
    const auto host = fetch(p, n);
    results.push_back({std::move(name), {host.begin(), host.end()}, floor, false});
  }
  void record_exact(std::string name, const T* p, std::size_t n) {
    const auto host = fetch(p, n);
    results.push_back({std::move(name), {host.begin(), host.end()}, 0.0, true});
  }
  void record_value(std::string name, double v, double floor = 1.0) {
    results.push_back({std::move(name), {v}, floor, false});
  }

  // The loss of the finite differences: L += Σ_{r < rows, c < cols} out[r·ld + c] · dout[r·ld + c].
  void loss_term(const T* out, const T* dout, std::size_t rows, std::size_t cols, std::size_t ld) {
    if (!fd) return;
    const auto o = fetch(out, rows * ld), d = fetch(dout, rows * ld);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) loss += static_cast<double>(o[r * ld + c]) * d[r * ld + c];
  }
  void loss_term(const T* out, const T* dout, std::size_t n) { loss_term(out, dout, 1, n, n); }
  void loss_value(double value, double weight) { loss += value * weight; }
  // grad (made by written() or accumulated(), now holding what the backward left) is dL/d wrt.
  void gradient(std::string name, const T* wrt, const T* grad, std::vector<bool> skip = {}) {
    if (!fd) return;
    const auto& [ordinal, n] = made_at_.at(wrt);
    auto now = fetch(grad, made_at_.at(grad).second);
    const auto& start = start_.at(grad);
    Gradient g{std::move(name), ordinal, {}, std::move(skip)};
    for (std::size_t i = 0; i < now.size(); ++i)  // what the backward added (a written one started as NaN)
      g.analytic.push_back(std::isnan(static_cast<double>(start[i])) ? now[i] : static_cast<double>(now[i]) - start[i]);
    REQUIRE(g.analytic.size() == n);
    gradients.push_back(std::move(g));
  }
  // A gradient buffer's values, compared across backends, and (in the finite-difference pass) the
  // check that they are dL/d wrt, both under one name.
  void record_gradient(const std::string& name, const T* wrt, const T* grad, std::vector<bool> skip = {}) {
    record(name, grad, made_at_.at(grad).second);
    gradient(name, wrt, grad, std::move(skip));
  }
  std::size_t size_of_input(std::size_t ordinal) const {
    for (const auto& [p, at] : made_at_)
      if (at.first == ordinal) return at.second;
    return 0;
  }

  Ops<T>& be;
  std::mt19937 rng;
  std::vector<Result> results;
  bool fd = false;  // the finite-difference pass: loss_term and gradient do their work only then
  double loss = 0.0;
  std::vector<Gradient> gradients;

 private:
  const Perturbation* perturb_;
  std::size_t made_ = 0;
  std::map<const T*, std::pair<std::size_t, std::size_t>> made_at_;  // pointer → (ordinal, size)
  std::map<const T*, std::vector<T>> start_;                         // pointer → values at creation
  std::deque<Buffer<T>> floats_;
  std::deque<Buffer<int>> ints_;
  std::deque<Buffer<std::uint8_t>> bytes_;
  std::deque<Buffer<double>> doubles_;
};

// ---- the table --------------------------------------------------------------------------------------

struct Case {
  std::string op;  // the op(s) and what is special about the shapes
  double tol;      // float32: normwise relative tolerance of every non-exact result
  bool attention;  // calls attention: the CPU's attention variants run it too
  bool large;      // a large case (see the top)
  std::function<void(Run<float>&)> f32;
  std::function<void(Run<double>&)> f64;
};

template <typename Body>
Case make_case(std::string op, Body body, double tol = kFp32Tol) {
  const bool attention = op.rfind("attention", 0) == 0;
  return {std::move(op), tol, attention, false, body, body};
}
template <typename Body>
Case large_case(std::string op, Body body, double tol = kFp32Tol) {
  Case c = make_case(std::move(op), body, tol);
  c.large = true;
  return c;
}

constexpr double kDoubleTol = 1e-10;  // double against double: the summation order differs, nothing else
constexpr double kFdTol = 1e-6;
constexpr double kFdStep = 1e-5;
constexpr std::size_t kFdPoints = 160;  // at most this many elements of each input are moved

// Attention: forward (out, lse), the weights, and (unless shared K/V) the backward, on one layout.
enum class Layout {
  Packed,    // q, out: (B·Tq) × C; k, v: (B·Tk) × C (the defaults)
  FusedQKV,  // one (B·T) × 3C buffer: q, k, v at columns 0, C, 2C, ld = 3C; out in a wider (ld = C + 5) buffer
  SharedKV,  // one Tk × C K and V for all B batches (batch stride 0): forward and weights only
};

struct Attn {
  int B, Tq, Tk, C, H;
  bool causal;
  std::vector<int> key_len;  // empty: every key visible
  Layout layout = Layout::Packed;
};

// A gradient output for `mode`: random start values to add to, or NaN to be stored over (a read of
// it would show).
template <typename T>
T* gradient_buffer(Run<T>& r, GradMode mode, std::size_t n) {
  return mode == GradMode::Write ? r.written(n) : r.accumulated(n);
}

template <typename T>
void attention_case(Run<T>& r, const Attn& a) {
  AttentionShape s;
  s.B = a.B;
  s.Tq = a.Tq;
  s.Tk = a.Tk;
  s.C = a.C;
  s.H = a.H;
  s.causal = a.causal;
  if (!a.key_len.empty()) s.key_len = r.ints(a.key_len);
  const std::size_t C = static_cast<std::size_t>(a.C), rows_q = static_cast<std::size_t>(a.B) * a.Tq,
                    rows_k = static_cast<std::size_t>(a.B) * a.Tk;
  const T *q = nullptr, *k = nullptr, *v = nullptr, *qkv = nullptr;
  std::size_t nq = rows_q * C, nkv = rows_k * C;
  switch (a.layout) {
    case Layout::Packed:
      // Scores of a few units, so the softmax is neither flat nor one-hot.
      q = r.input(nq, 1.5);
      k = r.input(nkv, 1.5);
      v = r.input(nkv);
      break;
    case Layout::FusedQKV:
      qkv = r.input(rows_q * 3 * C, 1.5);  // Tq = Tk: self-attention
      q = qkv;
      k = qkv + C;
      v = qkv + 2 * C;
      s.ldq = s.ldk = s.ldv = static_cast<std::int64_t>(3 * C);
      s.ldo = static_cast<std::int64_t>(C + 5);
      break;
    case Layout::SharedKV:
      q = r.input(nq, 1.5);
      k = r.input(static_cast<std::size_t>(a.Tk) * C, 1.5);
      v = r.input(static_cast<std::size_t>(a.Tk) * C);
      s.k_batch = s.v_batch = 0;
      break;
  }
  const std::size_t ldo = s.ldo ? static_cast<std::size_t>(s.ldo) : C;
  T* out = r.written(rows_q * ldo);
  T* lse = r.written(static_cast<std::size_t>(a.B) * a.H * a.Tq);
  r.be.attention_forward(out, lse, q, k, v, s);
  // The C columns of each output row; a wider row's other columns are not the op's and stay NaN.
  const std::vector<T> host = r.fetch(out, rows_q * ldo);
  std::vector<double> cols;
  double touched = 0;
  for (std::size_t i = 0; i < rows_q; ++i)
    for (std::size_t j = 0; j < ldo; ++j) {
      if (j < C) cols.push_back(host[i * ldo + j]);
      else touched += std::isnan(static_cast<double>(host[i * ldo + j])) ? 0 : 1;
    }
  r.results.push_back({"out", cols, 1.0, false});
  r.results.push_back({"out: columns beyond C written (must be 0)", {touched}, 0.0, true});
  r.record("lse", lse, static_cast<std::size_t>(a.B) * a.H * a.Tq);
  // A batch with no visible key (key_len 0): its rows are zeros, never NaN, and its lse is −inf, on
  // every backend (the reference included: the comparison alone would accept any shared mistake).
  const std::vector<T> lse_host = r.fetch(lse, static_cast<std::size_t>(a.B) * a.H * a.Tq);
  for (int b = 0; b < static_cast<int>(a.key_len.size()); ++b) {
    if (a.key_len[static_cast<std::size_t>(b)] != 0) continue;
    INFO("fully masked batch " << b << " on " << r.be.name());
    for (std::size_t i = static_cast<std::size_t>(b) * a.Tq; i < static_cast<std::size_t>(b + 1) * a.Tq; ++i)
      for (std::size_t j = 0; j < C; ++j) CHECK(host[i * ldo + j] == T(0));
    for (std::size_t i = static_cast<std::size_t>(b) * a.H * a.Tq; i < static_cast<std::size_t>(b + 1) * a.H * a.Tq; ++i)
      CHECK((std::isinf(static_cast<double>(lse_host[i])) && lse_host[i] < 0));
  }

  const std::size_t natt = static_cast<std::size_t>(a.B) * a.H * a.Tq * a.Tk;
  T* att = r.written(natt);
  r.be.attention_weights(att, lse, q, k, s);
  r.record("weights", att, natt);
  if (a.layout == Layout::SharedKV) return;

  T* dout = r.input(rows_q * ldo);
  r.loss_term(out, dout, rows_q, C, ldo);
  // Added onto random values, then (GradMode::Write) stored into buffers of NaN, so a read of the old
  // value, or a row left unwritten (a key no query sees, a key block a kernel skips, a query with no
  // visible key), shows as NaN against the reference.
  for (GradMode mode : {GradMode::Add, GradMode::Write}) {
    const std::string tag = mode == GradMode::Write ? " (Write)" : "";
    if (a.layout == Layout::FusedQKV) {
      T* dqkv = gradient_buffer(r, mode, rows_q * 3 * C);
      r.be.attention_backward(dqkv, dqkv + C, dqkv + 2 * C, dout, out, lse, q, k, v, s, mode);
      r.record_gradient("dqkv" + tag, qkv, dqkv);
      continue;
    }
    T* dq = gradient_buffer(r, mode, nq);
    T* dk = gradient_buffer(r, mode, nkv);
    T* dv = gradient_buffer(r, mode, nkv);
    r.be.attention_backward(dq, dk, dv, dout, out, lse, q, k, v, s, mode);
    r.record_gradient("dq" + tag, q, dq);
    r.record_gradient("dk" + tag, k, dk);
    r.record_gradient("dv" + tag, v, dv);
  }
}

template <typename T>
void gemm_case(Run<T>& r, int m, int n, int k) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const int lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 4;  // ld > row length: strided
      const T* a = r.input(static_cast<std::size_t>(ta ? k : m) * lda);
      const T* b = r.input(static_cast<std::size_t>(tb ? n : k) * ldb);
      T* c = r.accumulated(static_cast<std::size_t>(m) * ldc);
      r.be.gemm(ta, tb, m, n, k, T(0.5), a, lda, b, ldb, T(0.25), c, ldc);
      r.record(std::string("C ") + (ta ? "T" : "N") + (tb ? "T" : "N"), c, static_cast<std::size_t>(m) * ldc);
    }
  }
}

template <typename T>
void embedding_case(Run<T>& r, int B, int Tn, int C, int V) {
  const std::size_t N = static_cast<std::size_t>(B) * Tn;
  const T* wte = r.input(static_cast<std::size_t>(V) * C);
  const T* pe = r.input(static_cast<std::size_t>(Tn) * C);
  const int* tokens = r.ints(r.draw_ints(N, 0, V - 1));
  const T scale = static_cast<T>(std::sqrt(static_cast<double>(C)));
  T* out = r.written(N * C);
  r.be.embedding_forward(out, tokens, wte, pe, B, Tn, C, scale);
  r.record("out", out, N * C);
  const T* dout = r.input(N * C);
  r.loss_term(out, dout, N * C);
  T* dwte = r.accumulated(static_cast<std::size_t>(V) * C);
  r.be.embedding_backward(dwte, dout, tokens, B, Tn, C, V, scale);
  r.record_gradient("dwte", wte, dwte);
}

// The modes of linear and layer-norm backward the model uses: every gradient added; the input's
// stored (GradMode::Write), the parameters' added; the parameters' stored, the input's added.
struct BackwardModes {
  GradMode input, params;
  const char* tag;  // appended to the results' names
};
constexpr BackwardModes kBackwardModes[] = {{GradMode::Add, GradMode::Add, ""},
                                            {GradMode::Write, GradMode::Add, " (dinp Write)"},
                                            {GradMode::Add, GradMode::Write, " (params Write)"}};

template <typename T>
void linear_case(Run<T>& r, int N, int IC, int OC, bool bias, bool relu = false) {
  const std::size_t n_in = static_cast<std::size_t>(N) * IC, n_out = static_cast<std::size_t>(N) * OC,
                    n_w = static_cast<std::size_t>(IC) * OC;
  const T* inp = r.input(n_in);
  const T* w = r.input(n_w, 0.2);
  const T* b = bias ? r.input(static_cast<std::size_t>(OC)) : nullptr;
  T* out = r.written(n_out);
  r.be.linear_forward(out, inp, w, b, N, IC, OC, relu ? Activation::Relu : Activation::None);
  r.record("out", out, n_out);
  if (relu) {
    // The same layer without ReLU on the same backend: the fused output must be its ReLU, element by
    // element up to the product's rounding (a GPU may pick another algorithm for the fused product),
    // and exactly 0 wherever that is negative by more than the rounding.
    T* plain = r.written(n_out);
    r.be.linear_forward(plain, inp, w, b, N, IC, OC);
    const auto fused = r.fetch(out, n_out), lin = r.fetch(plain, n_out);
    std::size_t wrong = 0, zeros = 0;
    for (std::size_t i = 0; i < n_out; ++i) {
      const double want = lin[i] > T(0) ? static_cast<double>(lin[i]) : 0.0;
      wrong += !(std::abs(fused[i] - want) <= 1e-5 * (1.0 + std::abs(want)));
      zeros += fused[i] == T(0);
      if (lin[i] < T(-1e-4)) wrong += fused[i] != T(0);
    }
    CHECK_MESSAGE(wrong == 0, wrong << " of " << n_out << " outputs are not ReLU of the plain product");
    CHECK(zeros > n_out / 4);  // about half the pre-activations are negative
  }
  const T* dout_in = r.input(n_out);
  const T* dout = dout_in;
  if (relu) {
    // Through ReLU's backward (from its output, as the model does), then the layer's.
    T* dpre = r.written(n_out);
    r.be.relu_backward(dpre, dout_in, out, n_out, GradMode::Write);
    dout = dpre;
  }
  r.loss_term(out, dout_in, n_out);
  for (const BackwardModes& m : kBackwardModes) {
    // Without dbias under the input's Write: a null gradient is skipped.
    const bool with_dbias = bias && !(m.input == GradMode::Write && m.params == GradMode::Add);
    T* dinp = gradient_buffer(r, m.input, n_in);
    T* dw = gradient_buffer(r, m.params, n_w);
    T* dbias = with_dbias ? gradient_buffer(r, m.params, static_cast<std::size_t>(OC)) : nullptr;
    r.be.linear_backward(dinp, dw, dbias, dout, inp, w, N, IC, OC, m.input, m.params);
    const std::string tag = m.tag;
    r.record_gradient("dinp" + tag, inp, dinp);
    r.record_gradient("dw" + tag, w, dw);
    if (dbias) r.record_gradient("dbias" + tag, b, dbias);
  }
}

template <typename T>
void layernorm_case(Run<T>& r, int N, int C) {
  const std::size_t n = static_cast<std::size_t>(N) * C;
  // Mean 3, sd 2: every row's mean is far from 0, so the mean compares relatively and the two-pass
  // variance is exercised. (C = 1 has variance 0: out = beta exactly and no input gradient.)
  // Rows of variance below 0.1 are drawn again: there rstd is large and multiplies float32's rounding
  // of the mean (the CPU keeps its mean in double), so any float32 kernel would differ from the CPU
  // beyond 1e-5 (docs/cuda.md).
  std::vector<T> x = r.draw(n, 2.0, 3.0);
  for (int row = 0; row < N && C > 1; ++row) {
    T* p = x.data() + static_cast<std::size_t>(row) * C;
    for (;;) {
      double m = 0.0, var = 0.0;
      for (int c = 0; c < C; ++c) m += p[c];
      m /= C;
      for (int c = 0; c < C; ++c) var += (p[c] - m) * (p[c] - m);
      if (var / C >= 0.1) break;
      const std::vector<T> fresh = r.draw(static_cast<std::size_t>(C), 2.0, 3.0);
      std::copy(fresh.begin(), fresh.end(), p);
    }
  }
  const T* inp = r.put(x);
  const T* gamma = r.input(C, 0.5, 1.0);
  const T* beta = r.input(C);
  T* out = r.written(n);
  T* mean = r.written(N);
  T* rstd = r.written(N);
  r.be.layernorm_forward(out, mean, rstd, inp, gamma, beta, N, C, T(1e-5));
  r.record("out", out, n);
  r.record("mean", mean, N, 0.0);
  r.record("rstd", rstd, N, 0.0);
  const T* dout = r.input(n);
  r.loss_term(out, dout, n);
  for (const BackwardModes& m : kBackwardModes) {
    T* dinp = gradient_buffer(r, m.input, n);
    T* dgamma = gradient_buffer(r, m.params, C);
    T* dbeta = gradient_buffer(r, m.params, C);
    r.be.layernorm_backward(dinp, dgamma, dbeta, dout, inp, gamma, mean, rstd, N, C, m.input, m.params);
    const std::string tag = m.tag;
    r.record_gradient("dinp" + tag, inp, dinp);
    r.record_gradient("dgamma" + tag, gamma, dgamma);
    r.record_gradient("dbeta" + tag, beta, dbeta);
  }
}

template <typename T>
void elementwise_case(Run<T>& r, std::size_t n) {
  std::vector<T> xs = r.draw(n, 3.0);
  for (std::size_t i = 0; i < n; i += 7) xs[i] = T(0);  // ReLU's edge: exactly 0 passes no gradient
  const T* x = r.put(xs);
  const T* y = r.input(n);
  T* out = r.written(n);
  r.be.relu_forward(out, x, n);
  r.record("relu", out, n);
  r.loss_term(out, y, n);
  T* dinp = r.accumulated(n);
  r.be.relu_backward(dinp, y, out, n);
  // No finite difference at the kinks (x within the step of 0).
  std::vector<bool> kink(n);
  for (std::size_t i = 0; i < n; ++i) kink[i] = std::fabs(static_cast<double>(xs[i])) < 1e-3;
  r.record_gradient("relu backward", x, dinp, kink);
  T* dinp_w = r.written(n);
  r.be.relu_backward(dinp_w, y, out, n, GradMode::Write);
  r.record_gradient("relu backward (Write)", x, dinp_w, kink);
  T* inplace = r.input(n);
  r.be.relu_forward(inplace, inplace, n);
  r.record("relu in place", inplace, n);
  T* sum = r.written(n);
  r.be.add_forward(sum, x, y, n);
  r.record("add", sum, n);
  T* acc = r.accumulated(n);
  r.be.accumulate(acc, x, n);
  r.record("accumulate", acc, n);
  T* scaled = r.input(n);
  r.be.scale(scaled, n, T(-0.375));
  r.record("scale", scaled, n);
}

template <typename T>
void cross_entropy_case(Run<T>& r, int N, int V, double smoothing, bool all_ignored) {
  const int ignore = 0;  // kPad: random targets hit it now and then
  const std::size_t n = static_cast<std::size_t>(N) * V;
  const std::vector<T> logits_host = r.draw(n, 3.0);
  const T* logits = r.put(logits_host);
  std::vector<int> targets_host = r.draw_ints(static_cast<std::size_t>(N), 0, V - 1);
  if (all_ignored) targets_host.assign(targets_host.size(), ignore);
  const int* targets = r.ints(targets_host);
  T* lse = r.written(static_cast<std::size_t>(N));
  double* row_loss = r.doubles_written(static_cast<std::size_t>(N));
  const T sm = static_cast<T>(smoothing);
  r.be.cross_entropy_forward(lse, row_loss, logits, targets, N, V, sm, ignore);
  // The loss as a trainer reads it: the rows downloaded and averaged on the host.
  std::vector<double> rows(static_cast<std::size_t>(N));
  r.be.download(rows.data(), row_loss, rows.size() * sizeof(double));
  for (int i = 0; i < N; ++i)
    if (targets_host[static_cast<std::size_t>(i)] == ignore) CHECK(rows[static_cast<std::size_t>(i)] == 0.0);
  int count = -1;
  const T loss = static_cast<T>(attnlab::backend::row_loss_mean(rows.data(), targets_host.data(), rows.size(), ignore, &count));
  r.results.push_back({"row losses", rows, 1.0, false});
  r.record_value("loss", loss);
  r.record_value("count", count);
  r.record("lse", lse, static_cast<std::size_t>(N));
  r.loss_value(loss, 1.5);
  T* dlogits = r.written(n);
  r.be.cross_entropy_backward(dlogits, logits, lse, targets, N, V, sm, ignore, count, T(1.5));
  r.record_gradient("dlogits", logits, dlogits);
  T* inplace = r.put(logits_host);
  r.be.cross_entropy_backward(inplace, inplace, lse, targets, N, V, sm, ignore, count, T(1.5));
  r.record("dlogits in place", inplace, n);
  T* probs = r.written(n);
  r.be.softmax_from_lse(probs, logits, lse, N, V);
  r.record("probs", probs, n, 0.0);
}

template <typename T>
void adamw_case(Run<T>& r, std::size_t n, std::int64_t step, float decay, bool masked, float grad_scale = 1.0f) {
  T* p = r.input(n);
  const T* g = r.input(n, 0.1);
  T* m = r.input(n, 0.01);
  std::vector<T> v_host = r.draw(n, 0.01);
  for (T& x : v_host) x *= x;  // second moments are non-negative
  T* v = r.put(v_host);
  const std::uint8_t* mask = nullptr;
  if (masked) {
    const std::vector<int> bits = r.draw_ints(n, 0, 1);
    mask = r.bytes(std::vector<std::uint8_t>(bits.begin(), bits.end()));
  }
  AdamStep h;
  h.lr = 3e-3;
  h.step = step;
  h.weight_decay = decay;
  h.grad_scale = grad_scale;
  r.be.adamw_step(p, g, m, v, mask, n, h);
  r.record("params", p, n);
  r.record("m", m, n, 0.01);  // the scale of m and of (1 − β1)·g
  r.record("v", v, n, 0.0);   // a sum of non-negative terms
}

template <typename T>
void dropout_case(Run<T>& r, float p, std::uint64_t seed) {
  const std::size_t n = 999;
  const T* inp = r.input(n);
  const T* residual = r.input(n);
  // Alone (the embeddings' dropout) and fused with the residual add (every sub-layer's): the mask, and
  // so the output, bit for bit on every backend; the product rounded before the sum everywhere.
  T* out = r.written(n);
  r.be.dropout_forward(out, inp, nullptr, n, p, seed);
  r.record_exact("out", out, n);
  T* sum = r.written(n);
  r.be.dropout_forward(sum, inp, residual, n, p, seed);
  r.record_exact("residual + out", sum, n);
  const T* dout = r.input(n);
  const T* dsum = r.input(n);
  r.loss_term(out, dout, n);
  r.loss_term(sum, dsum, n);
  // The backward draws the same mask from (seed, p): dinp = dout ⊙ mask + dsum ⊙ mask.
  T* dinp = r.accumulated(n);
  r.be.dropout_backward(dinp, dout, n, p, seed);
  r.be.dropout_backward(dinp, dsum, n, p, seed);
  // dinp + dout·mask: a fused multiply-add may round once instead of twice
  r.record_gradient("dinp", inp, dinp);
  T* dinp_w = r.written(n);
  r.be.dropout_backward(dinp_w, dout, n, p, seed, GradMode::Write);
  r.record_exact("dinp (Write)", dinp_w, n);  // one product, rounded once everywhere
  // out's own gradient: the mask itself, which the forward's out must agree with element by element.
  const auto o = r.fetch(out, n), x = r.fetch(inp, n), g = r.fetch(dinp_w, n), d = r.fetch(dout, n);
  const T keep = p > 0.0f ? static_cast<T>(1.0 / (1.0 - p)) : T(1);
  const std::uint32_t threshold = attnlab::backend::dropout_threshold(p);
  std::size_t kept = 0, wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool k = attnlab::backend::dropout_keep(seed, i, threshold);
    kept += k;
    wrong += o[i] != (k ? x[i] * keep : T(0)) || g[i] != (k ? d[i] * keep : T(0));
  }
  CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " elements not as dropout_keep draws them");
  if (p == 0.0f) CHECK(kept == n);
  r.record_value("elements kept", static_cast<double>(kept), 0.0);
  T* dres = r.written(n);  // the residual's gradient is dsum itself: the model copies it, no op
  r.be.copy(dres, dsum, n * sizeof(T));
  r.gradient("dresidual", residual, dres);
}

std::vector<Case> cases() {
  std::vector<Case> t;
  t.push_back(make_case("gemm NN/NT/TN/TT, m 5, n 7, k 9, alpha 0.5, beta 0.25, ld > row length",
                        [](auto& r) { gemm_case(r, 5, 7, 9); }));
  t.push_back(make_case("gemm k 0 (C = beta·C), m 3, n 4", [](auto& r) { gemm_case(r, 3, 4, 0); }));
  t.push_back(make_case("embedding forward/backward, B 2, T 9, C 16, V 7 (tokens repeat)",
                        [](auto& r) { embedding_case(r, 2, 9, 16, 7); }));
  t.push_back(make_case("embedding, B 3, T 37, C 7, V 5", [](auto& r) { embedding_case(r, 3, 37, 7, 5); }));
  // One row more than CUDA's one-block sort takes (cuda/embedding.hpp): its backward groups on the host.
  t.push_back(make_case("embedding, B 5, T 3277, C 3, V 5 (16,385 rows)", [](auto& r) { embedding_case(r, 5, 3277, 3, 5); }));
  t.push_back(make_case("linear with bias, N 18, IC 32, OC 24", [](auto& r) { linear_case(r, 18, 32, 24, true); }));
  t.push_back(make_case("linear without bias, N 1, IC 7, OC 5", [](auto& r) { linear_case(r, 1, 7, 5, false); }));
  t.push_back(make_case("linear with bias, N 37, IC 1, OC 33", [](auto& r) { linear_case(r, 37, 1, 33, true); }));
  t.push_back(make_case("linear + ReLU with bias, N 18, IC 32, OC 24", [](auto& r) { linear_case(r, 18, 32, 24, true, true); }));
  t.push_back(make_case("linear + ReLU without bias, N 7, IC 5, OC 9", [](auto& r) { linear_case(r, 7, 5, 9, false, true); }));
  // N > 256: the device's bias and γ/β gradients sum the rows in chunks of 256 (cuda/column_sums.hpp),
  // here three, the last one partial.
  t.push_back(make_case("linear with bias, N 600 (3 row chunks), IC 3, OC 40", [](auto& r) { linear_case(r, 600, 3, 40, true); }));
  t.push_back(make_case("layernorm, N 600 (3 row chunks), C 33", [](auto& r) { layernorm_case(r, 600, 33); }));
  t.push_back(make_case("layernorm forward/backward, N 18, C 32", [](auto& r) { layernorm_case(r, 18, 32); }));
  t.push_back(make_case("layernorm, N 37, C 1 (variance 0)", [](auto& r) { layernorm_case(r, 37, 1); }));
  t.push_back(make_case("layernorm, N 5, C 2", [](auto& r) { layernorm_case(r, 5, 2); }));
  t.push_back(make_case("layernorm, N 3, C 129", [](auto& r) { layernorm_case(r, 3, 129); }));
  t.push_back(make_case("relu (in place too), add, accumulate, scale, n 999",
                        [](auto& r) { elementwise_case(r, 999); }));
  t.push_back(make_case("relu, add, accumulate, scale, n 1", [](auto& r) { elementwise_case(r, 1); }));
  t.push_back(make_case("clip_factor: n 0, 1 and 4099, clipped or not, finite checks", [](auto& r) {
    // The norm against the CPU's, and the factor clip_scale makes of it: clipped where max_norm is
    // below the norm (about √n here), 1 where above it or 0 (off).
    const std::vector<double> rows{0.5, 0.0, 2.25};
    std::vector<double> out(2);
    for (const auto& [n, max_norm] : {std::pair<std::size_t, double>{0, 1.0}, {1, 0.25}, {1, 0.0}, {4099, 10.0},
                                      {4099, 1000.0}}) {
      double* at = r.doubles_written(2);
      r.be.clip_factor(at, at + 1, r.input(n), n, max_norm, r.doubles(rows), rows.size());
      r.be.download(out.data(), at, 2 * sizeof(double));
      const std::string what = "n " + std::to_string(n) + ", max_norm " + std::to_string(max_norm);
      r.record_value("norm, " + what, out[0], 0.0);
      r.record_value("factor, " + what, out[1], 0.0);
      CHECK(out[1] == static_cast<double>(static_cast<float>(out[1])));  // a float's value
      CHECK(out[1] == static_cast<double>(attnlab::backend::clip_scale(out[0], max_norm)));
      if (n == 0) CHECK(out[0] == 0.0);
    }
    // Not finite: the norm (an infinite gradient) or a check value (the loss's rows): the factor NaN.
    using T = typename std::decay_t<decltype(r)>::value_type;
    for (const int which : {0, 1, 2}) {
      std::vector<T> x = r.draw(33);
      std::vector<double> checks(7, 1.0);
      if (which == 0) x[5] = std::numeric_limits<T>::infinity();
      if (which == 1) checks[6] = std::numeric_limits<double>::quiet_NaN();
      if (which == 2) checks[0] = -std::numeric_limits<double>::infinity();
      double* at = r.doubles_written(2);
      r.be.clip_factor(at, at + 1, r.put(x), x.size(), 1.0, r.doubles(checks), checks.size());
      r.be.download(out.data(), at, 2 * sizeof(double));
      INFO("not finite: " << which);
      CHECK(std::isnan(out[1]));
      CHECK(std::isfinite(out[0]) == (which != 0));
    }
  }));
  t.push_back(make_case("dropout p 0.1, seed 12345 (masks bit for bit)", [](auto& r) { dropout_case(r, 0.1f, 12345); }));
  t.push_back(make_case("dropout p 0.5, seed 2^63 + 7", [](auto& r) { dropout_case(r, 0.5f, (1ull << 63) + 7); }));
  t.push_back(make_case("dropout p 0 (keeps everything)", [](auto& r) { dropout_case(r, 0.0f, 1); }));
  // Attention: head widths d = C / H of 1 to 64; masks; strides; tiles of every variant cut across.
  t.push_back(make_case("attention self, causal, B 2, T 9, C 32, H 4",
                        [](auto& r) { attention_case(r, {2, 9, 9, 32, 4, true, {}}); }));
  t.push_back(make_case("attention self, key_len {9, 5}, B 2, T 9, C 32, H 4",
                        [](auto& r) { attention_case(r, {2, 9, 9, 32, 4, false, {9, 5}}); }));
  t.push_back(make_case("attention causal + key_len {0, 6} (batch 0 fully masked), C 32, H 1",
                        [](auto& r) { attention_case(r, {2, 9, 9, 32, 1, true, {0, 6}}); }));
  t.push_back(make_case("attention cross, Tq 7, Tk 9, key_len {3, 9}, C 24, H 3",
                        [](auto& r) { attention_case(r, {2, 7, 9, 24, 3, false, {3, 9}}); }));
  t.push_back(make_case("attention cross, Tq 33, Tk 7, B 3, C 16, H 2",
                        [](auto& r) { attention_case(r, {3, 33, 7, 16, 2, false, {}}); }));
  t.push_back(make_case("attention cross, Tq 7, Tk 33, key_len {33, 0, 16}, C 16, H 2",
                        [](auto& r) { attention_case(r, {3, 7, 33, 16, 2, false, {33, 0, 16}}); }));
  t.push_back(make_case("attention self, causal, key_len {17, 0, 8}, T 17, B 3, C 16, H 2",
                        [](auto& r) { attention_case(r, {3, 17, 17, 16, 2, true, {17, 0, 8}}); }));
  t.push_back(make_case("attention self, T 100, causal, key_len {100, 50}, C 16, H 2",
                        [](auto& r) { attention_case(r, {2, 100, 100, 16, 2, true, {100, 50}}); }));
  t.push_back(make_case("attention cross, Tq 50, Tk 130, C 16, H 2",
                        [](auto& r) { attention_case(r, {1, 50, 130, 16, 2, false, {}}); }));
  t.push_back(make_case("attention d 33 and d 64: C 66, H 2 / C 64, H 1, T 37",
                        [](auto& r) {
                          attention_case(r, {1, 37, 37, 66, 2, true, {}});
                          attention_case(r, {1, 37, 37, 64, 1, false, {}});
                        }));
  t.push_back(make_case("attention fused QKV (ld 3C), out ld C + 5, causal, B 2, T 9, C 32, H 4",
                        [](auto& r) { attention_case(r, {2, 9, 9, 32, 4, true, {}, Layout::FusedQKV}); }));
  t.push_back(make_case("attention fused QKV, key_len {8, 2}, d 1 (C 4, H 4)",
                        [](auto& r) { attention_case(r, {2, 9, 9, 4, 4, false, {8, 2}, Layout::FusedQKV}); }));
  t.push_back(make_case("attention fused QKV, T 37, key_len {18, 37}, C 48, H 3",
                        [](auto& r) { attention_case(r, {2, 37, 37, 48, 3, true, {18, 37}, Layout::FusedQKV}); }));
  t.push_back(make_case("attention shared K/V (batch stride 0), forward + weights, Tq 5, Tk 9, key_len {7, 4}",
                        [](auto& r) { attention_case(r, {2, 5, 9, 32, 2, false, {7, 4}, Layout::SharedKV}); }));
  t.push_back(make_case("attention shared K/V, Tq 5, Tk 40, B 3, C 32, H 4",
                        [](auto& r) { attention_case(r, {3, 5, 40, 32, 4, false, {}, Layout::SharedKV}); }));
  t.push_back(make_case("attention one query, one key (B 1, T 1, C 8, H 2)",
                        [](auto& r) { attention_case(r, {1, 1, 1, 8, 2, true, {}}); }));
  t.push_back(make_case("attention d 1 (B 1, T 1, C 1, H 1)",
                        [](auto& r) { attention_case(r, {1, 1, 1, 1, 1, false, {}}); }));
  t.push_back(make_case("cross-entropy, smoothing 0.1, padding rows, N 18, V 50",
                        [](auto& r) { cross_entropy_case(r, 18, 50, 0.1, false); }));
  t.push_back(make_case("cross-entropy, no smoothing, N 5, V 3", [](auto& r) { cross_entropy_case(r, 5, 3, 0.0, false); }));
  t.push_back(make_case("cross-entropy, every row ignored (count 0)",
                        [](auto& r) { cross_entropy_case(r, 6, 11, 0.1, true); }));
  t.push_back(make_case("adamw, decay mask, step 3, n 1000", [](auto& r) { adamw_case(r, 1000, 3, 0.01f, true); }));
  t.push_back(make_case("adamw, null mask (every parameter decays)", [](auto& r) { adamw_case(r, 1000, 3, 0.01f, false); }));
  t.push_back(make_case("adamw, step 1, no decay, n 1", [](auto& r) { adamw_case(r, 1, 1, 0.0f, false); }));
  t.push_back(make_case("adamw, gradients scaled by 0.37 (clipping)", [](auto& r) { adamw_case(r, 1000, 3, 0.01f, true, 0.37f); }));

  // The large cases: the sizes of Transformer-base and GPT-2 small, and odd ones around them.
  t.push_back(large_case("gemm m 129, n 37, k 65 / m 256, n 256, k 512", [](auto& r) {
    gemm_case(r, 129, 37, 65);
    gemm_case(r, 256, 256, 512);
  }));
  t.push_back(large_case("embedding B 3, T 37, C 768, V 50 / C 129, V 5", [](auto& r) {
    embedding_case(r, 3, 37, 768, 50);
    embedding_case(r, 3, 37, 129, 5);
  }));
  t.push_back(large_case("embedding B 2, T 64, C 768, V 50257", [](auto& r) { embedding_case(r, 2, 64, 768, 50257); }));
  t.push_back(large_case("linear N 256, IC 768, OC 3072 / N 37, IC 129, OC 65", [](auto& r) {
    linear_case(r, 256, 768, 3072, true);
    linear_case(r, 256, 768, 3072, true, true);  // the feed-forward's first layer: ReLU in the epilogue
    linear_case(r, 37, 129, 65, true);
  }));
  t.push_back(large_case("layernorm N 256, C 768 / C 127, 128, 129, 64 / N 1", [](auto& r) {
    layernorm_case(r, 256, 768);
    for (int C : {64, 127, 128, 129}) layernorm_case(r, 37, C);
    layernorm_case(r, 1, 768);
  }));
  t.push_back(large_case("relu, add, accumulate, scale, n 100003", [](auto& r) { elementwise_case(r, 100003); }));
  t.push_back(large_case("cross-entropy N 3, V 50257 / N 130, V 1000, smoothing 0.1", [](auto& r) {
    cross_entropy_case(r, 3, 50257, 0.1, false);
    cross_entropy_case(r, 130, 1000, 0.1, false);
    cross_entropy_case(r, 37, 37, 0.0, false);
  }));
  t.push_back(large_case("adamw n 100003, steps 1, 10, 4000", [](auto& r) {
    for (std::int64_t step : {1, 10, 4000}) adamw_case(r, 100003, step, 0.01f, true);
  }));
  t.push_back(large_case("attention B 2, T 128, C 512, H 8 (Transformer-base), causal, key_len {128, 77}",
                         [](auto& r) { attention_case(r, {2, 128, 128, 512, 8, true, {128, 77}}); }));
  t.push_back(large_case("attention d 128, 127, 65, 31: T 64, 64, 70, 33", [](auto& r) {
    attention_case(r, {2, 5, 37, 128, 1, false, {37, 0}});
    attention_case(r, {1, 64, 64, 127, 1, true, {}});
    attention_case(r, {1, 1, 70, 130, 2, false, {}});
    attention_case(r, {2, 33, 33, 62, 2, true, {33, 20}});
  }));
  t.push_back(large_case("attention B 1, T 256, C 768, H 12 (GPT-2 small), causal",
                         [](auto& r) { attention_case(r, {1, 256, 256, 768, 12, true, {}}); }));
  t.push_back(large_case("attention T 129, d 16; fused QKV T 70, C 99, H 3; shared K/V Tk 40, C 32", [](auto& r) {
    attention_case(r, {1, 129, 129, 16, 1, true, {}});
    attention_case(r, {1, 70, 70, 99, 3, false, {}, Layout::FusedQKV});
    attention_case(r, {2, 37, 70, 32, 2, false, {50, 70}, Layout::SharedKV});
  }));
  return t;
}

// The largest error per (backend, type, case) and which result had it, printed at the end.
std::vector<std::string>& report() {
  static std::vector<std::string> lines;
  return lines;
}

bool run_large() {
  if (options().large >= 0) return options().large == 1;
  return options().cuda && cuda_slot() && attnlab::backend::cuda_report().usable &&
         !attnlab::backend::cuda_report().emulated;
}

// Check 1 for one type: every case on every backend under test against the reference.
template <typename T>
void check_backends(double double_tol) {
  const auto table = cases();
  std::uint32_t seed = options().seed;
  const bool large = run_large();
  for (const Case& c : table) {
    ++seed;
    if (c.large && !large) continue;
    const auto& body = [&]() -> const std::function<void(Run<T>&)>& {
      if constexpr (std::is_same_v<T, float>) return c.f32;
      else return c.f64;
    }();
    const auto backends = backends_under_test<T>(c.attention);
    if (backends.empty()) continue;
    const double tol = std::is_same_v<T, float> ? c.tol : double_tol;
    INFO("case: " << c.op << " (" << std::string(std::is_same_v<T, float> ? "float" : "double") << ", seed " << seed << ")");
    Run<T> ref(reference<T>(), seed);
    body(ref);
    // The reference wrote everything it should (outputs start as NaN).
    for (const Result& w : ref.results) {
      INFO("reference result " << w.name);
      std::size_t nan = 0;
      for (double x : w.values) nan += std::isnan(x) ? 1 : 0;
      CHECK(nan == 0);
    }
    for (Ops<T>* be : backends) {
      INFO("backend: " << be->name());
      Run<T> run(*be, seed);
      body(run);
      REQUIRE(run.results.size() == ref.results.size());
      double worst = 0.0;
      std::string worst_name;
      bool all_exact = true;
      for (std::size_t i = 0; i < ref.results.size(); ++i) {
        const Result& got = run.results[i];
        const Result& want = ref.results[i];
        INFO("result " << want.name);
        REQUIRE(got.name == want.name);
        const Comparison cmp = compare(got.values, want.values, want.floor);
        INFO(cmp.str());
        CHECK(cmp.nan == 0);
        if (want.exact) {
          CHECK(got.values == want.values);
          continue;
        }
        CHECK(cmp.rel <= tol);
        all_exact = all_exact && cmp.rel == 0.0;
        if (cmp.rel >= worst) {
          worst = cmp.rel;
          worst_name = want.name;
        }
      }
      if (be == &reference<T>()) continue;  // the reference against itself: 0
      std::ostringstream line;
      line << std::left << std::setw(22) << (be->name() + (std::is_same_v<T, float> ? "" : " f64")) << " "
           << std::setw(98) << c.op << std::scientific << std::setprecision(2) << worst << " "
           << (all_exact ? "(bit for bit)" : worst_name);
      report().push_back(line.str());
    }
  }
}

}  // namespace

TEST_CASE("every op on every backend against the CPU backend (float)") { check_backends<float>(kDoubleTol); }

TEST_CASE("every op on the CPU backend's variants against the CPU backend (double)") {
  if (!options().cpu) return;
  check_backends<double>(kDoubleTol);
}

TEST_CASE("every gradient of the table by central differences (double, CPU backend)") {
  if (!options().cpu) return;
  const auto table = cases();
  std::uint32_t seed = options().seed;
  std::size_t checked = 0;
  for (const Case& c : table) {
    ++seed;
    if (c.large) continue;
    INFO("case: " << c.op << " (seed " << seed << ")");
    Ops<double>& be = reference<double>();
    Run<double> base(be, seed);
    base.fd = true;
    c.f64(base);
    for (const Gradient& g : base.gradients) {
      INFO("gradient " << g.name);
      const std::size_t n = base.size_of_input(g.ordinal);
      REQUIRE(n == g.analytic.size());
      const std::size_t points = std::min(n, kFdPoints);
      double worst = 0.0;
      std::size_t worst_at = 0;
      for (std::size_t p = 0; p < points; ++p) {
        const std::size_t i = points == n ? p : p * n / points;
        if (!g.skip.empty() && g.skip[i]) continue;
        const Perturbation up{g.ordinal, i, kFdStep}, down{g.ordinal, i, -kFdStep};
        Run<double> ru(be, seed, &up), rd(be, seed, &down);
        ru.fd = rd.fd = true;
        c.f64(ru);
        c.f64(rd);
        const double numeric = (ru.loss - rd.loss) / (2 * kFdStep);
        const double err = std::fabs(numeric - g.analytic[i]) / std::max(1.0, std::fabs(numeric) + std::fabs(g.analytic[i]));
        if (err > worst) {
          worst = err;
          worst_at = i;
        }
      }
      INFO("worst relative error " << worst << " at element " << worst_at << " of " << n);
      CHECK(worst < kFdTol);
      checked += points;
    }
  }
  MESSAGE("finite differences: " << checked << " gradient elements checked");
  CHECK(checked > 0);
}

TEST_CASE("adamw's grad_scale is gradient clipping's pass folded in: the same update bit for bit") {
  // What the trainer did before: scale the gradients in place, then update with grad_scale 1.
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    const std::size_t n = 5000;
    std::mt19937 rng(7);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> p(n), g(n), m(n), v(n);
    for (std::size_t i = 0; i < n; ++i) {
      p[i] = d(rng);
      g[i] = 3.0f * d(rng);
      m[i] = 0.1f * d(rng);
      const float x = d(rng);
      v[i] = 0.01f * x * x;  // second moments are non-negative
    }
    const float s = 0.0731f;
    AdamStep h;
    h.lr = 1e-3;
    h.step = 5;
    h.weight_decay = 0.01f;
    Buffer<float> p1(*be), g1(*be), m1(*be), v1(*be), p2(*be), g2(*be), m2(*be), v2(*be);
    for (auto* b : {&p1, &p2}) b->upload(p);
    for (auto* b : {&g1, &g2}) b->upload(g);
    for (auto* b : {&m1, &m2}) b->upload(m);
    for (auto* b : {&v1, &v2}) b->upload(v);
    be->scale(g1.data(), n, s);
    be->adamw_step(p1.data(), g1.data(), m1.data(), v1.data(), nullptr, n, h);
    h.grad_scale = s;
    be->adamw_step(p2.data(), g2.data(), m2.data(), v2.data(), nullptr, n, h);
    const std::vector<float> updated = p1.download();
    CHECK(std::all_of(updated.begin(), updated.end(), [](float x) { return std::isfinite(x); }));
    CHECK(updated == p2.download());
    CHECK(m1.download() == m2.download());
    CHECK(v1.download() == v2.download());
    CHECK(g2.download() == g);  // the gradients themselves are left as they were
  }
}

TEST_CASE("attention backward with no query or no key: refused by the CPU; on CUDA, Write stores the other side's zeros") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    const bool cpu = be->name().rfind("cpu", 0) == 0;
    const int B = 1, T = 5, C = 8;  // B 1: with Tq or Tk 0 the default batch strides are 0, refused for B > 1
    AttentionShape s;
    s.B = B, s.C = C, s.H = 2;
    const std::size_t n = static_cast<std::size_t>(B) * T * C;
    Buffer<float> q(*be), k(*be), v(*be), o(*be), l(*be), g(*be), dq(*be), dk(*be), dv(*be);
    for (auto* x : {&q, &k, &v, &o, &g}) x->upload(std::vector<float>(n, 0.5f));
    l.upload(std::vector<float>(static_cast<std::size_t>(B) * 2 * T, 0.0f));
    for (auto* x : {&dq, &dk, &dv}) x->upload(std::vector<float>(n, nan));
    auto backward = [&] {
      be->attention_backward(dq.data(), dk.data(), dv.data(), g.data(), o.data(), l.data(), q.data(), k.data(),
                             v.data(), s, GradMode::Write);
    };
    s.Tq = 0, s.Tk = T;  // no query: dK and dV are zero, dQ has no rows
    if (cpu) {
      CHECK_THROWS_AS(backward(), attnlab::ShapeError);
      continue;
    }
    backward();
    CHECK(dk.download() == std::vector<float>(n, 0.0f));
    CHECK(dv.download() == std::vector<float>(n, 0.0f));
    s.Tq = T, s.Tk = 0;  // no key: dQ is zero
    backward();
    CHECK(dq.download() == std::vector<float>(n, 0.0f));
  }
}

TEST_CASE("dropout: the seed decides the mask, p the share dropped") {
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    const std::size_t n = 4000;
    Buffer<float> inp(*be, n), m1(*be, n), m2(*be, n);
    inp.upload(std::vector<float>(n, 1.0f));  // dropout of ones: its output is the mask
    be->dropout_forward(m1.data(), inp.data(), nullptr, n, 0.25f, 99);
    be->dropout_forward(m2.data(), inp.data(), nullptr, n, 0.25f, 100);
    const auto a = m1.download(), b = m2.download();
    std::size_t dropped = 0, differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      dropped += a[i] == 0.0f;
      differ += a[i] != b[i];
      CHECK((a[i] == 0.0f || a[i] == static_cast<float>(1.0 / 0.75)));
    }
    CHECK(dropped > n / 4 - 150);
    CHECK(dropped < n / 4 + 150);
    CHECK(differ > n / 5);  // another seed, another mask
  }
}

TEST_CASE("the embedding backward repeats bit for bit (no float atomics)") {
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    const int B = 3, Tn = 37, C = 129, V = 5;  // few words: many rows collide
    const std::size_t N = static_cast<std::size_t>(B) * Tn;
    std::mt19937 rng(5);
    Buffer<float> dout(*be, N * C), dwte(*be, static_cast<std::size_t>(V) * C);
    Buffer<int> tokens(*be, N);
    dout.upload(random_floats(rng, N * C));
    tokens.upload(random_ints(rng, N, 0, V - 1));
    const auto start = random_floats(rng, static_cast<std::size_t>(V) * C);
    std::vector<std::vector<float>> runs;
    for (int i = 0; i < 3; ++i) {
      dwte.upload(start);
      be->embedding_backward(dwte.data(), dout.data(), tokens.data(), B, Tn, C, V, 2.0f);
      runs.push_back(dwte.download());
    }
    CHECK(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(float)) == 0);
    CHECK(std::memcmp(runs[0].data(), runs[2].data(), runs[0].size() * sizeof(float)) == 0);
  }
}

TEST_CASE("matrix products in TF32 and bf16: refused by the CPU, within their bounds on CUDA, and back to fp32") {
  using attnlab::backend::MatmulPrecision;
  // The CPU has no tensor cores: it says so (exit 2 on the command line) and stays in fp32.
  Ops<float>& cpu = reference<float>();
  for (MatmulPrecision p : {MatmulPrecision::Tf32, MatmulPrecision::Bf16}) {
    CHECK_THROWS_AS(cpu.set_matmul_precision(p), attnlab::InputError);
    CHECK(cpu.matmul_precision() == MatmulPrecision::Fp32);
    CHECK(attnlab::backend::parse_precision(attnlab::backend::precision_name(p)) == p);
  }
  CHECK_THROWS_AS((void)attnlab::backend::parse_precision("fp16"), attnlab::InputError);
  if (!options().cuda || !cuda_slot()) return;
  Ops<float>& be = *cuda_slot();
  // A linear layer forward and backward, and a plain gemm, with K = 512: TF32 rounds each input to
  // 11 significant bits (relative error ≤ 2^-11 each), so a product's error is bounded by about
  // 2·2^-11·Σ|a||b|; with random signs the normwise error is far below that (about 3e-4), and far
  // above fp32's 1e-7. bf16 keeps 8 bits (≤ 2^-9 each): about 2.3e-3 rounding to nearest, 6e-3
  // truncating (NumPy, these sizes; less on inp·inpᵀ, whose diagonal sums squares), so its bound is
  // 1e-2, and it must be well above TF32's error on the same op.
  const int N = 64, IC = 512, OC = 96;
  std::mt19937 rng(11);
  const auto inp = random_floats(rng, static_cast<std::size_t>(N) * IC), w = random_floats(rng, static_cast<std::size_t>(IC) * OC),
             bias = random_floats(rng, OC), dout = random_floats(rng, static_cast<std::size_t>(N) * OC);
  auto run = [&](Ops<float>& b) {
    Buffer<float> x(b, inp.size()), W(b, w.size()), bb(b, bias.size()), y(b, static_cast<std::size_t>(N) * OC),
        dy(b, dout.size()), dx(b, inp.size()), dW(b, w.size()), g(b, static_cast<std::size_t>(N) * N);
    x.upload(inp), W.upload(w), bb.upload(bias), dy.upload(dout);
    b.zero(dx.data(), inp.size() * sizeof(float));
    b.zero(dW.data(), w.size() * sizeof(float));
    b.linear_forward(y.data(), x.data(), W.data(), bb.data(), N, IC, OC);
    b.linear_backward(dx.data(), dW.data(), nullptr, dy.data(), x.data(), W.data(), N, IC, OC);
    b.gemm(false, true, N, N, IC, 1.0f, x.data(), IC, x.data(), IC, 0.0f, g.data(), N);  // inp · inpᵀ
    return std::vector<std::vector<float>>{y.download(), dx.download(), dW.download(), g.download()};
  };
  const auto want = run(cpu);
  auto normwise = [](const std::vector<float>& got, const std::vector<float>& ref) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      num += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
      den += double(ref[i]) * ref[i];
    }
    return std::sqrt(num / den);
  };
  be.set_matmul_precision(MatmulPrecision::Tf32);
  CHECK(be.matmul_precision() == MatmulPrecision::Tf32);
  const auto tf32 = run(be);
  be.set_matmul_precision(MatmulPrecision::Bf16);
  CHECK(be.matmul_precision() == MatmulPrecision::Bf16);
  const auto bf16 = run(be);
  be.set_matmul_precision(MatmulPrecision::Fp32);
  const auto fp32 = run(be);
  const char* names[] = {"linear forward", "linear backward dinp", "linear backward dw", "gemm"};
  for (int i = 0; i < 4; ++i) {
    const double e_tf32 = normwise(tf32[i], want[i]), e_bf16 = normwise(bf16[i], want[i]),
                 e_fp32 = normwise(fp32[i], want[i]);
    MESSAGE(std::string(names[i]) << ": normwise error against the CPU, tf32 " << e_tf32 << ", bf16 " << e_bf16
                                  << ", fp32 " << e_fp32);
    CHECK(e_tf32 < 2e-3);   // the TF32 bound (2^-11 per input), with room for the summation order
    CHECK(e_tf32 > 1e-5);   // TF32 really engaged: fp32 stays near 1e-7
    CHECK(e_bf16 < 1e-2);   // the bf16 bound (2^-9 per input)
    CHECK(e_bf16 > 3 * e_tf32);  // bf16 really engaged, not TF32: 3 fewer bits, about 8× the error
    CHECK(e_fp32 < 1e-5);   // and set back, fp32 is fp32 again
  }

  // Attention's products follow the precision too: in bf16 the forward runs on tensor cores (head
  // widths that are multiples of 16) and so does the backward (up to 64), the forward within 1e-2 of
  // the CPU, the gradients within 3e-2, and both clearly not float32; a head width of 8 keeps the
  // float32 kernels, and 128 the float32 backward; TF32 has no attention kernels of its own
  // (float32). Returns out, dq, dk, dv.
  // Add: T 40, causal, the gradients added to zeros. Write: T 80, causal, key_len {80, 13}, stored
  // into NaN, so the key tiles past key_len (64 keys a tile on tensor cores, 32 in float32: skipped
  // whole, or cut by it) must store zeros.
  auto attention = [&](Ops<float>& b, int C, int H, GradMode mode = GradMode::Add) {
    const int B = 2, T = mode == GradMode::Add ? 40 : 80;
    std::mt19937 arng(5);
    const std::size_t n = static_cast<std::size_t>(B) * T * C;
    const auto hq = random_floats(arng, n), hk = random_floats(arng, n), hv = random_floats(arng, n);
    const auto hg = random_floats(arng, n);
    Buffer<float> q(b, n), k(b, n), v(b, n), o(b, n), l(b, static_cast<std::size_t>(B) * H * T), g(b, n), dq(b, n),
        dk(b, n), dv(b, n);
    Buffer<int> key_len(b);
    q.upload(hq), k.upload(hk), v.upload(hv), g.upload(hg);
    const std::vector<float> before(n, mode == GradMode::Add ? 0.0f : std::numeric_limits<float>::quiet_NaN());
    for (Buffer<float>* z : {&dq, &dk, &dv}) z->upload(before);
    attnlab::backend::AttentionShape sh;
    sh.B = B, sh.Tq = T, sh.Tk = T, sh.C = C, sh.H = H, sh.causal = true;
    if (mode == GradMode::Write) {
      key_len.upload(std::vector<int>{T, 13});
      sh.key_len = key_len.data();
    }
    b.attention_forward(o.data(), l.data(), q.data(), k.data(), v.data(), sh);
    b.attention_backward(dq.data(), dk.data(), dv.data(), g.data(), o.data(), l.data(), q.data(), k.data(), v.data(), sh,
                         mode);
    return std::vector<std::vector<float>>{o.download(), dq.download(), dk.download(), dv.download()};
  };
  auto errors = [&](const std::vector<std::vector<float>>& got, const std::vector<std::vector<float>>& ref) {
    std::vector<double> e;
    for (std::size_t i = 0; i < ref.size(); ++i) e.push_back(normwise(got[i], ref[i]));
    return e;
  };
  for (const auto& [C, H] : {std::pair{128, 2}, std::pair{16, 2}, std::pair{256, 2}}) {
    const int d = C / H;
    INFO("attention, head width " << d);
    const auto ref = attention(cpu, C, H);
    be.set_matmul_precision(MatmulPrecision::Bf16);
    const auto e_bf16 = errors(attention(be, C, H), ref);
    be.set_matmul_precision(MatmulPrecision::Tf32);
    const auto e_tf32 = errors(attention(be, C, H), ref);
    be.set_matmul_precision(MatmulPrecision::Fp32);
    const auto e_fp32 = errors(attention(be, C, H), ref);
    const char* what[] = {"forward", "dq", "dk", "dv"};
    for (int i = 0; i < 4; ++i) {
      INFO(std::string(what[i]));
      MESSAGE("attention " << std::string(what[i]) << ", d = " << d << ": normwise error against the CPU, bf16 " << e_bf16[i]
                           << ", tf32 " << e_tf32[i] << ", fp32 " << e_fp32[i]);
      CHECK(e_fp32[i] < 1e-5);
      CHECK(e_tf32[i] < 1e-5);
      // d = 128: the backward is float32 (its tensor-core kernels take d ≤ 64) but reads the bf16
      // forward's output and lse, so its gradients carry the forward's rounding.
      if (d % 16 == 0) {
        CHECK(e_bf16[i] < (i == 0 ? 1e-2 : 3e-2));
        CHECK(e_bf16[i] > 1e-4);
      } else {
        CHECK(e_bf16[i] < 1e-5);
      }
    }
    // GradMode::Write in bf16 and fp32 at d = 64 (a NaN left anywhere makes the error NaN, which fails).
    if (d != 64) continue;
    const auto ref_w = attention(cpu, C, H, GradMode::Write);
    be.set_matmul_precision(MatmulPrecision::Bf16);
    const auto w_bf16 = errors(attention(be, C, H, GradMode::Write), ref_w);
    be.set_matmul_precision(MatmulPrecision::Fp32);
    const auto w_fp32 = errors(attention(be, C, H, GradMode::Write), ref_w);
    for (int i = 1; i < 4; ++i) {
      INFO("Write, " << what[i]);
      MESSAGE("attention " << std::string(what[i]) << " (Write, key_len {80, 13}), d = " << d
                           << ": normwise error against the CPU, bf16 " << w_bf16[i] << ", fp32 " << w_fp32[i]);
      CHECK(w_fp32[i] < 1e-5);
      CHECK(w_bf16[i] < 3e-2);
    }
  }
}

// ---- bf16 storage (backend/bf16.hpp and the bf16 ops of backend::Ops) ---------------------------------

using attnlab::backend::Bf16;

std::uint16_t bf16_bits(float x) { return attnlab::backend::to_bf16(x).bits; }
std::uint16_t bf16_bits(double x) { return attnlab::backend::to_bf16(x).bits; }
double widened(std::uint16_t bits) { return attnlab::backend::to_float(Bf16{bits}); }

// The bf16 value nearest to x, ties to the even bit pattern, found the slow way: the bf16 numbers
// are exact doubles, so the candidates around a first guess can be compared in double exactly.
std::uint16_t nearest_bf16(double x) {
  const std::uint16_t guess = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(x)) >> 16);
  std::uint16_t best = guess;
  double best_d = std::fabs(widened(guess) - x);
  for (int step : {-2, -1, 1, 2}) {
    const std::uint16_t c = static_cast<std::uint16_t>(guess + step);
    if (((c ^ guess) & 0x8000u) || std::isnan(widened(c))) continue;  // across zero or into NaN
    const double d = std::fabs(widened(c) - x);
    if (d < best_d || (d == best_d && (c & 1u) == 0)) best = c, best_d = d;
  }
  return best;
}

TEST_CASE("bf16 on the host: to nearest, ties to even, once from double; NaN and infinities kept") {
  const float tiny = std::numeric_limits<float>::denorm_min(), big = std::numeric_limits<float>::max();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(bf16_bits(1.0f) == 0x3f80);
  CHECK(bf16_bits(-1.0f) == 0xbf80);
  CHECK(bf16_bits(-0.0f) == 0x8000);
  CHECK(bf16_bits(1.0f + 0x1p-8f) == 0x3f80);               // halfway, the even neighbour below
  CHECK(bf16_bits(1.0f + 0x3p-8f) == 0x3f82);               // halfway, the even neighbour above
  CHECK(bf16_bits(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);    // just above halfway
  CHECK(bf16_bits(inf) == 0x7f80);
  CHECK(bf16_bits(-inf) == 0xff80);
  CHECK(bf16_bits(big) == 0x7f80);                          // beyond bf16's largest finite: inf
  CHECK(bf16_bits(static_cast<float>(widened(0x7f7f))) == 0x7f7f);  // bf16's largest finite: itself
  CHECK(bf16_bits(tiny) == 0x0000);                         // below half of bf16's smallest subnormal
  CHECK(std::isnan(widened(bf16_bits(std::bit_cast<float>(0x7f800001u)))));  // a NaN with a low payload
  CHECK(std::isnan(widened(bf16_bits(std::numeric_limits<double>::quiet_NaN()))));
  // From double in one rounding: 1 + 2^-8 + 2^-40 rounds to float as 1 + 2^-8 exactly, a tie that
  // would go down to 1; it is above halfway, so 1 + 2^-7.
  CHECK(bf16_bits(1.0 + 0x1p-8 + 0x1p-40) == 0x3f81);
  CHECK(bf16_bits(-(1.0 + 0x1p-8 + 0x1p-40)) == 0xbf81);
  CHECK(bf16_bits(1.0 + 0x1p-8) == 0x3f80);
  CHECK(bf16_bits(1e300) == 0x7f80);
  CHECK(bf16_bits(-1e300) == 0xff80);
  CHECK(bf16_bits(1e-300) == 0x0000);
  // Against the slow search, on values of every magnitude and on the halfway points themselves.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> expo(-140, 127), bits(0, 0x7f7e);
  std::size_t wrong_f = 0, wrong_d = 0, checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const double sign = i % 2 ? -1.0 : 1.0;
    double x = sign * std::ldexp(mant(rng), expo(rng));
    if (i % 4 == 0) {  // a halfway point, nudged by a little (or nothing)
      const std::uint16_t b = static_cast<std::uint16_t>(bits(rng));
      const double mid = 0.5 * (widened(b) + widened(static_cast<std::uint16_t>(b + 1)));
      x = sign * (mid + (i % 8 == 0 ? 0.0 : std::ldexp(mid, -40)));
    }
    ++checked;
    wrong_d += bf16_bits(x) != nearest_bf16(x);
    const float f = static_cast<float>(x);
    if (std::isfinite(f)) wrong_f += bf16_bits(f) != nearest_bf16(static_cast<double>(f));
  }
  CHECK_MESSAGE(wrong_d == 0, wrong_d << " of " << checked << " doubles not rounded to the nearest bf16");
  CHECK_MESSAGE(wrong_f == 0, wrong_f << " of " << checked << " floats not rounded to the nearest bf16");
  // Widening is exact and the round trip of a bf16 value is the identity.
  for (std::uint32_t b = 0; b < 0x10000u; b += 7) {
    const double w = widened(static_cast<std::uint16_t>(b));
    if (!std::isnan(w)) CHECK(bf16_bits(static_cast<float>(w)) == b);
  }
}

// Host copies of bf16 buffers on a backend.
template <typename T>
Buffer<Bf16> bf16_buffer(Ops<T>& be, const std::vector<double>& values) {
  std::vector<Bf16> host(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) host[i] = attnlab::backend::to_bf16(values[i]);
  Buffer<Bf16> b(be);
  b.upload(host);
  return b;
}
std::vector<double> widened(const Buffer<Bf16>& b) {
  std::vector<double> out;
  for (Bf16 h : b.download()) out.push_back(attnlab::backend::to_float(h));
  return out;
}
std::vector<double> bf16_values(std::mt19937& rng, std::size_t n, double sd) {  // exactly representable
  std::normal_distribution<double> dist(0.0, sd);
  std::vector<double> v(n);
  for (double& x : v) x = widened(bf16_bits(dist(rng)));
  return v;
}

template <typename T>
void bf16_conversions_on(Ops<T>& be) {
  INFO("backend: " << be.name());
  std::mt19937 rng(17);
  std::vector<T> host;
  for (double x : {0.0, -0.0, 1.0, 1.0 + 0x1p-8, 1.0 + 0x3p-8, 1.0 + 0x1p-8 + 0x1p-20, 3.0e38, -3.4e38, 1e-40,
                   static_cast<double>(std::numeric_limits<float>::infinity()),
                   static_cast<double>(std::numeric_limits<float>::quiet_NaN())})
    host.push_back(static_cast<T>(x));
  for (float x : random_floats(rng, 1000, 3.0f)) host.push_back(static_cast<T>(x));
  Buffer<T> src(be), back(be, host.size());
  src.upload(host);
  Buffer<Bf16> dst(be, host.size());
  be.to_bf16(dst.data(), src.data(), host.size());
  be.from_bf16(back.data(), dst.data(), host.size());
  const auto bits = dst.download();
  const auto wide = back.download();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    wrong += bits[i].bits != attnlab::backend::to_bf16(host[i]).bits;
    const double w = widened(bits[i].bits);
    wrong += !(std::isnan(w) ? std::isnan(static_cast<double>(wide[i])) : static_cast<double>(wide[i]) == w);
  }
  CHECK_MESSAGE(wrong == 0,
                wrong << " of " << host.size() << " elements not rounded as backend::to_bf16 or not widened exactly");

  // to_bf16_rows: B × rows rows of C values at strides ld and batch (a fused Q/K/V buffer's operand,
  // and a padded matrix); the elements between the rows keep what they held.
  struct Rows { int B, rows, C; std::int64_t ld, batch; };
  for (const Rows r : {Rows{2, 3, 5, 12, 40}, Rows{3, 4, 7, 7, 28}, Rows{1, 6, 3, 9, 54}, Rows{2, 0, 4, 4, 0}}) {
    INFO("B = " << r.B << ", rows = " << r.rows << ", C = " << r.C << ", ld = " << r.ld << ", batch = " << r.batch);
    const std::size_t span = static_cast<std::size_t>(r.B) * static_cast<std::size_t>(r.batch) + 16;
    std::vector<T> values(span);
    for (std::size_t i = 0; i < span; ++i) values[i] = host[i % host.size()];
    const Bf16 sentinel{0x1234};
    Buffer<T> rows_src(be);
    rows_src.upload(values);
    Buffer<Bf16> rows_dst(be);
    rows_dst.upload(std::vector<Bf16>(span, sentinel));
    be.to_bf16_rows(rows_dst.data(), rows_src.data(), r.B, r.rows, r.C, r.ld, r.batch);
    const auto got = rows_dst.download();
    std::vector<char> covered(span, 0);
    for (int b = 0; b < r.B; ++b)
      for (int t = 0; t < r.rows; ++t)
        for (int c = 0; c < r.C; ++c) covered[static_cast<std::size_t>(b * r.batch + t * r.ld + c)] = 1;
    std::size_t rows_wrong = 0;
    for (std::size_t i = 0; i < span; ++i)
      rows_wrong += got[i].bits != (covered[i] ? attnlab::backend::to_bf16(values[i]).bits : sentinel.bits);
    CHECK_MESSAGE(rows_wrong == 0, rows_wrong << " of " << span << " elements wrong (a row not rounded as"
                                                " backend::to_bf16, or an element between rows written)");
  }
}

TEST_CASE("bf16 conversions on every backend: bit for bit the host's") {
  for (Ops<float>* be : backends_under_test<float>(false)) bf16_conversions_on(*be);
  if (options().cpu) bf16_conversions_on(reference<double>());
}

// What a bf16 linear case leaves: out, dinp (Add), dinp (Write), dw, dbias, widened to double.
struct Bf16Linear {
  std::vector<double> out, dinp, dinp_w, dw, dbias, dinp_t;  // dinp_t: the T-dinp overload, added to
  std::vector<double> dw_w = {}, dbias_w = {};               // param_mode Write, into NaN
  std::vector<double> pre = {};  // bf16_linear_exact only: the pre-activations, unrounded
};

struct Bf16LinearInputs {
  int N, IC, OC;
  bool bias, relu;
  std::vector<double> inp, w, b, dout, dinp0, dw0, dbias0;
};

Bf16LinearInputs bf16_linear_inputs(int N, int IC, int OC, bool bias, bool relu, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::size_t n_in = static_cast<std::size_t>(N) * IC, n_w = static_cast<std::size_t>(IC) * OC,
                    n_out = static_cast<std::size_t>(N) * OC;
  Bf16LinearInputs x{N, IC, OC, bias, relu, {}, {}, {}, {}, {}, {}, {}};
  x.inp = bf16_values(rng, n_in, 1.0);
  x.w = bf16_values(rng, n_w, 0.2);
  for (float v : random_floats(rng, static_cast<std::size_t>(OC))) x.b.push_back(v);
  x.dout = bf16_values(rng, n_out, 1.0);
  x.dinp0 = bf16_values(rng, n_in, 1.0);
  for (float v : random_floats(rng, n_w)) x.dw0.push_back(v);
  for (float v : random_floats(rng, static_cast<std::size_t>(OC))) x.dbias0.push_back(v);
  return x;
}

template <typename T>
Buffer<T> t_buffer(Ops<T>& be, const std::vector<double>& v) {
  Buffer<T> b(be);
  b.upload(std::vector<T>(v.begin(), v.end()));
  return b;
}
template <typename T>
std::vector<double> t_values(const Buffer<T>& b) {
  const auto h = b.download();
  return {h.begin(), h.end()};
}

template <typename T>
Bf16Linear bf16_linear_on(Ops<T>& be, const Bf16LinearInputs& x) {
  const std::size_t n_in = static_cast<std::size_t>(x.N) * x.IC, n_out = static_cast<std::size_t>(x.N) * x.OC;
  const std::vector<double> nan_in(n_in, std::numeric_limits<double>::quiet_NaN()),
      nan_out(n_out, std::numeric_limits<double>::quiet_NaN());
  Buffer<Bf16> inp = bf16_buffer(be, x.inp), w = bf16_buffer(be, x.w), dout = bf16_buffer(be, x.dout);
  Buffer<Bf16> out = bf16_buffer(be, nan_out), dinp = bf16_buffer(be, x.dinp0), dinp_w = bf16_buffer(be, nan_in);
  Buffer<T> b = t_buffer(be, x.b), dw = t_buffer(be, x.dw0), dbias = t_buffer(be, x.dbias0);
  // The parameters' gradients stored (GradMode::Write) into NaN, which a read would carry; without a
  // bias, dbias_w is not passed and keeps its zeros.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Buffer<T> dw_w = t_buffer(be, std::vector<double>(x.dw0.size(), nan)),
            dbias_w = t_buffer(be, std::vector<double>(x.dbias0.size(), x.bias ? nan : 0.0));
  be.linear_forward_bf16(out.data(), inp.data(), w.data(), x.bias ? b.data() : nullptr, x.N, x.IC, x.OC,
                         x.relu ? Activation::Relu : Activation::None);
  be.linear_backward_bf16(dinp.data(), dw.data(), x.bias ? dbias.data() : nullptr, dout.data(), inp.data(), w.data(),
                          x.N, x.IC, x.OC);
  be.linear_backward_bf16(dinp_w.data(), nullptr, nullptr, dout.data(), inp.data(), w.data(), x.N, x.IC, x.OC,
                          GradMode::Write);
  Buffer<T> dinp_t = t_buffer(be, x.dinp0);
  be.linear_backward_bf16(dinp_t.data(), nullptr, nullptr, dout.data(), inp.data(), w.data(), x.N, x.IC, x.OC);
  be.linear_backward_bf16(static_cast<Bf16*>(nullptr), dw_w.data(), x.bias ? dbias_w.data() : nullptr, dout.data(),
                          inp.data(), w.data(), x.N, x.IC, x.OC, GradMode::Add, GradMode::Write);
  return {widened(out),    widened(dinp),    widened(dinp_w), t_values(dw),
          t_values(dbias), t_values(dinp_t), t_values(dw_w),  t_values(dbias_w)};
}

// The contract in double: every bf16 output the exact result rounded once.
Bf16Linear bf16_linear_exact(const Bf16LinearInputs& x) {
  const std::size_t N = x.N, IC = x.IC, OC = x.OC;
  Bf16Linear r{std::vector<double>(N * OC), x.dinp0, std::vector<double>(N * IC), x.dw0, x.dbias0, x.dinp0,
               std::vector<double>(IC * OC), std::vector<double>(OC)};
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t o = 0; o < OC; ++o) {
      double s = x.bias ? x.b[o] : 0.0;
      for (std::size_t c = 0; c < IC; ++c) s += x.inp[i * IC + c] * x.w[c * OC + o];
      r.pre.push_back(s);
      if (x.relu) s = s > 0.0 ? s : 0.0;
      r.out[i * OC + o] = widened(bf16_bits(s));
      for (std::size_t c = 0; c < IC; ++c) {
        r.dw[c * OC + o] += x.inp[i * IC + c] * x.dout[i * OC + o];
        r.dw_w[c * OC + o] += x.inp[i * IC + c] * x.dout[i * OC + o];
      }
      if (x.bias) {
        r.dbias[o] += x.dout[i * OC + o];
        r.dbias_w[o] += x.dout[i * OC + o];
      }
    }
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t c = 0; c < IC; ++c) {
      double s = 0.0;
      for (std::size_t o = 0; o < OC; ++o) s += x.dout[i * OC + o] * x.w[c * OC + o];
      r.dinp[i * IC + c] = widened(bf16_bits(r.dinp[i * IC + c] + s));
      r.dinp_t[i * IC + c] += s;
      r.dinp_w[i * IC + c] = widened(bf16_bits(s));
    }
  return r;
}

TEST_CASE("bf16 linear layer on every backend: the reference one rounding from exact, the others bf16's tolerance from it") {
  // The reference (the CPU's, Ops' widen-compute-round) may differ from the exact bf16 result by one
  // unit in bf16's last place where the float32 result lies within float32 rounding of a halfway
  // point: 2^-7 relative to an element, so at most 2^-7 normwise. The other backends are held to the
  // reference at kBf16Tol for the bf16 outputs (the CUDA forward rounds once in cuBLASLt's epilogue,
  // or, where that declines, the product and then the sum with the bias: one more half unit), and at
  // float32's tolerance for dw and dbias, whose products of bf16 values are exact in float32 (only the
  // order of the sums differs).
  struct Shape {
    int N, IC, OC;
    bool bias, relu;
  };
  const Shape shapes[] = {{18, 32, 24, true, false}, {1, 7, 5, false, false},  {37, 1, 33, true, false},
                          {18, 32, 24, true, true},  {7, 5, 9, false, true},   {600, 3, 40, true, false},
                          {5, 0, 4, true, true},     {64, 512, 96, true, true}, {0, 3, 4, true, false}};
  std::uint32_t seed = options().seed;
  for (const Shape& sh : shapes) {
    const Bf16LinearInputs x = bf16_linear_inputs(sh.N, sh.IC, sh.OC, sh.bias, sh.relu, seed++);
    const Bf16Linear exact = bf16_linear_exact(x);
    const Bf16Linear want = bf16_linear_on(reference<float>(), x);
    auto check = [&](const char* what, const std::vector<double>& got, const std::vector<double>& ref, double tol,
                     const std::string& who) {
      const Comparison c = compare(got, ref, 1.0);
      INFO(who << ", N " << sh.N << ", IC " << sh.IC << ", OC " << sh.OC << std::string(sh.bias ? ", bias" : "")
               << std::string(sh.relu ? ", ReLU" : "") << ": " << what << ": " << c.str());
      CHECK(c.rel <= tol);
    };
    const char* names[] = {"out", "dinp (Add)",      "dinp (Write)", "dw",
                           "dbias", "dinp in T (Add)", "dw (Write)",   "dbias (Write)"};
    auto parts = [](const Bf16Linear& r) {
      return std::vector<const std::vector<double>*>{&r.out,   &r.dinp,   &r.dinp_w, &r.dw,
                                                     &r.dbias, &r.dinp_t, &r.dw_w,   &r.dbias_w};
    };
    constexpr int kParts = 8;
    const double bf16_tol[] = {0x1p-7, 0x1p-7, 0x1p-7, kFp32Tol, kFp32Tol, kFp32Tol, kFp32Tol, kFp32Tol};
    if (options().cpu) {
      for (int i = 0; i < kParts; ++i)
        check(names[i], *parts(want)[i], *parts(exact)[i], bf16_tol[i], "cpu against exact");
      const Bf16Linear dbl = bf16_linear_on(reference<double>(), x);
      for (int i = 0; i < kParts; ++i)
        check(names[i], *parts(dbl)[i], *parts(exact)[i], i < 3 ? 0x1p-7 : 1e-12, "cpu (double) against exact");
    }
    if (options().cuda && cuda_slot()) {
      const Bf16Linear got = bf16_linear_on(*cuda_slot(), x);
      const double tol[] = {kBf16Tol, kBf16Tol, kBf16Tol, kFp32Tol, kFp32Tol, kFp32Tol, kFp32Tol, kFp32Tol};
      for (int i = 0; i < kParts; ++i)
        check(names[i], *parts(got)[i], *parts(want)[i], tol[i], cuda_slot()->name());
      if (sh.relu) {  // exactly zero wherever the exact pre-activation is negative beyond rounding
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < got.out.size(); ++i) wrong += exact.pre[i] < -1e-2 && got.out[i] != 0.0;
        CHECK_MESSAGE(wrong == 0, wrong << " outputs not zeroed by ReLU");
      }
    }
  }
}

TEST_CASE("bf16 gemm on every backend: bf16 or T output, every transpose, padded rows, against the exact product") {
  // The products of bf16 values are exact in float32, so a T output differs from the exact result
  // in double only by float32's sums (kFp32Tol), and a bf16 output by one rounding of that (2^-7 of
  // the largest value, normwise).
  std::uint32_t seed = options().seed + 100;
  for (int k : {9, 0}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const int m = 5, n = 7, lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 4;
        const double alpha = 0.75, beta = 0.5;
        std::mt19937 rng(seed++);
        const auto a = bf16_values(rng, static_cast<std::size_t>(ta ? k : m) * lda, 1.0),
                   b = bf16_values(rng, static_cast<std::size_t>(tb ? n : k) * ldb, 1.0),
                   c0 = bf16_values(rng, static_cast<std::size_t>(m) * ldc, 1.0);
        std::vector<double> exact = c0, exact16 = c0;
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            double s = 0.0;
            for (int l = 0; l < k; ++l) s += a[ta ? l * lda + i : i * lda + l] * b[tb ? j * ldb + l : l * ldb + j];
            exact[i * ldc + j] = alpha * s + beta * c0[i * ldc + j];
            exact16[i * ldc + j] = widened(bf16_bits(exact[i * ldc + j]));
          }
        for (Ops<float>* be : backends_under_test<float>(false)) {
          INFO("backend " << be->name() << ", k " << k << std::string(ta ? ", Aᵀ" : "") << std::string(tb ? ", Bᵀ" : ""));
          Buffer<Bf16> A = bf16_buffer(*be, a), Bm = bf16_buffer(*be, b), C16 = bf16_buffer(*be, c0);
          Buffer<float> Cf = t_buffer(*be, c0);
          be->gemm_bf16(ta, tb, m, n, k, 0.75f, A.data(), lda, Bm.data(), ldb, 0.5f, C16.data(), ldc);
          be->gemm_bf16(ta, tb, m, n, k, 0.75f, A.data(), lda, Bm.data(), ldb, 0.5f, Cf.data(), ldc);
          // The padding of each row (columns n … ldc − 1) is not the product's: left as it was.
          CHECK(compare(widened(C16), exact16, 1.0).rel <= 0x1p-7);
          CHECK(compare(t_values(Cf), exact, 1.0).rel <= kFp32Tol);
        }
      }
    }
  }
}

TEST_CASE("bf16 layer norm on every backend: the output rounded once, the backward from a bf16 gradient") {
  // Against the T op on the same backend with the same inputs: the bf16 output is its output rounded
  // (the CUDA kernels round the float32 result as they store it: bit for bit that rounding), out_t is
  // its output exactly, and the backward from a bf16 dout is the T backward from the widened dout
  // (the same kernels reading 2 bytes instead of 4). mean and rstd as the T op's.
  const int N = 37, C = 48;
  const std::size_t n = static_cast<std::size_t>(N) * C;
  std::mt19937 rng(29);
  const auto x = random_floats(rng, n, 2.0f, 3.0f), gamma = random_floats(rng, C, 0.5f, 1.0f),
             beta = random_floats(rng, C, 0.2f), dx0 = random_floats(rng, n), dg0 = random_floats(rng, C),
             db0 = random_floats(rng, C);
  std::vector<double> dout_values = bf16_values(rng, n, 1.0);
  const std::vector<float> dout(dout_values.begin(), dout_values.end());
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    Buffer<float> in(*be), g(*be), b(*be), mean(*be, N), rstd(*be, N), mean2(*be, N), rstd2(*be, N), y(*be, n),
        y2(*be, n), dy(*be);
    in.upload(x), g.upload(gamma), b.upload(beta), dy.upload(dout);
    Buffer<Bf16> out(*be, n), out_only(*be, n);
    Buffer<Bf16> dout16 = bf16_buffer(*be, dout_values);
    be->layernorm_forward(y.data(), mean.data(), rstd.data(), in.data(), g.data(), b.data(), N, C, 1e-5f);
    be->layernorm_forward_bf16(out.data(), y2.data(), mean2.data(), rstd2.data(), in.data(), g.data(), b.data(), N, C,
                               1e-5f);
    be->layernorm_forward_bf16(out_only.data(), nullptr, mean2.data(), rstd2.data(), in.data(), g.data(), b.data(), N,
                               C, 1e-5f);
    const auto yf = y.download(), y2f = y2.download();
    const auto o = out.download(), o2 = out_only.download();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
      wrong += yf[i] != y2f[i] || o[i].bits != attnlab::backend::to_bf16(yf[i]).bits || o2[i].bits != o[i].bits;
    CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " outputs not the T op's (rounded once)");
    CHECK(mean.download() == mean2.download());
    CHECK(rstd.download() == rstd2.download());
    const std::vector<float> nan(C, std::numeric_limits<float>::quiet_NaN());
    for (GradMode mode : {GradMode::Add, GradMode::Write})
      for (GradMode param_mode : {GradMode::Add, GradMode::Write}) {
        INFO(std::string(mode == GradMode::Add ? "dinp Add" : "dinp Write")
             << std::string(param_mode == GradMode::Add ? ", params Add" : ", params Write (into NaN)"));
        // Under Write the parameters' gradients start as NaN: a read of them would show.
        const std::vector<float>& g0 = param_mode == GradMode::Add ? dg0 : nan;
        const std::vector<float>& b0 = param_mode == GradMode::Add ? db0 : nan;
        Buffer<float> dx(*be), dg(*be), db(*be), dx2(*be), dg2(*be), db2(*be);
        dx.upload(dx0), dg.upload(g0), db.upload(b0), dx2.upload(dx0), dg2.upload(g0), db2.upload(b0);
        be->layernorm_backward(dx.data(), dg.data(), db.data(), dy.data(), in.data(), g.data(), mean.data(),
                               rstd.data(), N, C, mode, param_mode);
        be->layernorm_backward_bf16(dx2.data(), dg2.data(), db2.data(), dout16.data(), in.data(), g.data(),
                                    mean.data(), rstd.data(), N, C, mode, param_mode);
        CHECK(dx.download() == dx2.download());
        CHECK(dg.download() == dg2.download());
        CHECK(db.download() == db2.download());
        std::size_t nans = 0;
        for (float v : dg.download()) nans += std::isnan(v);
        for (float v : db.download()) nans += std::isnan(v);
        CHECK(nans == 0);
      }
  }
}

// The host's rounding of a T buffer of a backend, as bits.
template <typename T>
std::vector<std::uint16_t> rounded_bits(const Buffer<T>& b) {
  std::vector<std::uint16_t> out;
  for (T x : b.download()) out.push_back(attnlab::backend::to_bf16(x).bits);
  return out;
}
std::vector<std::uint16_t> bits_of(const Buffer<Bf16>& b) {
  std::vector<std::uint16_t> out;
  for (Bf16 h : b.download()) out.push_back(h.bits);
  return out;
}
// Elements whose bits differ by more than `ulps` units in bf16's last place (NaN against anything
// else counts).
std::size_t ulp_mismatches(const std::vector<std::uint16_t>& got, const std::vector<std::uint16_t>& want, int ulps) {
  if (got.size() != want.size()) return std::max(got.size(), want.size()) + 1;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = widened(got[i]), w = widened(want[i]);
    if (std::isnan(g) || std::isnan(w)) {
      bad += std::isnan(g) != std::isnan(w);
      continue;
    }
    if ((got[i] ^ want[i]) & 0x8000) {  // opposite signs: only +0 against −0 is the same value
      bad += !(g == 0.0 && w == 0.0);
      continue;
    }
    bad += std::abs(static_cast<int>(got[i] & 0x7fff) - static_cast<int>(want[i] & 0x7fff)) > ulps;
  }
  return bad;
}

TEST_CASE("bf16 ReLU backward and dropout on every backend: their T ops on the widened values, rounded once") {
  // Against the T op on the same backend: the sums of the Add modes may round differently by one
  // unit of bf16's last place (a fused multiply-add against two roundings in float32), the rest bit
  // for bit.
  const std::size_t n = 999;
  const float p = 0.25f;
  const std::uint64_t seed = 0x5eedu;
  std::mt19937 rng(31);
  const auto x = bf16_values(rng, n, 1.0), g = bf16_values(rng, n, 1.0), d0 = bf16_values(rng, n, 1.0);
  const auto res = random_floats(rng, n), dsum = random_floats(rng, n);
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    Buffer<Bf16> x16 = bf16_buffer(*be, x), g16 = bf16_buffer(*be, g);
    Buffer<float> xf = t_buffer(*be, x), gf = t_buffer(*be, g), rf(*be), dsf(*be);
    rf.upload(res), dsf.upload(dsum);
    for (GradMode mode : {GradMode::Add, GradMode::Write}) {
      const int ulps = mode == GradMode::Add ? 1 : 0;
      const std::string tag = mode == GradMode::Add ? "Add" : "Write";
      Buffer<Bf16> d16 = bf16_buffer(*be, mode == GradMode::Add ? d0 : std::vector<double>(n, NAN));
      Buffer<float> df = t_buffer(*be, d0);
      be->relu_backward_bf16(d16.data(), g16.data(), x16.data(), n, mode);
      be->relu_backward(df.data(), gf.data(), xf.data(), n, mode);
      CHECK_MESSAGE(ulp_mismatches(bits_of(d16), rounded_bits(df), 0) == 0, "relu_backward_bf16 " << tag);
      Buffer<Bf16> e16 = bf16_buffer(*be, mode == GradMode::Add ? d0 : std::vector<double>(n, NAN));
      Buffer<float> ef = t_buffer(*be, d0);
      be->dropout_backward_bf16(e16.data(), dsf.data(), n, p, seed, mode);
      be->dropout_backward(ef.data(), dsf.data(), n, p, seed, mode);
      CHECK_MESSAGE(ulp_mismatches(bits_of(e16), rounded_bits(ef), ulps) == 0, "dropout_backward_bf16 " << tag);
    }
    for (bool with_residual : {true, false}) {
      Buffer<float> out16(*be, n), outf(*be, n);
      be->dropout_forward_bf16(out16.data(), x16.data(), with_residual ? rf.data() : nullptr, n, p, seed);
      be->dropout_forward(outf.data(), xf.data(), with_residual ? rf.data() : nullptr, n, p, seed);
      CHECK_MESSAGE(out16.download() == outf.download(),
                    "dropout_forward_bf16" << std::string(with_residual ? " + residual" : ""));
    }
  }
}

TEST_CASE("bf16 attention and cross-entropy on every backend: their T ops on the widened values, rounded once") {
  // Attention on a fused Q/K/V buffer (row stride 3C) and a wider output (ld C + 5), so each operand's
  // C columns are read and written in place and the others left alone; causal, with key lengths.
  // Each bf16 result against the T op on the same backend with the widened inputs, rounded on the
  // host: within one unit of bf16's last place (a backend's own kernels may compute in another order).
  const int B = 2, T = 19, C = 32, H = 2;
  const std::size_t rows = static_cast<std::size_t>(B) * T, nqkv = rows * 3 * C, ldo = C + 5, no = rows * ldo;
  std::mt19937 rng(37);
  const auto qkv = bf16_values(rng, nqkv, 1.5), dout = bf16_values(rng, no, 1.0), dqkv0 = bf16_values(rng, nqkv, 1.0);
  const std::vector<int> key_len = {19, 11};
  AttentionShape s;
  s.B = B, s.Tq = T, s.Tk = T, s.C = C, s.H = H, s.causal = true;
  s.ldq = s.ldk = s.ldv = 3 * C;
  s.ldo = static_cast<std::int64_t>(ldo);
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    Buffer<int> kl(*be);
    kl.upload(key_len);
    s.key_len = kl.data();
    Buffer<Bf16> q16 = bf16_buffer(*be, qkv), do16 = bf16_buffer(*be, dout),
                 o16 = bf16_buffer(*be, std::vector<double>(no, 7.0));
    Buffer<float> qf = t_buffer(*be, qkv), dof = t_buffer(*be, dout), of = t_buffer(*be, std::vector<double>(no, 7.0));
    Buffer<float> lse16(*be, static_cast<std::size_t>(B) * H * T), lsef(*be, static_cast<std::size_t>(B) * H * T);
    const Bf16* qp = q16.data();
    const float* qfp = qf.data();
    be->attention_forward_bf16(o16.data(), lse16.data(), qp, qp + C, qp + 2 * C, s);
    be->attention_forward(of.data(), lsef.data(), qfp, qfp + C, qfp + 2 * C, s);
    CHECK_MESSAGE(ulp_mismatches(bits_of(o16), rounded_bits(of), 1) == 0, "attention_forward_bf16 out");
    CHECK(compare(lse16.download(), lsef.download(), 1.0).rel <= kFp32Tol);
    for (GradMode mode : {GradMode::Add, GradMode::Write}) {
      Buffer<Bf16> g16 = bf16_buffer(*be, dqkv0);
      Buffer<float> gf = t_buffer(*be, dqkv0);
      // The bf16 output as the T op's out (widened): both backwards then see the same forward.
      Buffer<float> o_wide(*be, no);
      be->from_bf16(o_wide.data(), o16.data(), no);
      be->attention_backward_bf16(g16.data(), g16.data() + C, g16.data() + 2 * C, do16.data(), o16.data(),
                                  lse16.data(), qp, qp + C, qp + 2 * C, s, mode);
      be->attention_backward(gf.data(), gf.data() + C, gf.data() + 2 * C, dof.data(), o_wide.data(), lse16.data(), qfp,
                             qfp + C, qfp + 2 * C, s, mode);
      CHECK_MESSAGE(ulp_mismatches(bits_of(g16), rounded_bits(gf), 1) == 0,
                    "attention_backward_bf16 dq/dk/dv " << std::string(mode == GradMode::Add ? "Add" : "Write"));
    }
  }

  const int N = 13, V = 41;
  const auto logits = bf16_values(rng, static_cast<std::size_t>(N) * V, 2.0);
  std::vector<int> targets = random_ints(rng, N, 0, V - 1);
  targets[3] = 0;  // ignore_index below
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    Buffer<Bf16> l16 = bf16_buffer(*be, logits);
    Buffer<float> lf = t_buffer(*be, logits), lse16(*be, N), lsef(*be, N);
    Buffer<int> tg(*be);
    tg.upload(targets);
    Buffer<double> rows16(*be, N), rowsf(*be, N);
    be->cross_entropy_forward_bf16(lse16.data(), rows16.data(), l16.data(), tg.data(), N, V, 0.1f, 0);
    be->cross_entropy_forward(lsef.data(), rowsf.data(), lf.data(), tg.data(), N, V, 0.1f, 0);
    int cf = 0;
    const double loss16 = attnlab::backend::row_loss_mean(rows16.download().data(), targets.data(), N, 0, nullptr);
    const double lossf = attnlab::backend::row_loss_mean(rowsf.download().data(), targets.data(), N, 0, &cf);
    CHECK(cf == static_cast<int>(std::count_if(targets.begin(), targets.end(), [](int t) { return t != 0; })));
    CHECK(loss16 == doctest::Approx(lossf).epsilon(1e-6));
    CHECK(compare(lse16.download(), lsef.download(), 1.0).rel <= kFp32Tol);
    // In place, as the model calls it: dlogits over the logits.
    be->cross_entropy_backward_bf16(l16.data(), l16.data(), lse16.data(), tg.data(), N, V, 0.1f, 0, cf, 1.0f);
    be->cross_entropy_backward(lf.data(), lf.data(), lsef.data(), tg.data(), N, V, 0.1f, 0, cf, 1.0f);
    CHECK_MESSAGE(ulp_mismatches(bits_of(l16), rounded_bits(lf), 1) == 0, "cross_entropy_backward_bf16");
  }
}

TEST_CASE("bf16 attention forward at --precision bf16 on CUDA: bf16 read and written, bit for bit the tensor cores on widened operands") {
  // At bf16 precision the CUDA backend's attention_forward_bf16 runs the register-tile kernel on the
  // bf16 buffers themselves (head widths 32, 64, 128); it rounds as it reads, which on bf16 values is
  // exact, so its output must be the float32-storage kernel's on the widened operands, rounded: bit
  // for bit, lse too. d = 48 goes through the default (widen, the wmma kernel, round), also exact.
  // Layouts: a fused Q/K/V buffer (row stride 3C) with a wider output whose extra columns must keep
  // their 7.0, packed operands (vector loads and stores), an odd output stride (scalar stores), and
  // cross-attention (Tk ≠ Tq) with key lengths.
  if (!options().cuda || !cuda_slot()) return;
  using attnlab::backend::MatmulPrecision;
  Ops<float>& be = *cuda_slot();
  struct Case {
    int B, Tq, Tk, C, H;
    bool fused, causal;
    int extra;  // the output's row stride is C + extra
  };
  std::mt19937 rng(41);
  for (const Case c : {Case{2, 19, 19, 64, 2, true, true, 5}, Case{1, 70, 70, 64, 1, false, false, 0},
                       Case{2, 33, 21, 128, 1, false, false, 1}, Case{2, 17, 17, 96, 3, true, true, 0},
                       Case{2, 9, 12, 96, 2, false, false, 0}}) {
    const int d = c.C / c.H;
    INFO("B = " << c.B << ", Tq = " << c.Tq << ", Tk = " << c.Tk << ", d = " << d
                << std::string(c.fused ? ", fused Q/K/V" : "") << std::string(c.causal ? ", causal" : "")
                << ", ldo = C + " << c.extra);
    const std::int64_t ldqkv = c.fused ? 3 * c.C : c.C, ldo = c.C + c.extra;
    const std::size_t nq = static_cast<std::size_t>(c.B) * c.Tq * ldqkv, nk = static_cast<std::size_t>(c.B) * c.Tk * ldqkv,
                      no = static_cast<std::size_t>(c.B) * c.Tq * ldo;
    const auto qv = bf16_values(rng, nq, 1.5), kv = bf16_values(rng, nk, 1.5), vv = bf16_values(rng, nk, 1.0);
    AttentionShape s;
    s.B = c.B, s.Tq = c.Tq, s.Tk = c.Tk, s.C = c.C, s.H = c.H, s.causal = c.causal;
    s.ldq = s.ldk = s.ldv = ldqkv;
    s.ldo = ldo;
    Buffer<int> kl(be);
    kl.upload(std::vector<int>(static_cast<std::size_t>(c.B), c.Tk));
    if (c.B > 1) kl.upload(std::vector<int>{c.Tk, std::max(1, c.Tk / 2)});
    s.key_len = kl.data();
    Buffer<Bf16> q16 = bf16_buffer(be, qv), k16 = bf16_buffer(be, kv), v16 = bf16_buffer(be, vv),
                 o16 = bf16_buffer(be, std::vector<double>(no, 7.0));
    Buffer<float> qf = t_buffer(be, qv), kf = t_buffer(be, kv), vf = t_buffer(be, vv),
                  of = t_buffer(be, std::vector<double>(no, 7.0));
    const std::size_t nl = static_cast<std::size_t>(c.B) * c.H * c.Tq;
    Buffer<float> lse16(be, nl), lsef(be, nl);
    // Fused: K and V are the same buffer as Q, C and 2C columns on.
    const Bf16* q = q16.data();
    const Bf16* k = c.fused ? q + c.C : k16.data();
    const Bf16* v = c.fused ? q + 2 * c.C : v16.data();
    const float* qw = qf.data();
    const float* kw = c.fused ? qw + c.C : kf.data();
    const float* vw = c.fused ? qw + 2 * c.C : vf.data();
    std::vector<attnlab::backend::OpTime> rows;
    be.set_matmul_precision(MatmulPrecision::Bf16);
    REQUIRE(be.start_op_timing());
    be.attention_forward_bf16(o16.data(), lse16.data(), q, k, v, s);
    rows = be.stop_op_timing();
    be.attention_forward(of.data(), lsef.data(), qw, kw, vw, s);
    be.set_matmul_precision(MatmulPrecision::Fp32);
    bool direct = false;
    for (const auto& r : rows) direct = direct || r.op == "attention_forward_bf16";
    CHECK(direct == (d == 32 || d == 64 || d == 128));
    CHECK_MESSAGE(ulp_mismatches(bits_of(o16), rounded_bits(of), 0) == 0, "out (and the columns between rows)");
    const auto l16 = lse16.download(), lf = lsef.download();
    CHECK(std::memcmp(l16.data(), lf.data(), l16.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("bf16 attention backward at --precision bf16 on CUDA: bf16 read and written, bit for bit the tensor cores on widened operands") {
  // The backward's counterpart of the case above: at bf16 precision attention_backward_bf16 runs the
  // register-tile kernels on the bf16 buffers (head widths 32, 64). They round q, k, v, dout as they
  // stage them (exact on bf16 values), sum D from the widened dout and out, and store each gradient
  // rounded once (under Add: old value widened, sum in float32, rounded), so every gradient must be
  // the float32-storage kernels' on the widened operands (Add: on the widened old gradient), rounded:
  // bit for bit, the columns between rows untouched. Add and Write; dq alone, dk/dv alone; d = 48 and
  // d = 128 through the default (widen, the float32 op, round).
  if (!options().cuda || !cuda_slot()) return;
  using attnlab::backend::MatmulPrecision;
  Ops<float>& be = *cuda_slot();
  struct Case {
    int B, Tq, Tk, C, H;
    bool fused, causal;
    int extra;  // out and dout have row stride C + extra
  };
  std::mt19937 rng(43);
  for (const Case c : {Case{2, 19, 19, 64, 2, true, true, 5}, Case{1, 70, 70, 64, 1, false, false, 0},
                       Case{2, 33, 21, 64, 1, false, false, 1}, Case{2, 17, 17, 96, 3, true, true, 0},
                       Case{2, 9, 12, 96, 2, false, false, 0}, Case{1, 13, 13, 128, 1, false, true, 0}}) {
    const int d = c.C / c.H;
    INFO("B = " << c.B << ", Tq = " << c.Tq << ", Tk = " << c.Tk << ", d = " << d
                << std::string(c.fused ? ", fused Q/K/V" : "") << std::string(c.causal ? ", causal" : "")
                << ", ldo = C + " << c.extra);
    const std::int64_t ldqkv = c.fused ? 3 * c.C : c.C, ldo = c.C + c.extra;
    const std::size_t nq = static_cast<std::size_t>(c.B) * c.Tq * ldqkv, nk = static_cast<std::size_t>(c.B) * c.Tk * ldqkv,
                      no = static_cast<std::size_t>(c.B) * c.Tq * ldo;
    const auto qv = bf16_values(rng, nq, 1.5), kv = bf16_values(rng, nk, 1.5), vv = bf16_values(rng, nk, 1.0),
               dov = bf16_values(rng, no, 1.0), dq0 = bf16_values(rng, nq, 1.0), dk0 = bf16_values(rng, nk, 1.0),
               dv0 = bf16_values(rng, nk, 1.0);
    AttentionShape s;
    s.B = c.B, s.Tq = c.Tq, s.Tk = c.Tk, s.C = c.C, s.H = c.H, s.causal = c.causal;
    s.ldq = s.ldk = s.ldv = ldqkv;
    s.ldo = ldo;
    Buffer<int> kl(be);
    kl.upload(std::vector<int>(static_cast<std::size_t>(c.B), c.Tk));
    if (c.B > 1) kl.upload(std::vector<int>{c.Tk, std::max(1, c.Tk / 2)});
    s.key_len = kl.data();
    Buffer<Bf16> q16 = bf16_buffer(be, qv), k16 = bf16_buffer(be, kv), v16 = bf16_buffer(be, vv),
                 do16 = bf16_buffer(be, dov), o16 = bf16_buffer(be, std::vector<double>(no, 7.0));
    Buffer<float> qf = t_buffer(be, qv), kf = t_buffer(be, kv), vf = t_buffer(be, vv), dof = t_buffer(be, dov);
    const std::size_t nl = static_cast<std::size_t>(c.B) * c.H * c.Tq;
    Buffer<float> lse(be, nl);
    const Bf16* q = q16.data();
    const Bf16* k = c.fused ? q + c.C : k16.data();
    const Bf16* v = c.fused ? q + 2 * c.C : v16.data();
    const float* qw = qf.data();
    const float* kw = c.fused ? qw + c.C : kf.data();
    const float* vw = c.fused ? qw + 2 * c.C : vf.data();
    be.set_matmul_precision(MatmulPrecision::Bf16);
    be.attention_forward_bf16(o16.data(), lse.data(), q, k, v, s);  // the forward both backwards see
    Buffer<float> of(be, no);
    be.from_bf16(of.data(), o16.data(), no);
    struct Ask {
      bool q, kv;
    };
    for (GradMode mode : {GradMode::Add, GradMode::Write})
      for (const Ask ask : {Ask{true, true}, Ask{true, false}, Ask{false, true}}) {
        INFO((mode == GradMode::Add ? "Add" : "Write") << std::string(ask.q ? " dq" : "") << std::string(ask.kv ? " dk dv" : ""));
        // Fused: the gradients share one buffer as Q/K/V do (dq's initial values serve all three).
        Buffer<Bf16> gq16 = bf16_buffer(be, dq0), gk16 = bf16_buffer(be, dk0), gv16 = bf16_buffer(be, dv0);
        Buffer<float> gqf = t_buffer(be, dq0), gkf = t_buffer(be, dk0), gvf = t_buffer(be, dv0);
        Bf16* dq = gq16.data();
        Bf16* dk = c.fused ? dq + c.C : gk16.data();
        Bf16* dv = c.fused ? dq + 2 * c.C : gv16.data();
        float* dqw = gqf.data();
        float* dkw = c.fused ? dqw + c.C : gkf.data();
        float* dvw = c.fused ? dqw + 2 * c.C : gvf.data();
        REQUIRE(be.start_op_timing());
        be.attention_backward_bf16(ask.q ? dq : nullptr, ask.kv ? dk : nullptr, ask.kv ? dv : nullptr, do16.data(),
                                   o16.data(), lse.data(), q, k, v, s, mode);
        const auto rows = be.stop_op_timing();
        be.attention_backward(ask.q ? dqw : nullptr, ask.kv ? dkw : nullptr, ask.kv ? dvw : nullptr, dof.data(),
                              of.data(), lse.data(), qw, kw, vw, s, mode);
        bool direct = false;
        for (const auto& r : rows) direct = direct || r.op == "attention_backward_bf16";
        CHECK(direct == (d == 32 || d == 64));
        CHECK_MESSAGE(ulp_mismatches(bits_of(gq16), rounded_bits(gqf), 0) == 0, "dq buffer");
        if (!c.fused) {
          CHECK_MESSAGE(ulp_mismatches(bits_of(gk16), rounded_bits(gkf), 0) == 0, "dk buffer");
          CHECK_MESSAGE(ulp_mismatches(bits_of(gv16), rounded_bits(gvf), 0) == 0, "dv buffer");
        }
      }
    be.set_matmul_precision(MatmulPrecision::Fp32);
  }
}

// One AdamW update on a backend from fixed starting values (n parameters, seeded): params, moments and
// the bf16 copy (NaN where it was not written) afterwards. with_copy: adamw_step_bf16, else adamw_step.
struct AdamRun {
  struct After {
    std::vector<float> p, m, v;
    std::vector<Bf16> copy;
  };
  AdamRun(std::size_t size, std::uint32_t seed) : n(size) {
    std::mt19937 rng(seed);
    p0 = random_floats(rng, n), g = random_floats(rng, n), m0 = random_floats(rng, n, 0.1f);
    v0 = random_floats(rng, n, 0.1f);
    for (float& x : v0) x = x * x;  // second moments are non-negative
  }
  After operator()(Ops<float>& be, const AdamStep& h, bool with_copy, const std::vector<std::uint8_t>& mask = {}) const {
    Buffer<float> p(be), gg(be), m(be), v(be);
    Buffer<std::uint8_t> dm(be);
    p.upload(p0), gg.upload(g), m.upload(m0), v.upload(v0), dm.upload(mask);
    const std::uint8_t* masked = mask.empty() ? nullptr : dm.data();
    Buffer<Bf16> copy(be);
    copy.upload(std::vector<Bf16>(n, Bf16{0x7fc1}));  // NaN: an element left unwritten shows
    if (with_copy) be.adamw_step_bf16(p.data(), copy.data(), gg.data(), m.data(), v.data(), masked, n, h);
    else be.adamw_step(p.data(), gg.data(), m.data(), v.data(), masked, n, h);
    return After{p.download(), m.download(), v.download(), copy.download()};
  }
  static bool same(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  }
  // Elements of copy that are not p rounded to bf16.
  static std::size_t not_rounding(const std::vector<Bf16>& copy, const std::vector<float>& p) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < p.size(); ++i) wrong += copy[i].bits != attnlab::backend::to_bf16(p[i]).bits;
    return wrong;
  }
  std::size_t n;
  std::vector<float> p0, g, m0, v0;
};

TEST_CASE("adamw_step_bf16: adamw_step's update, and the bf16 copy of exactly the updated parameters") {
  const AdamRun run(1003, 23);
  std::vector<std::uint8_t> mask(run.n);
  for (std::size_t i = 0; i < run.n; ++i) mask[i] = i % 3 != 0;
  AdamStep h;
  h.lr = 1e-2;
  h.step = 7;
  h.weight_decay = 0.1f;
  h.grad_scale = 0.5f;
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    const AdamRun::After plain = run(*be, h, false, mask), fused = run(*be, h, true, mask);
    // The same update bit for bit as adamw_step on the same backend, and the copy its rounding.
    CHECK(AdamRun::same(plain.p, fused.p));
    CHECK(AdamRun::same(plain.m, fused.m));
    CHECK(AdamRun::same(plain.v, fused.v));
    const std::size_t wrong = AdamRun::not_rounding(fused.copy, fused.p);
    CHECK_MESSAGE(wrong == 0, wrong << " of " << run.n << " bf16 copies not the updated parameter rounded");
  }
}

TEST_CASE("adamw with the factor on the backend (grad_scale_at): grad_scale's bits; NaN there skips the update") {
  // model::train_step leaves clipping's factor where clip_factor wrote it and AdamW reads it there;
  // a NaN factor (a loss or gradient not finite) must leave params and moments as they were, and the
  // bf16 copy still the rounding of params.
  const AdamRun run(777, 29);
  AdamStep h;
  h.lr = 1e-2;
  h.step = 4;
  h.weight_decay = 0.1f;
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    Buffer<double> factor(*be);
    factor.upload({static_cast<double>(0.37f)});
    AdamStep on_host = h, on_device = h;
    on_host.grad_scale = 0.37f;
    on_device.grad_scale = 2.0f;  // ignored: grad_scale_at is set
    on_device.grad_scale_at = factor.data();
    for (const bool with_copy : {false, true}) {
      INFO("bf16 copy: " << with_copy);
      const AdamRun::After host = run(*be, on_host, with_copy), device = run(*be, on_device, with_copy);
      CHECK(AdamRun::same(host.p, device.p));
      CHECK(AdamRun::same(host.m, device.m));
      CHECK(AdamRun::same(host.v, device.v));
      CHECK_FALSE(AdamRun::same(host.p, run.p0));
    }
    factor.upload({std::numeric_limits<double>::quiet_NaN()});
    for (const bool with_copy : {false, true}) {
      INFO("skipped, bf16 copy: " << with_copy);
      const AdamRun::After skipped = run(*be, on_device, with_copy);
      CHECK(AdamRun::same(skipped.p, run.p0));
      CHECK(AdamRun::same(skipped.m, run.m0));
      CHECK(AdamRun::same(skipped.v, run.v0));
      if (with_copy) CHECK(AdamRun::not_rounding(skipped.copy, run.p0) == 0);
    }
  }
}

TEST_CASE("memory: upload, copy within the backend, zero, download") {
  for (Ops<float>* be : backends_under_test<float>(false)) {
    INFO("backend: " << be->name());
    Buffer<float> a(*be), b(*be, 5);
    a.upload({1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
    be->copy(b.data(), a.data(), 5 * sizeof(float));
    be->zero(a.data() + 1, 2 * sizeof(float));
    be->synchronize();
    CHECK(a.download() == std::vector<float>{1.0f, 0.0f, 0.0f, 4.0f, 5.0f});
    CHECK(b.download(3, 2) == std::vector<float>{4.0f, 5.0f});
    CHECK(be->allocate(0) == nullptr);
    be->release(nullptr);
  }
}

TEST_CASE("the CPU variants: their names, and tiles of size 0 refused") {
  if (!options().cpu) return;
  std::vector<std::string> names;
  for (Ops<float>* b : cpu_variants<float>()) names.push_back(b->name());
  CHECK(names == std::vector<std::string>{"cpu (stored weights)", "cpu (tiled 1x1)", "cpu (tiled 4x7)",
                                          "cpu (tiled 16x32)"});
  CHECK_THROWS_AS(attnlab::backend::make_cpu_backend<float>(CpuAttention::Tiled, 0, 4), attnlab::ShapeError);
}

TEST_CASE("the CUDA backend: its name, and a clear refusal of a shared-K/V backward") {
  if (!options().cuda || !cuda_slot()) return;
  Ops<float>& be = *cuda_slot();
  CHECK((be.name() == "cuda" || be.name() == "cuda (emulated)"));
  CHECK_FALSE(be.host_addressable());
  AttentionShape s;
  s.B = 2;
  s.Tq = 3;
  s.Tk = 4;
  s.C = 8;
  s.H = 2;
  s.k_batch = s.v_batch = 0;
  Buffer<float> q(be, 2 * 3 * 8), kv(be, 4 * 8), lse(be, 2 * 2 * 3), g(be, 2 * 3 * 8);
  try {
    be.attention_backward(g.data(), kv.data(), kv.data(), g.data(), g.data(), lse.data(), q.data(), kv.data(),
                          kv.data(), s);
    FAIL("no exception");
  } catch (const attnlab::ShapeError& e) {
    CHECK(std::string(e.what()).find("batch stride of 0") != std::string::npos);
  }
}

TEST_CASE("without a usable CUDA device, --backend cuda is refused with an InputError that says what to do") {
  if (!options().cuda || attnlab::backend::cuda_report().usable) return;  // a GPU, or the emulator
  try {
    (void)attnlab::backend::backend_named("cuda");
    FAIL("no exception");
  } catch (const attnlab::InputError& e) {
    CHECK(std::string(e.what()).find("--backend cpu") != std::string::npos);
  }
}

int main(int argc, char** argv) {
  Options& o = options();
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--backends=cpu") o.cuda = false;
    else if (a == "--backends=cuda") o.cpu = false;
    else if (a == "--backends=all") o.cpu = o.cuda = true;
    else if (a == "--large") o.large = 1;
    else if (a == "--small") o.large = 0;
    else if (a.rfind("--seed=", 0) == 0) o.seed = static_cast<std::uint32_t>(std::stoul(a.substr(7)));
    else if (a.rfind("--backends=", 0) == 0) {
      std::cerr << "test_backend_ops: --backends: expected cpu, cuda or all, got " << a.substr(11) << "\n";
      return 2;
    } else args.push_back(argv[i]);
  }
  doctest::Context context(static_cast<int>(args.size()), args.data());

  // The CUDA backend: there (a GPU or the emulator), absent from the build or machine (skip), or a GPU
  // CUDA cannot use (fail loudly, never "skipped").
  const attnlab::backend::CudaReport cuda = attnlab::backend::cuda_report();
  std::string why_no_cuda;
  if (o.cuda) {
    if (cuda.usable) {
      cuda_slot() = &attnlab::backend::backend_named("cuda");
      std::cout << "device: " << cuda.device << std::string(cuda.emulated ? " — a pass here is not a pass on a GPU" : "")
                << std::endl;
    } else if (cuda.gpu_present) {
      std::cout << "FAILED: " << cuda.device << std::endl;
      return 1;
    } else {
      why_no_cuda = cuda.compiled ? cuda.device : "this build has no CUDA backend";
    }
  }
  std::cout << "large cases: " << (run_large() ? "on" : "off (--large turns them on)") << std::endl;
  const int rc = context.run();
  if (!context.shouldExit() && !report().empty()) {
    std::cout << "\nthe largest normwise relative error against the CPU backend's, per backend and case, and where:\n";
    for (const auto& line : report()) std::cout << "  " << line << "\n";
  }
  if (rc != 0 || context.shouldExit()) return rc;
  if (o.cuda && !o.cpu && !cuda_slot()) {
    std::cout << "skipped: no CUDA device (" << why_no_cuda << ")" << std::endl;
    return 77;
  }
  return 0;
}
