#pragma once
// The attention of a translation as the explorer's attention sets (render::attention_set): the
// encoder self-attention, the decoder self-attention and the cross-attention of every layer and head,
// as `translate --format json` prints them under "attention" and as training snapshots
// (tasks/snapshots.hpp) record them. One builder, so that the two never differ.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/transformer.hpp"

namespace attnlab::tasks {

// One teacher-forced forward of a batch of one, without dropout: the attention it computed stays in
// `net` (encoder_attention, decoder_self_attention, decoder_cross_attention). `tgt_out` empty: padding.
void forward_one(model::Transformer<float>& net, const std::vector<int>& src, const std::vector<int>& tgt_in,
                 const std::vector<int>& tgt_out = {});

// Re-reads `src` and the model's own output `out` (ids without <bos> or <eos>) teacher forced, which
// gives the attention the decoder used at each step of decoding, and returns the three sets:
// [encoder self-attention, decoder self-attention, cross-attention]. The decoder's rows are the
// French tokens and <eos> (`out_tokens` + "<eos>"); its columns <bos> and the tokens already written.
nlohmann::json translation_attention_sets(model::Transformer<float>& net, const std::vector<int>& src,
                                          const std::vector<std::string>& src_tokens, const std::vector<int>& out,
                                          const std::vector<std::string>& out_tokens);

}  // namespace attnlab::tasks
