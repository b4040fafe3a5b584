// Fuzz target: the checkpoint reader (model/checkpoint.hpp, format in docs/checkpoint.md) on the
// bytes of a file, through its in-memory entry point parse_checkpoint.
//
// Each input is read twice: as it is, and with its last 8 bytes replaced by the right FNV-1a
// checksum, so that mutations get past the checksum into the header JSON, the config, the
// vocabulary and the tensor table. A bad file must end in an attnlab::Error (InputError naming the
// problem); anything else is a bug, and so is a huge allocation (libFuzzer's -malloc_limit_mb) from a
// small file. On files the reader accepts it checks the promises of checkpoint.hpp (sizes that match
// the config, finite parameters), that checkpoint_to_bytes → parse_checkpoint gives the same
// checkpoint back, and then does what `attnlab translate`/`generate` do with a loaded model
// (tasks::load_model): the vocabulary must pass Vocab::from_json, and small models run a few steps of
// beam search or greedy generation, whose tokens must lie inside the vocabulary.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "backend/cpu/cpu_backend.hpp"
#include "fuzz_support.hpp"
#include "model/checkpoint.hpp"
#include "model/decode.hpp"
#include "model/transformer.hpp"
#include "text/vocab.hpp"
#include "util/rng.hpp"

using namespace attnlab;

namespace {

bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void run_small_model(const model::Checkpoint& ck) {
  const model::ModelConfig& c = ck.config;
  // Models larger than this are legitimate but too slow to run thousands of times a second.
  if (model::parameter_count(c) > 20000 || c.max_len > 16 || c.vocab_size > 64) return;
  model::Transformer<float> net(c, attnlab::backend::cpu_backend<float>());  // InputError for a vocabulary too small for a model
  net.params.upload(ck.params);
  const int V = c.vocab_size;
  auto inside = [&](const std::vector<int>& toks) {
    for (int t : toks) FUZZ_CHECK(t >= 0 && t < V);
  };
  if (c.decoder_only) {
    inside(model::continue_greedy(net, {V - 1}, 4));
    const std::vector<double> lp = model::next_token_logprobs(net, {V - 1});
    FUZZ_CHECK(lp.size() == static_cast<std::size_t>(V));
  } else {
    model::DecodeOptions opt;
    opt.beam = 3;
    opt.max_len = 4;
    opt.record_attention = true;
    const model::Hypothesis h = model::translate(net, {V - 1, 4}, opt);
    inside(h.tokens);
  }
}

void load(std::string_view bytes) {
  fuzz::only_attnlab_errors([&] {
    const model::Checkpoint ck = model::parse_checkpoint(bytes, "fuzz");
    const std::size_t total = model::parameter_count(ck.config);
    FUZZ_CHECK(ck.vocab.size() == static_cast<std::size_t>(ck.config.vocab_size));
    FUZZ_CHECK(ck.params.size() == total);
    FUZZ_CHECK(ck.adam_m.empty() || ck.adam_m.size() == total);
    FUZZ_CHECK(ck.adam_v.empty() || ck.adam_v.size() == total);
    for (float v : ck.params) FUZZ_CHECK(std::isfinite(v));

    const model::Checkpoint again = model::parse_checkpoint(model::checkpoint_to_bytes(ck), "fuzz (rewritten)");
    FUZZ_CHECK(model::model_config_to_json(again.config) == model::model_config_to_json(ck.config));
    FUZZ_CHECK(again.vocab == ck.vocab && again.train_state == ck.train_state && again.meta == ck.meta);
    FUZZ_CHECK(same_floats(again.params, ck.params) && same_floats(again.adam_m, ck.adam_m) &&
               same_floats(again.adam_v, ck.adam_v));

    // As tasks::load_model: the vocabulary must be a valid one before the model is used.
    text::Vocab::from_json({{"format", "attnlab-vocab"}, {"version", text::Vocab::kFormatVersion}, {"tokens", ck.vocab}});
    run_small_model(ck);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  load(bytes);
  if (bytes.size() >= 8) {
    const std::uint64_t sum = fnv1a(std::string_view(bytes).substr(0, bytes.size() - 8));
    std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);  // little-endian, as the format says
    load(bytes);
  }
  return 0;
}
