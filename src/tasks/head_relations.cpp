#include "tasks/head_relations.hpp"

#include <algorithm>

#include "text/tokenizer.hpp"

namespace attnlab::tasks {

namespace {

// The position of `word` in `tokens` nearest `from` (other than `from` itself); npos when absent.
std::size_t nearest(const std::vector<std::string>& tokens, const std::string& word, std::size_t from) {
  std::size_t best = std::string::npos;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    if (k == from || tokens[k] != word) continue;
    const auto dist = [&](std::size_t x) { return x > from ? x - from : from - x; };
    if (best == std::string::npos || dist(k) < dist(best)) best = k;
  }
  return best;
}

// Word i of `words` (the tokenizer's, folded to lower case) as the positions [first, last) of its
// ids: one id per word for a word vocabulary; for a BPE, the pieces whose text, "##" removed and
// folded, spells the word ("n" + "'" is "n'"). Empty when the pieces do not spell the words.
std::vector<std::pair<std::size_t, std::size_t>> word_spans(const text::Vocab& vocab, const std::vector<int>& ids,
                                                            const std::vector<std::string>& words) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  if (!vocab.bpe()) {
    if (ids.size() != words.size()) return {};
    for (std::size_t k = 0; k < ids.size(); ++k) spans.emplace_back(k, k + 1);
    return spans;
  }
  const std::vector<std::string> labels = vocab.labels_of(std::vector<text::TokenId>(ids.begin(), ids.end()));
  std::size_t k = 0;
  for (const std::string& w : words) {
    const std::size_t first = k;
    std::string spelled;
    while (k < labels.size() && spelled.size() < w.size()) {
      const std::string& piece = labels[k++];
      spelled += text::fold_case(piece.rfind("##", 0) == 0 ? piece.substr(2) : piece);
    }
    if (spelled != w) return {};
    spans.emplace_back(first, k);
  }
  if (k != labels.size()) return {};
  return spans;
}

std::vector<std::size_t> positions(std::pair<std::size_t, std::size_t> span) {
  std::vector<std::size_t> v;
  for (std::size_t k = span.first; k < span.second; ++k) v.push_back(k);
  return v;
}

}  // namespace

// In every encoder head, the row of the focus word ("it", an adjective, bank/apple/trains) against the
// words the generator says decide its translation, and a verb's row against its subject; in every
// cross-attention head, the row that writes the French focus word against the English focus word.
void add_relations(const model::Transformer<float>& net, const text::Vocab& vocab, const corpus::Example& ex, const model::Example& ids,
                   Relations& r) {
  const model::ModelConfig& c = net.config();
  const std::vector<std::string> en = text::tokenize(ex.en), fr = text::tokenize(ex.fr);
  const auto src = word_spans(vocab, ids.src, en), tgt = word_spans(vocab, ids.tgt, fr);
  if (src.empty() || tgt.empty()) return;  // not the sentence the ids came from
  // A word's row is its first piece; a key word is all its pieces (the mass on the word).
  const std::size_t S = ids.src.size(), H = static_cast<std::size_t>(c.heads);
  std::vector<std::size_t> keys;
  auto add_key = [&](std::size_t word) {
    for (std::size_t k : positions(src[word]))
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  };
  auto add = [&](const std::string& relation, std::size_t from) {
    auto& sums = r.enc[relation];
    if (sums.empty()) sums.resize(static_cast<std::size_t>(c.encoder_layers) * H);
    if (keys.empty()) return;
    for (int l = 0; l < c.encoder_layers; ++l) {
      const std::vector<float> a = net.encoder_attention(l);  // H × S × S
      for (std::size_t h = 0; h < H; ++h) sums[static_cast<std::size_t>(l) * H + h].add(a.data() + (h * S + src[from].first) * S, S, keys);
    }
  };
  // Verb → its subject, in every sentence that records one.
  if (!ex.verb_en.empty()) {
    const auto v = std::find(en.begin(), en.end(), ex.verb_en);
    if (v != en.end()) {
      const std::size_t from = static_cast<std::size_t>(v - en.begin()), k = nearest(en, ex.subject_en, from);
      keys.clear();
      if (k != std::string::npos) add_key(k);
      add("subject", from);
    }
  }
  if (ex.focus_en.empty() || ex.context_en.empty()) return;
  const auto row = std::find(en.begin(), en.end(), ex.focus_en);
  if (row == en.end()) return;
  const std::size_t q = static_cast<std::size_t>(row - en.begin());
  keys.clear();
  for (const auto& w : ex.context_en) {
    const std::size_t k = nearest(en, w, q);
    if (k != std::string::npos) add_key(k);
  }
  add(ex.category, q);
  // A coreference sentence's predicate ("... too tired") is the other word that fits only one noun:
  // its key "adj:NOUN|PREDICATE" names it. Does a head link the predicate, rather than "it", to the noun?
  if (ex.category == "coref" && !ex.combos.empty()) {
    const std::string& k = ex.combos.front();
    const auto bar = k.find('|');
    const auto p = bar == std::string::npos ? en.end() : std::find(en.begin(), en.end(), k.substr(bar + 1));
    if (p != en.end()) add("predicate", static_cast<std::size_t>(p - en.begin()));
  }
  // Alignment: decoder position t reads <bos> + fr[0..t) and writes fr[t].
  const auto t_it = std::find(fr.begin(), fr.end(), ex.focus_fr);
  if (t_it == fr.end()) return;
  // Decoder row t writes the first piece of the French focus word; the key is the English one's pieces.
  const std::size_t t = tgt[static_cast<std::size_t>(t_it - fr.begin())].first, T = ids.tgt.size() + 1;
  if (r.align.empty()) r.align.resize(static_cast<std::size_t>(c.decoder_layers) * H);
  for (int l = 0; l < c.decoder_layers; ++l) {
    const std::vector<float> a = net.decoder_cross_attention(l);  // H × T × S
    for (std::size_t h = 0; h < H; ++h) r.align[static_cast<std::size_t>(l) * H + h].add(a.data() + (h * T + t) * S, S, positions(src[q]));
  }
}

nlohmann::json relations_json(const Relations& rel, const model::ModelConfig& c) {
  const std::size_t H = static_cast<std::size_t>(c.heads);
  nlohmann::json jr = nlohmann::json::array(), jalign = nlohmann::json::array();
  auto sums_json = [](const model::RelationSums& r) {
    return nlohmann::json{{"mass", r.mean_mass()}, {"chance", r.mean_chance()}, {"top1", r.hit_rate()}, {"rows", r.n}};
  };
  if (!rel.enc.empty()) {
    for (std::size_t k = 0; k < static_cast<std::size_t>(c.encoder_layers) * H; ++k) {
      nlohmann::json e = {{"block", "enc"}, {"layer", k / H}, {"head", k % H}};
      for (const auto& [name, v] : rel.enc) e[name] = sums_json(v[k]);
      jr.push_back(e);
    }
  }
  for (std::size_t k = 0; k < rel.align.size(); ++k) {
    nlohmann::json e = {{"block", "cross"}, {"layer", k / H}, {"head", k % H}};
    e.update(sums_json(rel.align[k]));
    e["alignment_error_rate"] = 1.0 - rel.align[k].hit_rate();
    jalign.push_back(e);
  }
  return {{"relations", jr}, {"alignment", jalign}};
}

}  // namespace attnlab::tasks
