#pragma once
// The parts of the wide grammar (grammar.cpp) that the everyday grammar (everyday.cpp) builds on: the
// word pools drawn from the lexicon tables, noun phrases and verb phrases with their English and French
// renderings, the French and English spelling rules, and the choosers. Internal to src/corpus.
//
// The wide grammar's corpus is pinned byte for byte (tests/unit/test_corpus_grammar.cpp): anything
// added here must leave what the wide grammar draws and writes exactly as it was. New determiners and
// fields are only ever set by the everyday grammar.
#include <array>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "corpus/corpus.hpp"
#include "corpus/random.hpp"
#include "corpus/tables.hpp"

namespace attnlab::corpus::gram {

using Words = std::vector<std::string>;

inline void append(Words& w, const Words& more) { w.insert(w.end(), more.begin(), more.end()); }
std::string key(std::string_view family, std::string_view a, std::string_view b);
template <class T>
const T* pick(Rng& rng, const std::vector<const T*>& v) {
  return v[uniform_below(rng, v.size())];
}

// ---- spelling
bool vowel_sound(const std::string& word);  // French: a vowel or a mute h (not an aspirated one)
std::string join_french(const Words& items);
std::string join_english(Words w);  // "a" → "an" before a vowel sound
std::string lower(std::string_view s);
void words_of(std::string_view text, Words& w);  // appends text's space-separated words

// ---- the words
struct Pools {
  std::vector<const LexNoun*> persons, animals, places, things, foods, gadgets, abstracts;
  std::vector<const LexVerb*> transitive, intransitive;
  std::vector<const LexAdjective*> before, after;  // French position
  std::vector<const LexAdjective*> animate, place_props, thing_props, food_props;
  std::vector<const LexAdverb*> manner;
  const LexVerb *be = nullptr, *have = nullptr, *chase = nullptr, *pursue = nullptr;
};

const Pools& pools();
const LexVerb& must_verb(const LexiconTables& t, std::string_view en, std::string_view sense = "");
// The main rows named, in the order named, leaving out those absent and the rows of the everyday
// scope (the wide grammar's pools: "busy" was added for the everyday grammar only).
template <class T>
std::vector<const T*> rows_named(const std::vector<T>& rows, std::initializer_list<std::string_view> names) {
  std::vector<const T*> out;
  for (std::string_view n : names)
    for (const T& r : rows)
      if (r.en == n && r.sense.empty() && !r.everyday_only) out.push_back(&r);
  return out;
}

// ---- phrases
// Generic: a bare subject ("Dogs bark." → "Les chiens aboient."); Some: a bare object ("eats apples" →
// "mange des pommes", "pas de pommes" after a negation).
// Partitive, Quant, Genitive and Coord are the everyday grammar's (everyday.cpp); the wide grammar never
// makes them.
enum class Det { The, A, Poss, This, AllThe, Every, Number, Generic, Some, Name, Pronoun, Partitive, Quant, Genitive, Coord };
enum class Tense { Present, Past, PastProgressive, PresentProgressive };

// Persons as the tables' columns: 0 je, 1 tu, 2 il/elle, 3 nous, 5 ils/elles (4, vous, is not used).
struct NP;
struct VP;
struct PP {
  std::string en, fr;
  std::shared_ptr<NP> np;
};
struct Rel;

struct NP {
  const LexNoun* noun = nullptr;
  std::string name;  // a proper name, copied into French
  int person = 2;    // 2 or 5 for a noun; any for a pronoun
  Gender gender = Gender::Masculine;
  bool plural = false;
  Det det = Det::The;
  int poss = 0;  // my, your, his, her, our, their
  int number = 1;
  const LexAdjective* adj_before = nullptr;  // French position before the noun
  const LexAdjective* adj_after = nullptr;
  std::shared_ptr<PP> pp;
  std::shared_ptr<Rel> rel;
  // The everyday grammar's (everyday.cpp); the wide grammar leaves them as they are here.
  bool its = false;    // Det::Poss with poss 2, written "its" (a thing's or an animal's): son/sa/ses
  bool thing = false;  // Det::Pronoun for a thing or an animal: it / they (them); il/elle, le/la in French
  // Det::Quant: the quantifier's words before the noun ("a cup of" / "une tasse de", "several" /
  // "plusieurs", "" / "" for a bare noun); Det::Partitive: the English word ("some" or "": "du pain").
  std::string en_det, fr_det;
  std::string en_word, fr_word;  // a noun given as words, when `noun` is nullptr ("people" / "gens")
  std::shared_ptr<NP> owner;  // Det::Genitive: "the man's car" → "la voiture de l'homme"
  std::vector<NP> parts;      // Det::Coord: "the boy and the girl" → "le garçon et la fille"
  std::string conj_en, conj_fr;
};

struct VP {
  const LexVerb* verb = nullptr;  // nullptr: the copula with `predicate`
  const LexAdjective* predicate = nullptr;  // with no verb and no predicate: `adjunct` is ("is near the river")
  std::string intens_en, intens_fr;  // "too" / "trop"
  Tense tense = Tense::Present;
  bool negated = false;
  bool contracted = true;  // a negation as "isn't", "didn't" (else "is not", "did not")
  const LexAdverb* adverb = nullptr;
  std::shared_ptr<NP> object;  // a noun phrase or a pronoun (person >= 0, det Pronoun)
  std::string particle_en, prep_fr;  // a prepositional verb: "starts with" → "commence par"
  const LexVerb* fr_verb = nullptr;  // its French row, when it differs from `verb`'s
  std::shared_ptr<PP> adjunct;
};

struct Rel {
  bool object_rel = false;  // "that I adopted" (que) against "that chased the mouse" (qui)
  bool commas = false;      // ", which …," (non-restrictive)
  std::string en_word;      // that / which / who, or "" for "the cat I adopted"
  std::shared_ptr<NP> subject;  // object_rel only
  VP vp;
};

const std::array<const char*, 6> kPronEn{"I", "you", "he", "we", "you", "they"};
const std::array<const char*, 6> kPronObjEn{"me", "you", "him", "us", "you", "them"};
const std::array<const char*, 6> kPronFr{"je", "tu", "il", "nous", "vous", "ils"};
const std::array<const char*, 6> kPossEn{"my", "your", "his", "her", "our", "their"};
const std::array<const char*, 11> kNumEn{"", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"};
const std::array<const char*, 11> kNumFr{"", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix"};

bool feminine(const NP& np);
std::size_t form_index(Gender g, bool plural);  // ms, fs, mp, fp
std::string pron_en(const NP& np, bool object);
std::string pron_fr(const NP& np);
Words en_vp(const VP& vp, const NP& subject, bool question = false);
Words fr_vp(const VP& vp, const NP& subject, std::optional<std::pair<Gender, bool>> preceding_object);
Words en_np(const NP& np, bool object = false);
Words fr_np(const NP& np, bool negated_object = false);
std::string be_en(int person, bool past);
Words be_not_en(int person, bool past, bool contracted);
void maybe_negate(Rng& rng, VP& vp, unsigned percent);
bool progressive(Tense t);

// ---- choosing
const LexVerb* french_row(std::string_view fr);
Tense pick_tense(Rng& rng);
NP noun_np(const LexNoun* n, bool plural);
void pick_det(Rng& rng, NP& np, Det bare = Det::Generic);
void pick_adjectives(Rng& rng, NP& np, unsigned percent);
const LexNoun* pick_noun(Rng& rng, std::initializer_list<const std::vector<const LexNoun*>*> pools_);
NP pronoun_np(int person, Gender g);
NP random_pronoun(Rng& rng);
NP name_np(Rng& rng);
NP agent(Rng& rng, bool allow_pronoun = true);
std::shared_ptr<NP> thing_np(Rng& rng, bool places, Det bare = Det::The, unsigned adj_percent = 30);
std::shared_ptr<PP> random_pp(Rng& rng);
const LexAdverb* maybe_adverb(Rng& rng, unsigned percent);
VP verb_phrase(Rng& rng, int kind, bool allow_pronoun_object, std::vector<std::string>& combos, const NP& subject);
void add_adjective_keys(const NP& np, std::vector<std::string>& combos);
Example finish(const Words& en, const Words& fr, std::string category, std::vector<std::string> combos);
VP copula(Rng& rng, const LexAdjective* pred);
std::shared_ptr<PP> location_pp(Rng& rng);

}  // namespace attnlab::corpus::gram
