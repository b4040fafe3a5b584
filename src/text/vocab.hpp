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
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnlab::text {

using TokenId = std::int32_t;

class Vocab {
 public:
  static constexpr TokenId kPad = 0;  // fills batches to a common length; masked out
  static constexpr TokenId kUnk = 1;  // any word not in the vocabulary
  static constexpr TokenId kBos = 2;  // start of a target sentence (decoder input)
  static constexpr TokenId kEos = 3;  // end of a sentence
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

  // The words of `ids` (special tokens included, spelled "<unk>" etc.).
  std::vector<std::string> tokens_of(const std::vector<TokenId>& ids) const;

  // A readable sentence from model output: stops at the first <eos>, drops <pad> and <bos>, keeps
  // "<unk>" visible, and joins the rest with detokenize().
  std::string decode(const std::vector<TokenId>& ids) const;

  nlohmann::json to_json() const;

  // Reads the JSON form. Throws InputError naming the problem (wrong format or version, a
  // non-string or empty or duplicate token, special tokens missing from ids 0–3).
  static Vocab from_json(const nlohmann::json& j);

  bool operator==(const Vocab& other) const { return words_ == other.words_; }

 private:
  std::vector<std::string> words_;
  std::map<std::string, TokenId, std::less<>> ids_;  // std::less<> allows lookup by string_view
};

// A one-line warning naming the unknown words, e.g.
//   warning: 2 words are not in the vocabulary and become <unk>: "zebra", "xylophone"
// Returns "" when `unknown_words` is empty.
std::string unknown_words_warning(const std::vector<std::string>& unknown_words);

}  // namespace attnlab::text
