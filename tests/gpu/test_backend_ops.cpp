// Every op of backend::Ops<float> (backend/backend.hpp) on every backend this build has, against the
// CPU backend: the idea of ggml's test-backend-ops, sized for this project.
//
// One table of cases (cases() below): each names an op (or a forward/backward pair) with its shapes,
// masks, strides and tolerance, and is a function of a backend that draws its inputs from a seed,
// runs the op(s) and records what they wrote. It runs once on the CPU backend, the reference, and once
// on each backend under test (the CPU backend itself, then the CUDA backend when it is built and a
// device is usable), with the same seed, so both see the same inputs; every recorded array is then
// compared with the reference by its normwise relative error (kernel_check.hpp: compare)
//   max_i |got_i − want_i| / max(max_i |want_i|, floor)
// against the case's tolerance. Outputs an op writes are filled with NaN before the call, so an
// element it forgets fails (on the reference too: the reference must come back without NaN);
// gradients it accumulates into start from random values, so overwriting instead of adding fails.
// Dropout's outputs and masks must agree bit for bit (the same counter-based mask on every backend).
//
// Shapes are small (B ≤ 2, T ≤ 9, C ≤ 32, V ≤ 50) so that the emulation build (the CUDA kernels on the
// CPU emulator, as CI runs them) finishes in seconds. Without a usable device the table runs on the
// CPU backend alone, then the program exits 77 (ctest: skipped), as the other GPU tests do.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "device_gate.hpp"
#include "kernel_check.hpp"
#include "util/error.hpp"

namespace {

using attnlab::backend::AdamStep;
using attnlab::backend::AttentionShape;
using attnlab::backend::Buffer;
using attnlab::backend::Ops;
using namespace attnlab::gputest;

// ---- the backends -----------------------------------------------------------------------------------

std::unique_ptr<Ops<float>>& cuda_slot() {
  static std::unique_ptr<Ops<float>> cuda;
  return cuda;
}

// The CPU backend always; the CUDA backend when main() found a usable device.
std::vector<Ops<float>*> backends_under_test() {
  std::vector<Ops<float>*> all = {&attnlab::backend::cpu_backend<float>()};
  if (cuda_slot()) all.push_back(cuda_slot().get());
  return all;
}

// ---- one run of a case on one backend ---------------------------------------------------------------

// What a case recorded: a named array (scalars as one element) and how to compare it.
struct Result {
  std::string name;
  std::vector<float> values;
  double floor = 1.0;  // the scale of the inputs (compare's floor); 0: plain relative
  bool exact = false;  // must match the reference bit for bit
};

// The buffers of one run, all on one backend, and the seeded generator its inputs come from: the same
// seed gives the same draws, in the same order, on every backend.
class Run {
 public:
  Run(Ops<float>& backend, std::uint32_t seed) : be(backend), rng(seed) {}

  // An input of n normal values.
  float* input(std::size_t n, float sd = 1.0f, float mean = 0.0f) { return put(random_floats(rng, n, sd, mean)); }
  float* put(const std::vector<float>& host) {
    floats_.emplace_back(be);
    floats_.back().upload(host);
    return floats_.back().data();
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
  // An output the op writes: NaN (every bit set) until it does.
  float* written(std::size_t n) { return put(std::vector<float>(n, poison_value())); }
  // A gradient the op accumulates into: random start values.
  float* accumulated(std::size_t n) { return input(n); }

  std::vector<float> fetch(const float* p, std::size_t n) {
    std::vector<float> host(n);
    if (n) be.download(host.data(), p, n * sizeof(float));
    return host;
  }
  void record(std::string name, const float* p, std::size_t n, double floor = 1.0) {
    results.push_back({std::move(name), fetch(p, n), floor, false});
  }
  void record_exact(std::string name, const float* p, std::size_t n) {
    results.push_back({std::move(name), fetch(p, n), 0.0, true});
  }
  void record_value(std::string name, double v, double floor = 1.0) {
    results.push_back({std::move(name), {static_cast<float>(v)}, floor, false});
  }

  Ops<float>& be;
  std::mt19937 rng;
  std::vector<Result> results;

 private:
  std::deque<Buffer<float>> floats_;
  std::deque<Buffer<int>> ints_;
  std::deque<Buffer<std::uint8_t>> bytes_;
};

// ---- the table --------------------------------------------------------------------------------------

struct Case {
  std::string op;  // the op(s) and what is special about the shapes
  double tol;      // normwise relative tolerance of every non-exact result
  std::function<void(Run&)> body;
};

constexpr double kTol = 1e-5;  // float32 against float32: the summation order differs, nothing else

// Attention: forward (out, lse), the weights, and (unless shared K/V) the backward, on one layout.
enum class Layout {
  Packed,     // q, out: (B·Tq) × C; k, v: (B·Tk) × C (the defaults)
  FusedQKV,   // one (B·T) × 3C buffer: q, k, v at columns 0, C, 2C, ld = 3C; out in a wider (ld = C + 5) buffer
  SharedKV,   // one Tk × C K and V for all B batches (batch stride 0): forward and weights only
};

struct Attn {
  int B, Tq, Tk, C, H;
  bool causal;
  std::vector<int> key_len;  // empty: every key visible
  Layout layout = Layout::Packed;
};

void attention_case(Run& r, const Attn& a) {
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
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  std::size_t nq = rows_q * C, nkv = rows_k * C;
  switch (a.layout) {
    case Layout::Packed:
      q = r.input(nq);
      k = r.input(nkv);
      v = r.input(nkv);
      break;
    case Layout::FusedQKV: {
      const float* qkv = r.input(rows_q * 3 * C);  // Tq = Tk: self-attention
      q = qkv;
      k = qkv + C;
      v = qkv + 2 * C;
      s.ldq = s.ldk = s.ldv = static_cast<std::int64_t>(3 * C);
      s.ldo = static_cast<std::int64_t>(C + 5);
      break;
    }
    case Layout::SharedKV:
      q = r.input(nq);
      k = r.input(static_cast<std::size_t>(a.Tk) * C);
      v = r.input(static_cast<std::size_t>(a.Tk) * C);
      s.k_batch = s.v_batch = 0;
      break;
  }
  const std::size_t ldo = s.ldo ? static_cast<std::size_t>(s.ldo) : C;
  float* out = r.written(rows_q * ldo);
  float* lse = r.written(static_cast<std::size_t>(a.B) * a.H * a.Tq);
  r.be.attention_forward(out, lse, q, k, v, s);
  // The C columns of each output row (a wider row's other columns are not the op's).
  std::vector<float> host = r.fetch(out, rows_q * ldo), cols;
  for (std::size_t i = 0; i < rows_q; ++i) cols.insert(cols.end(), host.begin() + i * ldo, host.begin() + i * ldo + C);
  r.results.push_back({"out", cols, 1.0, false});
  r.record("lse", lse, static_cast<std::size_t>(a.B) * a.H * a.Tq);

  const std::size_t natt = static_cast<std::size_t>(a.B) * a.H * a.Tq * a.Tk;
  float* att = r.written(natt);
  r.be.attention_weights(att, lse, q, k, s);
  r.record("weights", att, natt);
  if (a.layout == Layout::SharedKV) return;

  float* dout = r.input(rows_q * ldo);
  if (a.layout == Layout::FusedQKV) {
    float* dqkv = r.accumulated(rows_q * 3 * C);
    r.be.attention_backward(dqkv, dqkv + C, dqkv + 2 * C, dout, out, lse, q, k, v, s);
    r.record("dqkv", dqkv, rows_q * 3 * C);
  } else {
    float* dq = r.accumulated(nq);
    float* dk = r.accumulated(nkv);
    float* dv = r.accumulated(nkv);
    r.be.attention_backward(dq, dk, dv, dout, out, lse, q, k, v, s);
    r.record("dq", dq, nq);
    r.record("dk", dk, nkv);
    r.record("dv", dv, nkv);
  }
}

void gemm_case(Run& r) {
  const int m = 5, n = 7, k = 9;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const int lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 4;  // ld > row length: strided
      const float* a = r.input(static_cast<std::size_t>(ta ? k : m) * lda);
      const float* b = r.input(static_cast<std::size_t>(tb ? n : k) * ldb);
      float* c = r.accumulated(static_cast<std::size_t>(m) * ldc);
      r.be.gemm(ta, tb, m, n, k, 0.5f, a, lda, b, ldb, 0.25f, c, ldc);
      r.record(std::string("C ") + (ta ? "T" : "N") + (tb ? "T" : "N"), c, static_cast<std::size_t>(m) * ldc);
    }
  }
}

void linear_case(Run& r, int N, int IC, int OC, bool bias) {
  const std::size_t n_in = static_cast<std::size_t>(N) * IC, n_out = static_cast<std::size_t>(N) * OC,
                    n_w = static_cast<std::size_t>(IC) * OC;
  const float* inp = r.input(n_in);
  const float* w = r.input(n_w, 0.2f);
  const float* b = bias ? r.input(static_cast<std::size_t>(OC)) : nullptr;
  float* out = r.written(n_out);
  r.be.linear_forward(out, inp, w, b, N, IC, OC);
  r.record("out", out, n_out);
  const float* dout = r.input(n_out);
  float* dinp = r.accumulated(n_in);
  float* dw = r.accumulated(n_w);
  float* dbias = bias ? r.accumulated(static_cast<std::size_t>(OC)) : nullptr;
  r.be.linear_backward(dinp, dw, dbias, dout, inp, w, N, IC, OC);
  r.record("dinp", dinp, n_in);
  r.record("dw", dw, n_w);
  if (bias) r.record("dbias", dbias, static_cast<std::size_t>(OC));
}

void cross_entropy_case(Run& r, int N, int V, float smoothing, bool all_ignored) {
  const int ignore = 0;  // kPad: random targets hit it now and then
  const std::size_t n = static_cast<std::size_t>(N) * V;
  const std::vector<float> logits_host = random_floats(r.rng, n, 3.0f);
  const float* logits = r.put(logits_host);
  std::vector<int> targets_host = r.draw_ints(static_cast<std::size_t>(N), 0, V - 1);
  if (all_ignored) targets_host.assign(targets_host.size(), ignore);
  const int* targets = r.ints(targets_host);
  float* lse = r.written(static_cast<std::size_t>(N));
  int count = -1;
  const float loss = r.be.cross_entropy_forward(lse, logits, targets, N, V, smoothing, ignore, &count);
  r.record_value("loss", loss);
  r.record_value("count", count);
  r.record("lse", lse, static_cast<std::size_t>(N));
  float* dlogits = r.written(n);
  r.be.cross_entropy_backward(dlogits, logits, lse, targets, N, V, smoothing, ignore, count, 1.5f);
  r.record("dlogits", dlogits, n);
  float* inplace = r.put(logits_host);
  r.be.cross_entropy_backward(inplace, inplace, lse, targets, N, V, smoothing, ignore, count, 1.5f);
  r.record("dlogits in place", inplace, n);
  float* probs = r.written(n);
  r.be.softmax_from_lse(probs, logits, lse, N, V);
  r.record("probs", probs, n, 0.0);
}

void adamw_case(Run& r, bool masked) {
  const std::size_t n = 1000;
  float* p = r.input(n);
  const float* g = r.input(n, 0.1f);
  float* m = r.input(n, 0.01f);
  std::vector<float> v_host = random_floats(r.rng, n, 0.01f);
  for (float& x : v_host) x *= x;  // second moments are non-negative
  float* v = r.put(v_host);
  const std::uint8_t* mask = nullptr;
  if (masked) {
    const std::vector<int> bits = r.draw_ints(n, 0, 1);
    mask = r.bytes(std::vector<std::uint8_t>(bits.begin(), bits.end()));
  }
  AdamStep h;
  h.lr = 3e-3;
  h.step = 3;
  h.weight_decay = 0.01f;
  r.be.adamw_step(p, g, m, v, mask, n, h);
  r.record("params", p, n);
  r.record("m", m, n, 0.01);
  r.record("v", v, n, 0.0);
}

void dropout_case(Run& r, float p, std::uint64_t seed) {
  const std::size_t n = 999;
  const float* inp = r.input(n);
  float* out = r.written(n);
  float* mask = r.written(n);
  r.be.dropout_forward(out, mask, inp, n, p, seed);
  r.record_exact("out", out, n);
  r.record_exact("mask", mask, n);
  const float* dout = r.input(n);
  float* dinp = r.accumulated(n);
  r.be.dropout_backward(dinp, dout, mask, n);
  r.record("dinp", dinp, n);  // dinp + dout·mask: a fused multiply-add may round once instead of twice
}

std::vector<Case> cases() {
  std::vector<Case> t;
  t.push_back({"gemm NN/NT/TN/TT, alpha 0.5, beta 0.25, ld > row length", kTol, gemm_case});
  t.push_back({"embedding forward/backward, B 2, T 9, C 16, V 7 (tokens repeat)", kTol, [](Run& r) {
                 const int B = 2, Tn = 9, C = 16, V = 7;
                 const std::size_t N = static_cast<std::size_t>(B) * Tn;
                 const float* wte = r.input(static_cast<std::size_t>(V) * C);
                 const float* pe = r.input(static_cast<std::size_t>(Tn) * C);
                 const int* tokens = r.ints(r.draw_ints(N, 0, V - 1));
                 float* out = r.written(N * C);
                 r.be.embedding_forward(out, tokens, wte, pe, B, Tn, C, 4.0f);
                 r.record("out", out, N * C);
                 const float* dout = r.input(N * C);
                 float* dwte = r.accumulated(static_cast<std::size_t>(V) * C);
                 r.be.embedding_backward(dwte, dout, tokens, B, Tn, C, V, 4.0f);
                 r.record("dwte", dwte, static_cast<std::size_t>(V) * C);
               }});
  t.push_back({"linear with bias, N 18, IC 32, OC 24", kTol, [](Run& r) { linear_case(r, 18, 32, 24, true); }});
  t.push_back({"linear without bias, N 1, IC 7, OC 5", kTol, [](Run& r) { linear_case(r, 1, 7, 5, false); }});
  t.push_back({"layernorm forward/backward, N 18, C 32", kTol, [](Run& r) {
                 const int N = 18, C = 32;
                 const std::size_t n = static_cast<std::size_t>(N) * C;
                 const float* inp = r.input(n, 2.0f, 0.5f);
                 const float* gamma = r.input(C, 0.5f, 1.0f);
                 const float* beta = r.input(C);
                 float* out = r.written(n);
                 float* mean = r.written(N);
                 float* rstd = r.written(N);
                 r.be.layernorm_forward(out, mean, rstd, inp, gamma, beta, N, C, 1e-5f);
                 r.record("out", out, n);
                 r.record("mean", mean, N);
                 r.record("rstd", rstd, N);
                 const float* dout = r.input(n);
                 float* dinp = r.accumulated(n);
                 float* dgamma = r.accumulated(C);
                 float* dbeta = r.accumulated(C);
                 r.be.layernorm_backward(dinp, dgamma, dbeta, dout, inp, gamma, mean, rstd, N, C);
                 r.record("dinp", dinp, n);
                 r.record("dgamma", dgamma, C);
                 r.record("dbeta", dbeta, C);
               }});
  t.push_back({"relu (in place too), add, accumulate, scale, n 999", kTol, [](Run& r) {
                 const std::size_t n = 999;
                 const float* x = r.input(n);
                 const float* y = r.input(n);
                 float* out = r.written(n);
                 r.be.relu_forward(out, x, n);
                 r.record("relu", out, n);
                 float* dinp = r.accumulated(n);
                 r.be.relu_backward(dinp, y, out, n);
                 r.record("relu backward", dinp, n);
                 float* inplace = r.input(n);
                 r.be.relu_forward(inplace, inplace, n);
                 r.record("relu in place", inplace, n);
                 float* sum = r.written(n);
                 r.be.add_forward(sum, x, y, n);
                 r.record("add", sum, n);
                 float* acc = r.accumulated(n);
                 r.be.accumulate(acc, x, n);
                 r.record("accumulate", acc, n);
                 float* scaled = r.input(n);
                 r.be.scale(scaled, n, -0.375f);
                 r.record("scale", scaled, n);
               }});
  t.push_back({"sum_squares, n 1 and 4099", kTol, [](Run& r) {
                 r.record_value("n 1", r.be.sum_squares(r.input(1), 1), 0.0);
                 r.record_value("n 4099", r.be.sum_squares(r.input(4099), 4099), 0.0);
               }});
  t.push_back({"dropout p 0.1, seed 12345 (masks bit for bit)", kTol, [](Run& r) { dropout_case(r, 0.1f, 12345); }});
  t.push_back({"dropout p 0.5, seed 2^63 + 7", kTol, [](Run& r) { dropout_case(r, 0.5f, (1ull << 63) + 7); }});
  t.push_back({"dropout p 0 (a copy, mask 1)", kTol, [](Run& r) { dropout_case(r, 0.0f, 1); }});
  // Attention: d = C / H = 8 (or 32, 1); masks; strides.
  t.push_back({"attention self, causal, B 2, T 9, C 32, H 4", kTol,
               [](Run& r) { attention_case(r, {2, 9, 9, 32, 4, true, {}}); }});
  t.push_back({"attention self, key_len {9, 5}, B 2, T 9, C 32, H 4", kTol,
               [](Run& r) { attention_case(r, {2, 9, 9, 32, 4, false, {9, 5}}); }});
  t.push_back({"attention causal + key_len {0, 6} (batch 0 fully masked), C 32, H 1", kTol,
               [](Run& r) { attention_case(r, {2, 9, 9, 32, 1, true, {0, 6}}); }});
  t.push_back({"attention cross, Tq 7, Tk 9, key_len {3, 9}, C 24, H 3", kTol,
               [](Run& r) { attention_case(r, {2, 7, 9, 24, 3, false, {3, 9}}); }});
  t.push_back({"attention fused QKV (ld 3C), out ld C + 5, causal, B 2, T 9, C 32, H 4", kTol,
               [](Run& r) { attention_case(r, {2, 9, 9, 32, 4, true, {}, Layout::FusedQKV}); }});
  t.push_back({"attention fused QKV, key_len {8, 2}, d 1 (C 4, H 4)", kTol,
               [](Run& r) { attention_case(r, {2, 9, 9, 4, 4, false, {8, 2}, Layout::FusedQKV}); }});
  t.push_back({"attention shared K/V (batch stride 0), forward + weights, Tq 5, Tk 9, key_len {7, 4}", kTol,
               [](Run& r) { attention_case(r, {2, 5, 9, 32, 2, false, {7, 4}, Layout::SharedKV}); }});
  t.push_back({"attention one query, one key (B 1, T 1, C 8, H 2)", kTol,
               [](Run& r) { attention_case(r, {1, 1, 1, 8, 2, true, {}}); }});
  t.push_back({"cross-entropy, smoothing 0.1, padding rows, N 18, V 50", kTol,
               [](Run& r) { cross_entropy_case(r, 18, 50, 0.1f, false); }});
  t.push_back({"cross-entropy, no smoothing, N 5, V 3", kTol, [](Run& r) { cross_entropy_case(r, 5, 3, 0.0f, false); }});
  t.push_back({"cross-entropy, every row ignored (count 0)", kTol,
               [](Run& r) { cross_entropy_case(r, 6, 11, 0.1f, true); }});
  t.push_back({"adamw, decay mask, step 3, n 1000", kTol, [](Run& r) { adamw_case(r, true); }});
  t.push_back({"adamw, null mask (every parameter decays)", kTol, [](Run& r) { adamw_case(r, false); }});
  return t;
}

constexpr std::uint32_t kSeed = 20240611u;

// The largest error seen per (backend, case, result), printed at the end.
std::vector<std::string>& report() {
  static std::vector<std::string> lines;
  return lines;
}

}  // namespace

TEST_CASE("every op on every backend against the CPU backend") {
  const auto table = cases();
  std::uint32_t seed = kSeed;
  for (const Case& c : table) {
    ++seed;
    INFO("case: " << c.op << " (seed " << seed << ")");
    Run ref(attnlab::backend::cpu_backend<float>(), seed);
    c.body(ref);
    // The reference wrote everything it should (outputs start as NaN).
    for (const Result& w : ref.results) {
      INFO("reference result " << w.name);
      std::size_t nan = 0;
      for (float x : w.values) nan += std::isnan(x) ? 1 : 0;
      CHECK(nan == 0);
    }
    for (Ops<float>* be : backends_under_test()) {
      INFO("backend: " << be->name());
      Run run(*be, seed);
      c.body(run);
      REQUIRE(run.results.size() == ref.results.size());
      for (std::size_t i = 0; i < ref.results.size(); ++i) {
        const Result& got = run.results[i];
        const Result& want = ref.results[i];
        INFO("result " << want.name);
        REQUIRE(got.name == want.name);
        const Comparison cmp = compare(got.values, want.values, want.floor);
        INFO(cmp.str());
        CHECK(cmp.nan == 0);
        if (want.exact) {
          CHECK(got.values.size() == want.values.size());
          CHECK(std::memcmp(got.values.data(), want.values.data(), want.values.size() * sizeof(float)) == 0);
        } else {
          CHECK(cmp.rel <= c.tol);
        }
        if (be == &attnlab::backend::cpu_backend<float>()) continue;  // the reference against itself: 0
        std::ostringstream line;
        line << std::left << std::setw(18) << be->name() << std::setw(100) << (c.op + ": " + want.name)
             << std::scientific << std::setprecision(2) << cmp.rel << (want.exact ? " (bit for bit)" : "");
        report().push_back(line.str());
      }
    }
  }
}

TEST_CASE("dropout: the seed decides the mask, p the share dropped") {
  for (Ops<float>* be : backends_under_test()) {
    INFO("backend: " << be->name());
    const std::size_t n = 4000;
    Buffer<float> inp(*be, n), out(*be, n), m1(*be, n), m2(*be, n);
    inp.upload(std::vector<float>(n, 1.0f));
    be->dropout_forward(out.data(), m1.data(), inp.data(), n, 0.25f, 99);
    be->dropout_forward(out.data(), m2.data(), inp.data(), n, 0.25f, 100);
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

TEST_CASE("memory: upload, copy within the backend, zero, download") {
  for (Ops<float>* be : backends_under_test()) {
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

TEST_CASE("the CUDA backend: its name, and a clear refusal of a shared-K/V backward") {
  if (!cuda_slot()) return;
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

TEST_CASE("without a device, make_cuda_backend refuses with an InputError that says what to do") {
  std::string why;
  if (attnlab::cuda::cuda_device_available(&why)) return;  // a GPU, or the emulator: nothing to refuse
  try {
    (void)attnlab::backend::make_cuda_backend();
    FAIL("no exception");
  } catch (const attnlab::InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find(why) != std::string::npos);
    CHECK(msg.find("--backend cpu") != std::string::npos);
  }
}

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  std::string why;
  const int gate = attnlab::gputest::device_gate(&why);
  if (gate == 1) return 1;
  if (gate == 0) cuda_slot() = attnlab::backend::make_cuda_backend();
  const int rc = context.run();
  if (!context.shouldExit()) {
    if (!report().empty()) {
      std::cout << "\nnormwise relative error of every result against the CPU backend's:\n";
      for (const auto& line : report()) std::cout << "  " << line << "\n";
    }
  }
  cuda_slot().reset();
  if (rc != 0 || context.shouldExit()) return rc;
  if (gate == 77) {
    std::cout << "skipped: no CUDA device (" << why << "); the table ran on the CPU backend alone and passed"
              << std::endl;
    return 77;
  }
  return 0;
}
