#include "corpus/tsv.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace attnlab::corpus {

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  for (std::size_t tab = line.find('\t'); tab != std::string_view::npos; tab = line.find('\t', start)) {
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
  fields.push_back(line.substr(start));
  return fields;
}

std::string to_tsv(const std::vector<Example>& examples) {
  std::string out(kTsvHeader);
  out += '\n';
  for (const Example& e : examples)
    out += fmt::format("{}\t{}\t{}\t{}\t{}\n", e.en, e.fr, e.category, e.focus_en, e.focus_fr);
  return out;
}

std::vector<Example> parse_tsv(std::string_view text, std::string_view source) {
  std::vector<Example> out;
  std::size_t line_no = 0;
  bool header_seen = false;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!header_seen) {
      if (line != kTsvHeader)
        throw InputError(fmt::format("{}:1: expected the header line \"en<TAB>fr<TAB>category<TAB>focus_en<TAB>focus_fr\"",
                                     source));
      header_seen = true;
      continue;
    }
    if (line.empty()) continue;
    const auto f = split_tabs(line);
    if (f.size() != 5)
      throw InputError(fmt::format("{}:{}: expected 5 tab-separated fields (en, fr, category, focus_en, focus_fr), found {}",
                                   source, line_no, f.size()));
    if (f[0].empty() || f[1].empty())
      throw InputError(fmt::format("{}:{}: the {} sentence is empty", source, line_no, f[0].empty() ? "English" : "French"));
    Example e;
    e.en = f[0];
    e.fr = f[1];
    e.category = f[2];
    e.focus_en = f[3];
    e.focus_fr = f[4];
    out.push_back(std::move(e));
  }
  if (!header_seen) throw InputError(fmt::format("{}: the file is empty (expected a header line and examples)", source));
  return out;
}

}  // namespace attnlab::corpus
