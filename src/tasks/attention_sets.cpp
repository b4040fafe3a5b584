#include "tasks/attention_sets.hpp"

#include "render/html_page.hpp"

namespace attnlab::tasks {

namespace {

std::vector<int> all_ids(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

}  // namespace

void forward_one(model::Transformer<float>& net, const std::vector<int>& src, const std::vector<int>& tgt_in,
                 const std::vector<int>& tgt_out) {
  model::Batch b;
  b.B = 1;
  b.src = src;
  b.S = static_cast<int>(src.size());
  if (!src.empty()) b.src_len = {b.S};
  b.tgt_in = tgt_in;
  b.T = static_cast<int>(tgt_in.size());
  b.tgt_out = tgt_out.empty() ? std::vector<int>(tgt_in.size(), model::kPad) : tgt_out;
  net.forward(b, 0.0f, false, nullptr);
}

nlohmann::json translation_attention_sets(model::Transformer<float>& net, const std::vector<int>& src,
                                          const std::vector<std::string>& src_tokens, const std::vector<int>& out,
                                          const std::vector<std::string>& out_tokens) {
  const model::ModelConfig& c = net.config();
  const int H = c.heads, L = c.decoder_layers;
  std::vector<int> tgt_in = {model::kBos};
  tgt_in.insert(tgt_in.end(), out.begin(), out.end());
  forward_one(net, src, tgt_in);
  std::vector<std::string> written = {"<bos>"};
  written.insert(written.end(), out_tokens.begin(), out_tokens.end());
  std::vector<std::string> rows = out_tokens;
  rows.push_back("<eos>");
  std::vector<std::vector<float>> enc, dec, cross;
  for (int l = 0; l < c.encoder_layers; ++l) enc.push_back(net.encoder_attention(l));
  for (int l = 0; l < L; ++l) dec.push_back(net.decoder_self_attention(l)), cross.push_back(net.decoder_cross_attention(l));
  const std::size_t T = rows.size(), S = src.size();
  using render::AttentionSetInfo;
  nlohmann::json sets = nlohmann::json::array();
  AttentionSetInfo e{"encoder self-attention", "self", "each English word gathering from every word of the sentence.",
                     "attending (English)", "attended to (English)", src_tokens, src_tokens, all_ids(c.encoder_layers), all_ids(H)};
  sets.push_back(render::attention_set(e, [&](int l, int hd) { return enc[static_cast<std::size_t>(l)].data() + static_cast<std::size_t>(hd) * S * S; }));
  AttentionSetInfo ds{"decoder self-attention", "causal",
                      "each row is the step that writes that French word, gathering from the words already written (<bos> first).",
                      "word being written", "already written", rows, written, all_ids(L), all_ids(H)};
  sets.push_back(render::attention_set(ds, [&](int l, int hd) { return dec[static_cast<std::size_t>(l)].data() + static_cast<std::size_t>(hd) * T * T; }));
  AttentionSetInfo cr{"cross-attention", "cross", "each row is the step that writes that French word, gathering from the English source.",
                      "French word being written", "English source", rows, src_tokens, all_ids(L), all_ids(H)};
  sets.push_back(render::attention_set(cr, [&](int l, int hd) { return cross[static_cast<std::size_t>(l)].data() + static_cast<std::size_t>(hd) * T * S; }));
  return sets;
}

}  // namespace attnlab::tasks
