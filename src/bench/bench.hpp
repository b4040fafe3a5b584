#pragma once
// The measuring behind `attnlab bench`: the sgemm ceiling of this machine, the model's forward and
// training-step speed against that ceiling, attention alone (plain and tiled) over sequence lengths,
// and where a training step's time goes.
//
// FLOP counting (the convention of the Transformer and scaling-law papers): a matrix product
// (m × k)·(k × n) costs 2·m·n·k floating-point operations; only matrix products are counted, every one
// of them, attention's included: per attention block Q, K, V and output projections, the scores Q·Kᵀ
// (2·Tq·Tk·d_k per head, the full rectangle even when a causal mask hides half of it, because the plain
// path computes all of it) and weights·V (the same again); the two feed-forward products; the output
// projection to the vocabulary. A training step counts 3 × the forward (the backward pass does two
// matrix products for each one of the forward: one for the input's gradient, one for the weight's).
// Softmax, layer norm, the loss and Adam are real time but not FLOPs in this count.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "backend/backend.hpp"
#include "model/config.hpp"

namespace attnlab::bench {

struct BenchOptions {
  std::string name = "custom";  // config name, for the report
  model::ModelConfig model;     // encoder_layers = decoder_layers = the benchmark's layer count
  int batch = 16, seq = 128;    // B sequences of T tokens (encoder–decoder: S = T = seq)
  int threads = 0;              // OpenBLAS threads; 0 = leave OpenBLAS's choice
  int repeats = 3;              // timed repetitions after one warm-up; the median is reported
  int attention_max = 4096;     // attention alone for n = 64, 128, … up to this (0 = skip)
  int attention_heads = 1, attention_dk = 64;
  int block_q = 64, block_k = 256;  // tile sizes of the tiled attention
  // The device's own attention kernels (backend->attention_forward/backward, when the backend is not
  // the CPU): n = 512, 1024, … up to this (a smaller value: that n alone; 0 = skip), one sequence of
  // device_attention_heads heads of d_k = attention_dk, no mask.
  int device_attention_max = 16384;
  int device_attention_heads = 16;
  bool models = true;           // measure the models (off: ceiling and attention only)
  // Where the models run (null: the CPU). The sgemm ceiling and the attention sweep are always the
  // CPU's; against another backend the models' "fraction_of_ceiling" is not computed.
  backend::Ops<float>* backend = nullptr;
  // When set (the CLI sets it for --backend cuda --precision bf16): seconds per call of the device's
  // bf16 product (m × k)·(k × n) (B stored n × k when trans_b) with its operands stored as float32
  // (the model's way), as bf16 inputs with a float32 output, and all bf16, measured together in
  // alternating rounds (backend/cuda/matmul.hpp, bf16_storage_seconds). (a') then gives each of the
  // model's shapes all three: what storing activations in bf16 would gain in the products.
  std::function<std::array<double, 3>(int m, int n, int k, bool trans_b)> bf16_storage;
};

// Runs every measurement and returns the report as JSON (the CLI prints it as text or JSON).
// `progress` receives one short line before each stage (may be empty).
nlohmann::ordered_json run_bench(const BenchOptions& o, const std::function<void(const std::string&)>& progress);

// Bytes the attention sweep (c) holds at sequence length n: Q, K, V, the upstream gradient, the output
// and the three input gradients (n × H·d_k each), the plain path's saved weights (H·n·n) and its
// backward scratch (n·n per thread), and the tiled path's workspaces. The sweep's largest n decides
// whether it fits (cmd_bench checks it against the memory budget before any measuring).
double attention_sweep_bytes(const BenchOptions& o, int n);

// Whether a row of a device breakdown (d) is a transfer over the bus to or from the host ("upload",
// "download"), whose bytes are not device-memory traffic.
inline bool crosses_bus(const std::string& op) { return op == "upload" || op == "download"; }

}  // namespace attnlab::bench
