// attnlab bench [--config NAME | --d-model D --heads H --layers N --d-ff F --vocab V] [--batch B] [--seq T]
//               [--threads K] [--backend cpu|cuda] [--precision fp32|tf32|bf16] [--dropout P]
//               [--device-attention-max N] [--json]
// Measures how fast this machine runs the model: the sgemm ceiling, forward and training-step tokens/s
// against it, attention alone (plain and tiled) over sequence lengths, and where a step's time goes;
// on a GPU also the device's gemm ceiling, the fraction of the GPU's datasheet peak, and the device's
// own attention alone.
// The measuring lives in src/bench/bench.cpp; this file parses options and prints the report.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "bench/peaks.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/registry.hpp"
#include "cli/commands.hpp"
#include "cli/config_lookup.hpp"
#include "cli/validators.hpp"
#include "io/files.hpp"
#include "tasks/task.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/paths.hpp"

namespace attnlab::cli {

struct BenchCliOptions {
  std::string config;
  int d_model = 0, heads = 0, layers = 0, d_ff = 0, vocab = 0, threads = 0;
  bench::BenchOptions defaults;  // batch, seq, repeats, attention_max, tiles: one set of defaults
  int batch = defaults.batch, seq = defaults.seq, repeats = defaults.repeats, attention_max = defaults.attention_max;
  int block_q = defaults.block_q, block_k = defaults.block_k;
  int device_attention_max = defaults.device_attention_max;
  double dropout = 0.0;  // the models' dropout rate in their training-mode forward and step
  bool json = false, no_models = false, quiet = false;
  std::string json_out;  // also write the JSON report to this file
  std::string backend = "cpu";
  std::string precision = "fp32";
};

namespace {

// The paper's base model; its 37K vocabulary is the shared EN-DE BPE vocabulary.
model::ModelConfig transformer_base() {
  model::ModelConfig c;
  c.d_model = 512;
  c.heads = 8;
  c.d_ff = 2048;
  c.encoder_layers = c.decoder_layers = 6;
  c.vocab_size = 37000;
  return c;
}

bench::BenchOptions to_bench_options(const BenchCliOptions& o) {
  bench::BenchOptions b;
  const bool explicit_shape = o.d_model || o.heads || o.layers || o.d_ff;
  if (!o.config.empty() && explicit_shape)
    throw InputError("bench: give either --config or --d-model/--heads/--layers/--d-ff, not both");
  if (!o.config.empty()) {
    // The paper's model is built in, so the default works even without the data folder.
    std::string path;
    try {
      path = find_config(o.config);
    } catch (const InputError&) {
      if (o.config != "transformer-base") throw;
    }
    // A run config takes its vocabulary from the corpus; bench uses the published model's (the config's
    // "reference"), else the paper's 37K.
    int vocab = 37000;
    if (!path.empty()) {
      const tasks::RunConfig run = tasks::load_run_config(path);
      b.model = run.model;
      b.name = run.name.empty() ? o.config : run.name;
      if (run.reference && run.reference->vocab_size > 0) vocab = run.reference->vocab_size;
    } else {
      b.model = transformer_base();
      b.name = "transformer-base (built in)";
    }
    b.model.vocab_size = vocab;
    b.model.encoder_layers = b.model.decoder_layers = std::max(b.model.encoder_layers, b.model.decoder_layers);
  } else if (explicit_shape) {
    if (!(o.d_model && o.heads && o.layers && o.d_ff))
      throw InputError("bench: --d-model, --heads, --layers and --d-ff go together (or use --config NAME)");
    b.model.d_model = o.d_model;
    b.model.heads = o.heads;
    b.model.d_ff = o.d_ff;
    b.model.encoder_layers = b.model.decoder_layers = o.layers;
    b.model.vocab_size = 37000;
    b.name = "custom";
  } else {
    b.model = transformer_base();
    b.name = "transformer-base (built in)";
  }
  if (o.vocab) b.model.vocab_size = o.vocab;
  b.model.max_len = std::max(b.model.max_len, o.seq);
  b.model.dropout = static_cast<float>(o.dropout);
  model::validate(b.model, "bench");
  if (!o.no_models) {
    model::check_fits_in_memory(b.model, o.batch, o.seq,
                                fmt::format("--batch {} × --seq {} on a model of {} parameters", o.batch, o.seq,
                                            model::parameter_count(b.model)),
                                "lower --batch or --seq, or choose a smaller model");
  }
  b.batch = o.batch;
  b.seq = o.seq;
  b.threads = o.threads;
  b.repeats = o.repeats;
  b.attention_max = o.attention_max;
  b.device_attention_max = o.device_attention_max;
  b.block_q = o.block_q;
  b.block_k = o.block_k;
  b.models = !o.no_models;
  return b;
}

std::string human_bytes(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}

// "1 head", "8 heads".
std::string counted(int n, const char* noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

void print_text(const nlohmann::ordered_json& j) {
  const auto& m = j["machine"];
  const auto& b = j["blas"];
  const auto& c = j["config"];
  const auto la = m["load_average_at_start"];
  std::cout << fmt::format("attnlab bench: {}\n", c["name"].get<std::string>());
  std::cout << fmt::format("  machine   {} ({} hardware threads), load average {}\n", m["cpu"].get<std::string>(),
                           m["hardware_threads"].get<unsigned>(), la.dump());
  std::cout << fmt::format("  BLAS      {}\n", b["library"].get<std::string>());
  std::cout << fmt::format("  kernel    {} with {} thread(s): {}\n", b["kernel"].get<std::string>(), b["threads"].get<int>(),
                           b["verdict"].get<std::string>());
  std::cout << fmt::format("  model     d_model {}, {}, d_ff {}, {} (+{} for the encoder–decoder), vocab {}; "
                           "batch {} × {} tokens; dropout {:g}\n",
                           c["d_model"].get<int>(), counted(c["heads"].get<int>(), "head"), c["d_ff"].get<int>(),
                           counted(c["layers"].get<int>(), "layer"), c["layers"].get<int>(), c["vocab"].get<int>(),
                           c["batch"].get<int>(), c["seq"].get<int>(), c["dropout"].get<double>());
  std::cout << fmt::format("  timing    {}\n", j["timing"].get<std::string>());
  if (j.contains("gpu")) {
    const auto& g = j["gpu"];
    if (g.value("measured", false))
      std::cout << fmt::format("  GPU       {}: {}\n", g.value("device", std::string("?")), g.value("what", std::string()));
    else
      std::cout << fmt::format("  GPU       none measured: {}\n", g.value("why", std::string("?")));
  }
  std::cout << '\n';

  std::cout << "(a) the ceiling: OpenBLAS sgemm\n";
  for (const auto& g : j["sgemm"])
    std::cout << fmt::format("  {:>8.1f} GFLOP/s  {:>9.3f} ms  {}\n", g["gflops"].get<double>(), g["seconds"].get<double>() * 1e3,
                             g["shape"].get<std::string>());
  const double ceiling = j["sgemm_ceiling_gflops"].get<double>();
  std::cout << fmt::format("  ceiling (best of the above): {:.1f} GFLOP/s\n\n", ceiling);
  if (j.contains("device_gemm")) {
    std::cout << fmt::format("(a') the device's ceiling: {} gemm, {}\n", j["models"][0].value("backend", std::string("device")),
                             j.value("precision", std::string("fp32")));
    for (const auto& g : j["device_gemm"])
      std::cout << fmt::format("  {:>8.1f} GFLOP/s  {:>9.3f} ms  {}\n", g["gflops"].get<double>(), g["seconds"].get<double>() * 1e3,
                               g["shape"].get<std::string>());
    std::cout << fmt::format("  ceiling (best of the above): {:.1f} GFLOP/s; the models' \"of ceil.\" is against it\n",
                             j["device_gemm_ceiling_gflops"].get<double>());
    if (j.contains("device_gemm_bf16_storage")) {
      std::cout << "  stored as float32 (attention's projections) / bf16 in, float32 out / all bf16 (feed-forward, "
                   "logits), alternating rounds:\n";
      for (const auto& g : j["device_gemm"]) {
        if (!g.contains("bf16_storage")) continue;
        const auto& st = g["bf16_storage"];
        std::cout << fmt::format("  {:>8.1f} / {:>8.1f} / {:>8.1f} GFLOP/s  ×{:.2f} / ×{:.2f}  {}\n",
                                 st["float32_gflops"].get<double>(), st["bf16_inputs_gflops"].get<double>(),
                                 st["bf16_gflops"].get<double>(), st["bf16_inputs_speedup"].get<double>(),
                                 st["bf16_speedup"].get<double>(), g["shape"].get<std::string>());
      }
    }
    const auto& g = j.contains("gpu") ? j["gpu"] : nlohmann::ordered_json();
    if (g.contains("peak_tflops") && g["peak_tflops"].is_number())
      std::cout << fmt::format("  peak: {:.1f} TFLOP/s ({}); the ceiling is {:.0f}% of it, the models' \"of peak\" is against it\n",
                               g["peak_tflops"].get<double>(), g["peak_source"].get<std::string>(),
                               100.0 * g["ceiling_fraction_of_peak"].get<double>());
    else if (g.contains("peak_source"))
      std::cout << fmt::format("  peak: {}\n", g["peak_source"].get<std::string>());
    if (j.contains("device_copy")) {
      const auto& copy = j["device_copy"];
      if (copy.contains("gbs"))
        std::cout << fmt::format("  memory: {:.0f} GB/s, {} ({:.3f} ms); (d) holds the element-wise ops against it\n",
                                 copy["gbs"].get<double>(), copy["what"].get<std::string>(), copy["seconds"].get<double>() * 1e3);
      else
        std::cout << fmt::format("  memory: {}\n", copy["what"].get<std::string>());
    }
    std::cout << '\n';
  }

  if (j.contains("models")) {
    const std::string on = j["models"][0].value("backend", "cpu");
    std::cout << fmt::format("(b) the model on random tokens (tokens = source + target tokens per step), backend {}\n", on);
    const bool peak = j["models"][0]["forward"].contains("fraction_of_peak");
    std::cout << fmt::format("  {:<22} {:>10} {:>12} {:>10} {:>10} {:>9}{}\n", "", "ms", "tokens/s", "GFLOP", "GFLOP/s",
                             "of ceil.", peak ? fmt::format(" {:>8}", "of peak") : "");
    for (const auto& md : j["models"]) {
      for (const char* what : {"forward", "train_step"}) {
        const auto& p = md[what];
        // Against the ceiling of the processor the model ran on: (a) for the CPU, (a') for a device.
        const std::string of_ceiling =
            p.contains("fraction_of_ceiling") ? fmt::format("{:>8.0f}%", 100.0 * p["fraction_of_ceiling"].get<double>()) : "      n/a";
        const std::string of_peak =
            p.contains("fraction_of_peak") ? fmt::format(" {:>7.1f}%", 100.0 * p["fraction_of_peak"].get<double>()) : "";
        std::cout << fmt::format("  {:<22} {:>10.1f} {:>12.0f} {:>10.1f} {:>10.1f} {}{}\n",
                                 md["model"].get<std::string>() + (std::string(what) == "forward" ? " fwd" : " step"),
                                 p["seconds"].get<double>() * 1e3, p["tokens_per_s"].get<double>(), p["gflop"].get<double>(),
                                 p["gflops"].get<double>(), of_ceiling, of_peak);
      }
    }
    std::cout << fmt::format("  FLOPs: {}\n\n", j["flop_counting"].get<std::string>());
    const bool on_device = !j["models"].empty() && j["models"][0]["breakdown"].contains("clock");
    const double copy_gbs = j.contains("device_copy") ? j["device_copy"].value("gbs", 0.0) : 0.0;
    std::cout << (on_device ? "(d) where the time goes (device time per op from CUDA events, separately profiled runs)\n"
                            : "(d) where the time goes (exclusive wall time per category, separately profiled runs)\n");
    for (const auto& md : j["models"]) {
      for (const char* what : {"breakdown", "forward_breakdown"}) {
        const auto& bd = md[what];
        if (bd.is_null()) {
          std::cout << fmt::format("  {}: not measured (this backend has no per-op clock)\n", md["model"].get<std::string>());
          break;
        }
        const bool fwd = std::string(what) == "forward_breakdown";
        std::cout << fmt::format("  {} {} ({:.1f} ms per profiled {}{})\n", md["model"].get<std::string>(),
                                 fwd ? "forward" : "training step", bd["seconds_per_step"].get<double>() * 1e3,
                                 fwd ? "forward" : "step",
                                 bd.contains("clock") ? "; " + bd["clock"].get<std::string>() : std::string());
        const bool timed = bd.value("clock", std::string()).rfind("none", 0) != 0;  // emulated: no times
        for (const auto& r : bd["ops"]) {
          if (fwd && r["calls_per_step"].get<double>() == 0 && r["op"].get<std::string>().rfind("optimizer", 0) == 0)
            continue;  // a forward pass has no optimizer
          // On a device: calls per step, the rate of the ops that multiply matrices, and the bandwidth
          // of the others (bytes their contract moves, against the device's copy); emulated: the counts.
          std::string extra;
          if (bd.contains("clock") && r["calls_per_step"].get<double>() > 0) {
            extra = fmt::format("  ×{:g}", r["calls_per_step"].get<double>());
            if (r.contains("gflops")) extra += fmt::format(", {:.1f} TFLOP/s", r["gflops"].get<double>() / 1e3);
            else if (r.value("gflop_per_step", 0.0) > 0) extra += fmt::format(", {:.3g} GFLOP", r["gflop_per_step"].get<double>());
            if (!r.contains("gflops") && r.contains("gbs")) {
              extra += fmt::format(", {:.0f} GB/s", r["gbs"].get<double>());
              if (bench::crosses_bus(r["op"].get<std::string>())) extra += " over the bus";  // not device memory
              else if (copy_gbs > 0) extra += fmt::format(" ({:.0f}% of copy)", 100.0 * r["gbs"].get<double>() / copy_gbs);
            } else if (!timed && r.value("gb_per_step", 0.0) > 0) {
              extra += ", " + human_bytes(r["gb_per_step"].get<double>() * 1e9);
            }
          }
          if (!timed)
            std::cout << fmt::format("    {:>6}  {:>12}  {}{}\n", "—", "—", r["op"].get<std::string>(), extra);
          else
            std::cout << fmt::format("    {:>5.1f}%  {:>9.{}f} ms  {}{}\n", 100.0 * r["share"].get<double>(),
                                     r["seconds_per_step"].get<double>() * 1e3, bd.contains("clock") ? 3 : 1,
                                     r["op"].get<std::string>(), extra);
          // The products per shape, slowest first (the JSON has them all).
          if (r.contains("shapes") && r["shapes"].size() > 1) {
            int shown = 0;
            for (const auto& x : r["shapes"]) {
              if (++shown > 6) {
                std::cout << fmt::format("      {:>21}… {} more shapes in the JSON report\n", "", r["shapes"].size() - 6);
                break;
              }
              std::string rate = x.contains("gflops") ? fmt::format(", {:.1f} TFLOP/s", x["gflops"].get<double>() / 1e3) : "";
              if (timed)
                std::cout << fmt::format("      {:>18.3f} ms  {}  ×{:g}{}\n", x["seconds_per_step"].get<double>() * 1e3,
                                         x["shape"].get<std::string>(), x["calls_per_step"].get<double>(), rate);
              else
                std::cout << fmt::format("      {:>21}  {}  ×{:g}\n", "", x["shape"].get<std::string>(),
                                         x["calls_per_step"].get<double>());
            }
          }
        }
        // What the device must move and multiply per step, and the roofline floor of that work.
        if (bd.contains("device_gb_per_step")) {
          std::string line = fmt::format("    per {}: {} through device memory, {:.4g} GFLOP in products",
                                         fwd ? "forward" : "step", human_bytes(bd["device_gb_per_step"].get<double>() * 1e9),
                                         bd["gflop_per_step"].get<double>());
          if (bd.contains("floor")) {
            // Against the unprofiled time of (b): the profiled run is slowed by its events.
            const double fl = bd["floor"]["seconds_per_step"].get<double>();
            const double t = md[fwd ? "forward" : "train_step"]["seconds"].get<double>();
            line += fmt::format("; floor {:.3f} ms at the copy bandwidth and the gemm ceiling, {:.0f}% of the {:.3f} ms in (b)",
                                fl * 1e3, t > 0 ? 100.0 * fl / t : 0.0, t * 1e3);
          }
          std::cout << line << '\n';
        }
      }
    }
    std::cout << '\n';
  }

  if (j.contains("attention")) {
    const auto& a = j["attention"];
    std::cout << fmt::format("(c) attention alone: {} head(s), d_k = {}, tiles {} × {}; {}\n", a["heads"].get<int>(),
                             a["d_k"].get<int>(), a["block_q"].get<int>(), a["block_k"].get<int>(), a["what"].get<std::string>());
    std::cout << fmt::format("  {:>6}  {:>10} {:>10} {:>10} {:>10}  {:>11} {:>11}\n", "n", "plain fwd", "tiled fwd",
                             "plain bwd", "tiled bwd", "plain mem", "tiled mem");
    for (const auto& r : a["rows"]) {
      const auto& p = r["plain"];
      const auto& t = r["tiled"];
      std::cout << fmt::format("  {:>6}  {:>8.3f}ms {:>8.3f}ms {:>8.3f}ms {:>8.3f}ms  {:>11} {:>11}\n", r["n"].get<int>(),
                               p["forward_s"].get<double>() * 1e3, t["forward_s"].get<double>() * 1e3,
                               p["backward_s"].get<double>() * 1e3, t["backward_s"].get<double>() * 1e3,
                               human_bytes(p["extra_bytes_backward"].get<double>()),
                               human_bytes(t["extra_bytes_backward"].get<double>()));
    }
    std::cout << fmt::format("  memory: {}\n", a["extra_memory"].get<std::string>());
  }
  if (j.contains("device_attention")) {
    const auto& a = j["device_attention"];
    std::cout << fmt::format("(c') attention alone on {}: {}, d_k = {}; {}\n", a["backend"].get<std::string>(),
                             counted(a["heads"].get<int>(), "head"), a["d_k"].get<int>(), a["what"].get<std::string>());
    std::cout << fmt::format("  {:>6}  {:>10} {:>8} {:>10} {:>8}  {:>11} {:>11} {:>14}\n", "n", "forward", "TFLOP/s",
                             "backward", "TFLOP/s", "in + out", "extra", "weights if formed");
    for (const auto& r : a["rows"])
      std::cout << fmt::format("  {:>6}  {:>8.3f}ms {:>8.2f} {:>8.3f}ms {:>8.2f}  {:>11} {:>11} {:>14}\n", r["n"].get<int>(),
                               r["forward_s"].get<double>() * 1e3, r["forward_tflops"].get<double>(),
                               r["backward_s"].get<double>() * 1e3, r["backward_tflops"].get<double>(),
                               human_bytes(r["input_output_bytes"].get<double>()), human_bytes(r["extra_bytes"].get<double>()),
                               human_bytes(r["weights_bytes_if_formed"].get<double>()));
    std::cout << fmt::format("  FLOPs: {}\n", a["flop_counting"].get<std::string>());
  }
  std::cout << fmt::format("  load average at the end: {}\n", m["load_average_at_end"].dump());
}

// The datasheet peak of the GPU for the run's precision (bench/peaks.hpp), and each model point's
// fraction of it: the model FLOPs utilisation. A part not in the table gets "peak_tflops": null.
void add_peak(nlohmann::ordered_json& report, const std::string& device, const std::string& precision) {
  auto& g = report["gpu"];
  const std::optional<bench::Peak> peak = bench::datasheet_peak(device, precision);
  if (!peak) {
    g["peak_tflops"] = nullptr;
    g["peak_source"] = "not in attnlab's datasheet table (src/bench/peaks.cpp): no fraction of peak";
    return;
  }
  g["peak_tflops"] = peak->tflops;
  g["peak_source"] = fmt::format("NVIDIA datasheet, {} {}, dense", peak->part, precision);
  if (report.contains("device_gemm_ceiling_gflops"))
    g["ceiling_fraction_of_peak"] = report["device_gemm_ceiling_gflops"].get<double>() / 1e3 / peak->tflops;
  if (!report.contains("models")) return;
  for (auto& md : report["models"])
    for (const char* what : {"forward", "train_step"}) md[what]["fraction_of_peak"] = md[what]["gflops"].get<double>() / 1e3 / peak->tflops;
}

void run_bench_cmd(const BenchCliOptions& o) {
  // A bad --json-out is said before minutes of measuring, not after.
  if (!o.json_out.empty()) {
    namespace fs = std::filesystem;
    const fs::path parent = fs::path(o.json_out).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec))
      throw InputError("--json-out " + o.json_out + ": no folder " + parent.string() + " to write it in");
    io::check_output_path(o.json_out, io::OutputKind::User, "--json-out");  // a folder, device, FIFO, hard link
  }
  bench::BenchOptions b = to_bench_options(o);
  // The attention sweep's memory, checked before minutes of measuring (round three's item 11: n = 32768
  // ran out of memory at the end of a run under ulimit -v, and 65536 needs 16 GiB for its weights alone).
  if (b.attention_max >= 64) {
    if (o.threads > 0) cpu::set_threads(o.threads);  // the plain backward's scratch is one n·n per thread
    int largest = 64;
    while (largest <= b.attention_max / 2) largest *= 2;
    const MemoryBudget budget = memory_budget();
    const double need = bench::attention_sweep_bytes(b, largest);
    if (budget.bytes > 0 && need > budget.bytes) {
      int fits = 0;
      for (int n = 64; n < largest; n *= 2)
        if (bench::attention_sweep_bytes(b, n) <= budget.bytes) fits = n;
      throw InputError(fmt::format("--attention-max {}: the attention sweep at n = {} needs about {} (the plain path keeps "
                                   "H·n·n weights and an n·n scratch per thread), more than {}; {}",
                                   o.attention_max, largest, human_size(need), budget.what,
                                   fits ? fmt::format("use --attention-max {} or less", fits) : std::string("use --attention-max 0 to skip it")));
    }
  }
  backend::Ops<float>& be = open_backend(o.backend);
  apply_precision(be, o.precision);  // exit 2 on the CPU for tf32/bf16, before any measurement
  b.backend = &be;
  if (be.name() != "cpu" && o.precision == "bf16")
    b.bf16_storage = [repeats = b.repeats](int m, int n, int k, bool trans_b) {
      return backend::cuda_bf16_storage_seconds(m, n, k, trans_b, repeats);
    };
  auto progress = [&](const std::string& s) {
    if (!o.quiet) std::cerr << "bench: " << s << '\n';
  };
  nlohmann::ordered_json report = bench::run_bench(b, progress);
  // The models' and the device ceiling's matrix products (the CPU's sgemm (a) is always fp32).
  report["precision"] = o.precision;
  // No GPU speed is ever reported from this binary's CUDA build when it is the emulator.
  const backend::CudaReport cuda = backend::cuda_report();
  if (!cuda.compiled) {
    report["gpu"] = {{"measured", false}, {"why", "built without CUDA"}};
  } else if (cuda.emulated) {
    report["gpu"] = {{"measured", false},
                     {"why", "CUDA is emulated on the CPU in this build (-DATTNLAB_CUDA=EMULATE), for testing only: no GPU "
                             "speed can be measured"}};
  } else if (be.name() == "cuda" && o.no_models && o.device_attention_max == 0) {
    report["gpu"] = {{"measured", false}, {"why", "--no-models and --device-attention-max 0: nothing ran on the GPU"}};
  } else if (be.name() == "cuda") {
    report["gpu"] = {{"measured", true}, {"device", cuda.device},
                     {"what", std::string(o.no_models ? "" : "the models (b) against the device's own gemm ceiling (a'); ") +
                                  (o.device_attention_max > 0 ? "the device's attention (c'); " : "") +
                                  "(a) and the attention sweep (c) are the CPU's"}};
    add_peak(report, cuda.device, o.precision);
  } else {
    report["gpu"] = {{"measured", false}, {"why", "--backend cpu (give --backend cuda to run the models on the GPU)"}};
  }
  if (!o.json_out.empty())
    io::write_output_file(o.json_out, report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "--json-out");
  if (o.json) {
    std::cout << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    print_text(report);
  }
}

}  // namespace

void setup_bench(CLI::App& app) {
  auto o = std::make_shared<BenchCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench", "Measure this machine: sgemm ceiling, model tokens/s, attention plain vs tiled, per-op time");
  sub->add_option("-c,--config", o->config,
                  "Model shape from data/configs/NAME.json (its \"model\" part), or transformer-base (the default)");
  sub->add_option("--d-model", o->d_model, "Width d_model (with --heads, --layers, --d-ff)")->transform(whole_number(1, 65536));
  sub->add_option("--heads", o->heads, "Attention heads")->transform(whole_number(1, 1024));
  sub->add_option("--layers", o->layers, "Layers per stack (the encoder–decoder has this many of each)")->transform(whole_number(1, 256));
  sub->add_option("--d-ff", o->d_ff, "Feed-forward width")->transform(whole_number(1, 1 << 20));
  sub->add_option("--vocab", o->vocab, "Vocabulary size (default: the config's reference vocabulary, else 37000, the paper's)")->transform(whole_number(5, 1 << 22));
  sub->add_option("--batch", o->batch, "Sequences per batch")->transform(whole_number(1, 65536))->capture_default_str();
  sub->add_option("--seq", o->seq, "Tokens per sequence (source and target)")->transform(whole_number(1, 65536))->capture_default_str();
  sub->add_option("--threads", o->threads, "Threads for OpenBLAS and attnlab's own loops (default: OpenBLAS's own choice)")->transform(whole_number(1, 1024));
  sub->add_option("--repeats", o->repeats, "Timed repetitions after the warm-up (median reported)")
      ->transform(whole_number(1, 1000))->capture_default_str();
  sub->add_option("--attention-max", o->attention_max, "Longest n of the attention sweep (0 = skip it)")
      ->transform(whole_number(0, 1 << 16))->capture_default_str();
  sub->add_option("--device-attention-max", o->device_attention_max,
                  "Longest n of the device's attention sweep, n = 512, 1024, ... (--backend cuda; 0 = skip it)")
      ->transform(whole_number(0, 1 << 17))->capture_default_str();
  sub->add_option("--block-q", o->block_q, "Query rows per tile of the tiled attention")->transform(whole_number(1, 4096))->capture_default_str();
  sub->add_option("--block-k", o->block_k, "Keys per tile of the tiled attention")->transform(whole_number(1, 4096))->capture_default_str();
  sub->add_option("--dropout", o->dropout,
                  "Dropout rate of the models' training-mode forward and step, at the sites training uses it "
                  "(embeddings, each sub-layer's output)")
      ->transform(real_number(0.0, 0.99))->capture_default_str();
  sub->add_flag("--no-models", o->no_models, "Skip the model measurements (ceiling and attention only)");
  add_backend_option(*sub, o->backend);
  add_precision_option(*sub, o->precision);
  sub->add_flag("--json", o->json, "Print the report as JSON");
  sub->add_option("--json-out", o->json_out, "Also write the JSON report to this file (the text report still prints)");
  sub->add_flag("-q,--quiet", o->quiet, "No progress lines on stderr");
  sub->callback([o] { run_bench_cmd(*o); });
}

}  // namespace attnlab::cli
