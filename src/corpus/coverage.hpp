#pragma once
// Coverage: which of the commonest English word forms a corpus' English side holds. The list is
// data/eval/brown-top-1000.tsv (the 1,000 most frequent lower-cased word forms of the Brown corpus,
// proper nouns and numbers excluded; scripts/english-corpus/top_words.py makes it); `attnlab corpus
// --coverage` reports the share of it that occurs in the training split (docs/corpus.md).
#include <string>
#include <string_view>
#include <vector>

#include "corpus/corpus.hpp"

namespace attnlab::corpus {

// The word column of a list file: lines starting with # are comments, then the header
// `rank<TAB>word<TAB>count`, then one word a line. InputError naming the file and line otherwise.
std::vector<std::string> read_word_list(const std::string& path);

// The English word forms of a sentence as the list counts them: lower-cased ASCII letters, with an
// apostrophe or hyphen inside a word kept ("didn't", "i'm", "well-known"); everything else separates.
std::vector<std::string> english_word_forms(std::string_view sentence);

struct Coverage {
  std::size_t words = 0, covered = 0;
  std::vector<std::string> missing;  // in the list's order
  double share() const { return words ? static_cast<double>(covered) / static_cast<double>(words) : 0.0; }
};

// Which words of `list` occur among the English word forms of `examples`.
Coverage coverage(const std::vector<Example>& examples, const std::vector<std::string>& list);

inline constexpr const char* kCoverageList = "data/eval/brown-top-1000.tsv";

}  // namespace attnlab::corpus
