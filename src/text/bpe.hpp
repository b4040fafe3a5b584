#pragma once
// Byte-level BPE (byte-pair encoding): a sub-word tokenizer that attnlab trains on a text corpus, so
// that any string at all -- any UTF-8, invalid bytes, control characters, emoji -- becomes token ids
// with no unknown token, and the ids decode back to the same bytes.
//
// Ids (the legend for every id sequence below):
//   0 .. 3        the special tokens <pad> <unk> <bos> <eos>, the same ids as in vocab.hpp. encode()
//                 never produces them: a caller adds <bos>/<eos> itself; <unk> is kept only so the
//                 ids mean the same as a word vocabulary's.
//   4 .. 259      the 256 single bytes: byte b is id 4 + b. Any byte string is a sequence of these,
//                 which is why nothing is ever unknown.
//   260 + r       the token made by merge r (r = 0, 1, ...): the bytes of its left id then its right id.
// size() = 260 + number of merges. A merge's rank r is its place in that order: earlier merges win.
//
// Pre-tokenization (GPT-2 style) cuts text into pieces before any merge, and merges never cross a
// piece's edge. Rules at each position, first match wins:
//  - A contraction: ' followed by s t m d re ve ll (either case) and then no letter: "'s", "'ll".
//  - One ASCII space followed by a run of one class (letters, digits, or other) is one piece, space
//    included: " world", " 42", " ...". Keeping the space with the word means " the" is one token
//    and the model sees where words start; case is kept, so " Apple" and " apple" differ.
//  - A run of whitespace: whole, except that its last character, when it is an ASCII space followed by
//    something not whitespace, is left to start the next piece ("a  b" is "a", " ", " b").
//  - Otherwise a run of one class: letters, digits or other.
//  Classes: ASCII letters; every code point outside ASCII except the punctuation, symbol, emoji and
//  space blocks listed in bpe.cpp counts as a letter (no Unicode tables: accented Latin, Greek,
//  Cyrillic and CJK all stay inside words); ASCII digits; ASCII whitespace and the Unicode spaces
//  (U+00A0, U+2000-U+200A, U+202F, U+3000, ...); everything else, including each byte that is not
//  part of valid UTF-8, is "other".
//  - A piece is at most kMaxPieceBytes bytes: a longer run is cut at the last code point boundary
//    that fits. This bounds the work and memory per piece, whatever the input.
//
// Training (deterministic: the same word counts give the same merges on every platform):
//   start from every piece as its bytes; count each adjacent pair of ids, weighted by the piece's
//   frequency; merge the most frequent pair into a new token, everywhere; repeat until size() reaches
//   the target or no pair is seen min_pair_count times. Ties go to the pair with the smaller left id,
//   then the smaller right id (ids are themselves deterministic, so this is platform-independent).
//   Counts are kept over the unique pieces and updated only for the pieces that hold the merged pair.
//
// Encoding a piece applies the merges in rank order: while some adjacent pair is a merge, take the
// one with the lowest rank and merge all its occurrences left to right. That reproduces exactly the
// segmentation training arrived at. Results are cached per piece.
//
// JSON form (a checkpoint or a file next to a model):
//   {"format": "attnlab-bpe", "version": 1,
//    "specials": ["<pad>", "<unk>", "<bos>", "<eos>"],
//    "merges": [[105, 119, "es"], [260, 120, "est"], ...]}
// Merge r is [left id, right id, text of token 260 + r]. The text is there for people reading the
// file and is checked on load; it is the token's bytes with \xNN escapes for bytes that are not valid
// UTF-8 or are control characters (see display_bytes) and \\ for a backslash.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "text/vocab.hpp"

namespace attnlab::text {

// How often each pre-tokenized piece occurs in a corpus: what BPE trains on.
using PieceCounts = std::unordered_map<std::string, std::uint64_t>;

// The pre-tokenization pieces of `text` (rules above). Their concatenation is `text`, byte for byte.
std::vector<std::string> pretokenize(std::string_view text);

// Adds the pieces of `text` to `counts` (call once per line or document; nothing spans two calls).
void count_pieces(std::string_view text, PieceCounts& counts);

// A byte string made safe to show and to store in JSON: valid UTF-8 stays as it is, except control
// characters (\n \t \r, other C0 and DEL as \xNN, C1 as \u0080 .. \u009f), a backslash (\\), and
// every byte that is not part of valid UTF-8 (\xNN). The result is always valid UTF-8.
std::string display_bytes(std::string_view bytes);

class Bpe {
 public:
  static constexpr TokenId kFirstByte = 4;     // byte b is id kFirstByte + b
  static constexpr TokenId kFirstMerge = 260;  // merge r makes id kFirstMerge + r
  static constexpr std::size_t kMaxPieceBytes = 64;
  static constexpr std::size_t kMaxVocabSize = 1'000'000;
  static constexpr int kFormatVersion = 1;

  // The 260 base tokens (specials and bytes), no merges.
  Bpe();

  // Learns merges from piece counts until size() == vocab_size, or until the most frequent pair is
  // seen fewer than min_pair_count times (so a small corpus gives a smaller vocabulary). Throws
  // InputError for a vocab_size below 260 or above kMaxVocabSize.
  static Bpe train(const PieceCounts& counts, std::size_t vocab_size, std::uint64_t min_pair_count = 2);

  // The same, counting the pieces of each text (e.g. each line of train.txt) first.
  static Bpe train_on_texts(const std::vector<std::string>& texts, std::size_t vocab_size,
                            std::uint64_t min_pair_count = 2);

  // Ids of `text` (no <bos>/<eos>, never a special id). Never throws for any input.
  std::vector<TokenId> encode(std::string_view text) const;

  // The bytes of `ids`, concatenated: decode(encode(s)) == s for every s. Like Vocab::decode it stops
  // at the first <eos>, skips <pad> and <bos>, and writes <unk> as "<unk>". Throws InputError for an id
  // outside 0 .. size()-1.
  std::string decode(const std::vector<TokenId>& ids) const;

  // The raw bytes of one token (a special token's are its name, "<eos>"). Throws InputError when out of range.
  const std::string& bytes_of(TokenId id) const;

  // A token for display: display_bytes(bytes_of(id)).
  std::string token_text(TokenId id) const;

  // The pieces `text` is cut into, as raw bytes: one string per token of encode(text).
  std::vector<std::string> pieces(std::string_view text) const;

  // The pieces for a lesson, each through display_bytes and joined by `separator`:
  // "unbelievable" → "un|believ|able" (with a vocabulary that learned those pieces).
  std::string show_pieces(std::string_view text, std::string_view separator = "|") const;

  std::size_t size() const { return bytes_.size(); }
  // Merge r is merges()[r]: the left and right ids that make id kFirstMerge + r.
  const std::vector<std::pair<TokenId, TokenId>>& merges() const { return merges_; }

  nlohmann::json to_json() const;

  // Reads the JSON form. Throws InputError naming the field, what it must be and what it is (wrong
  // format or version, specials not <pad> <unk> <bos> <eos>, a merge that is not [id, id, text], an id
  // that is a special or not yet made, a text that does not match the merged bytes).
  static Bpe from_json(const nlohmann::json& j);

  bool operator==(const Bpe& other) const { return merges_ == other.merges_; }

  Bpe(const Bpe& other);
  Bpe& operator=(const Bpe& other);
  Bpe(Bpe&&) noexcept;
  Bpe& operator=(Bpe&&) noexcept;
  ~Bpe();

 private:
  void add_merge(TokenId left, TokenId right);
  std::vector<TokenId> encode_piece(std::string_view piece) const;

  std::vector<std::pair<TokenId, TokenId>> merges_;
  std::vector<std::string> bytes_;                   // by id
  std::unordered_map<std::uint64_t, TokenId> rank_;  // (left << 32 | right) → merge rank
  struct Cache;                                      // piece → ids, guarded by a mutex
  std::unique_ptr<Cache> cache_;
};

}  // namespace attnlab::text
