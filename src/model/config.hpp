#pragma once
// Model hyper-parameters and the layout of every parameter tensor in one flat buffer.
//
// Shape legend: V vocabulary, C d_model, H heads, F d_ff, L layers, max_len positions.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attnlab::model {

struct ModelConfig {
  bool decoder_only = false;   // causal language model (GPT-like) instead of encoder–decoder
  int vocab_size = 0;          // V (shared by source and target: one vocabulary)
  int d_model = 64;            // C
  int heads = 4;               // H (must divide C)
  int d_ff = 256;              // F
  int encoder_layers = 2;      // ignored when decoder_only
  int decoder_layers = 2;
  int max_len = 64;            // longest sequence, positions 0 … max_len − 1
  float dropout = 0.1f;
  bool pre_norm = false;       // false: the paper's post-norm LayerNorm(x + Sublayer(x))
  bool tie_embeddings = true;  // one V × C matrix for source, target and output projection
  float ln_eps = 1e-5f;
};

// Reads {"decoder_only", "vocab_size", "d_model", "heads", "d_ff", "encoder_layers", "decoder_layers",
// "max_len", "dropout", "norm": "post"|"pre", "tie_embeddings"}; unknown keys and bad values throw
// InputError naming the field (prefixed with `where`).
ModelConfig model_config_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json model_config_to_json(const ModelConfig& c);
// Throws InputError when the numbers do not fit together (e.g. heads not dividing d_model).
void validate(const ModelConfig& c, const std::string& where);

// One named tensor inside the flat parameter buffer.
struct TensorInfo {
  std::string name;                 // e.g. "enc.0.attn.wq"
  std::vector<int> shape;           // e.g. {C, C}
  std::size_t offset = 0;           // in elements
  std::size_t size() const {
    std::size_t n = 1;
    for (int d : shape) n *= static_cast<std::size_t>(d);
    return n;
  }
};

// Offsets of one attention block's tensors (W is C × C, b is C).
struct AttnLayout {
  std::size_t wq, bq, wk, bk, wv, bv, wo, bo;
};
struct FfnLayout {
  std::size_t w1, b1, w2, b2;  // C × F, F, F × C, C
};
struct NormLayout {
  std::size_t g, b;  // C, C
};
struct EncoderLayerLayout {
  AttnLayout attn;
  NormLayout ln1;
  FfnLayout ffn;
  NormLayout ln2;
};
struct DecoderLayerLayout {
  AttnLayout self_attn;
  NormLayout ln1;
  AttnLayout cross_attn;  // unused (zero-size) in a decoder-only model
  NormLayout ln2;
  FfnLayout ffn;
  NormLayout ln3;         // unused in a decoder-only model (its FFN norm is ln2)
};

struct ParamLayout {
  std::vector<TensorInfo> tensors;
  std::size_t total = 0;
  std::size_t tok_emb = 0;   // V × C; with tie_embeddings the only embedding
  std::size_t src_emb = 0;   // V × C (untied encoder–decoder only)
  std::size_t out_proj = 0;  // C × V (untied only)
  std::vector<EncoderLayerLayout> enc;
  NormLayout enc_norm{};
  std::vector<DecoderLayerLayout> dec;
  NormLayout dec_norm{};
};

ParamLayout make_layout(const ModelConfig& c);

// Parameter count and the FLOPs of one training token (forward + backward ≈ 3 × forward, counting
// 2 per multiply–add of every matrix product) at sequence length `seq` (for attention's share).
std::size_t parameter_count(const ModelConfig& c);

// A rough estimate, in bytes, of what one training step at `batch` sequences of `seq` tokens holds
// in memory: parameters, gradients and the two Adam moments, the activations kept for the backward
// pass (and their gradients), and the logits over the vocabulary. Meant to be within a small factor.
double estimate_training_bytes(const ModelConfig& c, double batch, double seq);

// Throws InputError when estimate_training_bytes exceeds 80 % of this machine's physical memory, so
// that a batch or model that cannot fit is refused with a message instead of being killed by the
// kernel's OOM killer half-way. `what` names the settings ("train.batch_size = 1000000 with
// model.max_len = 40"), `fix` says what to lower.
void check_fits_in_memory(const ModelConfig& c, double batch, double seq, const std::string& what, const std::string& fix);

}  // namespace attnlab::model
