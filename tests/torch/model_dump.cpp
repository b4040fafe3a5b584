// Test helper for tests/torch/crosscheck_transformer.py: builds a tiny model (float32, the real code
// path) from a seed, runs one forward and backward pass on a fixed padded batch, and prints JSON with
// the config, every parameter by name, the batch, the logits, the loss and every gradient.
#include <cstdlib>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.hpp"
#include "model/transformer.hpp"

using namespace attnlab::model;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: attnlab_model_dump '<model config JSON>'\n";
    return 2;
  }
  const nlohmann::json cj = nlohmann::json::parse(argv[1]);
  const ModelConfig cfg = model_config_from_json(cj, "config");
  Transformer<float> m(cfg, attnlab::backend::cpu_backend<float>());
  m.init_params(2026);
  // Perturb the 1-D tensors (biases, norm gains) so that the mapping of each one is exercised.
  std::uint64_t s = 5;
  std::vector<float> params = m.params.download();
  for (const auto& t : m.layout().tensors)
    if (t.shape.size() == 1)
      for (std::size_t i = 0; i < t.size(); ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        params[t.offset + i] += static_cast<float>(static_cast<double>(s >> 40) / (1ull << 24) - 0.5) * 0.4f;
      }
  m.params.upload(params);
  Batch b;
  b.B = 3;
  b.T = 5;
  const int V = cfg.vocab_size;
  auto tok = [&](int i) { return 4 + (i * 7) % (V - 4); };
  b.tgt_in = {kBos, tok(1), tok(2), tok(3), tok(4), kBos, tok(5), tok(6), kPad, kPad, kBos, tok(7), tok(8), tok(9), kPad};
  b.tgt_out = {tok(1), tok(2), tok(3), tok(4), kEos, tok(5), tok(6), kEos, kPad, kPad, tok(7), tok(8), tok(9), kEos, kPad};
  if (!cfg.decoder_only) {
    b.S = 4;
    b.src = {tok(10), tok(11), tok(12), tok(13), tok(14), tok(15), kPad, kPad, tok(16), tok(17), tok(18), kPad};
    b.src_len = {4, 2, 3};
  }
  const float loss = m.forward(b, 0.1f, false, nullptr);
  m.backward();
  nlohmann::json out;
  out["config"] = model_config_to_json(cfg);
  out["batch"] = {{"B", b.B}, {"S", b.S}, {"T", b.T}, {"src", b.src}, {"src_len", b.src_len},
                  {"tgt_in", b.tgt_in}, {"tgt_out", b.tgt_out}};
  out["loss"] = loss;
  out["logits"] = m.logits();
  const std::vector<float> grads = m.grads.download();
  for (const auto& t : m.layout().tensors) {
    out["params"][t.name] = {{"shape", t.shape},
                             {"data", std::vector<float>(params.begin() + t.offset, params.begin() + t.offset + t.size())}};
    out["grads"][t.name] = std::vector<float>(grads.begin() + t.offset, grads.begin() + t.offset + t.size());
  }
  std::cout << out.dump() << '\n';
  return 0;
}
