#pragma once
// The bilingual lexicon tables of data/lexicon/ (nouns, verbs, adjectives, adverbs; docs/lexicon.md
// describes every column), read into memory for the grammar of the wide corpus (corpus/grammar.hpp).
//
// The tables are made by scripts/lexicon.sh and checked by tests/lexicon/check_tables.py; this reader
// trusts their content but not their shape: a missing file, a missing column or a row with the wrong
// number of fields is an InputError naming the file and line. The hand-written tables of
// corpus/lexicon.hpp stay for the lesson-sized corpus (translate-small), whose sentences they fix.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "corpus/lexicon.hpp"

namespace attnlab::corpus {

// What a noun denotes (the `kind` column).
enum class NounKind { Person, Animal, Place, Thing, Abstract };

struct LexNoun {
  std::string en, en_plural, fr, fr_plural;
  Gender gender;
  bool elides;  // le/la/de before it elide (l'arbre); false for a consonant or an aspirated h
  NounKind kind;
  std::string sense;  // "" for the main row
  int rank;           // by English frequency (Brown), 1 = commonest
  bool everyday_only = false;  // scope "everyday": a row the wide grammar never draws (docs/lexicon.md)
};

// French persons, in the order of the tables' columns: je, tu, il/elle, nous, vous, ils/elles.
struct LexVerb {
  std::string en, en_3sg, en_past, en_pp, en_ing;
  std::string fr;        // infinitive
  bool etre;             // passé composé with être (its participle agrees with the subject)
  bool transitive;       // the French verb takes a direct object
  std::array<std::string, 6> present, imperfect;
  std::array<std::string, 4> participle;  // ms, fs, mp, fp
  std::string sense;
  int rank;
  bool everyday_only = false;
  // Futur simple and conditionnel présent (six persons), impératif (tu, nous, vous: mange, mangeons,
  // mangez). A defective verb (pleuvoir) has empty strings for the persons it lacks.
  std::array<std::string, 6> future, conditional;
  std::array<std::string, 3> imperative;
};

struct LexAdjective {
  std::string en;
  std::array<std::string, 4> fr;  // ms, fs, mp, fp
  std::string ms_vowel;           // masculine singular before a vowel sound (vieil, nouvel, bel)
  bool before;                    // placed before the noun in French
  std::string sense;
  int rank;
  bool everyday_only = false;
};

struct LexAdverb {
  std::string en, fr, sense;
  int rank;
  bool everyday_only = false;
};

struct LexiconTables {
  std::vector<LexNoun> nouns;
  std::vector<LexVerb> verbs;
  std::vector<LexAdjective> adjectives;
  std::vector<LexAdverb> adverbs;

  // The main row (empty sense) or the row of `sense`; nullptr when absent.
  const LexNoun* noun(std::string_view en, std::string_view sense = "") const;
  const LexVerb* verb(std::string_view en, std::string_view sense = "") const;
  const LexAdjective* adjective(std::string_view en, std::string_view sense = "") const;
  const LexAdverb* adverb(std::string_view en, std::string_view sense = "") const;
};

// Reads DIR/{nouns,verbs,adjectives,adverbs}.tsv. Throws InputError naming the file and line.
LexiconTables read_lexicon_tables(const std::string& dir);

// The tables under the project's data/lexicon/, read once.
const LexiconTables& lexicon_tables();

}  // namespace attnlab::corpus
