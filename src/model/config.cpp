#include "model/config.hpp"

#include <unistd.h>

#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/json_text.hpp"
#include "util/error.hpp"

namespace attnlab::model {

namespace {
int get_int(const nlohmann::json& j, const char* key, int def, int lo, int hi, const std::string& where) {
  if (!j.contains(key)) return def;
  const auto& v = j[key];
  if (!v.is_number_integer()) throw InputError(where + "." + key + ": expected an integer, got " + io::json_brief(v));
  const auto x = v.get<long long>();
  if (x < lo || x > hi) {
    throw InputError(where + "." + key + ": " + std::to_string(x) + " is out of range [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  }
  return static_cast<int>(x);
}
}  // namespace

ModelConfig model_config_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object");
  static const std::set<std::string> known = {"decoder_only", "vocab_size", "d_model", "heads", "d_ff",
                                              "encoder_layers", "decoder_layers", "max_len", "dropout", "norm",
                                              "tie_embeddings"};
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) throw InputError(where + ": unknown field \"" + k + "\"");
  ModelConfig c;
  if (j.contains("decoder_only")) {
    if (!j["decoder_only"].is_boolean()) throw InputError(where + ".decoder_only: expected true or false");
    c.decoder_only = j["decoder_only"].get<bool>();
  }
  c.vocab_size = get_int(j, "vocab_size", 0, 0, 10'000'000, where);
  c.d_model = get_int(j, "d_model", c.d_model, 1, 65536, where);
  c.heads = get_int(j, "heads", c.heads, 1, 1024, where);
  c.d_ff = get_int(j, "d_ff", c.d_ff, 1, 1 << 20, where);
  c.encoder_layers = get_int(j, "encoder_layers", c.encoder_layers, 0, 1024, where);
  c.decoder_layers = get_int(j, "decoder_layers", c.decoder_layers, 1, 1024, where);
  c.max_len = get_int(j, "max_len", c.max_len, 2, 1 << 20, where);
  if (j.contains("dropout")) {
    if (!j["dropout"].is_number()) throw InputError(where + ".dropout: expected a number in [0, 1)");
    c.dropout = j["dropout"].get<float>();
  }
  if (j.contains("norm")) {
    const std::string n = j["norm"].is_string() ? j["norm"].get<std::string>() : "";
    if (n != "post" && n != "pre") throw InputError(where + ".norm: expected \"post\" or \"pre\", got " + io::json_brief(j["norm"]));
    c.pre_norm = n == "pre";
  }
  if (j.contains("tie_embeddings")) {
    if (!j["tie_embeddings"].is_boolean()) throw InputError(where + ".tie_embeddings: expected true or false");
    c.tie_embeddings = j["tie_embeddings"].get<bool>();
  }
  validate(c, where);
  return c;
}

void validate(const ModelConfig& c, const std::string& where) {
  if (c.d_model % c.heads != 0) {
    throw InputError(where + ": heads = " + std::to_string(c.heads) + " does not divide d_model = " +
                     std::to_string(c.d_model));
  }
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f)) {
    throw InputError(where + ".dropout: " + std::to_string(c.dropout) + " is not in [0, 1)");
  }
  if (!c.decoder_only && c.encoder_layers < 1) throw InputError(where + ".encoder_layers: an encoder–decoder needs at least 1");
}

nlohmann::json model_config_to_json(const ModelConfig& c) {
  return {{"decoder_only", c.decoder_only}, {"vocab_size", c.vocab_size},   {"d_model", c.d_model},
          {"heads", c.heads},               {"d_ff", c.d_ff},               {"encoder_layers", c.decoder_only ? 0 : c.encoder_layers},
          {"decoder_layers", c.decoder_layers}, {"max_len", c.max_len},     {"dropout", c.dropout},
          {"norm", c.pre_norm ? "pre" : "post"}, {"tie_embeddings", c.tie_embeddings}};
}

ParamLayout make_layout(const ModelConfig& c) {
  ParamLayout L;
  const int C = c.d_model, F = c.d_ff, V = c.vocab_size;
  auto add = [&](const std::string& name, std::vector<int> shape) {
    TensorInfo t{name, std::move(shape), L.total};
    L.total += t.size();
    L.tensors.push_back(std::move(t));
    return L.tensors.back().offset;
  };
  auto attn = [&](const std::string& p) {
    AttnLayout a{};
    a.wq = add(p + ".wq", {C, C});
    a.bq = add(p + ".bq", {C});
    a.wk = add(p + ".wk", {C, C});
    a.bk = add(p + ".bk", {C});
    a.wv = add(p + ".wv", {C, C});
    a.bv = add(p + ".bv", {C});
    a.wo = add(p + ".wo", {C, C});
    a.bo = add(p + ".bo", {C});
    return a;
  };
  auto norm = [&](const std::string& p) { return NormLayout{add(p + ".g", {C}), add(p + ".b", {C})}; };
  auto ffn = [&](const std::string& p) {
    return FfnLayout{add(p + ".w1", {C, F}), add(p + ".b1", {F}), add(p + ".w2", {F, C}), add(p + ".b2", {C})};
  };

  L.tok_emb = add(c.tie_embeddings || c.decoder_only ? "tok_emb" : "tgt_emb", {V, C});
  if (!c.tie_embeddings && !c.decoder_only) L.src_emb = add("src_emb", {V, C});
  if (!c.tie_embeddings) L.out_proj = add("out_proj", {C, V});
  if (!c.decoder_only) {
    for (int l = 0; l < c.encoder_layers; ++l) {
      const std::string p = "enc." + std::to_string(l);
      EncoderLayerLayout e{};
      e.attn = attn(p + ".attn");
      e.ln1 = norm(p + ".ln1");
      e.ffn = ffn(p + ".ffn");
      e.ln2 = norm(p + ".ln2");
      L.enc.push_back(e);
    }
    L.enc_norm = norm("enc.ln_f");
  }
  for (int l = 0; l < c.decoder_layers; ++l) {
    const std::string p = "dec." + std::to_string(l);
    DecoderLayerLayout d{};
    d.self_attn = attn(p + ".self");
    d.ln1 = norm(p + ".ln1");
    if (!c.decoder_only) {
      d.cross_attn = attn(p + ".cross");
      d.ln2 = norm(p + ".ln2");
      d.ffn = ffn(p + ".ffn");
      d.ln3 = norm(p + ".ln3");
    } else {
      d.ffn = ffn(p + ".ffn");
      d.ln2 = norm(p + ".ln2");
    }
    L.dec.push_back(d);
  }
  L.dec_norm = norm("dec.ln_f");
  return L;
}

std::size_t parameter_count(const ModelConfig& c) { return make_layout(c).total; }

double estimate_training_bytes(const ModelConfig& c, double batch, double seq) {
  const double params = static_cast<double>(parameter_count(c));
  const double tokens = batch * seq, C = c.d_model, F = c.d_ff, H = c.heads, V = c.vocab_size;
  // Decoder layers hold two attention blocks (self and cross); the encoder's, one.
  const double blocks = (c.decoder_only ? 0.0 : c.encoder_layers) + 2.0 * c.decoder_layers;
  const double layers = (c.decoder_only ? 0.0 : c.encoder_layers) + c.decoder_layers;
  const double per_block = tokens * 12.0 * C + 2.0 * batch * H * seq * seq;  // projections, norms; weights
  const double per_ffn = tokens * (2.0 * F + 2.0 * C);
  const double activations = blocks * per_block + layers * per_ffn + 3.0 * tokens * V;  // logits, probs, grads
  return 4.0 * (4.0 * params + 2.0 * activations);  // float32; backward buffers mirror the forward ones
}

void check_fits_in_memory(const ModelConfig& c, double batch, double seq, const std::string& what, const std::string& fix) {
  const double need = estimate_training_bytes(c, batch, seq);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;  // unknown: let the allocation decide
  const double have = static_cast<double>(pages) * static_cast<double>(page);
  if (need <= 0.8 * have) return;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  throw InputError(fmt::format("{} needs about {:.1f} GiB for one training step, more than the {:.1f} GiB (80 %) of this "
                               "machine's {:.1f} GiB of memory that one run may take; {}",
                               what, need / gib, 0.8 * have / gib, have / gib, fix));
}

}  // namespace attnlab::model
