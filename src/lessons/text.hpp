#pragma once
// Sentences as the lessons see them: the real tokenizer (text/tokenizer.hpp) and a vocabulary
// (text/vocab.hpp), either a trained model's or, with random weights, data/vocab.txt.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "text/vocab.hpp"

namespace attnlab::lessons {

// Most tokens one sentence may have. The lessons print several n × n matrices per step, and beyond
// this they stop being readable in a terminal.
inline constexpr std::size_t kMaxSentenceTokens = 32;

// data/vocab.txt: one word per line after the four special tokens (which the file lists first);
// blank lines and lines starting with '#' are skipped.
text::Vocab load_word_list(const std::filesystem::path& file);

// A sentence as the model sees it.
struct TokenizedSentence {
  std::string text;                   // as given
  std::vector<std::string> tokens;    // vocabulary words, <unk> for unknown ones (the row labels)
  std::vector<std::size_t> ids;
  std::vector<std::string> unknown;   // the words that became <unk>, in order, without repeats
  std::vector<int> int_ids() const { return {ids.begin(), ids.end()}; }
};

// Tokenizes with text::tokenize and maps to ids. Throws InputError for an empty sentence or one with
// more than kMaxSentenceTokens tokens; `what` names the option in the message (e.g. "--sentence").
TokenizedSentence encode(std::string_view sentence, const text::Vocab& vocab, const std::string& what);

}  // namespace attnlab::lessons
