#include "corpus/tables.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "corpus/tsv.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace attnlab::corpus {

namespace {

// One table: its header's column positions and the rows as fields.
struct Table {
  std::string path;
  std::map<std::string, std::size_t, std::less<>> column;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> line;  // the file line of each row, for messages

  const std::string& at(std::size_t row, std::string_view name) const {
    auto it = column.find(name);
    if (it == column.end()) throw InputError(fmt::format("{}: missing column \"{}\"", path, name));
    return rows[row][it->second];
  }
  int integer(std::size_t row, std::string_view name) const {
    const std::string& v = at(row, name);
    try {
      std::size_t used = 0;
      const int x = std::stoi(v, &used);
      if (used == v.size()) return x;
    } catch (const std::exception&) {
    }
    throw InputError(fmt::format("{}:{}: column {}: expected an integer, got \"{}\"", path, line[row], name, v));
  }
  bool flag(std::size_t row, std::string_view name) const {
    const std::string& v = at(row, name);
    if (v == "0" || v == "1") return v == "1";
    throw InputError(fmt::format("{}:{}: column {}: expected 0 or 1, got \"{}\"", path, line[row], name, v));
  }
};

Table read_table(const std::string& dir, std::string_view name) {
  Table t;
  t.path = dir + "/" + std::string(name);
  std::ifstream in(t.path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the lexicon table (make it with scripts/lexicon.sh)", t.path));
  std::string text;
  std::size_t n = 0;
  std::vector<std::string> header;
  while (std::getline(in, text)) {
    ++n;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) continue;
    std::vector<std::string> fields;
    for (std::string_view f : split_tabs(text)) fields.emplace_back(f);
    if (header.empty()) {
      header = fields;
      for (std::size_t i = 0; i < header.size(); ++i) t.column[header[i]] = i;
      continue;
    }
    if (fields.size() != header.size())
      throw InputError(fmt::format("{}:{}: expected {} tab-separated fields, got {}", t.path, n, header.size(), fields.size()));
    t.rows.push_back(std::move(fields));
    t.line.push_back(n);
  }
  if (header.empty()) throw InputError(fmt::format("{}: empty table, expected a header row", t.path));
  return t;
}

// The `scope` column: "" for every grammar, "everyday" for the everyday grammar only.
bool everyday_only(const Table& t, std::size_t r) {
  const std::string& s = t.at(r, "scope");
  if (s.empty() || s == "everyday") return !s.empty();
  throw InputError(fmt::format("{}:{}: column scope: expected nothing or everyday, got \"{}\"", t.path, t.line[r], s));
}

NounKind noun_kind(const Table& t, std::size_t r) {
  const std::string& k = t.at(r, "kind");
  if (k == "person") return NounKind::Person;
  if (k == "animal") return NounKind::Animal;
  if (k == "place") return NounKind::Place;
  if (k == "thing") return NounKind::Thing;
  if (k == "abstract") return NounKind::Abstract;
  throw InputError(fmt::format("{}:{}: column kind: expected person, animal, place, thing or abstract, got \"{}\"", t.path,
                               t.line[r], k));
}

Gender gender(const Table& t, std::size_t r) {
  const std::string& g = t.at(r, "gender");
  if (g == "m" || g == "f") return g == "m" ? Gender::Masculine : Gender::Feminine;
  throw InputError(fmt::format("{}:{}: column gender: expected m or f, got \"{}\"", t.path, t.line[r], g));
}

template <class Row>
const Row* find_row(const std::vector<Row>& rows, std::string_view en, std::string_view sense) {
  for (const Row& r : rows)
    if (r.en == en && r.sense == sense) return &r;
  return nullptr;
}

}  // namespace

const LexNoun* LexiconTables::noun(std::string_view en, std::string_view sense) const { return find_row(nouns, en, sense); }
const LexVerb* LexiconTables::verb(std::string_view en, std::string_view sense) const { return find_row(verbs, en, sense); }
const LexAdjective* LexiconTables::adjective(std::string_view en, std::string_view sense) const {
  return find_row(adjectives, en, sense);
}
const LexAdverb* LexiconTables::adverb(std::string_view en, std::string_view sense) const {
  return find_row(adverbs, en, sense);
}

LexiconTables read_lexicon_tables(const std::string& dir) {
  LexiconTables lx;
  const Table nouns = read_table(dir, "nouns.tsv");
  for (std::size_t r = 0; r < nouns.rows.size(); ++r)
    lx.nouns.push_back({nouns.at(r, "en"), nouns.at(r, "en_pl"), nouns.at(r, "fr"), nouns.at(r, "fr_pl"), gender(nouns, r),
                        nouns.flag(r, "elides"), noun_kind(nouns, r), nouns.at(r, "sense"), nouns.integer(r, "rank"),
                        everyday_only(nouns, r)});
  const Table verbs = read_table(dir, "verbs.tsv");
  for (std::size_t r = 0; r < verbs.rows.size(); ++r) {
    LexVerb v;
    v.en = verbs.at(r, "en");
    v.en_3sg = verbs.at(r, "en_3sg");
    v.en_past = verbs.at(r, "en_past");
    v.en_pp = verbs.at(r, "en_pp");
    v.en_ing = verbs.at(r, "en_ing");
    v.fr = verbs.at(r, "fr");
    const std::string& aux = verbs.at(r, "aux");
    if (aux != "avoir" && aux != "être")
      throw InputError(fmt::format("{}:{}: column aux: expected avoir or être, got \"{}\"", verbs.path, verbs.line[r], aux));
    v.etre = aux == "être";
    v.transitive = verbs.flag(r, "transitive");
    static constexpr std::array<const char*, 6> persons{"1s", "2s", "3s", "1p", "2p", "3p"};
    for (std::size_t p = 0; p < 6; ++p) {
      v.present[p] = verbs.at(r, std::string("pres_") + persons[p]);
      v.imperfect[p] = verbs.at(r, std::string("impf_") + persons[p]);
      v.future[p] = verbs.at(r, std::string("fut_") + persons[p]);
      v.conditional[p] = verbs.at(r, std::string("cond_") + persons[p]);
    }
    static constexpr std::array<const char*, 3> imperative{"imp_2s", "imp_1p", "imp_2p"};
    for (std::size_t i = 0; i < 3; ++i) v.imperative[i] = verbs.at(r, imperative[i]);
    v.everyday_only = everyday_only(verbs, r);
    static constexpr std::array<const char*, 4> pp{"pp_ms", "pp_fs", "pp_mp", "pp_fp"};
    for (std::size_t i = 0; i < 4; ++i) v.participle[i] = verbs.at(r, pp[i]);
    v.sense = verbs.at(r, "sense");
    v.rank = verbs.integer(r, "rank");
    lx.verbs.push_back(std::move(v));
  }
  const Table adjs = read_table(dir, "adjectives.tsv");
  for (std::size_t r = 0; r < adjs.rows.size(); ++r)
    lx.adjectives.push_back({adjs.at(r, "en"),
                             {adjs.at(r, "fr_ms"), adjs.at(r, "fr_fs"), adjs.at(r, "fr_mp"), adjs.at(r, "fr_fp")},
                             adjs.at(r, "fr_ms_vowel"),
                             adjs.flag(r, "before"),
                             adjs.at(r, "sense"),
                             adjs.integer(r, "rank"),
                             everyday_only(adjs, r)});
  const Table advs = read_table(dir, "adverbs.tsv");
  for (std::size_t r = 0; r < advs.rows.size(); ++r)
    lx.adverbs.push_back({advs.at(r, "en"), advs.at(r, "fr"), advs.at(r, "sense"), advs.integer(r, "rank"), everyday_only(advs, r)});
  return lx;
}

const LexiconTables& lexicon_tables() {
  static const LexiconTables tables = read_lexicon_tables(project_root() + "/data/lexicon");
  return tables;
}

}  // namespace attnlab::corpus
