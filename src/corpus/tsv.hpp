#pragma once
// The corpus as tab-separated text (train.tsv, valid.tsv, test.tsv written by `attnlab corpus`):
//
//   en<TAB>fr<TAB>category<TAB>focus_en<TAB>focus_fr      (this header line first)
//   The boy trains the puppy.<TAB>Le garçon entraîne le chiot.<TAB>sense<TAB>trains<TAB>entraîne
//
// One example per line, UTF-8, "\n" line ends. Fields never contain tabs or newlines; focus fields
// are empty for the "plain" category. The held-out keys (Example::combos) are not stored.
#include <string>
#include <string_view>
#include <vector>

#include "corpus/corpus.hpp"

namespace attnlab::corpus {

inline constexpr std::string_view kTsvHeader = "en\tfr\tcategory\tfocus_en\tfocus_fr";

// The fields of one tab-separated line (no tab: one field), as views into `line`.
std::vector<std::string_view> split_tabs(std::string_view line);

// The TSV text of `examples`, header first.
std::string to_tsv(const std::vector<Example>& examples);

// Reads TSV text (as written by to_tsv; a trailing "\r" per line is tolerated). Throws InputError
// naming `source` and the line for a missing header, a line without exactly five fields, or an
// empty English or French sentence.
std::vector<Example> parse_tsv(std::string_view text, std::string_view source);

}  // namespace attnlab::corpus
