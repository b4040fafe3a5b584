// `attnlab params`' numbers: the parameter breakdown (model/size.hpp) against the model itself and
// against a closed-form formula written independently of make_layout; the FLOP count against the
// closed form (the benchmark uses the same count); the run configs' "reference" block.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.hpp"
#include "model/checkpoint.hpp"
#include "model/size.hpp"
#include "model/transformer.hpp"
#include "tasks/task.hpp"
#include "util/error.hpp"

using namespace attnlab;
using namespace attnlab::model;

namespace {

std::string config_path(const std::string& name) {
  return std::string(ATTNLAB_SOURCE_DIR) + "/data/configs/" + name + ".json";
}

ModelConfig with_vocab(ModelConfig c, int V) {
  c.vocab_size = V;
  return c;
}

// The count written out from the architecture, not from make_layout: per attention block W_Q, W_K,
// W_V, W_O and their biases; per FFN two matrices and biases; per LayerNorm gain and bias; encoder
// layers have 1 attention + 2 norms, decoder layers (encoder–decoder) 2 attentions + 3 norms,
// decoder-only layers 1 attention + 2 norms; each stack ends in a LayerNorm; 1 embedding matrix when
// tied, else source + target + output (encoder–decoder) or token + output (decoder-only).
std::int64_t formula(const ModelConfig& c) {
  const std::int64_t C = c.d_model, F = c.d_ff, V = c.vocab_size;
  const std::int64_t attn = 4 * C * C + 4 * C, ffn = 2 * C * F + F + C, ln = 2 * C;
  std::int64_t n = 0;
  if (c.decoder_only) {
    n += c.decoder_layers * (attn + ffn + 2 * ln) + ln;
    n += (c.tie_embeddings ? 1 : 2) * V * C;
  } else {
    n += c.encoder_layers * (attn + ffn + 2 * ln) + ln;
    n += c.decoder_layers * (2 * attn + ffn + 3 * ln) + ln;
    n += (c.tie_embeddings ? 1 : 3) * V * C;
  }
  return n;
}

}  // namespace

TEST_CASE("the parameter breakdown adds up to what the model allocates, for small configs") {
  for (const char* name : {"tiny-test", "translate-small", "lm-small"}) {
    tasks::RunConfig run = tasks::load_run_config(config_path(name));
    for (bool tied : {true, false}) {
      for (bool pre : {false, true}) {
        ModelConfig c = with_vocab(run.model, 97);
        c.tie_embeddings = tied;
        c.pre_norm = pre;
        INFO(name << " tied " << tied << " pre-norm " << pre);
        const ParamBreakdown p = count_parameters(c);
        const Transformer<float> net(c, attnlab::backend::cpu_backend<float>());
        CHECK(p.total == net.params.size());
        CHECK(p.total == make_layout(c).total);
        CHECK(static_cast<std::int64_t>(p.total) == formula(c));
        CHECK(p.embeddings() + p.output_projection + p.encoder + p.decoder == p.total);
        CHECK(p.output_projection == (tied ? 0u : 97u * c.d_model));
      }
    }
  }
}

TEST_CASE("the shipped checkpoints hold exactly the counted parameters") {
  for (const char* dir : {"translate-small", "lm-small", "lm-english"}) {
    const std::string file = std::string(ATTNLAB_SOURCE_DIR) + "/data/models/" + dir + "/model.ckpt";
    if (!std::filesystem::exists(file)) continue;  // the models are optional in a source tree
    const Checkpoint ck = load_checkpoint(file);
    INFO(dir);
    CHECK(count_parameters(ck.config).total == ck.params.size());
  }
}

TEST_CASE("the paper's and GPT-2's sizes: breakdown, closed form and the known totals") {
  const ModelConfig base = with_vocab(tasks::load_run_config(config_path("transformer-base")).model, 37000);
  const ModelConfig big = with_vocab(tasks::load_run_config(config_path("transformer-big")).model, 37000);
  const ModelConfig gpt2 = with_vocab(tasks::load_run_config(config_path("gpt2-small")).model, 50257);
  for (const ModelConfig* c : {&base, &big, &gpt2}) CHECK(static_cast<std::int64_t>(count_parameters(*c).total) == formula(*c));

  const ParamBreakdown pb = count_parameters(base);
  CHECK(pb.total == 63'084'544u);  // the paper reports 65M (see docs/params.md)
  CHECK(pb.token_embedding == 37000u * 512u);
  CHECK(pb.encoder_layer.self_attention == 4u * 512 * 512 + 4 * 512);
  CHECK(pb.encoder_layer.ffn == 2u * 512 * 2048 + 2048 + 512);
  CHECK(pb.encoder_layer.norms == 2u * 2 * 512);
  CHECK(pb.decoder_layer.cross_attention == pb.decoder_layer.self_attention);
  CHECK(pb.decoder_layer.norms == 3u * 2 * 512);
  CHECK(pb.output_projection == 0u);

  CHECK(count_parameters(big).total == 214'249'472u);  // the paper reports 213M

  // GPT-2 small's released checkpoint has 124,439,808 parameters, of which 1024 × 768 are its learned
  // position table; attnlab's positions are sinusoidal, so its count is that much smaller.
  CHECK(count_parameters(gpt2).total + 1024u * 768u == 124'439'808u);
  CHECK(count_parameters(gpt2).decoder_layer.cross_attention == 0u);
}

TEST_CASE("the FLOP count agrees with the closed form, and scales as it should") {
  const ModelConfig base = with_vocab(tasks::load_run_config(config_path("transformer-base")).model, 37000);
  const ModelConfig gpt2 = with_vocab(tasks::load_run_config(config_path("gpt2-small")).model, 50257);
  for (int T : {1, 37, 128}) {
    const FlopBreakdown f = count_flops(base, T);
    // Encoder–decoder, S = T, written out per layer: an attention block with Tq query and Tk key rows
    // costs 4·Tq·C² (Q, W_O) + 4·Tk·C² (K, V) + 4·Tq·Tk·C (Q·Kᵀ, weights·V); a feed-forward 4·rows·C·F;
    // the output projection 2·T·C·V. (`attnlab bench` uses this same count, so it is checked here.)
    const double C = 512, F = 2048, V = 37000, S = T, t = T, L = 6;
    const double encoder = L * ((4 * S * C * C + 4 * S * C * C + 4 * S * S * C) + 4 * S * C * F);
    const double decoder = L * ((4 * t * C * C + 4 * t * C * C + 4 * t * t * C) +
                                (4 * t * C * C + 4 * S * C * C + 4 * t * S * C) + 4 * t * C * F);
    CHECK(f.forward() == doctest::Approx(encoder + decoder + 2 * t * C * V).epsilon(1e-12));
    CHECK(f.training() == 3.0 * f.forward());
    CHECK(f.tokens() == 2 * T);
  }
  // Decoder-only: 2 FLOPs per multiplying parameter and token (every matrix but the embedding lookup,
  // with the tied output projection counted once) plus attention's 4·T·C per layer and token.
  const ParamBreakdown p = count_parameters(gpt2);
  const double C = 768, T = 1024, L = 12;
  const double matrix_params = L * (4 * C * C + 2 * C * 3072) + 50257 * C;
  const FlopBreakdown f = count_flops(gpt2, 1024);
  CHECK(f.forward() / T == doctest::Approx(2 * matrix_params + L * 4 * T * C).epsilon(1e-12));
  CHECK(f.S == 0);
  CHECK(p.decoder_layers == 12);
}

TEST_CASE("every shipped run config parses; the reference block is checked field by field") {
  for (const auto& e : std::filesystem::directory_iterator(std::string(ATTNLAB_SOURCE_DIR) + "/data/configs")) {
    INFO(e.path().string());
    CHECK_NOTHROW(tasks::load_run_config(e.path().string()));
  }
  const tasks::RunConfig g = tasks::load_run_config(config_path("gpt2-small"));
  REQUIRE(g.reference);
  CHECK(g.reference->vocab_size == 50257);
  CHECK(g.reference->learned_positions);
  CHECK(g.reference->gelu);
  CHECK(g.model.decoder_only);
  CHECK_FALSE(tasks::load_run_config(config_path("translate-small")).reference);

  nlohmann::json j = {{"task", "translate"}, {"reference", {{"model", "x"}, {"vocab_size", 100}}}};
  CHECK(tasks::run_config_from_json(j, "cfg").reference->vocab_size == 100);
  auto bad = [&](const nlohmann::json& ref, const std::string& needle) {
    nlohmann::json k = {{"task", "translate"}, {"reference", ref}};
    INFO(ref.dump());
    try {
      tasks::run_config_from_json(k, "cfg");
      FAIL("accepted");
    } catch (const InputError& err) {
      CHECK(std::string(err.what()).find(needle) != std::string::npos);
    }
  };
  bad(nlohmann::json::array(), "cfg.reference: expected an object");
  bad({{"vocab_size", 100}}, "cfg.reference.model");
  bad({{"model", "x"}, {"vocab_size", 3}}, "too small");
  bad({{"model", "x"}, {"vocab_size", "big"}}, "cfg.reference.vocab_size");
  bad({{"model", "x"}, {"reported_params", -1}}, "cfg.reference.reported_params");
  bad({{"model", "x"}, {"positions", "rotary"}}, "cfg.reference.positions");
  bad({{"model", "x"}, {"activation", "swish"}}, "cfg.reference.activation");
  bad({{"model", "x"}, {"colour", "red"}}, "unknown field \"colour\"");
}
