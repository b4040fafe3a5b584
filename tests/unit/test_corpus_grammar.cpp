// The wide grammar (corpus/grammar.hpp) over the lexicon tables: French spelling rules, determinism,
// the held-out rule, the explainers' sentences kept out of every split, focus words, and the French
// of every sentence checked against rules it must never break.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "corpus/corpus.hpp"
#include "corpus/grammar.hpp"
#include "corpus/tables.hpp"
#include "corpus/tsv.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

using namespace attnlab;
using namespace attnlab::corpus;

namespace {

const Corpus& wide_corpus() {
  static const Corpus c = [] {
    CorpusOptions o;
    o.grammar = Grammar::Wide;
    o.train = 20000;
    o.valid = 500;
    o.test = 2000;
    return generate(o);
  }();
  return c;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  for (const auto& w : text::tokenize(s)) out.push_back(text::fold_case(w));
  return out;
}

}  // namespace

TEST_CASE("french_text: contractions, elision, possessives before a vowel, aspirated h") {
  CHECK(french_text({"je", "parle", "à", "le", "garçon", "."}) == "Je parle au garçon.");
  CHECK(french_text({"je", "parle", "à", "les", "enfants", "."}) == "Je parle aux enfants.");
  CHECK(french_text({"il", "vient", "de", "le", "jardin", "."}) == "Il vient du jardin.");
  CHECK(french_text({"il", "est", "près de", "les", "arbres", "."}) == "Il est près des arbres.");
  // Before a vowel sound "le" elides and does not contract (the corpus once wrote "près du outil").
  CHECK(french_text({"il", "est", "près de", "le", "outil", "."}) == "Il est près de l'outil.");
  CHECK(french_text({"je", "vais", "à", "le", "hôtel", "."}) == "Je vais à l'hôtel.");
  CHECK(french_text({"la", "porte", "de", "le", "ingénieur"}) == "La porte de l'ingénieur");
  CHECK(french_text({"il", "est", "près de", "des", "arbres", "."}) == "Il est près d'arbres.");
  CHECK(french_text({"je", "=le", "aime", "."}) == "Je l'aime.");
  CHECK(french_text({"je", "te", "aime", "."}) == "Je t'aime.");
  CHECK(french_text({"je", "ne", "=les", "ai", "pas", "vus", "."}) == "Je ne les ai pas vus.");
  CHECK(french_text({"commencer", "à", "=le", "voir"}) == "Commencer à le voir");  // a pronoun never contracts
  CHECK(french_text({"ma", "amie", "est", "là", "."}) == "Mon amie est là.");
  CHECK(french_text({"ce", "arbre", "est", "vieux", "."}) == "Cet arbre est vieux.");
  CHECK(french_text({"parce", "que", "il", "était", "trop", "fatigué", "."}) == "Parce qu'il était trop fatigué.");
  CHECK(french_text({"le", "homme", "ne", "a", "pas", "de", "eau", "."}) == "L'homme n'a pas d'eau.");
  CHECK(french_text({"huit", "artistes", "que", "huit", "amis", "voient"}) == "Huit artistes que huit amis voient");
  // An aspirated h in the tables (elides = 0) keeps its article whole.
  const LexNoun* hero = lexicon_tables().noun("hero");
  REQUIRE(hero != nullptr);
  CHECK_FALSE(hero->elides);
  CHECK(french_text({"le", hero->fr}) == "Le " + hero->fr);
  CHECK(french_text({"la", "maison", "de", "le", hero->fr}) == "La maison du " + hero->fr);
}

// The shipped model data/models/translate-wide learned from the wide grammar's corpus, and its tests
// regenerate its test split: the wide grammar must keep writing exactly the same sentences, whatever
// is added beside it (the everyday grammar shares its code). These are the FNV-1a hashes of the files
// `attnlab corpus --grammar wide --seed 1 --train 20000 --valid 500 --test 1000 --out DIR` writes
// (sha256 of train.tsv cd0fee94…, valid.tsv ce782d0d…, test.tsv a4953eb6…, recorded before the
// everyday grammar was added). If this fails, the change altered the wide corpus: undo it, or put
// the new draws behind Grammar::Everyday.
namespace {

// The corpus a pin below checks: seed 1, 20,000 / 500 / 1,000 pairs of `grammar`, and the FNV-1a
// hashes of its three splits as `attnlab corpus ... --out DIR` writes them.
Corpus pinned_corpus(Grammar grammar, std::uint64_t train, std::uint64_t valid, std::uint64_t test) {
  CorpusOptions o;
  o.grammar = grammar;
  o.seed = 1;
  o.train = 20000;
  o.valid = 500;
  o.test = 1000;
  Corpus c = generate(o);
  CHECK(fnv1a(to_tsv(c.train)) == train);
  CHECK(fnv1a(to_tsv(c.valid)) == valid);
  CHECK(fnv1a(to_tsv(c.test)) == test);
  return c;
}

}  // namespace

TEST_CASE("wide corpus: byte for byte the corpus translate-wide was trained on") {
  const Corpus c = pinned_corpus(Grammar::Wide, 0xed5fe3a2dd4110e3ull, 0x55ee4a2c52544155ull, 0xde85203e528c1110ull);
  // A few pairs in clear, so a failure shows what changed.
  REQUIRE(c.test.size() == 1000);
  CHECK(c.test.front().en == "This reasonable bee did not adjust her fat brilliant population.");
  CHECK(c.test.front().fr == "Cette abeille raisonnable n'a pas ajusté sa grosse population brillante.");
  CHECK(c.train.front().en == "The puppy took the wheel because it was too big.");
  CHECK(c.train.front().fr == "Le chiot a pris la roue parce qu'elle était trop grande.");
}

// The same for the everyday grammar, pinned while translate-everyday is trained on it: eval, the
// lessons and the calibration regenerate a model's test split from the grammar's code, so a change
// to what the grammar writes would test the model on sentences that are not its held-out ones (some
// may have been its training sentences). Recorded from the grammar of issue 50's retraining (the
// beginner vocabulary: jobs, foods, clothes, instruments, sports, vehicles; jobs without an article,
// how much, was -ing when, clauses of set shapes, the fixes of a native reading), which writes for
// `attnlab corpus --grammar everyday --seed 1 --train 20000 --valid 500 --test 1000 --out DIR`
// (sha256 of train.tsv b85e499a…, valid.tsv ab92cabf…, test.tsv 47bf08ee…). If this fails: undo the
// change, or retrain translate-everyday on the new grammar and record the new hashes here.
TEST_CASE("everyday corpus: byte for byte the corpus translate-everyday is trained on") {
  const Corpus c = pinned_corpus(Grammar::Everyday, 0xdf1bfbbfb7445171ull, 0x63aa8f4e0784af64ull, 0xf1afc2c02d608a07ull);
  REQUIRE(c.test.size() == 1000);
  CHECK(c.test.front().en == "They buy the boot with a pilot.");
  CHECK(c.test.front().fr == "Ils achètent la botte avec un pilote.");
  CHECK(c.train.front().en == "These laptops are hers.");
  CHECK(c.train.front().fr == "Ces ordinateurs portables sont à elle.");
}

TEST_CASE("wide corpus: the same options give the same corpus") {
  CorpusOptions o;
  o.grammar = Grammar::Wide;
  o.train = 500;
  o.valid = 50;
  o.test = 50;
  const Corpus a = generate(o), b = generate(o);
  REQUIRE(a.train.size() == b.train.size());
  for (std::size_t i = 0; i < a.train.size(); ++i) CHECK(a.train[i].en == b.train[i].en);
  CHECK(a.test.front().fr == b.test.front().fr);
  o.seed = 2;
  CHECK(generate(o).train.front().en != a.train.front().en);
}

TEST_CASE("wide corpus: every category occurs, no held-out key in train, no source sentence anywhere") {
  const Corpus& c = wide_corpus();
  std::set<std::string> cats, train_keys;
  for (const auto& e : c.train) {
    cats.insert(e.category);
    train_keys.insert(e.combos.begin(), e.combos.end());
  }
  for (const auto& g : grammar_categories()) CHECK_MESSAGE(cats.count(g), g);
  for (const auto* split : {&c.valid, &c.test})
    for (const auto& e : *split) {
      bool held_out = false;
      for (const auto& k : e.combos) held_out = held_out || !train_keys.count(k);
      CHECK_MESSAGE(held_out, e.en);
    }
  std::set<std::string> sources;
  for (const auto& s : source_sentences()) sources.insert(text::fold_case(s.en));
  for (const auto* split : {&c.train, &c.valid, &c.test})
    for (const auto& e : *split) CHECK_MESSAGE(!sources.count(text::fold_case(e.en)), e.en);
  CHECK(is_source_sentence("i love you"));
  CHECK(is_source_sentence("The cat that I adopted sleeps."));
  CHECK_FALSE(is_source_sentence("The cat that I adopted sleeps well."));
}

TEST_CASE("wide corpus: focus words occur in their sentences; il/elle agrees with the noun it names") {
  const Corpus& c = wide_corpus();
  std::size_t coref = 0;
  for (const auto& e : c.test) {
    if (e.focus_en.empty()) continue;
    const auto en = words(e.en), fr = words(e.fr);
    CHECK_MESSAGE(std::count(en.begin(), en.end(), text::fold_case(e.focus_en)) > 0, e.en);
    CHECK_MESSAGE(std::count(fr.begin(), fr.end(), text::fold_case(e.focus_fr)) > 0, e.fr);
    if (e.category == "coref" && !e.context_en.empty()) {
      ++coref;
      CHECK_MESSAGE(std::count(en.begin(), en.end(), e.context_en.front()) > 0, e.en);
    }
  }
  CHECK(coref > 100);
}

TEST_CASE("wide corpus: the French never breaks elision or contraction") {
  static const std::set<std::string> elide{"le", "la", "je", "ne", "que", "de", "me", "te", "se"};
  const Corpus& c = wide_corpus();
  for (const auto* split : {&c.train, &c.test})
    for (const auto& e : *split) {
      // Split on spaces only: the tokenizer would separate "l'" and hide exactly what is checked.
      std::vector<std::string> w;
      std::string cur;
      for (char ch : e.fr + " ") {
        if (ch == ' ') {
          if (!cur.empty()) w.push_back(text::fold_case(cur));
          cur.clear();
        } else {
          cur += ch;
        }
      }
      for (std::size_t i = 0; i + 1 < w.size(); ++i) {
        const std::string& a = w[i];
        const std::string& b = w[i + 1];
        CHECK_MESSAGE(!((a == "à" || a == "de") && (b == "le" || b == "les")), e.fr);
        const bool vowel = !b.empty() && std::string("aeiouyàâéèêîôû").find(b.substr(0, 1)) != std::string::npos;
        const bool accented = b.rfind("é", 0) == 0 || b.rfind("à", 0) == 0 || b.rfind("â", 0) == 0 || b.rfind("ê", 0) == 0 ||
                              b.rfind("î", 0) == 0 || b.rfind("ô", 0) == 0 || b.rfind("è", 0) == 0;
        CHECK_MESSAGE(!(elide.count(a) && (vowel || accented)), e.fr);
        CHECK_MESSAGE(!((a == "du" || a == "au") && (vowel || accented)), e.fr);  // de l'outil, not du outil
      }
      CHECK_MESSAGE(e.en.find("  ") == std::string::npos, e.en);
      CHECK_MESSAGE(e.fr.find("  ") == std::string::npos, e.fr);
    }
}

TEST_CASE("wide corpus: relative clauses, participle agreement and tenses as French writes them") {
  const Corpus& c = wide_corpus();
  std::size_t que = 0, qui = 0, imparfait = 0, pc = 0, questions = 0;
  for (const auto& e : c.train) {
    if (e.category == "relative" && e.focus_fr == "que") ++que;
    if (e.category == "relative" && e.focus_fr == "qui") ++qui;
    if (e.en.find(" was ") != std::string::npos && e.fr.find("ait ") != std::string::npos) ++imparfait;
    if (e.en.find("didn't") != std::string::npos) {
      ++pc;
      CHECK_MESSAGE((e.fr.find(" pas ") != std::string::npos), e.fr);
    }
    if (e.category == "question") {
      ++questions;
      CHECK_MESSAGE(e.fr.rfind("Est-ce qu", 0) == 0, e.fr);
      CHECK_MESSAGE(e.en.back() == '?', e.en);
    }
  }
  CHECK(que > 300);
  CHECK(qui > 300);
  CHECK(imparfait > 300);
  CHECK(pc > 300);
  CHECK(questions > 300);
}

TEST_CASE("wide corpus: negations written out and contracted, and where things are") {
  // Learners type "is not" as often as "isn't": a model that read only contractions drops the "not".
  const Corpus& c = wide_corpus();
  std::size_t full = 0, contracted = 0, located = 0, located_negated = 0;
  for (const auto& e : c.train) {
    const auto en = words(e.en);
    const bool has_not = std::count(en.begin(), en.end(), "not") > 0;
    const bool has_nt = e.en.find("n't") != std::string::npos;
    if (has_not) ++full;
    if (has_nt) ++contracted;
    if (has_not || has_nt) CHECK_MESSAGE((e.fr.find(" pas") != std::string::npos), (e.en + " → " + e.fr));
    // "The cat is near the river." → "Le chat est près de la rivière."
    static const std::vector<std::pair<std::string, std::string>> preps{
        {" near ", " près d"}, {" under ", " sous "}, {" behind ", " derrière "}, {" next to ", " à côté d"}, {" in front of ", " devant "}};
    for (const auto& [prep_en, prep_fr] : preps)
      for (const char* be : {" is", " are", " was", " were", " am"})
        if (e.category == "copula" && e.en.find(be + prep_en) != std::string::npos) {
          ++located;
          CHECK_MESSAGE(e.fr.find(prep_fr) != std::string::npos, (e.en + " → " + e.fr));
        }
    if (e.category == "copula" && has_not && e.fr.find(" pas ") != std::string::npos &&
        (e.en.find(" not near ") != std::string::npos || e.en.find(" not under ") != std::string::npos))
      ++located_negated;
  }
  CHECK(full > 300);
  CHECK(contracted > 2 * full / 3);
  CHECK(located > 200);
  CHECK(located_negated > 10);
}

TEST_CASE("lexicon tables: read with every column, and the words the explainers' sentences need") {
  const LexiconTables& t = lexicon_tables();
  CHECK(t.nouns.size() + t.verbs.size() + t.adjectives.size() + t.adverbs.size() >= 3000);
  const LexVerb* adopt = t.verb("adopt");
  REQUIRE(adopt != nullptr);
  CHECK(adopt->participle[0] == "adopté");
  CHECK(adopt->participle[1] == "adoptée");
  const LexVerb* pursue = t.verb("chase", "pursue");
  REQUIRE(pursue != nullptr);
  CHECK(pursue->imperfect[2] == "poursuivait");
  const LexAdjective* old = t.adjective("old");
  REQUIRE(old != nullptr);
  CHECK(old->before);
  CHECK(old->fr[1] == "vieille");
  CHECK(old->ms_vowel == "vieil");
  const LexNoun* table = t.noun("table");
  REQUIRE(table != nullptr);
  CHECK(table->gender == Gender::Feminine);
  CHECK_THROWS_AS(read_lexicon_tables("/nonexistent-attnlab-lexicon"), InputError);
}
