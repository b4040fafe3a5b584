#include "corpus/coverage.hpp"

#include <fstream>
#include <unordered_set>

#include <fmt/format.h>

#include "util/error.hpp"

namespace attnlab::corpus {

std::vector<std::string> read_word_list(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be read (a word list: rank, word and count separated by tabs)");
  std::vector<std::string> words;
  std::string line;
  int n = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::size_t a = line.find('\t'), b = a == std::string::npos ? a : line.find('\t', a + 1);
    if (!header) {
      if (line != "rank\tword\tcount")
        throw InputError(fmt::format("{}:{}: expected the header \"rank<TAB>word<TAB>count\", got \"{}\"", path, n, line));
      header = true;
      continue;
    }
    if (b == std::string::npos || b == a + 1)
      throw InputError(fmt::format("{}:{}: expected rank, word and count separated by tabs, got \"{}\"", path, n, line));
    words.push_back(line.substr(a + 1, b - a - 1));
  }
  if (words.empty()) throw InputError(path + ": expected at least 1 word after the header \"rank<TAB>word<TAB>count\", got 0");
  return words;
}

std::vector<std::string> english_word_forms(std::string_view s) {
  std::vector<std::string> out;
  std::string w;
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  for (std::size_t i = 0; i <= s.size(); ++i) {
    const char c = i < s.size() ? s[i] : ' ';
    if (letter(c)) {
      w += static_cast<char>(c | 0x20);
    } else if ((c == '\'' || c == '-') && !w.empty() && i + 1 < s.size() && letter(s[i + 1])) {
      w += c;  // inside a word: didn't, well-known
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  return out;
}

Coverage coverage(const std::vector<Example>& examples, const std::vector<std::string>& list) {
  std::unordered_set<std::string> seen;
  for (const Example& e : examples)
    for (std::string& w : english_word_forms(e.en)) seen.insert(std::move(w));
  Coverage c;
  c.words = list.size();
  for (const std::string& w : list) {
    if (seen.count(w)) ++c.covered;
    else c.missing.push_back(w);
  }
  return c;
}

}  // namespace attnlab::corpus
