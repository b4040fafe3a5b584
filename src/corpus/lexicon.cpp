#include "corpus/lexicon.hpp"

#include <stdexcept>

#include "text/tokenizer.hpp"

namespace attnlab::corpus {

namespace {
constexpr Gender M = Gender::Masculine;
constexpr Gender F = Gender::Feminine;
}  // namespace

// English singular, plural; French singular, plural; gender; kind.
const std::vector<Noun>& nouns() {
  static const std::vector<Noun> table{
      // People (sense and agreement templates; never in coreference, where English he/she would
      // already give the answer away).
      {"man", "men", "homme", "hommes", M, kPerson},
      {"woman", "women", "femme", "femmes", F, kPerson},
      {"boy", "boys", "garçon", "garçons", M, kPerson},
      {"girl", "girls", "fille", "filles", F, kPerson},
      {"father", "fathers", "père", "pères", M, kPerson},
      {"mother", "mothers", "mère", "mères", F, kPerson},
      {"brother", "brothers", "frère", "frères", M, kPerson},
      {"sister", "sisters", "sœur", "sœurs", F, kPerson},
      {"uncle", "uncles", "oncle", "oncles", M, kPerson},
      {"aunt", "aunts", "tante", "tantes", F, kPerson},
      // Animals: English "it", French il or elle. Both genders, with and without elision (l'animal,
      // l'abeille) so the article does not always show the gender.
      {"animal", "animals", "animal", "animaux", M, kAnimal},
      {"dog", "dogs", "chien", "chiens", M, kAnimal},
      {"cat", "cats", "chat", "chats", M, kAnimal},
      {"horse", "horses", "cheval", "chevaux", M, kAnimal},
      {"duck", "ducks", "canard", "canards", M, kAnimal},
      {"bird", "birds", "oiseau", "oiseaux", M, kAnimal},
      {"fox", "foxes", "renard", "renards", M, kAnimal},
      {"rabbit", "rabbits", "lapin", "lapins", M, kAnimal},
      {"puppy", "puppies", "chiot", "chiots", M, kAnimal},
      {"kitten", "kittens", "chaton", "chatons", M, kAnimal},
      {"elephant", "elephants", "éléphant", "éléphants", M, kAnimal},
      {"wolf", "wolves", "loup", "loups", M, kAnimal},
      {"pig", "pigs", "cochon", "cochons", M, kAnimal},
      {"donkey", "donkeys", "âne", "ânes", M, kAnimal},
      {"squirrel", "squirrels", "écureuil", "écureuils", M, kAnimal},
      {"snail", "snails", "escargot", "escargots", M, kAnimal},
      {"cow", "cows", "vache", "vaches", F, kAnimal},
      {"goat", "goats", "chèvre", "chèvres", F, kAnimal},
      {"mouse", "mice", "souris", "souris", F, kAnimal},
      {"hen", "hens", "poule", "poules", F, kAnimal},
      {"turtle", "turtles", "tortue", "tortues", F, kAnimal},
      {"owl", "owls", "chouette", "chouettes", F, kAnimal},
      {"bee", "bees", "abeille", "abeilles", F, kAnimal},
      {"ant", "ants", "fourmi", "fourmis", F, kAnimal},
      {"frog", "frogs", "grenouille", "grenouilles", F, kAnimal},
      {"giraffe", "giraffes", "girafe", "girafes", F, kAnimal},
      {"spider", "spiders", "araignée", "araignées", F, kAnimal},
      {"goose", "geese", "oie", "oies", F, kAnimal},
      // Places: what an animal crosses; the other referent of "it" in coreference sentences.
      {"street", "streets", "rue", "rues", F, kPlace},
      {"road", "roads", "route", "routes", F, kPlace},
      {"avenue", "avenues", "avenue", "avenues", F, kPlace},
      {"highway", "highways", "autoroute", "autoroutes", F, kPlace},
      {"square", "squares", "place", "places", F, kPlace},
      {"meadow", "meadows", "prairie", "prairies", F, kPlace},
      {"valley", "valleys", "vallée", "vallées", F, kPlace},
      {"forest", "forests", "forêt", "forêts", F, kPlace},
      {"river", "rivers", "rivière", "rivières", F, kPlace},
      {"yard", "yards", "cour", "cours", F, kPlace},
      {"alley", "alleys", "allée", "allées", F, kPlace},
      {"bridge", "bridges", "pont", "ponts", M, kPlace},
      {"path", "paths", "chemin", "chemins", M, kPlace},
      {"park", "parks", "parc", "parcs", M, kPlace},
      {"field", "fields", "champ", "champs", M, kPlace},
      {"stream", "streams", "ruisseau", "ruisseaux", M, kPlace},
      {"canal", "canals", "canal", "canaux", M, kPlace},
      {"garden", "gardens", "jardin", "jardins", M, kPlace},
      {"market", "markets", "marché", "marchés", M, kPlace},
      {"tunnel", "tunnels", "tunnel", "tunnels", M, kPlace},
      {"boulevard", "boulevards", "boulevard", "boulevards", M, kPlace},
      {"desert", "deserts", "désert", "déserts", M, kPlace},
      {"pond", "ponds", "étang", "étangs", M, kPlace},
      // Things (agreement and plain templates).
      {"car", "cars", "voiture", "voitures", F, kThing},
      {"house", "houses", "maison", "maisons", F, kThing},
      {"table", "tables", "table", "tables", F, kThing},
      {"chair", "chairs", "chaise", "chaises", F, kThing},
      {"shirt", "shirts", "chemise", "chemises", F, kThing},
      {"dress", "dresses", "robe", "robes", F, kThing},
      {"cup", "cups", "tasse", "tasses", F, kThing},
      {"box", "boxes", "boîte", "boîtes", F, kThing},
      {"door", "doors", "porte", "portes", F, kThing},
      {"window", "windows", "fenêtre", "fenêtres", F, kThing},
      {"flower", "flowers", "fleur", "fleurs", F, kThing},
      {"school", "schools", "école", "écoles", F, kThing},
      {"church", "churches", "église", "églises", F, kThing},
      {"key", "keys", "clé", "clés", F, kThing},
      {"book", "books", "livre", "livres", M, kThing},
      {"bike", "bikes", "vélo", "vélos", M, kThing},
      {"hat", "hats", "chapeau", "chapeaux", M, kThing},
      {"bag", "bags", "sac", "sacs", M, kThing},
      {"phone", "phones", "téléphone", "téléphones", M, kThing},
      {"computer", "computers", "ordinateur", "ordinateurs", M, kThing},
      {"tree", "trees", "arbre", "arbres", M, kThing},
      {"hotel", "hotels", "hôtel", "hôtels", M, kThing},
      {"plane", "planes", "avion", "avions", M, kThing},
      {"boat", "boats", "bateau", "bateaux", M, kThing},
      {"ball", "balls", "ballon", "ballons", M, kThing},
      {"coat", "coats", "manteau", "manteaux", M, kThing},
      {"umbrella", "umbrellas", "parapluie", "parapluies", M, kThing},
  };
  return table;
}

// English; French ms, fs, mp, fp; masculine singular before a vowel; before the noun?; kinds; group;
// coreference predicate?
//
// Only the adjectives French usually puts before the noun are marked so (petit, grand, bon, beau,
// nouveau, vieux, joli, jeune, long); "big" is not used for people because "un grand homme" means a
// great man, nor "good", because "un bon homme" is not "a good man".
// Coreference predicates fit animals only (tired, hungry, scared, slow, weak, sick, lazy, nervous,
// young) or places only (wide, long, narrow, busy, crowded, steep, muddy, slippery), so the
// predicate decides which noun "it" is.
const std::vector<Adjective>& adjectives() {
  constexpr unsigned A = kAnimal, P = kPerson, L = kPlace, T = kThing;
  static const std::vector<Adjective> table{
      {"small", "petit", "petite", "petits", "petites", "", true, A | P | L | T, "size", false},
      {"big", "grand", "grande", "grands", "grandes", "", true, A | L | T, "size", false},
      {"good", "bon", "bonne", "bons", "bonnes", "", true, A | T, "quality", false},
      {"beautiful", "beau", "belle", "beaux", "belles", "bel", true, A | P | L | T, "quality", false},
      {"pretty", "joli", "jolie", "jolis", "jolies", "", true, A | L | T, "quality", false},
      {"new", "nouveau", "nouvelle", "nouveaux", "nouvelles", "nouvel", true, L | T, "age", false},
      {"old", "vieux", "vieille", "vieux", "vieilles", "vieil", true, A | P | L | T, "age", false},
      {"young", "jeune", "jeune", "jeunes", "jeunes", "", true, A | P, "age", true},
      {"long", "long", "longue", "longs", "longues", "", true, L | T, "size", true},
      {"red", "rouge", "rouge", "rouges", "rouges", "", false, T, "colour", false},
      {"green", "vert", "verte", "verts", "vertes", "", false, T, "colour", false},
      {"blue", "bleu", "bleue", "bleus", "bleues", "", false, T, "colour", false},
      {"yellow", "jaune", "jaune", "jaunes", "jaunes", "", false, T, "colour", false},
      {"black", "noir", "noire", "noirs", "noires", "", false, A | T, "colour", false},
      {"white", "blanc", "blanche", "blancs", "blanches", "", false, A | T, "colour", false},
      {"grey", "gris", "grise", "gris", "grises", "", false, A | T, "colour", false},
      {"brown", "brun", "brune", "bruns", "brunes", "", false, A, "colour", false},
      {"heavy", "lourd", "lourde", "lourds", "lourdes", "", false, T, "", false},
      {"expensive", "cher", "chère", "chers", "chères", "", false, T, "", false},
      {"broken", "cassé", "cassée", "cassés", "cassées", "", false, T, "", false},
      {"clean", "propre", "propre", "propres", "propres", "", false, L | T, "", false},
      {"fast", "rapide", "rapide", "rapides", "rapides", "", false, A, "speed", false},
      {"tired", "fatigué", "fatiguée", "fatigués", "fatiguées", "", false, A | P, "", true},
      {"hungry", "affamé", "affamée", "affamés", "affamées", "", false, A | P, "", true},
      {"scared", "effrayé", "effrayée", "effrayés", "effrayées", "", false, A | P, "", true},
      {"slow", "lent", "lente", "lents", "lentes", "", false, A | P, "speed", true},
      {"weak", "faible", "faible", "faibles", "faibles", "", false, A | P, "", true},
      {"sick", "malade", "malade", "malades", "malades", "", false, A | P, "", true},
      {"lazy", "paresseux", "paresseuse", "paresseux", "paresseuses", "", false, A | P, "", true},
      {"nervous", "nerveux", "nerveuse", "nerveux", "nerveuses", "", false, A | P, "", true},
      {"wide", "large", "large", "larges", "larges", "", false, L, "size", true},
      {"narrow", "étroit", "étroite", "étroits", "étroites", "", false, L, "size", true},
      {"busy", "fréquenté", "fréquentée", "fréquentés", "fréquentées", "", false, L, "", true},
      {"crowded", "bondé", "bondée", "bondés", "bondées", "", false, L, "", true},
      {"steep", "raide", "raide", "raides", "raides", "", false, L, "", true},
      {"muddy", "boueux", "boueuse", "boueux", "boueuses", "", false, L, "", true},
      {"slippery", "glissant", "glissante", "glissants", "glissantes", "", false, L, "", true},
  };
  return table;
}

const std::vector<Verb>& plain_verbs() {
  constexpr unsigned A = kAnimal, P = kPerson, L = kPlace, T = kThing;
  static const std::vector<Verb> table{
      {"love", "loves", {"aime", "aimes", "aime", "aimons"}, A | P | T},
      {"see", "sees", {"vois", "vois", "voit", "voyons"}, A | P | L | T},
      {"hear", "hears", {"entends", "entends", "entend", "entendons"}, A | P},
      {"help", "helps", {"aide", "aides", "aide", "aidons"}, A | P},
      {"know", "knows", {"connais", "connais", "connaît", "connaissons"}, A | P | L},
      {"call", "calls", {"appelle", "appelles", "appelle", "appelons"}, A | P},
      {"find", "finds", {"trouve", "trouves", "trouve", "trouvons"}, A | P | T},
      {"watch", "watches", {"regarde", "regardes", "regarde", "regardons"}, A | P | L | T},
  };
  return table;
}

const std::vector<Verb>& agreement_verbs() {
  constexpr unsigned A = kAnimal, P = kPerson, L = kPlace, T = kThing;
  static const std::vector<Verb> table{
      {"see", "sees", {"vois", "vois", "voit", "voyons"}, A | P | L | T},
      {"like", "likes", {"aime", "aimes", "aime", "aimons"}, A | P | L | T},
      {"have", "has", {"ai", "as", "a", "avons"}, A | T},
      {"buy", "buys", {"achète", "achètes", "achète", "achetons"}, T},
  };
  return table;
}

const std::vector<Pronoun>& subject_pronouns() {
  static const std::vector<Pronoun> table{
      {"I", "je", 0, false}, {"you", "tu", 1, false}, {"he", "il", 2, true}, {"she", "elle", 2, true}, {"we", "nous", 3, false},
  };
  return table;
}

std::vector<const Noun*> nouns_of(unsigned kinds) {
  std::vector<const Noun*> out;
  for (const Noun& n : nouns())
    if (n.kind & kinds) out.push_back(&n);
  return out;
}

std::vector<const Adjective*> adjectives_for(Kind kind) {
  std::vector<const Adjective*> out;
  for (const Adjective& a : adjectives())
    if (a.kinds & kind) out.push_back(&a);
  return out;
}

std::vector<const Adjective*> coref_predicates(Kind kind) {
  std::vector<const Adjective*> out;
  for (const Adjective& a : adjectives())
    if (a.coref && (a.kinds & kind)) out.push_back(&a);
  return out;
}

const Noun& noun(std::string_view en) {
  for (const Noun& n : nouns())
    if (n.en == en) return n;
  throw std::out_of_range("no noun '" + std::string(en) + "' in the corpus lexicon");
}

const Adjective& adjective(std::string_view en) {
  for (const Adjective& a : adjectives())
    if (a.en == en) return a;
  throw std::out_of_range("no adjective '" + std::string(en) + "' in the corpus lexicon");
}

bool starts_with_vowel_sound(std::string_view fr_word) {
  const std::string w = text::fold_case(fr_word);
  for (std::string_view v : {"a", "e", "i", "o", "u", "y", "h", "à", "â", "é", "è", "ê", "ë", "î", "ï", "ô", "û", "ù", "œ"})
    if (w.rfind(v, 0) == 0) return true;
  return false;
}

std::string_view agree(const Adjective& adj, Gender gender, bool plural, std::string_view next_word) {
  if (plural) return gender == M ? adj.mp : adj.fp;
  if (gender == F) return adj.fs;
  if (!adj.ms_vowel.empty() && !next_word.empty() && starts_with_vowel_sound(next_word)) return adj.ms_vowel;
  return adj.ms;
}

std::vector<std::string> french_noun_phrase(const Noun& n, bool plural, bool definite, const Adjective* adj) {
  std::vector<std::string> out;
  if (definite) out.emplace_back(plural ? "les" : n.gender == M ? "le" : "la");
  else out.emplace_back(plural ? "des" : n.gender == M ? "un" : "une");
  const std::string_view noun_word = plural ? n.fr_plural : n.fr;
  if (adj && adj->before_noun) out.emplace_back(agree(*adj, n.gender, plural, noun_word));
  out.emplace_back(noun_word);
  if (adj && !adj->before_noun) out.emplace_back(agree(*adj, n.gender, plural));
  return out;
}

std::string french(std::vector<std::string> words) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    std::string& w = words[i];
    const bool elides = w == "le" || w == "la" || w == "que" || w == "de" || w == "ne" || w == "je" || w == "me" ||
                        w == "te" || w == "se" || w == "jusque";
    if (elides && starts_with_vowel_sound(words[i + 1])) w = w.substr(0, w.size() - 1) + "'";
  }
  return text::detokenize(words);
}

std::string english(std::vector<std::string> words) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string next = text::fold_case(words[i + 1]);
    if (words[i] == "a" && !next.empty() && std::string_view("aeiou").find(next[0]) != std::string_view::npos)
      words[i] = "an";
  }
  return text::detokenize(words);
}

}  // namespace attnlab::corpus
