#include "bench/bench.hpp"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/ops.hpp"
#include "model/optim.hpp"
#include "backend/cpu/profile.hpp"
#include "model/size.hpp"
#include "model/trainer.hpp"
#include "model/transformer.hpp"
#include "backend/cpu/blas_setup.hpp"
#include "backend/cpu/buffers.hpp"
#include "backend/cpu/parallel.hpp"
#include "util/blas.hpp"

namespace attnlab::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One warm-up call, then `repeats` samples; returns the median seconds per call. Calls much shorter
// than 20 ms are repeated inside each sample so the clock's resolution and noise do not dominate.
template <class F>
double median_seconds(int repeats, F&& f) {
  const auto t0 = Clock::now();
  f();
  const double first = seconds_since(t0);
  const int inner = first >= 0.02 ? 1 : static_cast<int>(std::min(1000.0, 0.02 / std::max(first, 1e-7)) + 1);
  std::vector<double> samples;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto t = Clock::now();
    for (int i = 0; i < inner; ++i) f();
    samples.push_back(seconds_since(t) / inner);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::vector<double> load_average() {
  std::ifstream in("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  if (in >> a >> b >> c) return {a, b, c};
  return {};
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v;
  cpu::size_buffer(v, n);  // huge pages where the model's buffers get them too (backend/cpu/buffers.hpp)
  for (auto& x : v) x = d(rng);
  return v;
}

// One measured product m×k · k×n for the report: its shape and rate.
nlohmann::ordered_json gemm_point_json(const std::string& label, int m, int n, int k, double seconds) {
  nlohmann::ordered_json j;
  j["shape"] = label;
  j["m"] = m;
  j["n"] = n;
  j["k"] = k;
  j["seconds"] = seconds;
  j["gflops"] = 2.0 * m * n * k / seconds / 1e9;
  return j;
}

nlohmann::ordered_json sgemm_point(const std::string& label, int m, int n, int k, bool trans_b, int repeats) {
  const auto a = random_floats(static_cast<std::size_t>(m) * k, 1, 0.1f);
  const auto b = random_floats(static_cast<std::size_t>(k) * n, 2, 0.1f);
  std::vector<float> c;
  cpu::size_buffer(c, static_cast<std::size_t>(m) * n);
  const double s = median_seconds(repeats, [&] {
    blas::gemm(false, trans_b, m, n, k, 1.0f, a.data(), k, b.data(), trans_b ? k : n, 0.0f, c.data(), n);
  });
  return gemm_point_json(label, m, n, k, s);
}

// The same product on a non-CPU backend (its own gemm, on buffers in its memory), each call waited for.
nlohmann::ordered_json device_gemm_point(backend::Ops<float>& be, const std::string& label, int m, int n, int k, bool trans_b,
                                         int repeats) {
  backend::Buffer<float> a(be), b(be), c(be);
  a.upload(random_floats(static_cast<std::size_t>(m) * k, 1, 0.1f));
  b.upload(random_floats(static_cast<std::size_t>(k) * n, 2, 0.1f));
  c.assign_zero(static_cast<std::size_t>(m) * n);
  const double s = median_seconds(repeats, [&] {
    be.gemm(false, trans_b, m, n, k, 1.0f, a.data(), k, b.data(), trans_b ? k : n, 0.0f, c.data(), n);
    be.synchronize();
  });
  nlohmann::ordered_json j = gemm_point_json(label, m, n, k, s);
  j["trans_b"] = trans_b;
  return j;
}

// The device's memory bandwidth as its own copy reaches it: one 512 MiB device-to-device copy, counted
// as read + write. It is what the element-wise ops, which are bound by memory, can be held against
// (the datasheet's bandwidth is a rate no copy reaches).
nlohmann::ordered_json device_copy_point(backend::Ops<float>& be, int repeats) {
  const std::size_t n = std::size_t{128} << 20;  // floats: 512 MiB
  backend::Buffer<float> a(be), b(be);
  a.assign_zero(n);
  b.resize(n);
  const double s = median_seconds(repeats, [&] {
    be.copy(b.data(), a.data(), n * sizeof(float));
    be.synchronize();
  });
  const double bytes = 2.0 * static_cast<double>(n * sizeof(float));
  return {{"what", "one device-to-device copy of 512 MiB, counted as read + write"},
          {"bytes", bytes},
          {"seconds", s},
          {"gbs", bytes / s / 1e9}};
}

// "cuda (emulated)": the kernels run on the CPU, so nothing it times or copies is a device's speed.
bool is_emulated(const backend::Ops<float>& be) { return be.name().find("emulated") != std::string::npos; }

model::Batch random_batch(const model::ModelConfig& c, int B, int T, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> tok(4, c.vocab_size - 1);
  model::Batch b;
  b.B = B;
  b.T = T;
  b.tgt_in.resize(static_cast<std::size_t>(B) * T);
  b.tgt_out.resize(b.tgt_in.size());
  for (auto& t : b.tgt_in) t = tok(rng);
  for (auto& t : b.tgt_out) t = tok(rng);
  if (!c.decoder_only) {
    b.S = T;
    b.src.resize(static_cast<std::size_t>(B) * T);
    for (auto& t : b.src) t = tok(rng);
    b.src_len.assign(B, T);
  }
  return b;
}

// ceiling: the gemm ceiling of the processor the model runs on (GFLOP/s); copy_gbs: its copy bandwidth
// (GB/s), 0 where not measured.
nlohmann::ordered_json measure_model(const std::string& label, const model::ModelConfig& cfg, const BenchOptions& o,
                                     double ceiling, double copy_gbs,
                                     const std::function<void(const std::string&)>& say) {
  say(fmt::format("{}: building the model", label));
  backend::Ops<float>& on = o.backend ? *o.backend : backend::cpu_backend<float>();
  const bool cpu = on.name() == "cpu";
  model::Transformer<float> net(cfg, on);
  net.init_params(1);
  const model::Batch batch = random_batch(cfg, o.batch, o.seq, 7);
  const int S = cfg.decoder_only ? 0 : o.seq;
  const double tokens = static_cast<double>(o.batch) * (S + o.seq);
  // The same count as `attnlab params` (model/size.hpp), for the whole batch.
  const double fwd_flops = o.batch * model::count_flops(cfg, o.seq).forward();
  std::uint64_t rng = 1;
  backend::Ops<float>& be = net.backend();
  backend::Buffer<float> m(be), v(be);
  m.assign_zero(net.params.size());
  v.assign_zero(net.params.size());
  std::int64_t step = 0;
  const model::AdamConfig adam;
  // Every timed call waits for the backend (a GPU's launches return before the work is done).
  auto forward = [&] {
    net.forward(batch, 0.1f, true, &rng);
    be.synchronize();
  };
  auto train_step = [&] {
    // The trainer's step (the same order of queueing and waiting); at bf16 AdamW also writes the
    // weights' bf16 copy, as in training.
    model::train_step(net, batch, 0.1f, &rng, 1.0, m.data(), v.data(), nullptr, model::adam_hyper(adam, ++step, 1e-4));
    be.synchronize();
  };

  say(fmt::format("{}: forward", label));
  const double fwd = median_seconds(o.repeats, forward);
  say(fmt::format("{}: training step", label));
  const double stp = median_seconds(o.repeats, train_step);

  // The breakdown comes from separate, profiled steps so the timers cannot disturb the numbers above.
  say(fmt::format("{}: per-op breakdown", label));
  const int profiled = std::max(1, o.repeats);
  auto profile = [&](const std::function<void()>& fn) {
    const auto t0 = Clock::now();
    cpu::prof::start();
    for (int i = 0; i < profiled; ++i) fn();
    const cpu::prof::Totals tot = cpu::prof::stop();
    const double wall = seconds_since(t0);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (int i = 0; i < cpu::prof::kOps; ++i) {
      const auto op = static_cast<cpu::prof::Op>(i);
      rows.push_back({{"op", cpu::prof::name(op)},
                      {"seconds_per_step", tot.seconds[static_cast<std::size_t>(i)] / profiled},
                      {"share", tot.seconds[static_cast<std::size_t>(i)] / wall},
                      {"calls_per_step", tot.calls[static_cast<std::size_t>(i)] / profiled}});
    }
    return nlohmann::ordered_json{{"profiled_steps", profiled}, {"seconds_per_step", wall / profiled}, {"ops", rows}};
  };
  // On a device the host's timers would time kernel launches, not kernels: the backend times each op
  // on its own clock instead (CUDA events on its stream, backend::Ops::start_op_timing). The time no
  // op covers is the device waiting: for the host to launch the next op, or for a download.
  const bool emulated = is_emulated(on);
  auto device_profile = [&](const std::function<void()>& fn) -> nlohmann::ordered_json {
    const auto t0 = Clock::now();
    if (!be.start_op_timing()) return nlohmann::ordered_json();
    for (int i = 0; i < profiled; ++i) fn();
    std::vector<backend::OpTime> ops = be.stop_op_timing();
    const double wall = seconds_since(t0);
    // Largest first; under the emulator (no device time) in the order first called.
    std::stable_sort(ops.begin(), ops.end(), [](const backend::OpTime& a, const backend::OpTime& b) { return a.seconds > b.seconds; });
    double busy = 0.0, device_bytes = 0.0, flops = 0.0, floor = 0.0;
    // The roofline floor of one op's (or one shape's) work: its bytes at the copy bandwidth or its
    // products at the gemm ceiling, whichever takes longer.
    auto floor_of = [&](double b, double f) {
      return std::max(copy_gbs > 0 ? b / (copy_gbs * 1e9) : 0.0, ceiling > 0 ? f / (ceiling * 1e9) : 0.0);
    };
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& t : ops) {
      busy += t.seconds;
      nlohmann::ordered_json r = {{"op", t.op},
                                  {"seconds_per_step", t.seconds / profiled},
                                  {"share", t.seconds / wall},
                                  {"calls_per_step", static_cast<double>(t.calls) / profiled},
                                  {"gflop_per_step", t.flops / profiled / 1e9},
                                  {"gb_per_step", t.bytes / profiled / 1e9}};
      if (t.flops > 0 && t.seconds > 0) r["gflops"] = t.flops / t.seconds / 1e9;
      if (t.bytes > 0 && t.seconds > 0) r["gbs"] = t.bytes / t.seconds / 1e9;
      if (!crosses_bus(t.op)) {
        device_bytes += t.bytes;
        flops += t.flops;
        if (t.shapes.empty()) {
          floor += floor_of(t.bytes, t.flops);
        } else {
          for (const auto& st : t.shapes) floor += floor_of(st.bytes, st.flops);
        }
      }
      if (!t.shapes.empty()) {
        std::vector<backend::OpShapeTime> shapes = t.shapes;
        std::stable_sort(shapes.begin(), shapes.end(),
                         [](const backend::OpShapeTime& a, const backend::OpShapeTime& b) { return a.seconds > b.seconds; });
        nlohmann::ordered_json sj = nlohmann::ordered_json::array();
        for (const auto& st : shapes) {
          nlohmann::ordered_json x = {{"shape", st.shape},
                                      {"seconds_per_step", st.seconds / profiled},
                                      {"calls_per_step", static_cast<double>(st.calls) / profiled},
                                      {"gflop_per_step", st.flops / profiled / 1e9},
                                      {"gb_per_step", st.bytes / profiled / 1e9}};
          if (st.flops > 0 && st.seconds > 0) x["gflops"] = st.flops / st.seconds / 1e9;
          if (st.bytes > 0 && st.seconds > 0) x["gbs"] = st.bytes / st.seconds / 1e9;
          sj.push_back(x);
        }
        r["shapes"] = sj;
      }
      rows.push_back(r);
    }
    nlohmann::ordered_json j{{"clock", emulated ? "none (emulated: calls, FLOPs and bytes only)" : "device (CUDA events per op)"},
                             {"profiled_steps", profiled},
                             {"seconds_per_step", wall / profiled},
                             {"device_gb_per_step", device_bytes / profiled / 1e9},
                             {"gflop_per_step", flops / profiled / 1e9}};
    if (copy_gbs > 0 && ceiling > 0) {
      j["floor"] = {{"what", "every op at the device's copy bandwidth or its gemm ceiling, whichever binds it (each "
                             "product shape on its own): the time a step would take if no op wasted anything"},
                    {"copy_gbs", copy_gbs},
                    {"gemm_ceiling_gflops", ceiling},
                    {"seconds_per_step", floor / profiled}};
    }
    if (!emulated) {
      j["device_busy_share"] = busy / wall;
      rows.push_back({{"op", "device idle (between ops)"},
                      {"seconds_per_step", std::max(0.0, wall - busy) / profiled},
                      {"share", std::max(0.0, wall - busy) / wall},
                      {"calls_per_step", 0}});
    }
    j["ops"] = rows;
    return j;
  };
  // The CPU's per-op timers are its own (backend/cpu/profile.hpp): exclusive wall time per category.
  const nlohmann::ordered_json step_breakdown = cpu ? profile(train_step) : device_profile(train_step);
  const nlohmann::ordered_json forward_breakdown = cpu ? profile(forward) : device_profile(forward);

  nlohmann::ordered_json j;
  j["model"] = label;
  j["backend"] = on.name();
  j["parameters"] = model::parameter_count(cfg);
  j["tokens_per_step"] = tokens;
  auto point = [&](double s, double flops) {
    nlohmann::ordered_json p;
    p["seconds"] = s;
    p["tokens_per_s"] = tokens / s;
    p["gflop"] = flops / 1e9;
    p["gflops"] = flops / s / 1e9;
    // Against the sgemm ceiling of the processor it ran on (the CPU's, or the device's own gemm).
    p["fraction_of_ceiling"] = ceiling > 0 ? flops / s / 1e9 / ceiling : 0.0;
    return p;
  };
  j["forward"] = point(fwd, fwd_flops);
  j["train_step"] = point(stp, 3.0 * fwd_flops);
  j["breakdown"] = step_breakdown;
  j["forward_breakdown"] = forward_breakdown;
  return j;
}

}  // namespace

double attention_sweep_bytes(const BenchOptions& o, int n) {
  const double H = o.attention_heads, C = H * o.attention_dk, N = n;
  const double inputs = 8.0 * N * C;
  const double plain = H * N * N + static_cast<double>(cpu::attention_backward_scratch<float>(n, n));
  const double tiled = static_cast<double>(cpu::attention_tiled_workspace<float>(o.block_q, o.block_k)) +
                       static_cast<double>(cpu::attention_tiled_backward_workspace<float>(o.block_q, o.block_k, n, o.attention_dk)) +
                       H * N;
  return 4.0 * (inputs + std::max(plain, tiled));  // the plain path's buffers are freed before the tiled one's
}

namespace {

nlohmann::ordered_json measure_attention(const BenchOptions& o, const std::function<void(const std::string&)>& say) {
  const int H = o.attention_heads, C = H * o.attention_dk;
  nlohmann::ordered_json j;
  j["heads"] = H;
  j["d_k"] = o.attention_dk;
  j["block_q"] = o.block_q;
  j["block_k"] = o.block_k;
  j["what"] = "self-attention of one sequence (no mask): forward, and backward from a random upstream gradient";
  j["extra_memory"] =
      "bytes of the buffers a path needs beyond its inputs Q, K, V, its output and the gradients it returns: "
      "plain forward = the saved weights (H·n·n floats), plain backward adds an n·n scratch per thread; tiled "
      "forward = per thread one block_q·block_k tile + 2·block_q running values, plus the saved log-sum-exp (H·n); "
      "tiled backward = per thread two tiles + block_q values, plus up to 8 n·d_k partial dQ sums (kDqGroups: fixed "
      "groups of key blocks, so the sum's order does not depend on the thread count) and the log-sum-exp";
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int n = 64; n <= o.attention_max; n *= 2) {
    say(fmt::format("attention alone: n = {}", n));
    const std::size_t nc = static_cast<std::size_t>(n) * C;
    const auto q = random_floats(nc, 11), k = random_floats(nc, 12), v = random_floats(nc, 13), dout = random_floats(nc, 14);
    std::vector<float> out(nc), dq(nc), dk(nc), dv(nc);
    const double flops = 4.0 * n * n * C;  // Q·Kᵀ and weights·V, summed over heads

    nlohmann::ordered_json row;
    row["n"] = n;
    {
      std::vector<float> att(static_cast<std::size_t>(H) * n * n), scratch(cpu::attention_backward_scratch<float>(n, n));
      const double f = median_seconds(o.repeats, [&] {
        cpu::attention_forward<float>(out.data(), att.data(), q.data(), k.data(), v.data(), nullptr, false, 1, n, n, C, H);
      });
      const double b = median_seconds(o.repeats, [&] {
        cpu::attention_backward<float>(dq.data(), dk.data(), dv.data(), scratch.data(), dout.data(), att.data(),
                                         q.data(), k.data(), v.data(), 1, n, n, C, H);
      });
      row["plain"] = {{"forward_s", f},
                      {"backward_s", b},
                      {"forward_gflops", flops / f / 1e9},
                      {"extra_bytes_forward", att.size() * sizeof(float)},
                      {"extra_bytes_backward", (att.size() + scratch.size()) * sizeof(float)}};
    }
    {
      std::vector<float> lse(static_cast<std::size_t>(H) * n);
      std::vector<float> work(cpu::attention_tiled_workspace<float>(o.block_q, o.block_k));
      std::vector<float> bwork(cpu::attention_tiled_backward_workspace<float>(o.block_q, o.block_k, n, o.attention_dk));
      const double f = median_seconds(o.repeats, [&] {
        cpu::attention_forward_tiled<float>(out.data(), lse.data(), work.data(), q.data(), k.data(), v.data(), nullptr,
                                              false, 1, n, n, C, H, o.block_q, o.block_k);
      });
      const double b = median_seconds(o.repeats, [&] {
        cpu::attention_backward_tiled<float>(dq.data(), dk.data(), dv.data(), bwork.data(), dout.data(), out.data(),
                                               lse.data(), q.data(), k.data(), v.data(), nullptr, false, 1, n, n, C, H,
                                               o.block_q, o.block_k);
      });
      row["tiled"] = {{"forward_s", f},
                      {"backward_s", b},
                      {"forward_gflops", flops / f / 1e9},
                      {"extra_bytes_forward", (work.size() + lse.size()) * sizeof(float)},
                      {"extra_bytes_backward", (bwork.size() + lse.size()) * sizeof(float)}};
    }
    rows.push_back(row);
  }
  j["rows"] = rows;
  return j;
}

// The device's fused attention (backend attention_forward / attention_backward) on one sequence of
// n tokens, H heads of d_k: time, rate, and the memory it needs beyond its inputs and outputs (the
// log-sum-exp, H·n floats), against the H·n·n floats the weights alone would take if formed.
nlohmann::ordered_json measure_device_attention(backend::Ops<float>& be, const BenchOptions& o,
                                                const std::function<void(const std::string&)>& say) {
  const int H = o.device_attention_heads, C = H * o.attention_dk;
  nlohmann::ordered_json j;
  j["backend"] = be.name();
  j["heads"] = H;
  j["d_k"] = o.attention_dk;
  // The CUDA backend's choice (cuda_backend.cu): bf16 tensor cores for head widths that are multiples
  // of 16, the backward up to 64.
  const bool bf16 = be.matmul_precision() == backend::MatmulPrecision::Bf16 && o.attention_dk % 16 == 0;
  const bool bf16_backward = bf16 && o.attention_dk <= 64;
  j["precision"] = !bf16 ? "float32" : bf16_backward ? "bf16 tensor cores" : "forward bf16 tensor cores, backward float32";
  j["what"] = std::string("the backend's fused self-attention on one sequence (no mask), ") +
              (!bf16 ? "float32" : bf16_backward ? "its products on bf16 tensor cores (float32 softmax and accumulation)"
                                               : "the forward's products on bf16 tensor cores, the backward float32") +
              ": forward, and backward from a random upstream gradient (dQ, dK, dV); the weights are never stored";
  j["flop_counting"] = "forward 4·n²·C (Q·Kᵀ and P·V); backward 2.5 × forward (the FlashAttention papers' count: "
                       "the scores recomputed, then dV, dP, dQ, dK)";
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<int> ns;
  if (o.device_attention_max >= 512)
    for (int n = 512; n <= o.device_attention_max; n *= 2) ns.push_back(n);
  else if (o.device_attention_max > 0)
    ns.push_back(o.device_attention_max);
  for (int n : ns) {
    say(fmt::format("{} attention alone: n = {}", be.name(), n));
    const std::size_t nc = static_cast<std::size_t>(n) * C;
    backend::Buffer<float> q(be), k(be), v(be), out(be), dout(be), dq(be), dk(be), dv(be), lse(be);
    q.upload(random_floats(nc, 11));
    k.upload(random_floats(nc, 12));
    v.upload(random_floats(nc, 13));
    dout.upload(random_floats(nc, 14));
    out.assign_zero(nc);
    dq.assign_zero(nc);
    dk.assign_zero(nc);
    dv.assign_zero(nc);
    lse.assign_zero(static_cast<std::size_t>(H) * n);
    backend::AttentionShape sh;
    sh.B = 1, sh.Tq = n, sh.Tk = n, sh.C = C, sh.H = H;
    const double f = median_seconds(o.repeats, [&] {
      be.attention_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), sh);
      be.synchronize();
    });
    // The gradients stored (GradMode::Write), as PyTorch's backward of SDPA gives them: no read of
    // the old values, and the same result each round.
    const double b = median_seconds(o.repeats, [&] {
      be.attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), out.data(), lse.data(), q.data(), k.data(),
                            v.data(), sh, backend::GradMode::Write);
      be.synchronize();
    });
    const double flops = 4.0 * n * static_cast<double>(n) * C;
    rows.push_back({{"n", n},
                    {"forward_s", f},
                    {"backward_s", b},
                    {"forward_tflops", flops / f / 1e12},
                    {"backward_tflops", 2.5 * flops / b / 1e12},
                    {"input_output_bytes", 8 * nc * sizeof(float)},
                    {"extra_bytes", static_cast<std::size_t>(H) * n * sizeof(float)},
                    {"weights_bytes_if_formed", static_cast<double>(H) * n * n * sizeof(float)}});
  }
  j["rows"] = rows;
  return j;
}

}  // namespace

nlohmann::ordered_json run_bench(const BenchOptions& o, const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  if (o.threads > 0) {
    openblas_set_num_threads(o.threads);
    cpu::set_threads(o.threads);  // attnlab's own loops (backend/cpu/parallel.hpp) use the same count
  }
  const cpu::BlasInfo blas = cpu::blas_info();

  nlohmann::ordered_json j;
  j["format"] = "attnlab-bench";
  j["version"] = 1;
  j["machine"] = {{"cpu", cpu_model()},
                  {"hardware_threads", std::thread::hardware_concurrency()},
                  {"load_average_at_start", load_average()}};
  j["blas"] = {{"library", blas.config},
               {"kernel", blas.corename},
               {"cpu_best_kernel", blas.cpu_best},
               {"threads", blas.threads},
               {"thread_timeout", blas.thread_timeout.empty() ? "default" : "2^" + blas.thread_timeout + " cycles"},
               {"verdict", blas.verdict}};
  const model::ModelConfig& mc = o.model;
  j["config"] = {{"name", o.name},          {"d_model", mc.d_model},       {"heads", mc.heads},
                 {"layers", mc.decoder_layers}, {"d_ff", mc.d_ff},         {"vocab", mc.vocab_size},
                 {"batch", o.batch},        {"seq", o.seq},                {"repeats", o.repeats},
                 {"dropout", std::stod(fmt::format("{:g}", mc.dropout))}, {"norm", mc.pre_norm ? "pre" : "post"},
                 {"tie_embeddings", mc.tie_embeddings}};
  j["flop_counting"] =
      "2·m·n·k per matrix product (m×k)·(k×n); every product counted: Q/K/V/output projections, Q·Kᵀ and "
      "weights·V (full Tq×Tk rectangle, also under a causal mask), both feed-forward products, the output "
      "projection; training step = 3 × forward. Softmax, layer norm, loss and Adam are not counted as FLOPs.";
  j["timing"] = fmt::format("median of {} timed repetitions after one warm-up", o.repeats);

  // (a) the ceiling
  const int N = o.batch * o.seq, C = mc.d_model, F = mc.d_ff, V = mc.vocab_size;
  nlohmann::ordered_json gemms = nlohmann::ordered_json::array();
  double ceiling = 0.0;
  if (o.models) {
    say("sgemm at the model's shapes");
    const std::string NC = fmt::format("({}×{})", N, C);
    gemms.push_back(sgemm_point(fmt::format("N×C · C×C  {}·({}×{})  attention projections", NC, C, C), N, C, C, false, o.repeats));
    gemms.push_back(sgemm_point(fmt::format("N×C · C×F  {}·({}×{})  feed-forward in", NC, C, F), N, F, C, false, o.repeats));
    gemms.push_back(sgemm_point(fmt::format("N×F · F×C  ({}×{})·({}×{})  feed-forward out", N, F, F, C), N, C, F, false, o.repeats));
    gemms.push_back(sgemm_point(fmt::format("N×C · C×V  {}·({}×{})ᵀ  output projection", NC, V, C), N, V, C, true, o.repeats));
  }
  say("sgemm at 2048 × 2048 × 2048");
  gemms.push_back(sgemm_point("2048×2048 · 2048×2048  large square", 2048, 2048, 2048, false, o.repeats));
  for (const auto& g : gemms) ceiling = std::max(ceiling, g["gflops"].get<double>());
  j["sgemm"] = gemms;
  j["sgemm_ceiling_gflops"] = ceiling;

  // (a') the device's own ceiling, when the models run on another backend: its gemm at the same shapes
  // and at 4096³ (fp32, as the model multiplies).
  backend::Ops<float>* device = o.backend && o.backend->name() != "cpu" ? o.backend : nullptr;
  double model_ceiling = ceiling;
  if (device && o.models) {
    say(fmt::format("{} gemm at the model's shapes and 4096 × 4096 × 4096", device->name()));
    nlohmann::ordered_json dg = nlohmann::ordered_json::array();
    const std::string NC = fmt::format("({}×{})", N, C);
    dg.push_back(device_gemm_point(*device, fmt::format("N×C · C×C  {}·({}×{})  attention projections", NC, C, C), N, C, C, false, o.repeats));
    dg.push_back(device_gemm_point(*device, fmt::format("N×C · C×F  {}·({}×{})  feed-forward in", NC, C, F), N, F, C, false, o.repeats));
    dg.push_back(device_gemm_point(*device, fmt::format("N×F · F×C  ({}×{})·({}×{})  feed-forward out", N, F, F, C), N, C, F, false, o.repeats));
    dg.push_back(device_gemm_point(*device, fmt::format("N×C · C×V  {}·({}×{})ᵀ  output projection", NC, V, C), N, V, C, true, o.repeats));
    // The model's shapes again with the operands stored in bf16 (bf16_storage above): not the large
    // square, which no model multiplies (and which takes seconds a call under the emulator).
    if (o.bf16_storage) {
      say(fmt::format("{} bf16 products with float32 and with bf16 storage, alternating", device->name()));
      for (auto& g : dg) {
        const std::array<double, 3> s =
            o.bf16_storage(g["m"].get<int>(), g["n"].get<int>(), g["k"].get<int>(), g["trans_b"].get<bool>());
        const double flop = 2.0 * g["m"].get<double>() * g["n"].get<double>() * g["k"].get<double>();
        g["bf16_storage"] = {{"float32_seconds", s[0]},
                             {"bf16_inputs_seconds", s[1]},
                             {"bf16_seconds", s[2]},
                             {"float32_gflops", flop / s[0] / 1e9},
                             {"bf16_inputs_gflops", flop / s[1] / 1e9},
                             {"bf16_gflops", flop / s[2] / 1e9},
                             {"bf16_inputs_speedup", s[0] / s[1]},
                             {"bf16_speedup", s[0] / s[2]}};
      }
      j["device_gemm_bf16_storage"] =
          "each model shape's bf16 product timed three ways in alternating rounds, medians: float32 A, B, C (cuBLAS "
          "converts as it reads: attention's projections at bf16), bf16 A and B with a float32 C, and all bf16 (the "
          "feed-forward's and the logits' products at bf16, and PyTorch's "
          "autocast); the speedups are the float32 storage's time over the others'";
    }
    dg.push_back(device_gemm_point(*device, "4096×4096 · 4096×4096  large square", 4096, 4096, 4096, false, o.repeats));
    model_ceiling = 0.0;
    for (const auto& g : dg) model_ceiling = std::max(model_ceiling, g["gflops"].get<double>());
    j["device_gemm"] = dg;
    j["device_gemm_ceiling_gflops"] = model_ceiling;
  }
  // (a'') its memory bandwidth, for the element-wise ops in (d). Not under the emulator: its copy
  // is the host's memcpy.
  double copy_gbs = 0.0;
  if (device && o.models) {
    if (!is_emulated(*device)) {
      say(fmt::format("{} copy of 512 MiB", device->name()));
      j["device_copy"] = device_copy_point(*device, o.repeats);
      copy_gbs = j["device_copy"]["gbs"].get<double>();
    } else {
      j["device_copy"] = {{"what", "not measured: an emulated device's copy is the host's memcpy"}};
    }
  }

  // (b) + (d) the models
  if (o.models) {
    nlohmann::ordered_json models = nlohmann::ordered_json::array();
    model::ModelConfig ed = mc;
    ed.decoder_only = false;
    ed.max_len = std::max(ed.max_len, o.seq);
    models.push_back(measure_model("encoder-decoder", ed, o, model_ceiling, copy_gbs, say));
    model::ModelConfig lm = ed;
    lm.decoder_only = true;
    models.push_back(measure_model("decoder-only", lm, o, model_ceiling, copy_gbs, say));
    j["models"] = models;
  }

  // (c) attention alone
  if (o.attention_max >= 64) j["attention"] = measure_attention(o, say);
  // (c') the device's attention
  if (device && o.device_attention_max > 0) j["device_attention"] = measure_device_attention(*device, o, say);
  j["machine"]["load_average_at_end"] = load_average();
  return j;
}

}  // namespace attnlab::bench
