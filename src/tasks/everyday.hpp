#pragma once
// The held-out everyday set (data/eval/everyday-en-fr.tsv, docs/models.md): ordinary English
// sentences written by hand, apart from the grammar, each with every French translation counted as
// right. `attnlab eval --everyday` scores a model on it.
//
// File format: UTF-8 text; lines starting with # are comments; the first other line is the header
// `category<TAB>english<TAB>french`; then one sentence a line, its acceptable translations in the
// third column separated by " | ".
#include <string>
#include <vector>

namespace attnlab::tasks {

struct EverydayItem {
  std::string category, en;
  std::vector<std::string> accepted;
  int line = 0;  // in the file, for messages
};

// Reads the set. Throws InputError naming the file and line for a missing header, a line without
// three columns, an empty sentence or an empty translation.
std::vector<EverydayItem> read_everyday(const std::string& path);

// Whether `translation` is one of the accepted ones: compared after trimming, collapsing runs of
// spaces and writing ’ as ', and nothing else (case, accents and punctuation count).
bool everyday_right(const EverydayItem& item, const std::string& translation);

// The default set, found under attnlab's data folder.
inline constexpr const char* kEverydaySet = "data/eval/everyday-en-fr.tsv";

}  // namespace attnlab::tasks
