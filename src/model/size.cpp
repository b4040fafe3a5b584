#include "model/size.hpp"

#include <string>
#include <vector>

#include "util/error.hpp"

namespace attnlab::model {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// "enc.3.ffn.w1" → layer 3 and the rest "ffn.w1"; false when the name is not of that form.
bool split_layer(const std::string& name, const std::string& stack, int& layer, std::string& rest) {
  if (!starts_with(name, stack + ".")) return false;
  const std::size_t a = stack.size() + 1, dot = name.find('.', a);
  if (dot == std::string::npos || dot == a) return false;
  for (std::size_t i = a; i < dot; ++i)
    if (name[i] < '0' || name[i] > '9') return false;
  layer = std::stoi(name.substr(a, dot - a));
  rest = name.substr(dot + 1);
  return true;
}

// Adds a tensor of layer-relative name `rest` to its sub-layer; false when it fits none.
bool add_to_layer(LayerParams& p, const std::string& rest, std::size_t n) {
  if (starts_with(rest, "attn.") || starts_with(rest, "self.")) p.self_attention += n;
  else if (starts_with(rest, "cross.")) p.cross_attention += n;
  else if (starts_with(rest, "ffn.")) p.ffn += n;
  else if (starts_with(rest, "ln")) p.norms += n;
  else return false;
  return true;
}

// Every layer of a stack must have the size of layer 0 (the breakdown reports one layer).
LayerParams same_layers(const std::vector<LayerParams>& layers, const char* stack) {
  if (layers.empty()) return {};
  for (std::size_t l = 1; l < layers.size(); ++l) {
    const LayerParams &a = layers[0], &b = layers[l];
    if (a.self_attention != b.self_attention || a.cross_attention != b.cross_attention || a.ffn != b.ffn ||
        a.norms != b.norms) {
      throw RuntimeError(std::string("count_parameters: ") + stack + " layer " + std::to_string(l) +
                         " differs in size from layer 0; the breakdown no longer matches make_layout");
    }
  }
  return layers[0];
}

}  // namespace

ParamBreakdown count_parameters(const ModelConfig& c) {
  const ParamLayout L = make_layout(c);
  ParamBreakdown p;
  p.decoder_only = c.decoder_only;
  p.tied = c.tie_embeddings;
  p.total = L.total;
  p.encoder_layers = c.decoder_only ? 0 : c.encoder_layers;
  p.decoder_layers = c.decoder_layers;
  std::vector<LayerParams> enc(static_cast<std::size_t>(p.encoder_layers)), dec(static_cast<std::size_t>(p.decoder_layers));
  std::size_t counted = 0;
  for (const TensorInfo& t : L.tensors) {
    const std::size_t n = t.size();
    int layer = -1;
    std::string rest;
    bool ok = true;
    if (t.name == "tok_emb" || t.name == "tgt_emb") p.token_embedding += n;
    else if (t.name == "src_emb") p.source_embedding += n;
    else if (t.name == "out_proj") p.output_projection += n;
    else if (starts_with(t.name, "enc.ln_f.")) p.encoder_final_norm += n;
    else if (starts_with(t.name, "dec.ln_f.")) p.decoder_final_norm += n;
    else if (split_layer(t.name, "enc", layer, rest) && layer < p.encoder_layers) ok = add_to_layer(enc[layer], rest, n);
    else if (split_layer(t.name, "dec", layer, rest) && layer < p.decoder_layers) ok = add_to_layer(dec[layer], rest, n);
    else ok = false;
    if (!ok) throw RuntimeError("count_parameters: tensor \"" + t.name + "\" fits no group; update model/size.cpp");
    counted += n;
  }
  p.encoder_layer = same_layers(enc, "encoder");
  p.decoder_layer = same_layers(dec, "decoder");
  p.encoder = p.encoder_layers * p.encoder_layer.total() + p.encoder_final_norm;
  p.decoder = p.decoder_layers * p.decoder_layer.total() + p.decoder_final_norm;
  if (counted != p.total || p.embeddings() + p.output_projection + p.encoder + p.decoder != p.total)
    throw RuntimeError("count_parameters: the groups do not add up to the layout's total");
  return p;
}

FlopBreakdown count_flops(const ModelConfig& c, int seq) {
  FlopBreakdown f;
  const double C = c.d_model, F = c.d_ff, V = c.vocab_size;
  f.T = seq;
  f.S = c.decoder_only ? 0 : seq;
  const double S = f.S, T = f.T;
  // One attention block with Tq query rows and Tk key/value rows: Q and W_O on the queries, K and V
  // on the keys; then per head Q·Kᵀ (Tq × d_k)·(d_k × Tk) and weights·V (Tq × Tk)·(Tk × d_k), which
  // summed over the H heads is 2·Tq·Tk·C each.
  auto attention_block = [&](double Tq, double Tk) {
    f.projections += 2.0 * (2.0 * Tq * C * C) + 2.0 * (2.0 * Tk * C * C);
    f.attention += 2.0 * (2.0 * Tq * Tk * C);
  };
  auto ffn = [&](double rows) { f.ffn += 2.0 * (2.0 * rows * C * F); };
  if (!c.decoder_only) {
    for (int l = 0; l < c.encoder_layers; ++l) {
      attention_block(S, S);
      ffn(S);
    }
  }
  for (int l = 0; l < c.decoder_layers; ++l) {
    attention_block(T, T);
    if (!c.decoder_only) attention_block(T, S);  // cross-attention: K, V projected from the S encoder rows
    ffn(T);
  }
  f.output = 2.0 * T * C * V;
  return f;
}

}  // namespace attnlab::model
