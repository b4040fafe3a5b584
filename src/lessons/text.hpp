#pragma once
// Words to token ids: a word-level tokenizer and the vocabulary in data/vocab.txt.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnlab::lessons {

// Most tokens one sentence may have. The lessons print several n × n matrices per step, and beyond
// this they stop being readable in a terminal.
inline constexpr std::size_t kMaxSentenceTokens = 32;

// Splits a sentence into lower-case words and punctuation marks: "The animal didn't cross." →
// ["the", "animal", "didn't", "cross", "."]. Whitespace separates words; ASCII punctuation becomes a
// token of its own, except an apostrophe or hyphen between letters (didn't, l'animal, well-known).
// Case folding covers ASCII and the accented Latin-1 capitals (É → é). The typographic apostrophe ’
// is read as '.
std::vector<std::string> tokenize(std::string_view sentence);

class Vocabulary {
 public:
  // One word per line; blank lines and lines starting with '#' are skipped. Must contain <unk>.
  static Vocabulary load(const std::filesystem::path& file);
  static Vocabulary from_words(std::vector<std::string> words);

  bool contains(const std::string& w) const { return index_.count(w) != 0; }
  std::size_t id(const std::string& w) const;  // the id of <unk> for unknown words
  std::size_t size() const { return words_.size(); }
  const std::string& word(std::size_t id) const { return words_.at(id); }
  const std::vector<std::string>& words() const { return words_; }

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, std::size_t> index_;
};

// A sentence as the model sees it.
struct TokenizedSentence {
  std::string text;                   // as given
  std::vector<std::string> tokens;    // vocabulary words, <unk> for unknown ones (the row labels)
  std::vector<std::size_t> ids;
  std::vector<std::string> unknown;   // the words that became <unk>, in order, without repeats
};

// Tokenizes and maps to ids. Throws InputError for an empty sentence or one with more than
// kMaxSentenceTokens tokens; `what` names the option in the message (e.g. "--sentence").
TokenizedSentence encode(std::string_view sentence, const Vocabulary& vocab, const std::string& what);

}  // namespace attnlab::lessons
