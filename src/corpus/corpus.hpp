#pragma once
// A deterministic English→French parallel corpus in which context decides the translation, so that
// a small transformer has something worth attending to (docs/corpus.md describes it in full):
//
//   coref      "The animal didn't cross the street because it was too tired."
//              → "L'animal n'a pas traversé la rue parce qu'il était trop fatigué."   (too wide → elle)
//   sense      bank → banque / rive, apple → pomme / Apple, trains → entraîne / trains
//   agreement  "I see the red car." → "Je vois la voiture rouge."; "the old tree" → "le vieil arbre"
//   plain      "I love you." → "Je t'aime."
//
// Held-out rule. Every example carries one or two combination keys, the context-dependent pairing it
// exercises: "coref:dog|tired" (the noun "it" refers to, and the predicate), "agreement:car|red",
// "bank:woman|to get some money", ... A fixed hash of the key puts 1 in 7 keys in the test split,
// 1 in 7 in the validation split and the rest in training (combo_split). An example belongs to the
// split of its most held-out key, so no test or validation key ever occurs in training, and the test
// split measures whether the model composes what it learned rather than recalls it. The keys of the
// lesson sentences are always training keys. The rule depends on the words only, not on the seed.
//
// Determinism. Each split is drawn from its own std::mt19937_64 stream derived from the seed, with
// our own bounded-integer and shuffle functions (corpus/random.hpp): the same options give the same
// corpus on every compiler and standard library, and the test split does not change when --train does.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/vocab.hpp"

namespace attnlab::corpus {

struct Example {
  std::string en, fr;  // the sentence pair, as text (tokenize with text::tokenize)
  std::string category;  // "coref", "sense", "agreement" or "plain"
  // The word whose translation depends on context, as a token (case folded), and its correct
  // translation: "it" → "il"/"elle"/"ils"/"elles", "bank" → "banque"/"rive", "apple" → "pomme"/"apple",
  // "trains" → "entraîne"/"trains", an adjective → its agreeing French form. Empty for "plain".
  // Both occur among the tokens of their sentence.
  std::string focus_en, focus_fr;
  // The held-out keys this example exercises (see above). Kept in memory only, not in the TSV files.
  std::vector<std::string> combos;
  // The English words (tokens, case folded) that decide focus_fr: the noun "it" refers to, the noun an
  // adjective agrees with, the context that settles a word's sense ("money" for bank → banque, "an"
  // and "eats" for apple → pomme, "the" before "trains" for the noun). Where a word occurs more than
  // once, the occurrence nearest the focus word is meant. For the relation probes of `attnlab heads`
  // (docs/heads.md); in memory only.
  std::vector<std::string> context_en;
  // A verb of the English sentence and its subject, as tokens (the subject's occurrence nearest the
  // verb is meant): "cross"/"animal", "walks"/"she", "love"/"i". Empty when the sentence has none.
  std::string verb_en, subject_en;
};

// How often each category is drawn (relative integer weights).
struct CategoryWeights {
  unsigned coref = 35, sense = 25, agreement = 25, plain = 15;
};

// Which sentences: the lesson-sized templates (a few hundred words, the phenomena the lessons point
// at; translate-small), the wide grammar over the lexicon tables (corpus/grammar.hpp; translate-wide)
// or the everyday grammar, a superset of the wide one for the sentences of a beginners' textbook
// (translate-everyday). Wide and Everyday mix in `template_percent` % of the templates' sentences.
enum class Grammar { Lessons, Wide, Everyday };

// "lessons", "wide", "everyday"; parse_grammar gives nullopt for any other name.
const char* grammar_name(Grammar g);
std::optional<Grammar> parse_grammar(std::string_view name);

struct CorpusOptions {
  Grammar grammar = Grammar::Lessons;
  unsigned template_percent = 10;  // Wide and Everyday
  std::uint64_t seed = 1;
  std::size_t train = 12000;  // at least lesson_examples().size()
  std::size_t valid = 600;
  std::size_t test = 1000;
  CategoryWeights weights;
};

struct Corpus {
  std::vector<Example> train, valid, test;
};

enum class Split { Train, Valid, Test };
const char* split_name(Split s);  // "train", "valid", "test"

// The categories, in the order summaries list them (the templates'; grammar_categories() adds the
// wide grammar's).
const std::vector<std::string>& categories();

// Generates the corpus. With the lesson grammar, train holds every lesson example; with the wide
// grammar, no split holds a source sentence (grammar.hpp). Train may repeat a sentence (so that the
// category weights hold even for categories with few distinct sentences); valid and test sentences
// are distinct, and by the held-out rule no valid or test sentence occurs in train. Throws InputError when a size is over
// kMaxSplitSize, the train size is below the number of lesson examples, or a split cannot be filled
// with distinct sentences (weights that leave only a small category).
Corpus generate(const CorpusOptions& options);
inline constexpr std::size_t kMaxSplitSize = 1'000'000;

// The split a combination key belongs to (the held-out rule above).
Split combo_split(std::string_view combo);
// The split an example belongs to: that of its most held-out key.
Split example_split(const Example& example);

// The sentence pairs the lessons use; always in the training split, so the shipped model knows them:
// the coreference pair (too tired / too wide), "The boy trains the puppy.", "The trains are late.",
// "I love you.", "I see the red car.", "I see the small dog.", a bank and an apple pair each.
const std::vector<Example>& lesson_examples();

// A shared EN+FR vocabulary from examples (both sides of each; normally the training split).
text::Vocab build_vocab(const std::vector<Example>& examples, std::size_t min_count = 1);

// ---- English-only corpus for the decoder-only language model ---------------------------------------

struct LmOptions {
  std::uint64_t seed = 1;
  std::size_t train = 8000;  // at least lm_lesson_sentences().size()
  std::size_t valid = 400;
  std::size_t test = 400;
};

struct LmCorpus {
  std::vector<std::string> train, valid, test;
};

// English sentences: about a third from "journey"/"effort" templates around the lesson sentences
// ("Your journey starts with one step.", "Every effort moves you."), the rest English sides of the
// translation templates. The same held-out rule applies. Sentences may repeat: their frequencies
// are the distribution the language model learns.
LmCorpus generate_lm(const LmOptions& options);

const std::vector<std::string>& lm_lesson_sentences();

// A vocabulary from English sentences (normally the LM training split).
text::Vocab build_lm_vocab(const std::vector<std::string>& sentences, std::size_t min_count = 1);

// ---- Summaries ---------------------------------------------------------------------------------

struct SplitStats {
  std::size_t examples = 0;
  std::map<std::string, std::size_t> per_category;
  std::size_t max_en_tokens = 0, max_fr_tokens = 0;
  std::size_t combos = 0;  // distinct combination keys
};

SplitStats split_stats(const std::vector<Example>& examples);

}  // namespace attnlab::corpus
