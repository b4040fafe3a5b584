// The generated corpus: determinism, the lesson sentences, the held-out rule, focus words, the
// French grammar helpers, and the TSV format.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "corpus/corpus.hpp"
#include "corpus/lexicon.hpp"
#include "corpus/random.hpp"
#include "corpus/tsv.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

using namespace attnlab;
using namespace attnlab::corpus;

namespace {

// One corpus at the default sizes, shared by the tests that only read it (generating takes ~0.3 s).
const Corpus& default_corpus() {
  static const Corpus c = generate(CorpusOptions{});
  return c;
}

bool same(const Example& a, const Example& b) {
  return a.en == b.en && a.fr == b.fr && a.category == b.category && a.focus_en == b.focus_en &&
         a.focus_fr == b.focus_fr && a.combos == b.combos;
}

bool same(const std::vector<Example>& a, const std::vector<Example>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) { return same(x, y); });
}

bool has_token(const std::string& sentence, const std::string& token) {
  const auto toks = text::tokenize(sentence);
  return std::find(toks.begin(), toks.end(), token) != toks.end();
}

const Example* find_en(const std::vector<Example>& v, const std::string& en) {
  for (const auto& e : v)
    if (e.en == en) return &e;
  return nullptr;
}

// The lexicon entry of an English noun in the singular or the plural.
const Noun& noun_by_english(const std::string& word) {
  for (const Noun& n : nouns())
    if (n.en == word || n.en_plural == word) return n;
  FAIL("not a noun: " << word);
  return nouns().front();
}

CorpusOptions small(std::uint64_t seed) {
  CorpusOptions o;
  o.seed = seed;
  o.train = 400;
  o.valid = 100;
  o.test = 100;
  return o;
}

}  // namespace

TEST_CASE("random: mt19937_64 is the standard's, and our helpers are fixed functions of it") {
  Rng rng(5489);
  rng.discard(9999);
  CHECK(rng() == 9981545732273789042ULL);  // [rand.predef]: the 10000th output for the default seed

  // Pinned: these values follow from mt19937_64 and our own rejection rule alone, so they are the
  // same with every standard library. If they change, corpora made with earlier builds change too.
  Rng r(42);
  std::vector<std::size_t> draws;
  for (int i = 0; i < 8; ++i) draws.push_back(uniform_below(r, 10));
  CHECK(draws == std::vector<std::size_t>{6, 4, 0, 2, 1, 8, 6, 4});

  Rng s(7);
  std::vector<int> v{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  shuffle(s, v);
  std::vector<int> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(v != sorted);
  CHECK(fnv1a("") == 0xCBF29CE484222325ULL);
  CHECK(fnv1a("a") == 0xAF63DC4C8601EC8CULL);  // the published FNV-1a test vector

  Rng t(1);
  for (int i = 0; i < 1000; ++i) CHECK(uniform_below(t, 3) < 3);
  std::vector<unsigned> w{0, 5, 0};
  for (int i = 0; i < 100; ++i) CHECK(pick_weighted(t, w) == 1);
}

TEST_CASE("corpus: the same seed gives the same corpus, another seed a different one") {
  const Corpus a = generate(small(1)), b = generate(small(1)), c = generate(small(2));
  CHECK(same(a.train, b.train));
  CHECK(same(a.valid, b.valid));
  CHECK(same(a.test, b.test));
  CHECK_FALSE(same(a.train, c.train));
  CHECK_FALSE(same(a.test, c.test));
  // Each split has its own random stream: the test split does not depend on the training size.
  CorpusOptions bigger = small(1);
  bigger.train = 900;
  CHECK(same(generate(bigger).test, a.test));
  CHECK(a.train.size() == 400);
  CHECK(a.valid.size() == 100);
  CHECK(a.test.size() == 100);
}

TEST_CASE("corpus: pinned output for seed 1 (the corpus is the same on every platform)") {
  // A fingerprint of the whole TSV text of a small corpus. It changes only when the tables, the
  // templates or the sampling change; then docs/corpus.md's figures need checking too.
  const Corpus c = generate(small(1));
  const std::uint64_t h = fnv1a(to_tsv(c.train) + to_tsv(c.valid) + to_tsv(c.test));
  INFO("fingerprint: " << h);
  CHECK(h == 8933426619733808532ULL);
}

TEST_CASE("corpus: the lesson sentences are in train, translated as the lessons say") {
  const auto& train = default_corpus().train;
  const std::map<std::string, std::string> expected{
      {"The animal didn't cross the street because it was too tired.",
       "L'animal n'a pas traversé la rue parce qu'il était trop fatigué."},
      {"The animal didn't cross the street because it was too wide.",
       "L'animal n'a pas traversé la rue parce qu'elle était trop large."},
      {"The boy trains the puppy.", "Le garçon entraîne le chiot."},
      {"The trains are late.", "Les trains sont en retard."},
      {"I love you.", "Je t'aime."},
      {"I see the red car.", "Je vois la voiture rouge."},
      {"I see the small dog.", "Je vois le petit chien."},
      {"The woman walks to the bank to get some money.", "La femme marche jusqu'à la banque pour chercher de l'argent."},
      {"The girl is thirsty, so she walks to the bank.", "La fille a soif, alors elle marche jusqu'à la rive."},
      {"The girl eats an apple.", "La fille mange une pomme."},
      {"The man works for Apple.", "L'homme travaille pour Apple."},
  };
  CHECK(lesson_examples().size() == expected.size());
  for (const auto& [en, fr] : expected) {
    INFO(en);
    const Example* e = find_en(train, en);
    REQUIRE(e != nullptr);
    CHECK(e->fr == fr);
    CHECK(example_split(*e) == Split::Train);
  }
  const Example* tired = find_en(train, "The animal didn't cross the street because it was too tired.");
  CHECK(tired->category == "coref");
  CHECK(tired->focus_en == "it");
  CHECK(tired->focus_fr == "il");
  CHECK(find_en(train, "The animal didn't cross the street because it was too wide.")->focus_fr == "elle");
  CHECK(find_en(train, "The boy trains the puppy.")->focus_fr == "entraîne");
  CHECK(find_en(train, "The trains are late.")->focus_fr == "trains");
}

TEST_CASE("corpus: no validation or test key occurs in train, and test only holds held-out keys") {
  const Corpus& c = default_corpus();
  std::set<std::string> train_keys;
  for (const auto& e : c.train)
    for (const auto& k : e.combos) {
      train_keys.insert(k);
      CHECK(combo_split(k) == Split::Train);
    }
  std::set<std::string> test_keys;
  for (const auto* split : {&c.valid, &c.test}) {
    const Split which = split == &c.valid ? Split::Valid : Split::Test;
    for (const auto& e : *split) {
      INFO(e.en);
      CHECK(example_split(e) == which);
      bool held_out = false;
      for (const auto& k : e.combos) held_out = held_out || combo_split(k) == which;
      CHECK(held_out);
      for (const auto& k : e.combos)
        if (combo_split(k) != Split::Train) {
          CHECK(train_keys.count(k) == 0);
          if (which == Split::Test) test_keys.insert(k);
        }
    }
  }
  CHECK(test_keys.size() > 300);
  // And so no sentence of valid or test occurs in train.
  std::set<std::string> train_en;
  for (const auto& e : c.train) train_en.insert(e.en);
  for (const auto* split : {&c.valid, &c.test})
    for (const auto& e : *split) CHECK(train_en.count(e.en) == 0);
}

TEST_CASE("corpus: valid and test sentences are distinct, categories follow the weights") {
  const Corpus& c = default_corpus();
  for (const auto* split : {&c.valid, &c.test}) {
    std::set<std::string> en;
    for (const auto& e : *split) en.insert(e.en);
    CHECK(en.size() == split->size());
  }
  const std::map<std::string, double> weight{{"coref", 0.35}, {"sense", 0.25}, {"agreement", 0.25}, {"plain", 0.15}};
  for (const auto* split : {&c.train, &c.test}) {
    const SplitStats st = split_stats(*split);
    for (const auto& [cat, w] : weight) {
      INFO(cat);
      const double share = double(st.per_category.at(cat)) / double(st.examples);
      CHECK(share == doctest::Approx(w).epsilon(0.25));  // within a quarter of the weight
    }
  }
}

TEST_CASE("corpus: every focus word occurs in its sentence, on both sides") {
  const Corpus& c = default_corpus();
  for (const auto* split : {&c.train, &c.valid, &c.test})
    for (const auto& e : *split) {
      INFO(e.en << " | " << e.fr);
      if (e.category == "plain") {
        CHECK(e.focus_en.empty());
        CHECK(e.focus_fr.empty());
        continue;
      }
      CHECK(has_token(e.en, e.focus_en));
      CHECK(has_token(e.fr, e.focus_fr));
    }
}

TEST_CASE("corpus: il/elle cannot be guessed without looking at the right noun") {
  // For "it"/"they" sentences, count (predicate fits animals?, subject gender, pronoun gender).
  // If any of these cells were empty, the pronoun would follow from the predicate class or the
  // subject alone and the model could skip the attention the lesson is about.
  std::map<std::string, bool> animal_predicate;
  for (const Adjective* a : coref_predicates(kAnimal)) animal_predicate[std::string(a->en)] = true;
  for (const Adjective* a : coref_predicates(kPlace)) animal_predicate[std::string(a->en)] = false;
  std::map<std::tuple<bool, bool, bool>, int> cells;
  for (const auto& e : default_corpus().test) {
    if (e.category != "coref") continue;
    const auto en = text::tokenize(e.en), fr = text::tokenize(e.fr);
    const std::string predicate = en[en.size() - 2];
    REQUIRE(animal_predicate.count(predicate) == 1);
    const bool subject_feminine = noun_by_english(en[1]).gender == Gender::Feminine;
    const bool pronoun_feminine = e.focus_fr == "elle" || e.focus_fr == "elles";
    ++cells[{animal_predicate[predicate], subject_feminine, pronoun_feminine}];
  }
  CHECK(cells.size() == 8);
  for (const auto& [cell, n] : cells) CHECK(n >= 5);
}

TEST_CASE("corpus: sentences are short, and every valid/test word is in the train vocabulary") {
  const Corpus& c = default_corpus();
  const text::Vocab vocab = build_vocab(c.train);
  CHECK(vocab.size() < 800);
  for (const auto* split : {&c.train, &c.valid, &c.test})
    for (const auto& e : *split) {
      CHECK(text::tokenize(e.en).size() <= 20);
      CHECK(text::tokenize(e.fr).size() <= 20);
    }
  std::set<std::string> missing;
  for (const auto* split : {&c.valid, &c.test})
    for (const auto& e : *split) {
      std::vector<std::string> unknown;
      vocab.encode(e.en, &unknown);
      vocab.encode(e.fr, &unknown);
      missing.insert(unknown.begin(), unknown.end());
    }
  CHECK(missing.empty());
  for (const auto& w : missing) INFO(w);
}

TEST_CASE("corpus: all lesson sentences' words are in the vocabularies") {
  const text::Vocab vocab = build_vocab(default_corpus().train);
  for (const std::string s :
       {"The animal didn't cross the street because it was too tired.", "The animal didn't cross the street because it was too wide.",
        "L'animal n'a pas traversé la rue parce qu'il était trop fatigué.", "L'animal n'a pas traversé la rue parce qu'elle était trop large.",
        "The boy trains the puppy.", "Le garçon entraîne le chiot.", "I love you", "Je t'aime.", "The trains are late.",
        "Les trains sont en retard.", "The red car", "la voiture rouge", "the small dog", "le petit chien"}) {
    std::vector<std::string> unknown;
    vocab.encode(s, &unknown);
    INFO(s);
    CHECK(unknown.empty());
  }
  const LmCorpus lm = generate_lm(LmOptions{});
  const text::Vocab lm_vocab = build_lm_vocab(lm.train);
  for (const std::string s : {"Your journey starts with one step", "Every effort moves you", "The animal didn't cross the street because it was too tired.", "I love you"}) {
    std::vector<std::string> unknown;
    lm_vocab.encode(s, &unknown);
    INFO(s);
    CHECK(unknown.empty());
  }
}

TEST_CASE("language-model corpus: deterministic, holds the lesson sentences, English only") {
  LmOptions o;
  o.train = 600;
  o.valid = 50;
  o.test = 50;
  const LmCorpus a = generate_lm(o), b = generate_lm(o);
  CHECK(a.train == b.train);
  CHECK(a.test == b.test);
  o.seed = 2;
  CHECK(generate_lm(o).train != a.train);
  CHECK(a.train.size() == 600);
  for (const auto& s : lm_lesson_sentences()) CHECK(std::count(a.train.begin(), a.train.end(), s) >= 1);
  CHECK(lm_lesson_sentences() == std::vector<std::string>{"Your journey starts with one step.", "Every effort moves you."});
  // "every effort moves" is always followed by "you": the next-token lesson has a clear answer.
  for (const auto& s : a.train) {
    const auto t = text::tokenize(s);
    for (std::size_t i = 0; i + 3 < t.size(); ++i)
      if (t[i + 2] == "moves" && t[i + 1] == "effort") CHECK(t[i + 3] == "you");
    CHECK(!has_token(s, "le"));
    CHECK(!has_token(s, "la"));
  }
}

TEST_CASE("corpus: bad sizes are input errors") {
  CorpusOptions o = small(1);
  o.train = 3;
  CHECK_THROWS_WITH_AS(generate(o), doctest::Contains("lesson sentences"), InputError);
  o = small(1);
  o.test = kMaxSplitSize + 1;
  CHECK_THROWS_WITH_AS(generate(o), doctest::Contains("too large"), InputError);
  o = small(1);
  o.weights = {0, 0, 0, 0};
  CHECK_THROWS_AS(generate(o), InputError);
  // A category with few distinct held-out sentences cannot fill a large test split.
  o = small(1);
  o.weights = {0, 0, 0, 1};
  o.test = 20000;
  CHECK_THROWS_WITH_AS(generate(o), doctest::Contains("distinct test sentences"), InputError);
  LmOptions l;
  l.train = 1;
  CHECK_THROWS_AS(generate_lm(l), InputError);
  // Zero-sized validation and test splits are allowed.
  o = small(1);
  o.valid = 0;
  o.test = 0;
  CHECK(generate(o).test.empty());
}

TEST_CASE("lexicon: tables are complete and coreference predicates fit one kind only") {
  std::set<std::string_view> en;
  for (const Noun& n : nouns()) {
    CHECK(en.insert(n.en).second);
    CHECK(!n.en_plural.empty());
    CHECK(!n.fr.empty());
    CHECK(!n.fr_plural.empty());
  }
  for (const Adjective& a : adjectives()) {
    INFO(a.en);
    CHECK(!(a.ms.empty() || a.fs.empty() || a.mp.empty() || a.fp.empty()));
    if (a.coref) CHECK(((a.kinds & kAnimal) != 0) != ((a.kinds & kPlace) != 0));
  }
  CHECK(coref_predicates(kAnimal).size() >= 8);
  CHECK(coref_predicates(kPlace).size() >= 8);
  // Both genders among the animals and among the places, in numbers.
  for (Kind k : {kAnimal, kPlace}) {
    int f = 0, m = 0;
    for (const Noun* n : nouns_of(k)) (n->gender == Gender::Feminine ? f : m)++;
    CHECK(f >= 10);
    CHECK(m >= 10);
  }
}

TEST_CASE("French grammar: elision, adjective forms and order, a/an") {
  CHECK(french({"le", "animal", "ne", "a", "pas", "traversé", "la", "rue", "parce", "que", "il", "était", "là", "."}) ==
        "L'animal n'a pas traversé la rue parce qu'il était là.");
  CHECK(french({"je", "te", "aime", "."}) == "Je t'aime.");
  CHECK(french({"je", "ai", "le", "homme", "jusque", "à", "la", "école"}) == "J'ai l'homme jusqu'à l'école");
  CHECK(french({"le", "petit", "animal"}) == "Le petit animal");

  const Noun& tree = noun("tree");
  const Noun& car = noun("car");
  const Adjective& old = adjective("old");
  const Adjective& red = adjective("red");
  CHECK(french(french_noun_phrase(tree, false, true, &old)) == "Le vieil arbre");
  CHECK(french(french_noun_phrase(tree, false, false, &old)) == "Un vieil arbre");
  CHECK(french(french_noun_phrase(tree, true, true, &old)) == "Les vieux arbres");
  CHECK(french(french_noun_phrase(tree, false, true, &red)) == "L'arbre rouge");
  CHECK(french(french_noun_phrase(car, false, true, &red)) == "La voiture rouge");
  CHECK(french(french_noun_phrase(car, true, true, &old)) == "Les vieilles voitures");
  CHECK(french(french_noun_phrase(noun("dog"), false, true, &adjective("small"))) == "Le petit chien");
  CHECK(french(french_noun_phrase(noun("hotel"), false, true, &adjective("beautiful"))) == "Le bel hôtel");
  CHECK(french(french_noun_phrase(noun("plane"), false, false, &adjective("new"))) == "Un nouvel avion");
  CHECK(agree(old, Gender::Masculine, false) == "vieux");  // predicate: "l'arbre est vieux"
  CHECK(agree(adjective("white"), Gender::Feminine, true) == "blanches");
  CHECK(english({"a", "old", "tree", "and", "a", "car"}) == "An old tree and a car");
  CHECK(starts_with_vowel_sound("homme"));
  CHECK(starts_with_vowel_sound("Éléphant"));
  CHECK_FALSE(starts_with_vowel_sound("chien"));
}

TEST_CASE("TSV: round trip and clear errors") {
  const Corpus c = generate(small(3));
  const std::string tsv = to_tsv(c.test);
  CHECK(tsv.rfind("en\tfr\tcategory\tfocus_en\tfocus_fr\n", 0) == 0);
  const auto back = parse_tsv(tsv, "test.tsv");
  REQUIRE(back.size() == c.test.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    CHECK(back[i].en == c.test[i].en);
    CHECK(back[i].fr == c.test[i].fr);
    CHECK(back[i].category == c.test[i].category);
    CHECK(back[i].focus_en == c.test[i].focus_en);
    CHECK(back[i].focus_fr == c.test[i].focus_fr);
  }
  // Windows line ends are tolerated.
  CHECK(parse_tsv("en\tfr\tcategory\tfocus_en\tfocus_fr\r\nA.\tB.\tplain\t\t\r\n", "x").size() == 1);
  CHECK_THROWS_WITH_AS(parse_tsv("", "x.tsv"), doctest::Contains("x.tsv: the file is empty"), InputError);
  CHECK_THROWS_WITH_AS(parse_tsv("en\tfr\n", "x.tsv"), doctest::Contains("x.tsv:1: expected the header"), InputError);
  CHECK_THROWS_WITH_AS(parse_tsv(std::string(kTsvHeader) + "\nA.\tB.\tplain\n", "x.tsv"),
                       doctest::Contains("x.tsv:2: expected 5 tab-separated fields"), InputError);
  CHECK_THROWS_WITH_AS(parse_tsv(std::string(kTsvHeader) + "\n\tB.\tplain\t\t\n", "x.tsv"),
                       doctest::Contains("x.tsv:2: the English sentence is empty"), InputError);
}

TEST_CASE("corpus: every example names a verb and its subject, every context-dependent one the words that decide its focus word, all in its sentence") {
  using namespace attnlab::corpus;
  CorpusOptions o;
  o.train = 2000;
  o.valid = 100;
  o.test = 100;
  const Corpus c = generate(o);
  std::size_t checked = 0;
  for (const auto* split : {&c.train, &c.test})
    for (const Example& e : *split) {
      // Every sentence names a verb and its subject, both among its tokens (the trains-state sentences'
      // subject is the focus word "trains").
      const auto words = attnlab::text::tokenize(e.en);
      CHECK(std::find(words.begin(), words.end(), e.verb_en) != words.end());
      CHECK(std::find(words.begin(), words.end(), e.subject_en) != words.end());
      if (e.category == "plain") {
        CHECK(e.context_en.empty());
        continue;
      }
      REQUIRE(!e.context_en.empty());
      const auto toks = attnlab::text::tokenize(e.en);
      for (const auto& w : e.context_en) CHECK(std::find(toks.begin(), toks.end(), w) != toks.end());
      ++checked;
    }
  CHECK(checked > 1000);
  // The lesson's coreference pair: "it" is decided by "animal" / "street".
  for (const Example& e : lesson_examples()) {
    if (e.en == "The animal didn't cross the street because it was too tired.") CHECK(e.context_en == std::vector<std::string>{"animal"});
    if (e.en == "The animal didn't cross the street because it was too wide.") CHECK(e.context_en == std::vector<std::string>{"street"});
  }
}
