#pragma once
// The relation probes of a translation model's heads (docs/heads.md): where the generated corpus knows
// which words a word depends on (corpus::Example: a verb's subject, the noun "it" refers to, an
// adjective's noun, the context that settles a word's sense), how much attention each encoder head
// puts there, and how well each cross-attention head aligns the French focus word with the English
// word it translates. Used by `attnlab heads` and lesson 10.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus/corpus.hpp"
#include "model/probes.hpp"
#include "text/vocab.hpp"

namespace attnlab::tasks {

struct Relations {
  // [relation][encoder head, layer-major]: "subject", "coref", "predicate", "agreement", "sense"
  std::map<std::string, std::vector<model::RelationSums>> enc;
  std::vector<model::RelationSums> align;  // [decoder layer · H + head]
};

// Adds one test example's relations from the model's last forward of it (teacher forced, batch of 1:
// `ids` is the example the forward ran, in `vocab`'s ids). Words are found in `ids` through the
// vocabulary: one id each for a word vocabulary, a first piece and its "##" continuations for a BPE
// (a word's row is its first piece; the mass on a word sums all its pieces). Sentences whose words do
// not match `ids` are skipped.
void add_relations(const model::Transformer<float>& net, const text::Vocab& vocab, const corpus::Example& ex, const model::Example& ids,
                   Relations& r);

// The measures as `attnlab heads --format json` prints them: "relations", one entry per encoder head
// ({"block": "enc", "layer", "head", and per relation {"mass", "chance", "top1", "rows"}}; empty when
// no relation was seen), and "alignment", one per cross-attention head ({"block": "cross", "layer",
// "head", "mass", "chance", "top1", "rows", "alignment_error_rate"}: 1 − top1).
nlohmann::json relations_json(const Relations& r, const model::ModelConfig& c);

}  // namespace attnlab::tasks
