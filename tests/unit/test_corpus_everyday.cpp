// The everyday grammar (corpus/grammar.hpp, everyday.cpp): the French of each construction on fixed
// cases, and rules every generated everyday sentence must keep — contractions, elision, ne with its
// second word, a/an, final punctuation, no English word left in the French — together with the
// held-out rule, determinism and the wide grammar's categories kept inside it.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "corpus/corpus.hpp"
#include "corpus/grammar.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

using namespace attnlab;
using namespace attnlab::corpus;

namespace {

const Corpus& everyday_corpus() {
  static const Corpus c = [] {
    CorpusOptions o;
    o.grammar = Grammar::Everyday;
    o.train = 30000;
    o.valid = 600;
    o.test = 2000;
    return generate(o);
  }();
  return c;
}

// Words split on spaces, lower case, punctuation kept on them (the tokenizer would split "l'" and
// hide exactly what is checked).
std::vector<std::string> spaced(const std::string& s) {
  std::vector<std::string> w;
  std::string cur;
  for (char ch : s + " ") {
    if (ch == ' ') {
      if (!cur.empty()) w.push_back(text::fold_case(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  return w;
}

std::string strip(std::string w) {
  while (!w.empty() && std::string(".,!?").find(w.back()) != std::string::npos) w.pop_back();
  return w;
}

}  // namespace

TEST_CASE("everyday cases: the French of each construction") {
  const std::map<std::string, std::pair<std::string, std::string>> want{
      {"coordinated subject", {"The boy and the girl are tired.", "Le garçon et la fille sont fatigués."}},
      {"job after etre", {"She is a doctor.", "Elle est médecin."}},
      {"job negated", {"I am not a student.", "Je ne suis pas étudiant."}},
      {"how much", {"How much water do you drink?", "Combien d'eau est-ce que tu bois?"}},
      {"was doing when", {"I was reading when Marie arrived.", "Je lisais quand Marie est arrivée."}},
      {"coordinated feminine subject", {"Marie and Anna arrived.", "Marie et Anna sont arrivées."}},
      {"coordinated objects", {"She buys bread and milk.", "Elle achète du pain et du lait."}},
      {"both", {"Both Marie and Anna are happy.", "Marie et Anna sont toutes les deux heureuses."}},
      {"there are", {"There are three apples on the table.", "Il y a trois pommes sur la table."}},
      {"there is no", {"There isn't any milk in the kitchen.", "Il n'y a pas de lait dans la cuisine."}},
      {"would like", {"I would like a cup of coffee, please.", "Je voudrais une tasse de café, s'il te plaît."}},
      {"can with a pronoun", {"I can help you.", "Je peux t'aider."}},
      {"cannot", {"She cannot swim.", "Elle ne peut pas nager."}},
      {"should", {"You should read this book.", "Tu devrais lire ce livre."}},
      {"won't", {"We won't eat meat.", "Nous ne mangerons pas de viande."}},
      {"going to", {"They are going to buy a car.", "Ils vont acheter une voiture."}},
      {"never", {"He never drinks coffee.", "Il ne boit jamais de café."}},
      {"indirect pronoun", {"She gives him the book.", "Elle lui donne le livre."}},
      {"indirect noun", {"We write a letter to our grandmother.", "Nous écrivons une lettre à notre grand-mère."}},
      {"two pronouns", {"I bought a cake and I gave it to her.", "J'ai acheté un gâteau et je le lui ai donné."}},
      {"comparative", {"Paul is taller than his sister.", "Paul est plus grand que sa sœur."}},
      {"superlative", {"Marie is the tallest girl in the class.", "Marie est la plus grande fille de la classe."}},
      {"best", {"This cake is the best.", "Ce gâteau est le meilleur."}},
      {"imperative", {"Open the door, please.", "Ouvre la porte, s'il te plaît."}},
      {"negative imperative", {"Don't call him.", "Ne l'appelle pas."}},
      {"imperative with a pronoun", {"Help me!", "Aide-moi!"}},
      {"where", {"Where do you live?", "Où est-ce que tu vis?"}},
      {"what", {"What are you reading?", "Qu'est-ce que tu lis?"}},
      {"if", {"If it rains, we will stay at home.", "S'il pleut, nous resterons à la maison."}},
      {"when", {"When he arrives, we will eat.", "Quand il arrivera, nous mangerons."}},
      {"try to", {"She tries to read the book.", "Elle essaie de lire le livre."}},
      {"learn to", {"He learns to swim.", "Il apprend à nager."}},
      {"want to", {"I don't want to eat bread.", "Je ne veux pas manger de pain."}},
      {"a lot of", {"We have a lot of money.", "Nous avons beaucoup d'argent."}},
      {"no money", {"He has no money.", "Il n'a pas d'argent."}},
      {"was reading", {"He was reading a book.", "Il lisait un livre."}},
      {"hungry", {"I am hungry.", "J'ai faim."}},
      {"afraid of", {"She is afraid of the dog.", "Elle a peur du chien."}},
      {"it is raining", {"It is raining.", "Il pleut."}},
      {"nice weather", {"The weather is nice.", "Il fait beau."}},
      {"age", {"I am ten years old.", "J'ai dix ans."}},
      {"been to", {"She has never been to Paris.", "Elle n'est jamais allée à Paris."}},
      {"passive", {"The letter was written by Marie.", "La lettre a été écrite par Marie."}},
      {"reported", {"She said that she was tired.", "Elle a dit qu'elle était fatiguée."}},
      {"genitive", {"Marie's brother is tall.", "Le frère de Marie est grand."}},
      {"its", {"The cat is playing with its ball.", "Le chat joue avec sa balle."}},
      {"nothing", {"I didn't see anything.", "Je n'ai rien vu."}},
      {"nobody", {"I didn't see anyone.", "Je n'ai vu personne."}},
      {"every morning", {"Every morning, he drinks tea.", "Tous les matins, il boit du thé."}},
  };
  const auto names = everyday_case_names();
  CHECK(names.size() == want.size());
  for (const auto& [name, pair] : want) {
    INFO(name);
    const Example e = everyday_case(name);
    CHECK(e.en == pair.first);
    CHECK(e.fr == pair.second);
  }
  CHECK_THROWS_AS(everyday_case("no such case"), InputError);
}

TEST_CASE("everyday corpus: the wide categories and its own all occur; held-out keys stay out of train") {
  const Corpus& c = everyday_corpus();
  std::set<std::string> cats, train_keys;
  for (const auto& e : c.train) {
    cats.insert(e.category);
    train_keys.insert(e.combos.begin(), e.combos.end());
  }
  for (const auto& g : everyday_categories()) CHECK_MESSAGE(cats.count(g), g);
  CHECK(everyday_categories().size() > grammar_categories().size() + 15);
  for (const auto* split : {&c.valid, &c.test})
    for (const auto& e : *split) {
      bool held_out = false;
      for (const auto& k : e.combos) held_out = held_out || !train_keys.count(k);
      CHECK_MESSAGE(held_out, e.en);
      CHECK_MESSAGE(!e.combos.empty(), e.en);
    }
  for (const auto* split : {&c.train, &c.valid, &c.test})
    for (const auto& e : *split) CHECK_MESSAGE(!is_source_sentence(e.en), e.en);
}

TEST_CASE("everyday corpus: the same options give the same corpus, another seed another one") {
  CorpusOptions o;
  o.grammar = Grammar::Everyday;
  o.train = 400;
  o.valid = 50;
  o.test = 50;
  const Corpus a = generate(o), b = generate(o);
  REQUIRE(a.train.size() == b.train.size());
  for (std::size_t i = 0; i < a.train.size(); ++i) CHECK(a.train[i].fr == b.train[i].fr);
  o.seed = 7;
  CHECK(generate(o).train.front().en != a.train.front().en);
}

TEST_CASE("everyday corpus: French contractions, elision, and ne with its second word") {
  static const std::set<std::string> elide{"le", "la", "je", "me", "te", "se", "ne", "que", "de"};
  static const std::set<std::string> second{"pas", "jamais", "rien", "personne", "plus", "ni", "aucun", "aucune"};
  const Corpus& c = everyday_corpus();
  for (const auto* split : {&c.train, &c.test})
    for (const auto& e : *split) {
      const auto w = spaced(e.fr);
      bool ne = false, closes = false;
      for (std::size_t i = 0; i < w.size(); ++i) {
        const std::string a = strip(w[i]);
        if (a == "ne" || a.rfind("n'", 0) == 0) ne = true;
        for (const auto& t : text::tokenize(a))
          if (second.count(t)) closes = true;
        if (i + 1 == w.size()) break;
        const std::string b = strip(w[i + 1]);
        CHECK_MESSAGE(!((a == "à" || a == "de") && (b == "le" || b == "les")), e.fr);
        const bool vowel = !b.empty() && (std::string("aeiouy").find(b[0]) != std::string::npos || b.rfind("é", 0) == 0 ||
                                          b.rfind("è", 0) == 0 || b.rfind("ê", 0) == 0 || b.rfind("à", 0) == 0 ||
                                          b.rfind("â", 0) == 0 || b.rfind("î", 0) == 0 || b.rfind("ô", 0) == 0 ||
                                          b.rfind("œ", 0) == 0);
        CHECK_MESSAGE(!(elide.count(a) && vowel && a == w[i]), e.fr);  // "le arbre", "je aime", "ne est"
        CHECK_MESSAGE(!((a == "du" || a == "au") && vowel), e.fr);
        CHECK_MESSAGE(!(a == "si" && (b == "il" || b == "ils")), e.fr);
      }
      CHECK_MESSAGE((!ne || closes), e.fr);
    }
}

TEST_CASE("everyday corpus: a and an, final punctuation, no English word in the French") {
  // English words that are never French: a model must not learn to copy them (names are copied).
  static const std::set<std::string> english{
      "the", "and", "or", "is", "are", "was", "were", "will", "would", "can", "could", "should", "must",
      "to", "of", "in", "on", "with", "for", "not", "don't", "doesn't", "didn't", "isn't", "it", "he", "she", "they",
      "we", "you", "i", "my", "your", "his", "her", "their", "our", "this", "that", "these", "those", "there", "what",
      "where", "when", "why", "who", "how", "very", "some", "any", "many", "much", "more", "than", "have", "has", "had",
      "do", "does", "did", "be", "been", "being", "going", "just", "never", "already", "yet", "please", "let's", "it's",
      "i'm", "won't", "can't", "because", "if", "while", "after", "before", "never", "always", "often", "something",
      "nothing", "everyone", "nobody", "himself", "herself", "myself", "themselves", "yesterday", "tomorrow", "today"};
  const Corpus& c = everyday_corpus();
  std::size_t sentences = 0;
  for (const auto* split : {&c.train, &c.test})
    for (const auto& e : *split) {
      ++sentences;
      REQUIRE(!e.en.empty());
      REQUIRE(!e.fr.empty());
      CHECK_MESSAGE(std::string(".?!").find(e.en.back()) != std::string::npos, e.en);
      CHECK_MESSAGE(std::string(".?!").find(e.fr.back()) != std::string::npos, e.fr);
      CHECK_MESSAGE(e.en.find("  ") == std::string::npos, e.en);
      CHECK_MESSAGE(e.fr.find("  ") == std::string::npos, e.fr);
      CHECK_MESSAGE(e.fr.find(" ,") == std::string::npos, e.fr);
      const auto en = spaced(e.en);
      for (std::size_t i = 0; i + 1 < en.size(); ++i) {
        const std::string next = strip(en[i + 1]);
        if (next.empty()) continue;
        bool vowel = std::string("aeiou").find(next[0]) != std::string::npos;
        for (const char* p : {"uni", "use", "usu", "eu", "one", "once"})
          if (next.rfind(p, 0) == 0) vowel = false;
        for (const char* p : {"hour", "honest", "honor", "heir"})
          if (next.rfind(p, 0) == 0) vowel = true;
        if (en[i] == "a") CHECK_MESSAGE(!vowel, e.en);
        if (en[i] == "an") CHECK_MESSAGE(vowel, e.en);
      }
      for (const auto& t : text::tokenize(e.fr)) CHECK_MESSAGE(!english.count(t), (e.en + " → " + e.fr));
    }
  CHECK(sentences > 30000);
}

TEST_CASE("everyday corpus: sentences a model of 80 tokens can take, and the constructions it teaches") {
  const Corpus& c = everyday_corpus();
  std::size_t longest = 0;
  std::map<std::string, std::size_t> seen;
  const std::vector<std::pair<std::string, std::string>> marks{
      {" and ", " et "},        {" but ", " mais "},        {" will ", "rai"},          {" can", " peu"},
      {"there is", "il y a"},   {"there are", "il y a"},    {" never ", " jamais"},     {"please", "s'il te plaît"},
      {" than ", " que "},      {" if ", " si"},            {"when ", "quand"},         {" to ", " de "},
      {" a lot of ", "beaucoup"}, {"hungry", "faim"},       {" going to ", " va"},      {"where ", "où"},
      {"how much ", "combien"}, {", so ", "alors"},         {" the most ", " le plus "}};
  for (const auto& e : c.train) {
    longest = std::max({longest, text::tokenize(e.en).size(), text::tokenize(e.fr).size()});
    const std::string en = " " + text::fold_case(e.en) + " ", fr = text::fold_case(e.fr);
    for (const auto& [a, b] : marks)
      if (en.find(a) != std::string::npos && fr.find(b) != std::string::npos) ++seen[a];
  }
  CHECK(longest <= 40);
  for (const auto& [a, b] : marks) CHECK_MESSAGE(seen[a] > 15, a);
}

TEST_CASE("everyday corpus: a profession after être has no article; c'est, not cet est") {
  // "I am a student." → "Je suis étudiant."; the article stays with an adjective ("C'est un bon
  // médecin") and after c'est ("This is a student." → "C'est un étudiant.").
  static const std::set<std::string> adjectives{"good", "bad", "young", "excellent", "new", "famous"};
  const Corpus& c = everyday_corpus();
  std::size_t jobs = 0;
  for (const auto* split : {&c.train, &c.test})
    for (const auto& e : *split) {
      const std::string fr = text::fold_case(e.fr);
      CHECK_MESSAGE(fr.find("cet est") == std::string::npos, e.fr);
      CHECK_MESSAGE(fr.find("cet était") == std::string::npos, e.fr);
      CHECK_MESSAGE(fr.find("cet étaient") == std::string::npos, e.fr);
      CHECK_MESSAGE(fr.find("plus bon marché") == std::string::npos, e.fr);
      if (e.category != "job") continue;
      const auto en = spaced(e.en);
      if (en[0] == "this" || en[0] == "that's" || en[0] == "these" || en[0] == "those") continue;
      bool adjective = false;
      for (const auto& w : en) adjective = adjective || adjectives.count(strip(w));
      if (adjective) continue;
      ++jobs;
      for (const auto& w : spaced(e.fr)) {
        const std::string a = strip(w);
        CHECK_MESSAGE((a != "un" && a != "une" && a != "des"), (e.en + " → " + e.fr));
      }
    }
  CHECK(jobs > 100);
}
