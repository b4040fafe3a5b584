#pragma once
// The words of the generated English→French corpus: nouns with their gender, adjectives with their
// four French forms and position, verbs with their present-tense forms; and the few rules of French
// grammar the templates need (articles, elision, adjective agreement and placement).
//
// Every French form here was checked by hand. Choices made to keep the French correct and regular:
//  - No passé composé with être (its participle agrees with the subject); only avoir verbs, whose
//    participle does not agree when the object follows it.
//  - Every h-initial French noun in the tables is a mute h (l'homme, l'hôtel), so "starts with a vowel
//    sound" is "starts with a vowel letter or h".
//  - English "you" is always singular and informal: tu / te.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::corpus {

enum class Gender : std::uint8_t { Masculine, Feminine };

// What a noun denotes; adjectives and verbs list the kinds they combine with (bit masks).
enum Kind : unsigned { kAnimal = 1, kPerson = 2, kPlace = 4, kThing = 8 };

struct Noun {
  std::string_view en, en_plural;
  std::string_view fr, fr_plural;
  Gender gender;
  Kind kind;
};

struct Adjective {
  std::string_view en;
  std::string_view ms, fs, mp, fp;  // masculine / feminine, singular / plural
  std::string_view ms_vowel;        // masculine singular before a vowel sound (bel, nouvel, vieil); "" = ms
  bool before_noun;                 // French position: "le petit chien" but "la voiture rouge"
  unsigned kinds;                   // the noun kinds it sensibly describes
  std::string_view group;           // adjectives of one non-empty group contradict ("the red car is green")
  bool coref;                       // a coreference predicate: "... because it was too tired"
};

// A verb in the present tense. fr holds the forms for je, tu, il/elle, nous.
struct Verb {
  std::string_view en, en_3sg;
  std::array<std::string_view, 4> fr;
  unsigned object_kinds;  // noun kinds it takes as a direct object
};

// A subject pronoun: English, French, the index into Verb::fr, and whether English uses the -s form.
struct Pronoun {
  std::string_view en, fr;
  int person;  // 0 je, 1 tu, 2 il/elle, 3 nous
  bool third_singular;
};

const std::vector<Noun>& nouns();
const std::vector<Adjective>& adjectives();

// Nouns of the kinds in the mask `kinds` (e.g. kPerson | kAnimal), in table order.
std::vector<const Noun*> nouns_of(unsigned kinds);
// Adjectives that fit nouns of `kind` (attributively and as predicates).
std::vector<const Adjective*> adjectives_for(Kind kind);
// Coreference predicates that fit animals (tired, hungry, ...) or places (wide, long, ...).
std::vector<const Adjective*> coref_predicates(Kind kind);

const Noun& noun(std::string_view en);            // by English singular; throws std::out_of_range
const Adjective& adjective(std::string_view en);  // by English word; throws std::out_of_range

const std::vector<Verb>& plain_verbs();      // love, see, hear, help, know, call, find, watch
const std::vector<Verb>& agreement_verbs();  // see, like, have, buy
const std::vector<Pronoun>& subject_pronouns();  // I, you, he, she, we

// ---- French grammar -------------------------------------------------------------------------------

// True when a French word starts with a vowel or (mute) h: the article and que, de, ne, je, me,
// te, se elide before it.
bool starts_with_vowel_sound(std::string_view fr_word);

// The French form of `adj` agreeing with a noun of this gender and number. `next_word` is the word
// that follows it (the noun, for an adjective placed before it): a masculine singular bel, nouvel or
// vieil is used before a vowel sound. Pass "" for a predicate ("est beau").
std::string_view agree(const Adjective& adj, Gender gender, bool plural, std::string_view next_word = "");

// The French noun phrase for "the/a [adj] noun" as words ("le", "petit", "chien"), with the
// adjective before or after the noun as French wants; elision is left to french().
std::vector<std::string> french_noun_phrase(const Noun& n, bool plural, bool definite, const Adjective* adj = nullptr);

// Joins French words into a sentence, applying elision first (le/la → l', que → qu', de → d', ne → n',
// je → j', me → m', te → t', se → s', jusque → jusqu' before a vowel sound). Items may be
// multi-word fragments written already elided ("pour boire de l'eau").
std::string french(std::vector<std::string> words);

// Joins English words into a sentence, writing the article "a" as "an" before a vowel letter.
std::string english(std::vector<std::string> words);

}  // namespace attnlab::corpus
