#include "text/vocab.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "text/bpe.hpp"
#include "text/tokenizer.hpp"
#include "io/json_text.hpp"
#include "util/error.hpp"

namespace attnlab::text {

Vocab::Vocab() {
  for (std::string_view s : kSpecials) add(s);
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& token_streams, std::size_t min_count) {
  std::map<std::string, std::size_t, std::less<>> counts;
  for (const auto& stream : token_streams)
    for (const auto& tok : stream) ++counts[tok];
  std::vector<std::pair<std::string, std::size_t>> ordered(counts.begin(), counts.end());
  // Most frequent first (small ids for common words make printed id sequences easier to read);
  // std::map already gives byte order, and stable_sort keeps it for equal counts.
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  Vocab v;
  for (const auto& [word, count] : ordered)
    if (count >= std::max<std::size_t>(min_count, 1)) v.add(word);
  return v;
}

TokenId Vocab::add(std::string_view word) {
  if (const auto it = ids_.find(word); it != ids_.end()) return it->second;
  const auto id = static_cast<TokenId>(words_.size());
  words_.emplace_back(word);
  ids_.emplace(std::string(word), id);
  return id;
}

TokenId Vocab::id(std::string_view word) const {
  const auto it = ids_.find(word);
  return it == ids_.end() ? kUnk : it->second;
}

bool Vocab::contains(std::string_view word) const { return ids_.find(word) != ids_.end(); }

const std::string& Vocab::word(TokenId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= words_.size())
    throw InputError(fmt::format("token id {} is outside the vocabulary (ids 0 to {})", id, words_.size() - 1));
  return words_[static_cast<std::size_t>(id)];
}

std::vector<TokenId> Vocab::encode(std::string_view sentence, std::vector<std::string>* unknown_words) const {
  if (bpe_) return bpe_->encode(sentence);  // never unknown
  return encode_tokens(tokenize(sentence), unknown_words);
}

std::vector<TokenId> Vocab::encode_tokens(const std::vector<std::string>& tokens,
                                          std::vector<std::string>* unknown_words) const {
  std::vector<TokenId> ids;
  ids.reserve(tokens.size());
  for (const auto& tok : tokens) {
    const TokenId i = id(tok);
    if (i == kUnk && unknown_words &&
        std::find(unknown_words->begin(), unknown_words->end(), tok) == unknown_words->end())
      unknown_words->push_back(tok);
    ids.push_back(i);
  }
  return ids;
}

std::vector<std::string> Vocab::tokens_of(const std::vector<TokenId>& ids) const {
  if (bpe_) return labels_of(ids);
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (TokenId i : ids) out.push_back(word(i));
  return out;
}

std::string Vocab::decode(const std::vector<TokenId>& ids) const {
  if (bpe_) return bpe_->decode(ids);
  std::vector<std::string> toks;
  for (TokenId i : ids) {
    if (i == kEos) break;
    if (i == kPad || i == kBos) continue;
    toks.push_back(word(i));
  }
  return detokenize(toks);
}

nlohmann::json Vocab::to_json() const {
  return {{"format", "attnlab-vocab"}, {"version", kFormatVersion}, {"tokens", words_}};
}

Vocab Vocab::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw InputError("vocabulary: expected a JSON object with \"format\", \"version\" and \"tokens\"");
  if (!j.contains("format") || j["format"] != "attnlab-vocab")
    throw InputError("vocabulary: \"format\" must be \"attnlab-vocab\"");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != kFormatVersion)
    throw InputError(fmt::format("vocabulary: unsupported \"version\" {} (this attnlab reads version {})",
                                 j.contains("version") ? io::json_brief(j["version"]) : "(missing)", kFormatVersion));
  if (!j.contains("tokens") || !j["tokens"].is_array())
    throw InputError("vocabulary: \"tokens\" must be an array of strings");
  const auto& toks = j["tokens"];
  if (toks.size() < kSpecials.size())
    throw InputError(fmt::format("vocabulary: \"tokens\" has {} entries; the {} special tokens alone need {}",
                                 toks.size(), kSpecials.size(), kSpecials.size()));
  Vocab v;
  v.words_.clear();
  v.ids_.clear();
  for (std::size_t i = 0; i < toks.size(); ++i) {
    if (!toks[i].is_string()) throw InputError(fmt::format("vocabulary: tokens[{}] is not a string", i));
    const std::string w = toks[i].get<std::string>();
    if (w.empty()) throw InputError(fmt::format("vocabulary: tokens[{}] is empty", i));
    if (i < kSpecials.size() && w != kSpecials[i])
      throw InputError(fmt::format("vocabulary: tokens[{}] must be \"{}\" (found \"{}\")", i, kSpecials[i], w));
    if (v.contains(w)) throw InputError(fmt::format("vocabulary: token \"{}\" appears twice (tokens[{}])", w, i));
    v.add(w);
  }
  return v;
}

Vocab Vocab::from_bpe(const Bpe& bpe) {
  Vocab v;
  v.words_.clear();
  v.ids_.clear();
  v.bpe_ = std::make_shared<const Bpe>(bpe);
  for (std::size_t i = 0; i < bpe.size(); ++i) {
    v.words_.push_back(bpe.token_text(static_cast<TokenId>(i)));
    v.ids_.emplace(v.words_.back(), static_cast<TokenId>(i));  // a repeated text keeps its first id
  }
  return v;
}

std::vector<std::string> Vocab::labels_of(const std::vector<TokenId>& ids) const {
  if (!bpe_) {
    std::vector<std::string> out;
    for (TokenId i : ids) out.push_back(word(i));
    return out;
  }
  auto word_char = [](unsigned char c) { return std::isalnum(c) || c >= 0x80; };
  std::vector<std::string> out;
  bool prev_word = false;  // the token before ends inside a word
  for (TokenId i : ids) {
    if (i < Bpe::kFirstByte) {
      out.push_back(word(i));
      prev_word = false;
      continue;
    }
    const std::string& raw = bpe_->bytes_of(i);
    std::string label = display_bytes(raw);
    const bool spaced = !raw.empty() && raw[0] == ' ';
    if (spaced && raw.size() > 1) label.erase(0, 1);
    else if (!spaced && prev_word && !raw.empty() && word_char(static_cast<unsigned char>(raw[0]))) label = "##" + label;
    if (raw == " ") label = "␣";
    out.push_back(label);
    prev_word = !raw.empty() && word_char(static_cast<unsigned char>(raw.back()));
  }
  return out;
}

std::string unknown_words_warning(const std::vector<std::string>& unknown_words) {
  if (unknown_words.empty()) return {};
  std::string list;
  for (std::size_t i = 0; i < unknown_words.size() && i < 10; ++i) {  // a short line, however long the text
    const std::string& w = unknown_words[i];
    list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", w.size() > 30 ? w.substr(0, 27) + "..." : w);
  }
  if (unknown_words.size() > 10) list += ", ...";
  return fmt::format("warning: {} word{} not in the vocabulary and become{} <unk>: {}", unknown_words.size(),
                     unknown_words.size() == 1 ? " is" : "s are", unknown_words.size() == 1 ? "s" : "", list);
}

EncodedSentence encode_sentence(const Vocab& vocab, std::string_view sentence, std::size_t max_tokens, const std::string& what) {
  EncodedSentence out;
  if (vocab.bpe()) {  // sub-word tokens: every text has them, none is <unk>
    // A byte-level BPE has pieces for spaces too, so "   " would encode: blank is checked as words.
    if (tokenize(sentence).empty()) throw InputError(what + ": the sentence is empty; give at least one word");
    out.ids = vocab.encode(sentence);
    if (out.ids.empty()) throw InputError(what + ": the sentence is empty; give at least one word");
    if (out.ids.size() > max_tokens) {
      throw InputError(fmt::format("{}: the sentence has {} sub-word tokens, more than the limit of {}", what, out.ids.size(), max_tokens));
    }
    out.labels = vocab.labels_of(out.ids);
    return out;
  }
  const std::vector<std::string> words = tokenize(sentence);
  if (words.empty()) throw InputError(what + ": the sentence is empty; give at least one word");
  if (words.size() > max_tokens) {
    throw InputError(fmt::format("{}: the sentence has {} tokens (words and punctuation), more than the limit of {}", what, words.size(),
                                 max_tokens));
  }
  out.ids = vocab.encode_tokens(words, &out.unknown);
  for (std::size_t i = 0; i < words.size(); ++i) out.labels.push_back(out.ids[i] == Vocab::kUnk ? "<unk>" : words[i]);
  return out;
}

}  // namespace attnlab::text
