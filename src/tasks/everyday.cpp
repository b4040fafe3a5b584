#include "tasks/everyday.hpp"

#include <fstream>

#include <fmt/format.h>

#include "util/error.hpp"

namespace attnlab::tasks {

namespace {

std::string normalised(std::string_view s) {
  std::string out;
  bool space = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "\xE2\x80\x99") == 0) {  // ’ (U+2019)
      if (space && !out.empty()) out += ' ';
      space = false;
      out += '\'';
      i += 2;
      continue;
    }
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}

}  // namespace

std::vector<EverydayItem> read_everyday(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be read (the everyday set: category, English, French separated by tabs)");
  std::vector<EverydayItem> items;
  std::string line;
  int n = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> cols = split(line, "\t");
    if (!header) {
      if (cols.size() != 3 || cols[0] != "category" || cols[1] != "english" || cols[2] != "french")
        throw InputError(fmt::format("{}:{}: expected the header \"category<TAB>english<TAB>french\", got \"{}\"", path, n, line));
      header = true;
      continue;
    }
    if (cols.size() != 3) throw InputError(fmt::format("{}:{}: expected 3 tab-separated columns, got {}", path, n, cols.size()));
    EverydayItem item{cols[0], normalised(cols[1]), {}, n};
    for (const std::string& fr : split(cols[2], " | ")) {
      const std::string t = normalised(fr);
      if (t.empty()) throw InputError(fmt::format("{}:{}: french: expected translations separated by \" | \", got an empty one", path, n));
      item.accepted.push_back(t);
    }
    if (item.en.empty()) throw InputError(fmt::format("{}:{}: english: expected a sentence, got an empty column", path, n));
    items.push_back(std::move(item));
  }
  if (!header) throw InputError(path + ": expected the header \"category<TAB>english<TAB>french\", got no line");
  if (items.empty()) throw InputError(path + ": expected at least 1 sentence after the header, got 0");
  return items;
}

bool everyday_right(const EverydayItem& item, const std::string& translation) {
  const std::string t = normalised(translation);
  for (const std::string& a : item.accepted)
    if (a == t) return true;
  return false;
}

}  // namespace attnlab::tasks
