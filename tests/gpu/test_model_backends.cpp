// The whole model on the CUDA backend against the same model on the CPU backend (ctest label cuda:
// emulated in CI, real on a GPU): one training step's loss and every parameter's gradient, a short
// training run's loss curve, decoding with the key/value cache (greedy and beam), a model trained on
// the device translating like the one trained on the CPU, and checkpoints moving between backends.
// Without a device the program exits 77 (skipped), or fails where a GPU is present but unusable
// (device_gate.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/kernel_choice.hpp"
#include "backend/registry.hpp"
#include "device_gate.hpp"
#include "model/checkpoint.hpp"
#include "model/decode.hpp"
#include "model/trainer.hpp"
#include "model/transformer.hpp"
#include "tasks/task.hpp"

using namespace attnlab;
using attnlab::model::Batch;
using attnlab::model::ModelConfig;
using attnlab::model::Transformer;

namespace {

backend::Ops<float>& cpu() { return backend::cpu_backend<float>(); }
backend::Ops<float>& gpu() { return backend::backend_named("cuda"); }

// ‖a − b‖ / ‖b‖ over [off, off + n), in double; ‖a − b‖ alone when b is all zero.
double normwise(const std::vector<float>& a, const std::vector<float>& b, std::size_t off, std::size_t n) {
  double d = 0, r = 0;
  for (std::size_t i = off; i < off + n; ++i) {
    const double x = static_cast<double>(a[i]) - b[i];
    d += x * x;
    r += static_cast<double>(b[i]) * b[i];
  }
  return r > 0 ? std::sqrt(d / r) : std::sqrt(d);
}

// backward() writes every parameter's gradient, zeroing nothing first (the embedding tables'
// aside): NaN put there beforehand shows in the comparisons if any op adds to what it should store,
// or a tensor's gradient is not written at all.
void poison_grads(Transformer<float>& m) {
  m.grads.upload(std::vector<float>(m.grads.size(), std::numeric_limits<float>::quiet_NaN()));
}

std::size_t nans_in(const std::vector<float>& v) {
  return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](float x) { return std::isnan(x); }));
}

// A padded batch with different lengths per sequence, so padding masks matter.
Batch padded_batch(const ModelConfig& c) {
  Batch b;
  b.B = 3;
  b.T = 6;
  const int V = c.vocab_size;
  auto tok = [&](int i) { return 4 + (i * 7) % (V - 4); };
  b.tgt_in = {2, tok(1), tok(2), tok(3), tok(4), tok(5), 2, tok(6), tok(7), 0, 0, 0, 2, tok(8), tok(9), tok(10), 0, 0};
  b.tgt_out = {tok(1), tok(2), tok(3), tok(4), tok(5), 3, tok(6), tok(7), 3, 0, 0, 0, tok(8), tok(9), tok(10), 3, 0, 0};
  if (!c.decoder_only) {
    b.S = 5;
    b.src = {tok(11), tok(12), tok(13), tok(14), tok(15), tok(16), tok(17), 0, 0, 0, tok(18), tok(19), tok(20), tok(21), 0};
    b.src_len = {5, 2, 4};
  }
  return b;
}

// A model of 29 tokens, 16 channels and 2 heads, one layer per stack (no encoder when decoder_only):
// small enough for the emulator, every op of a step still called.
ModelConfig tiny_model(bool decoder_only = false) {
  ModelConfig c;
  c.vocab_size = 29;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 24;
  c.encoder_layers = decoder_only ? 0 : 1;
  c.decoder_layers = 1;
  c.decoder_only = decoder_only;
  c.max_len = 8;
  return c;
}

void one_step(ModelConfig c, const std::string& what) {
  INFO(what);
  Transformer<float> on_cpu(c, cpu()), on_gpu(c, gpu());
  on_cpu.init_params(11);
  on_gpu.params.upload(on_cpu.params.download());
  const Batch b = padded_batch(c);
  std::uint64_t r1 = 77, r2 = 77;  // the same dropout masks on both (backend/dropout_hash.hpp)
  const float l1 = on_cpu.forward(b, 0.1f, true, &r1);
  const float l2 = on_gpu.forward(b, 0.1f, true, &r2);
  CHECK(r1 == r2);
  CHECK(std::fabs(l2 - l1) <= 1e-5 * std::fabs(l1));
  poison_grads(on_cpu);
  poison_grads(on_gpu);
  on_cpu.backward();
  on_gpu.backward();
  const std::vector<float> g1 = on_cpu.grads.download(), g2 = on_gpu.grads.download();
  CHECK(nans_in(g1) == 0);
  CHECK(nans_in(g2) == 0);
  const double all = normwise(g2, g1, 0, g1.size());
  CHECK(all <= 1e-5);
  double norm_all = 0;
  for (float g : g1) norm_all += static_cast<double>(g) * g;
  norm_all = std::sqrt(norm_all);
  double worst = 0;
  std::string worst_name;
  for (const auto& t : on_cpu.layout().tensors) {
    // The key biases' gradient is zero in exact arithmetic (adding q·b_K to every score of a row
    // leaves its softmax unchanged), so what both backends compute there is rounding noise and a
    // relative error means nothing: those are held to the noise level of the whole gradient instead.
    double norm_t = 0;
    for (std::size_t i = t.offset; i < t.offset + t.size(); ++i) norm_t += static_cast<double>(g1[i]) * g1[i];
    const bool analytically_zero = std::sqrt(norm_t) < 1e-6 * norm_all;
    const double e = analytically_zero ? normwise(g2, g1, t.offset, t.size()) * std::sqrt(norm_t) / norm_all
                                       : normwise(g2, g1, t.offset, t.size());
    if (e > worst) {
      worst = e;
      worst_name = t.name;
    }
    INFO(t.name << std::string(analytically_zero ? " (zero in exact arithmetic: error relative to the whole gradient)" : ""));
    CHECK(e <= 1e-5);
  }
  MESSAGE(what << ": loss " << l1 << " vs " << l2 << "; whole gradient " << all << ", worst tensor " << worst_name << " "
               << worst);
}

int g_gate = 0;
std::string g_why;

}  // namespace

TEST_CASE("one training step: loss and every parameter's gradient on cuda equal cpu's") {
  if (g_gate != 0) return;
  ModelConfig c;
  c.vocab_size = 29;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 24;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_len = 8;
  c.dropout = 0.1f;
  one_step(c, "encoder-decoder, post-norm, tied, dropout, padded");
  c.pre_norm = true;
  c.tie_embeddings = false;
  one_step(c, "encoder-decoder, pre-norm, untied, dropout, padded");
  c.decoder_only = true;
  one_step(c, "decoder-only, pre-norm, untied, dropout, causal + padded");
  c.pre_norm = false;
  c.tie_embeddings = true;
  c.dropout = 0.0f;
  one_step(c, "decoder-only, post-norm, tied, causal + padded");
}

namespace {

struct Run {
  std::vector<double> losses;
  std::string checkpoint;
};

// Trains `steps` steps of tiny-test on a backend and saves the model. lr_scale > 0 replaces the
// config's; perturb nudges every initial parameter by one unit in the last place (a rounding-sized
// change, to measure how fast this training amplifies rounding differences).
Run train_tiny(backend::Ops<float>& be, int steps, const std::string& out, double lr_scale = 0, bool perturb = false) {
  tasks::RunConfig run = tasks::load_run_config(std::string(ATTNLAB_SOURCE_DIR) + "/data/configs/tiny-test.json");
  run.train.steps = steps;
  run.train.eval_every = 0;
  if (lr_scale > 0) run.train.lr_scale = lr_scale;
  const tasks::TaskData data = tasks::build_task_data(run);
  model::Trainer t(run.model, run.train, data.vocab.words(), be);
  if (perturb) {
    std::vector<float> p = t.model().params.download();
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = std::nextafter(p[i], i % 2 ? 1e30f : -1e30f);
    t.model().params.upload(p);
  }
  const auto t0 = std::chrono::steady_clock::now();
  t.run(data.train, {}, steps, nullptr, nullptr, nullptr);
  const std::string who = be.name() + (perturb ? " (perturbed)" : "");
  MESSAGE(who << ": " << steps << " steps in "
                    << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s");
  t.save_model(out, {{"run_config", run.raw}});
  return {t.loss_history(), out};
}

double relative(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

// A fresh folder for one test's checkpoints, under the system's temporary folder.
std::filesystem::path scratch_dir(const std::string& tag) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("attnlab-model-backends-" + tag + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// The GPU backend's matrix products in `p` for this scope, fp32 again after it (a failed REQUIRE
// included), so no later test inherits the precision.
struct GpuPrecision {
  explicit GpuPrecision(backend::MatmulPrecision p) { gpu().set_matmul_precision(p); }
  ~GpuPrecision() { gpu().set_matmul_precision(backend::MatmulPrecision::Fp32); }
  GpuPrecision(const GpuPrecision&) = delete;
  GpuPrecision& operator=(const GpuPrecision&) = delete;
};

}  // namespace

namespace {
struct StepVsCpu {
  float cpu_loss, gpu_loss;
  double grad_error;  // normwise, the whole gradient
};
// One forward and backward of the same small model on the CPU (fp32) and on the GPU backend with
// its matrix products in `p` (fp32 again on return).
StepVsCpu one_step_in(backend::MatmulPrecision p) {
  ModelConfig c;
  c.vocab_size = 29;
  c.d_model = 32;
  c.heads = 2;
  c.d_ff = 64;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_len = 8;
  c.pre_norm = true;
  c.dropout = 0.0f;
  Transformer<float> on_cpu(c, cpu()), on_gpu(c, gpu());
  on_cpu.init_params(13);
  on_gpu.params.upload(on_cpu.params.download());
  const Batch b = padded_batch(c);
  const GpuPrecision in_p(p);
  const float l1 = on_cpu.forward(b, 0.0f, true, nullptr);
  const float l2 = on_gpu.forward(b, 0.0f, true, nullptr);
  poison_grads(on_cpu);
  poison_grads(on_gpu);
  on_cpu.backward();
  on_gpu.backward();
  const std::vector<float> g1 = on_cpu.grads.download(), g2 = on_gpu.grads.download();
  CHECK(nans_in(g1) == 0);
  CHECK(nans_in(g2) == 0);
  const double e = normwise(g2, g1, 0, g1.size());
  MESSAGE(std::string(backend::precision_name(p)) << ": loss " << l1 << " (cpu, fp32) vs " << l2 << " (cuda); whole gradient normwise " << e);
  return {l1, l2, e};
}
}  // namespace

TEST_CASE("op timing (bench's breakdown): one row per op called, ops inside ops counted once, nothing after stop") {
  if (g_gate != 0) return;
  CHECK_FALSE(cpu().start_op_timing());  // the CPU has its own profiler (backend/cpu/profile.hpp)
  CHECK(cpu().stop_op_timing().empty());
  const ModelConfig c = tiny_model();
  Transformer<float> net(c, gpu());
  net.init_params(3);
  const Batch b = padded_batch(c);
  backend::Ops<float>& be = gpu();
  auto find = [](const std::vector<backend::OpTime>& rows, const std::string& op) -> const backend::OpTime* {
    for (const auto& r : rows)
      if (r.op == op) return &r;
    return nullptr;
  };
  std::uint64_t rng = 5;
  (void)net.forward(b, 0.0f, true, &rng);  // untimed: nothing is recorded before start
  REQUIRE(be.start_op_timing());
  (void)net.forward(b, 0.0f, true, &rng);
  (void)net.forward(b, 0.0f, true, &rng);
  const std::vector<backend::OpTime> rows = be.stop_op_timing();
  // Each op once per row; linear layers per forward: the encoder's Q, K, V, output and 2 feed-forward
  // (6), the decoder's self Q, K, V, output, cross Q, K, V, output and 2 feed-forward (10).
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t k = i + 1; k < rows.size(); ++k) CHECK(rows[i].op != rows[k].op);
  const backend::OpTime* lin = find(rows, "linear_forward");
  REQUIRE(lin != nullptr);
  CHECK(lin->calls == 2 * 16);
  CHECK(lin->flops > 0.0);
  // By shape: d_model → d_model (Q, K, V and outputs), → d_ff and back, over the padded rows.
  std::int64_t by_shape = 0;
  for (const auto& sh : lin->shapes) by_shape += sh.calls;
  CHECK(by_shape == lin->calls);
  CHECK(lin->shapes.size() >= 3);
  const backend::OpTime* ce = find(rows, "cross_entropy_forward");
  REQUIRE(ce != nullptr);
  CHECK(ce->calls == 2);
  // The forward's one read: its row losses (doubles), downloaded by loss().
  const backend::OpTime* down = find(rows, "download");
  REQUIRE(down != nullptr);
  CHECK(down->calls == 2);
  CHECK(down->bytes == doctest::Approx(2 * 8.0 * b.B * b.T));
  const backend::OpTime* att = find(rows, "attention_forward");
  REQUIRE(att != nullptr);
  CHECK(att->calls == 2 * 3);  // encoder self, decoder self and cross, per forward
  // FLOPs: 4 · B · Tq · Tk · C per call (Q·Kᵀ and weights·V over the full rectangle).
  const double self_enc = 4.0 * b.B * b.S * b.S * c.d_model, self_dec = 4.0 * b.B * b.T * b.T * c.d_model,
               cross = 4.0 * b.B * b.T * b.S * c.d_model;
  CHECK(att->flops == doctest::Approx(2 * (self_enc + self_dec + cross)));
  // Bytes, as the contract moves them (backend::OpTime): a linear layer reads its input, weights and
  // bias and writes its output (the feed-forward's first one applies ReLU as it does: no ReLU op);
  // attention reads q, k, v (and the key lengths where masked), writes out and lse; dropout reads its
  // input (and the residual it is added to) and writes its output, no mask.
  const double Ns = 1.0 * b.B * b.S, Nt = 1.0 * b.B * b.T, C = c.d_model, F = c.d_ff, H = c.heads;
  auto lin_bytes = [](double N, double IC, double OC) { return 4.0 * (N * IC + IC * OC + N * OC + OC); };
  const double lin_per_forward = 4 * lin_bytes(Ns, C, C) + lin_bytes(Ns, C, F) + lin_bytes(Ns, F, C)  // encoder
                                 + 4 * lin_bytes(Nt, C, C)                            // decoder self
                                 + 2 * lin_bytes(Nt, C, C) + 2 * lin_bytes(Ns, C, C)  // cross: Q, O | K, V
                                 + lin_bytes(Nt, C, F) + lin_bytes(Nt, F, C);
  CHECK(lin->bytes == doctest::Approx(2 * lin_per_forward));
  double lin_by_shape = 0.0;
  for (const auto& sh : lin->shapes) lin_by_shape += sh.bytes;
  CHECK(lin_by_shape == doctest::Approx(lin->bytes));
  const double att_per_forward = 4.0 * (4 * Ns * C + H * Ns + b.B)           // encoder self, key lengths
                                 + 4.0 * (4 * Nt * C + H * Nt)               // decoder self, causal
                                 + 4.0 * (2 * Nt * C + 2 * Ns * C + H * Nt + b.B);  // cross
  CHECK(att->bytes == doctest::Approx(2 * att_per_forward));
  CHECK(find(rows, "relu_forward") == nullptr);
  std::int64_t relu_calls = 0;
  for (const auto& sh : lin->shapes)
    if (sh.shape.find(", ReLU") != std::string::npos) relu_calls += sh.calls;
  CHECK(relu_calls == 2 * 2);  // the encoder's and the decoder's first feed-forward layer, per forward
  // Dropout (p = 0.1 in training): the encoder's 2 and the decoder's 3 sub-layers fused with their
  // residual add (3 floats an element), and the two embeddings alone (2).
  REQUIRE(c.dropout > 0.0f);
  const backend::OpTime* drop = find(rows, "dropout_forward");
  REQUIRE(drop != nullptr);
  CHECK(drop->calls == 2 * (2 + 3 + 2));
  CHECK(drop->bytes == doctest::Approx(2 * 4.0 * (3 * (2 * Ns + 3 * Nt) * C + 2 * (Ns + Nt) * C)));
  CHECK(find(rows, "add_forward") == nullptr);  // every residual sum is dropout's
  for (const auto& r : rows) {
    INFO(r.op);
    CHECK(r.seconds >= 0.0);
    if (backend::backend_named("cuda").name() == "cuda") CHECK(r.seconds > 0.0);  // a real device stamps every op
  }
  // The backward's embedding rows: dout and the ids read, and each distinct id's row of dwte read and
  // written, a count the device grouping learns on the device (OpTimer::deferred_count) and the host's
  // grouping on the host; both must give the same bytes. One call per table use: the target's and the
  // source's (tied here, so both add into one table, each its own distinct ids).
  for (const char* grouping : {"device", "host"}) {
    INFO("grouped on the " << std::string(grouping));
    const bool host = std::string(grouping) == "host";
    if (host) cuda::set_kernel_choice({cuda::AttentionVariant::Default, true, false});
    std::unique_ptr<backend::Ops<float>> fresh = host ? backend::make_cuda_backend() : nullptr;
    if (host) cuda::set_kernel_choice({});
    backend::Ops<float>& on = host ? *fresh : be;
    Transformer<float> bnet(c, on);
    bnet.init_params(3);
    (void)bnet.forward(b, 0.0f, true, &rng);
    REQUIRE(on.start_op_timing());
    bnet.backward();
    const std::vector<backend::OpTime> back = on.stop_op_timing();
    const backend::OpTime* emb = find(back, "embedding_backward");
    REQUIRE(emb != nullptr);
    CHECK(emb->calls == 2);
    auto distinct = [&](const std::vector<int>& ids) {
      std::vector<int> v(ids);
      std::sort(v.begin(), v.end());
      return static_cast<double>(std::unique(v.begin(), v.end()) - v.begin());
    };
    const double want = 4.0 * (Nt * C + Nt + 2 * distinct(b.tgt_in) * C) + 4.0 * (Ns * C + Ns + 2 * distinct(b.src) * C);
    CHECK(emb->bytes == doctest::Approx(want));
    CHECK(find(back, "download") == nullptr);
  }
  // Stopped: ops are no longer counted, and a new start begins from zero.
  (void)net.forward(b, 0.0f, true, &rng);
  CHECK(be.stop_op_timing().empty());
  REQUIRE(be.start_op_timing());
  backend::Buffer<float> x(be, 10);
  x.zero();
  const std::vector<backend::OpTime> one = be.stop_op_timing();
  REQUIRE(one.size() == 1);
  CHECK(one[0].op == "zero");
  CHECK(one[0].calls == 1);
  CHECK(one[0].bytes == 40.0);
}

TEST_CASE("a training step waits for the device once: everything queued, then the loss, norm and factor read") {
  // model::train_step queues forward, backward, clipping and AdamW (which reads clipping's factor on
  // the device) before the host reads anything; then one download brings back the loss's rows, the
  // norm and the factor. The op timer lists ops in the order first called, which shows where each
  // step's reads fall; every other op returns once queued. The ids' upload, the step's first op,
  // waits for the previous step's AdamW: the device's one idle stretch a step.
  if (g_gate != 0) return;
  for (const bool decoder_only : {false, true}) {
    INFO((decoder_only ? "decoder-only" : "encoder-decoder"));
    const ModelConfig c = tiny_model(decoder_only);
    backend::Ops<float>& be = gpu();
    Transformer<float> net(c, be);
    net.init_params(3);
    const Batch b = padded_batch(c);
    backend::Buffer<float> m(be), v(be);
    m.assign_zero(net.params.size());
    v.assign_zero(net.params.size());
    std::uint64_t rng = 5;
    REQUIRE(be.start_op_timing());
    for (std::int64_t step = 1; step <= 2; ++step) {
      const auto r = model::train_step(net, b, 0.1f, &rng, 1.0, m.data(), v.data(), nullptr,
                                       model::adam_hyper(model::AdamConfig{}, step, 1e-3));
      CHECK(r.updated());
      CHECK(std::isfinite(r.loss));
      CHECK(r.grad_norm > 0.0);
    }
    const std::vector<backend::OpTime> rows = be.stop_op_timing();
    auto at = [&](const std::string& op) {
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].op == op) return static_cast<long>(i);
      FAIL_CHECK("not called: " << op);
      return -1L;
    };
    for (const char* op : {"upload", "clip_factor", "adamw_step", "download"}) {
      INFO(op);
      CHECK(rows.at(static_cast<std::size_t>(at(op))).calls == 2);
    }
    // The download: each row's loss, the norm and the factor, in doubles.
    CHECK(rows.at(static_cast<std::size_t>(at("download"))).bytes == doctest::Approx(2 * 8.0 * (b.B * b.T + 2)));
    CHECK(at("upload") == 0);
    CHECK(at("cross_entropy_backward") < at("embedding_backward"));
    CHECK(at("embedding_backward") < at("clip_factor"));
    CHECK(at("clip_factor") < at("adamw_step"));
    CHECK(at("download") == static_cast<long>(rows.size()) - 1);
  }
}

TEST_CASE("one training step with TF32 matrix products: loss within 1e-3, gradient within 1e-2 of fp32 cpu's") {
  // TF32 keeps 11 significant bits of each product's inputs: the loss, a mean over many tokens,
  // moves in its 4th digit at most, and the whole gradient stays within a percent (normwise).
  if (g_gate != 0) return;
  const StepVsCpu r = one_step_in(backend::MatmulPrecision::Tf32);
  CHECK(std::fabs(r.gpu_loss - r.cpu_loss) <= 1e-3 * std::fabs(r.cpu_loss));
  CHECK(r.grad_error <= 1e-2);
  CHECK(r.grad_error > 1e-6);  // TF32 engaged: fp32 agrees to about 1e-7
}

TEST_CASE("one training step with bf16 matrix products: loss within 1e-2, gradient within 1e-1 of fp32 cpu's") {
  // bf16 keeps 8 significant bits, 3 fewer than TF32. The loss, a mean, moves by a few 1e-4. The
  // gradient moves far more on this small random model: under the emulator 4.87e-2 normwise, with
  // attention's activations stored in bf16 too (4.85e-2 with attention kept in float32: the
  // tensor-core attention and its bf16 storage add little), most of it in the encoder's first
  // feed-forward weights
  // (12 %) and layer norms, where a rounded product flips the sign of near-zero pre-activations and
  // with it ReLU's gate. So the bound is 1e-1 (a wrong transpose or a missed rounding is off by
  // 100 % or more), and the gradient error must be well above TF32's, so bf16 is what is measured.
  if (g_gate != 0) return;
  const StepVsCpu bf16 = one_step_in(backend::MatmulPrecision::Bf16);
  const StepVsCpu tf32 = one_step_in(backend::MatmulPrecision::Tf32);
  CHECK(std::fabs(bf16.gpu_loss - bf16.cpu_loss) <= 1e-2 * std::fabs(bf16.cpu_loss));
  CHECK(bf16.grad_error <= 1e-1);
  CHECK(bf16.grad_error > 3 * tf32.grad_error);
}

namespace {
// The bf16 storage tests' model: post-norm with tied embeddings, or pre-norm with an output projection.
// One head of 32: a width attention's bf16 storage kernels take.
ModelConfig bf16_storage_config(bool tied) {
  ModelConfig c;
  c.vocab_size = 37;
  c.d_model = 32;
  c.heads = 1;
  c.d_ff = 64;
  c.encoder_layers = 1;
  c.decoder_layers = 2;
  c.max_len = 8;
  c.dropout = 0.0f;
  c.tie_embeddings = tied;
  c.pre_norm = !tied;
  return c;
}
}  // namespace

TEST_CASE("bf16 storage: the loss head, the attention and feed-forward blocks in bf16, pre- or post-norm, near fp32") {
  // At --precision bf16 the model keeps the final norm's output, the output projection's weights,
  // the logits and their gradient in bf16, and the attention and feed-forward blocks' activations and
  // gradients (Transformer::bf16_storage), post-norm (tied) and pre-norm (untied) here. The logits then hold
  // bf16 values exactly (the low 16 bits of each float zero once widened), their softmax sums to 1
  // per row, the ops called are the bf16 ones, and at fp32 the same model is back on the float32
  // path. Against the fp32 CPU model the logits differ by every product of the model rounding its
  // inputs to bf16, not only by what is stored (under the emulator 5.8e-3 post-norm tied, 5.2e-3
  // pre-norm untied, normwise; a model's whole gradient moves by 4.9e-2 at bf16, above): the bound
  // is 2e-2, where a wrong transpose or weight copy is off by 100 %. The lessons' views widen what
  // they read (cross-attention weights 3.9e-3 and 2.9e-3, a context 3.4e-3 and 4.0e-3).
  if (g_gate != 0) return;
  for (bool tied : {true, false}) {
    INFO(std::string(tied ? "tied embeddings" : "separate output projection"));
    const ModelConfig c = bf16_storage_config(tied);
    Transformer<float> on_cpu(c, cpu()), on_gpu(c, gpu());
    on_cpu.init_params(17);
    on_gpu.params.upload(on_cpu.params.download());
    const Batch b = padded_batch(c);
    const float l_cpu = on_cpu.forward(b, 0.1f, false, nullptr);
    const std::vector<float> z_cpu = on_cpu.logits();
    float l_gpu = 0.0f;
    std::vector<float> z_gpu, probs, w_gpu, ctx_gpu;
    Transformer<float>::AttentionView view_gpu;
    std::vector<backend::OpTime> rows;
    {
      const GpuPrecision bf16(backend::MatmulPrecision::Bf16);
      backend::Ops<float>& be = gpu();
      REQUIRE(be.start_op_timing());
      l_gpu = on_gpu.forward(b, 0.1f, true, nullptr);
      poison_grads(on_gpu);
      on_gpu.backward();
      rows = be.stop_op_timing();
      CHECK(nans_in(on_gpu.grads.download()) == 0);
      CHECK(on_gpu.bf16_storage());
      z_gpu = on_gpu.logits();
      probs = on_gpu.probabilities();
      // What the lessons read, from the bf16 buffers widened.
      w_gpu = on_gpu.decoder_cross_attention(1);
      ctx_gpu = on_gpu.attention_context(Transformer<float>::Block::DecoderSelf, 0);
      view_gpu = on_gpu.attention_view(Transformer<float>::Block::EncoderSelf, 0);
    }
    REQUIRE(z_gpu.size() == z_cpu.size());
    std::size_t not_bf16 = 0;
    for (float z : z_gpu) not_bf16 += (std::bit_cast<std::uint32_t>(z) & 0xffffu) != 0;
    CHECK_MESSAGE(not_bf16 == 0, not_bf16 << " logits are not bf16 values");
    const double e = normwise(z_gpu, z_cpu, 0, z_cpu.size());
    MESSAGE("bf16 storage (" << std::string(tied ? "tied" : "untied") << "): logits normwise " << e << ", loss "
                             << l_gpu << " against fp32 cpu's " << l_cpu);
    CHECK(e <= 2e-2);
    CHECK(e > 1e-6);  // bf16 engaged
    CHECK(std::fabs(l_gpu - l_cpu) <= 1e-2 * std::fabs(l_cpu));
    // The largest distance from 1 of a row's sum (rows of `width`): probabilities and attention weights.
    auto worst_row_sum = [](const std::vector<float>& x, int width) {
      double worst = 0.0;
      for (std::size_t r = 0; r < x.size() / width; ++r) {
        double sum = 0.0;
        for (int j = 0; j < width; ++j) sum += x[r * width + j];
        worst = std::max(worst, std::fabs(sum - 1.0));
      }
      return worst;
    };
    CHECK(worst_row_sum(probs, c.vocab_size) <= 1e-5);
    auto called = [&](const char* op) {
      for (const auto& r : rows)
        if (r.op == op) return true;
      return false;
    };
    CHECK(called("cross_entropy_forward_bf16"));
    CHECK(called("cross_entropy_backward_bf16"));
    CHECK_FALSE(called("cross_entropy_forward"));
    CHECK(called(tied ? "gemm_bf16" : "linear_forward_bf16"));
    CHECK(called("relu_backward_bf16"));  // the feed-forward blocks' backward, on bf16
    CHECK(called("dropout_backward_bf16"));
    CHECK_FALSE(called("relu_backward"));
    CHECK(called(tied ? "linear_backward_bf16" : "layernorm_backward_bf16"));
    // Attention too: its storage kernels (head width 32), every projection bf16, nothing widened.
    CHECK(called("attention_forward_bf16"));
    CHECK(called("attention_backward_bf16"));
    for (const char* op : {"attention_forward", "attention_backward", "linear_forward", "linear_backward", "from_bf16"})
      CHECK_MESSAGE(!called(op), op << " called at bf16");
    // The lessons' views of the last forward: near the CPU's, the weights' rows still summing to 1.
    const auto w_cpu = on_cpu.decoder_cross_attention(1);
    const auto ctx_cpu = on_cpu.attention_context(Transformer<float>::Block::DecoderSelf, 0);
    const auto view_cpu = on_cpu.attention_view(Transformer<float>::Block::EncoderSelf, 0);
    REQUIRE(w_gpu.size() == w_cpu.size());
    REQUIRE(ctx_gpu.size() == ctx_cpu.size());
    MESSAGE("bf16 storage: cross-attention weights normwise " << normwise(w_gpu, w_cpu, 0, w_cpu.size())
                                                               << ", context " << normwise(ctx_gpu, ctx_cpu, 0, ctx_cpu.size()));
    CHECK(normwise(w_gpu, w_cpu, 0, w_cpu.size()) <= 2e-2);
    CHECK(normwise(ctx_gpu, ctx_cpu, 0, ctx_cpu.size()) <= 2e-2);
    CHECK(normwise(view_gpu.query_input, view_cpu.query_input, 0, view_cpu.query_input.size()) <= 2e-2);
    CHECK(normwise(view_gpu.output, view_cpu.output, 0, view_cpu.output.size()) <= 2e-2);
    CHECK(normwise(view_gpu.weights, view_cpu.weights, 0, view_cpu.weights.size()) <= 2e-2);
    CHECK(worst_row_sum(w_gpu, b.S) <= 1e-5);  // cross-attention: rows of S keys
    // Back at fp32: float32 storage again.
    (void)on_gpu.forward(b, 0.1f, false, nullptr);
    CHECK_FALSE(on_gpu.bf16_storage());
    CHECK(normwise(on_gpu.logits(), z_cpu, 0, z_cpu.size()) <= 1e-5);
  }
}

TEST_CASE("bf16 storage: the optimizer's bf16 copy of the weights serves the next forward only, bit for bit the rounding") {
  // Transformer::adamw_step at bf16 writes a bf16 copy of every updated parameter (adamw_step_bf16);
  // the next forward's bf16 products read it instead of rounding their weights (one to_bf16 fewer
  // per feed-forward matrix, per attention projection and for the output projection: 2 × 3 + 4 × 5
  // + 1 = 27 for 3 feed-forward and 5 attention blocks here). The copy is the
  // parameters rounded, so the loss, the logits and the whole gradient are bit for bit those of the
  // rounding forward after it; and that forward no longer reads it, so parameters written by hand
  // afterwards are the ones used.
  if (g_gate != 0) return;
  for (bool tied : {true, false}) {
    INFO(std::string(tied ? "post-norm, tied" : "pre-norm, untied"));
    const ModelConfig c = bf16_storage_config(tied);
    const int weight_roundings = 2 * (c.encoder_layers + c.decoder_layers) + 4 * (c.encoder_layers + 2 * c.decoder_layers) + 1;
    const GpuPrecision bf16(backend::MatmulPrecision::Bf16);
    backend::Ops<float>& be = gpu();
    Transformer<float> net(c, be);
    net.init_params(23);
    const std::vector<float> initial = net.params.download();
    const Batch b = padded_batch(c);
    const float l_before = net.forward(b, 0.1f, true, nullptr);
    net.backward();
    backend::Buffer<float> m(be), v(be);
    m.assign_zero(net.params.size());
    v.assign_zero(net.params.size());
    backend::AdamStep h;
    h.lr = 1e-2;
    net.adamw_step(m.data(), v.data(), nullptr, h);
    auto pass = [&](std::vector<backend::OpTime>& rows) {
      REQUIRE(be.start_op_timing());
      const float l = net.forward(b, 0.1f, true, nullptr);
      net.backward();
      rows = be.stop_op_timing();
      return std::make_tuple(l, net.logits(), net.grads.download());
    };
    auto calls = [](const std::vector<backend::OpTime>& rows, const char* op) {
      std::int64_t n = 0;
      for (const auto& r : rows)
        if (r.op == op) n += r.calls;
      return n;
    };
    std::vector<backend::OpTime> rows_copy, rows_round;
    const auto [l_copy, z_copy, g_copy] = pass(rows_copy);
    const auto [l_round, z_round, g_round] = pass(rows_round);
    CHECK(l_copy != l_before);  // the step moved the weights
    CHECK(l_copy == l_round);
    CHECK(z_copy == z_round);
    CHECK(g_copy == g_round);
    CHECK(calls(rows_round, "to_bf16") - calls(rows_copy, "to_bf16") == weight_roundings);
    // Released: the initial weights uploaded by hand give the first forward's loss again.
    net.params.upload(initial);
    CHECK(net.forward(b, 0.1f, true, nullptr) == l_before);
    // At fp32 the step is the float32 one and makes no copy.
    {
      const GpuPrecision fp32(backend::MatmulPrecision::Fp32);
      net.backward();
      REQUIRE(be.start_op_timing());
      net.adamw_step(m.data(), v.data(), nullptr, h);
      const auto rows = be.stop_op_timing();
      CHECK(calls(rows, "adamw_step") == 1);
      CHECK(calls(rows, "adamw_step_bf16") == 0);
    }
  }
}

TEST_CASE("50 steps of tiny-test: the cuda loss curve follows the cpu's within rounding's reach") {
  if (g_gate != 0) return;
  namespace fs = std::filesystem;
  const fs::path dir = scratch_dir("");
  const int steps = 50;
  const Run a = train_tiny(cpu(), steps, (dir / "cpu.ckpt").string());
  const Run p = train_tiny(cpu(), steps, (dir / "cpu-perturbed.ckpt").string(), 0, true);
  const Run b = train_tiny(gpu(), steps, (dir / "cuda.ckpt").string());
  REQUIRE(a.losses.size() == static_cast<std::size_t>(steps));
  REQUIRE(b.losses.size() == a.losses.size());
  REQUIRE(p.losses.size() == a.losses.size());
  // tiny-test's schedule peaks at a learning rate of 0.08 with Adam on a 16-wide model: the run is
  // chaotic, and a one-ulp change of the initial weights (the cpu "perturbed" run) grows to percents
  // within 50 steps. So: every step within 1e-4 while the cpu's own rounding stays below 1e-5 of the
  // loss (the bound, for the steps where it can hold), and over all 50 steps a cuda
  // divergence no larger than that of one ulp (×4, as the two start from different roundings).
  double worst = 0, worst_noise = 0;
  int tight = 0;
  bool chaotic = false;
  for (std::size_t i = 0; i < a.losses.size(); ++i) {
    const double e = relative(b.losses[i], a.losses[i]), noise = relative(p.losses[i], a.losses[i]);
    worst = std::max(worst, e);
    worst_noise = std::max(worst_noise, noise);
    chaotic = chaotic || noise > 1e-5;
    INFO("step " << i + 1 << ": cpu " << a.losses[i] << ", cpu perturbed " << p.losses[i] << ", cuda " << b.losses[i]);
    if (!chaotic) {
      ++tight;
      CHECK(e <= 1e-4);
    }
  }
  CHECK(tight >= 10);
  CHECK(worst <= std::max(1e-4, 4 * worst_noise));
  MESSAGE("loss curves over " << steps << " steps: " << tight << " steps held to 1e-4; worst relative difference cuda "
                              << worst << ", cpu after a one-ulp change " << worst_noise);
  fs::remove_all(dir);
}

TEST_CASE("training in bf16: the loss curve stays within 0.2 % of fp32's and falls as far") {
  // tiny-test at a tenth of its learning rate (a stable run, as below) for 30 steps: bf16 changes
  // each product's inputs by up to 2^-9 (and stores the feed-forward blocks' and the loss head's
  // activations in bf16); under the emulator the curves differ by at most 2.6e-4 (relative), so the
  // bound is 2e-3. A precision mix-up that broke training (a
  // wrong rounding, a kernel reading bf16 as float) would be off by far more, or not learn at all.
  if (g_gate != 0) return;
  namespace fs = std::filesystem;
  const fs::path dir = scratch_dir("bf16-");
  const int steps = 30;
  const Run a = train_tiny(cpu(), steps, (dir / "cpu.ckpt").string(), 0.1);
  const Run b = [&] {
    const GpuPrecision bf16(backend::MatmulPrecision::Bf16);
    return train_tiny(gpu(), steps, (dir / "cuda-bf16.ckpt").string(), 0.1);
  }();
  REQUIRE(b.losses.size() == a.losses.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.losses.size(); ++i) worst = std::max(worst, relative(b.losses[i], a.losses[i]));
  const double fall_fp32 = a.losses.front() - a.losses.back(), fall_bf16 = b.losses.front() - b.losses.back();
  MESSAGE("bf16 training: loss " << b.losses.front() << " -> " << b.losses.back() << " (fp32 cpu: " << a.losses.front()
                                 << " -> " << a.losses.back() << "); worst relative difference " << worst);
  CHECK(worst <= 2e-3);
  CHECK(worst > 1e-6);  // bf16 really engaged
  CHECK(fall_bf16 >= 0.9 * fall_fp32);
  fs::remove_all(dir);
}

TEST_CASE("trained on cuda: translates as trained on cpu; its checkpoint decodes the same on both backends") {
  if (g_gate != 0) return;
  namespace fs = std::filesystem;
  const fs::path dir = scratch_dir("t-");
  // tiny-test at a tenth of its learning rate: a stable run, so training on either backend reaches the
  // same model up to rounding and the decodings can be compared token for token.
  const int steps = 30;
  const Run a = train_tiny(cpu(), steps, (dir / "cpu.ckpt").string(), 0.1);
  const Run b = train_tiny(gpu(), steps, (dir / "cuda.ckpt").string(), 0.1);
  double worst = 0;
  for (std::size_t i = 0; i < a.losses.size(); ++i) worst = std::max(worst, relative(b.losses[i], a.losses[i]));
  CHECK(worst <= 1e-4);
  tasks::LoadedModel on_cpu = tasks::load_model(b.checkpoint, cpu());
  tasks::LoadedModel on_gpu = tasks::load_model(b.checkpoint, gpu());
  tasks::LoadedModel cpu_trained = tasks::load_model(a.checkpoint, cpu());
  tasks::RunConfig run = on_cpu.run;
  const tasks::TaskData data = tasks::build_task_data(run, &on_cpu.vocab);
  int compared = 0;
  for (std::size_t i = 0; i < data.test.size() && i < 12; ++i) {
    for (int beam : {1, 4}) {
      model::DecodeOptions d;
      d.beam = beam;
      const model::Hypothesis h1 = model::translate(*on_cpu.net, data.test[i].src, d);
      const model::Hypothesis h2 = model::translate(*on_gpu.net, data.test[i].src, d);
      const model::Hypothesis h3 = model::translate(*cpu_trained.net, data.test[i].src, d);
      INFO("test sentence " << i << ", beam " << beam);
      CHECK(h2.tokens == h1.tokens);  // one checkpoint, two backends
      CHECK(std::fabs(h2.logprob - h1.logprob) <= 1e-4 * std::max(1.0, std::fabs(h1.logprob)));
      CHECK(h3.tokens == h1.tokens);  // trained on cpu vs trained on cuda
      ++compared;
    }
  }
  MESSAGE(compared << " decodings compared (12 test sentences, greedy and beam 4); loss curves within " << worst);
  fs::remove_all(dir);
}

int main(int argc, char** argv) {
  g_gate = attnlab::gputest::device_gate(&g_why);
  if (g_gate == 77) {
    std::cout << "skipped: no CUDA device (" << g_why << ")\n";
    return 77;
  }
  if (g_gate != 0) return g_gate;
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
