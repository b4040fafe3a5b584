#pragma once
// One word-level vocabulary shared by English and French (so source and target embeddings can be
// tied). Ids are dense, 0 .. size()-1; the first four are the special tokens.
//
// Building is deterministic: words are ordered by count (most frequent first), ties by byte order,
// so the same corpus always gives the same ids on every platform.
//
// JSON form (stored in checkpoints and written by `attnlab corpus` as vocab.json):
//   {"format": "attnlab-vocab", "version": 1, "tokens": ["<pad>", "<unk>", "<bos>", "<eos>", "the", ...]}
// where a token's id is its index in "tokens".
//
// A vocabulary may instead be a byte-level BPE's (from_bpe): then encode/decode/tokens_of go through
// the BPE (bpe.hpp), case is kept, nothing is ever <unk>, and words() holds each token's display text
// (display_bytes), which is what checkpoints store as "vocab" next to the BPE's merges.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "util/token_ids.hpp"

namespace attnlab::text {

using TokenId = std::int32_t;
class Bpe;

class Vocab {
 public:
  // The reserved ids, defined once in util/token_ids.hpp (the model relies on the same values).
  static constexpr TokenId kPad = tokens::kPad;  // fills batches to a common length; masked out
  static constexpr TokenId kUnk = tokens::kUnk;  // any word not in the vocabulary
  static constexpr TokenId kBos = tokens::kBos;  // start of a target sentence (decoder input)
  static constexpr TokenId kEos = tokens::kEos;  // end of a sentence
  static constexpr std::array<std::string_view, 4> kSpecials{"<pad>", "<unk>", "<bos>", "<eos>"};
  static constexpr int kFormatVersion = 1;

  // A vocabulary holding only the four special tokens.
  Vocab();

  // Builds a vocabulary from token streams (e.g. the tokenized English and French sides of a
  // training set): every word seen at least `min_count` times gets an id. min_count 0 counts as 1.
  static Vocab build(const std::vector<std::vector<std::string>>& token_streams, std::size_t min_count = 1);

  // Adds `word` if absent; returns its id either way.
  TokenId add(std::string_view word);

  // The id of `word`, or kUnk when it is not in the vocabulary.
  TokenId id(std::string_view word) const;
  bool contains(std::string_view word) const;

  // The word with id `id`. Throws InputError for an id outside 0 .. size()-1 (e.g. from a corrupt file).
  const std::string& word(TokenId id) const;

  std::size_t size() const { return words_.size(); }
  const std::vector<std::string>& words() const { return words_; }

  // Tokenizes `sentence` (see tokenizer.hpp) and maps each token to its id; no <bos>/<eos> are
  // added. Words not in the vocabulary become kUnk and, when `unknown_words` is given, are appended
  // to it once each (in order of first appearance, skipping ones already listed), so the caller can
  // warn naming them.
  std::vector<TokenId> encode(std::string_view sentence, std::vector<std::string>* unknown_words = nullptr) const;
  std::vector<TokenId> encode_tokens(const std::vector<std::string>& tokens,
                                     std::vector<std::string>* unknown_words = nullptr) const;

  // The words of `ids` (special tokens included, spelled "<unk>" etc.). BPE: labels_of(ids).
  std::vector<std::string> tokens_of(const std::vector<TokenId>& ids) const;

  // A readable sentence from model output: stops at the first <eos>, drops <pad> and <bos>, keeps
  // "<unk>" visible, and joins the rest with detokenize().
  std::string decode(const std::vector<TokenId>& ids) const;

  nlohmann::json to_json() const;

  // Reads the JSON form. Throws InputError naming the problem (wrong format or version, a
  // non-string or empty or duplicate token, special tokens missing from ids 0–3).
  static Vocab from_json(const nlohmann::json& j);

  bool operator==(const Vocab& other) const { return words_ == other.words_; }

  // The vocabulary of a byte-level BPE: ids and token texts are the BPE's.
  static Vocab from_bpe(const Bpe& bpe);
  // The BPE behind this vocabulary, or nullptr for a word-level one.
  const Bpe* bpe() const { return bpe_.get(); }

  // Labels for showing `ids` one per token in a table. Word-level: the words. BPE: the token's text
  // with its leading space dropped, and "##" before a piece that continues the word before it
  // ("un", "##believ", "##able"), so that a learner sees where words start.
  std::vector<std::string> labels_of(const std::vector<TokenId>& ids) const;

 private:
  std::shared_ptr<const Bpe> bpe_;
  std::vector<std::string> words_;
  std::map<std::string, TokenId, std::less<>> ids_;  // std::less<> allows lookup by string_view
};

// A one-line warning naming the unknown words, e.g.
//   warning: 2 words are not in the vocabulary and become <unk>: "zebra", "xylophone"
// Returns "" when `unknown_words` is empty.
std::string unknown_words_warning(const std::vector<std::string>& unknown_words);

// A sentence someone typed, as a model reads it: the one encoder behind every command and lesson.
struct EncodedSentence {
  std::vector<TokenId> ids;
  std::vector<std::string> labels;   // one per id: the word ("<unk>" for an unknown one), or the BPE piece ("##" continues a word)
  std::vector<std::string> unknown;  // the words that became <unk>, in order, without repeats (word vocabularies only)
};
// Tokenizes (text::tokenize, or the BPE) and maps to ids. Throws InputError naming `what` (e.g.
// "--sentence", "TEXT") when the sentence has no token or more than `max_tokens`.
EncodedSentence encode_sentence(const Vocab& vocab, std::string_view sentence, std::size_t max_tokens, const std::string& what);

}  // namespace attnlab::text
