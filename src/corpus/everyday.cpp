// The everyday grammar (corpus/grammar.hpp; docs/corpus.md, "The everyday grammar"): the wide grammar's
// categories, drawn as the wide grammar draws them, and the constructions of a beginners' textbook,
// each built in both languages by rule so that the French is right by construction.
//
// Everything here is new: the wide grammar's corpus (grammar.cpp) does not depend on this file, and
// the rows of the lexicon tables with scope "everyday" are drawn only from here.
#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "corpus/grammar.hpp"
#include "corpus/grammar_parts.hpp"
#include "corpus/tables.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace attnlab::corpus {

namespace {

using namespace gram;

// ---- the lexicon rows the constructions name ------------------------------------------------------

const LexVerb& verb_row(std::string_view en, std::string_view sense = "") {
  const LexVerb* v = lexicon_tables().verb(en, sense);
  if (!v)
    throw InputError(fmt::format("data/lexicon/verbs.tsv: the everyday grammar needs the verb \"{}\"{}", en,
                                 sense.empty() ? "" : fmt::format(" (sense {})", sense)));
  return *v;
}
const LexNoun& noun_row(std::string_view en, std::string_view sense = "") {
  const LexNoun* n = lexicon_tables().noun(en, sense);
  if (!n)
    throw InputError(fmt::format("data/lexicon/nouns.tsv: the everyday grammar needs the noun \"{}\"{}", en,
                                 sense.empty() ? "" : fmt::format(" (sense {})", sense)));
  return *n;
}
const LexAdjective& adj_row(std::string_view en) {
  const LexAdjective* a = lexicon_tables().adjective(en);
  if (!a) throw InputError(fmt::format("data/lexicon/adjectives.tsv: the everyday grammar needs the adjective \"{}\"", en));
  return *a;
}
template <class T, class F>
std::vector<const T*> rows(std::initializer_list<std::string_view> names, F find) {
  std::vector<const T*> out;
  for (std::string_view n : names) out.push_back(&find(n));
  return out;
}
// "coat:garment" names the row of sense garment (manteau), "coat" the main row (abri).
std::pair<std::string_view, std::string_view> split_sense(std::string_view n) {
  const std::size_t c = n.find(':');
  return c == std::string_view::npos ? std::pair{n, std::string_view{}} : std::pair{n.substr(0, c), n.substr(c + 1)};
}
std::vector<const LexNoun*> nouns(std::initializer_list<std::string_view> names) {
  return rows<LexNoun>(names, [](std::string_view n) -> const LexNoun& {
    const auto [en, sense] = split_sense(n);
    return noun_row(en, sense);
  });
}
std::vector<const LexVerb*> verbs(std::initializer_list<std::string_view> names) {
  return rows<LexVerb>(names, [](std::string_view n) -> const LexVerb& {
    const auto [en, sense] = split_sense(n);
    return verb_row(en, sense);
  });
}
std::vector<const LexAdjective*> adjectives(std::initializer_list<std::string_view> names) {
  return rows<LexAdjective>(names, [](std::string_view n) -> const LexAdjective& { return adj_row(n); });
}

// The everyday vocabulary: common words whose table row is right in the constructions below. Each
// list was read row by row (French lemma, gender, plural); where the main row's French is wrong in a
// textbook (coat → abri, box → caisse) the list names an everyday sense row ("coat:garment" → manteau),
// and a word the tables do not give rightly is left out rather than taught wrong. The words of a
// beginners' textbook (data/eval/beginner-words.tsv) were added by theme: jobs, town places, objects,
// furniture, animals, foods that are counted (an apple, three potatoes) beside those that are not (du
// pain), clothes to wear, instruments and sports to play (jouer du piano, jouer au tennis) and vehicles
// to take (prendre le bus, en bus).
struct Vocab {
  std::vector<const LexNoun*> people, family, animals, things, foods, drinks, places, buildings, rooms, containers;
  std::vector<const LexNoun*> abstracts;
  std::vector<const LexNoun*> countables, clothes, furniture, instruments, sports, vehicles;
  std::vector<const LexVerb*> transitive, intransitive, motion;
  std::vector<const LexAdjective*> person_adj, thing_adj, comparable;
};

const Vocab& vocab() {
  static const Vocab v = [] {
    Vocab x;
    x.people = nouns({"man", "woman", "boy", "girl", "child", "friend", "teacher", "student", "doctor", "baby",
                      "king", "queen", "president", "officer", "worker", "writer", "artist", "nurse", "waiter:job",
                      "waitress", "driver", "farmer:job", "cook", "policeman", "pilot", "engineer", "lawyer",
                      "secretary", "dentist", "singer", "actor", "actress", "journalist", "baker", "photographer",
                      "postman", "neighbor", "cousin", "tourist", "customer", "guest", "mechanic", "pupil", "boss"});
    x.family = nouns({"mother", "father", "brother", "sister", "son", "daughter", "uncle", "aunt", "grandmother",
                      "grandfather", "wife", "husband"});
    x.animals = nouns({"dog", "cat", "horse", "bird", "cow", "mouse", "rabbit", "lion", "sheep", "pig", "goat", "duck",
                       "hen", "tiger", "elephant", "monkey", "bear:animal", "wolf", "fox", "frog", "snake", "bee",
                       "butterfly", "spider", "whale", "dolphin", "shark", "giraffe", "zebra", "camel", "parrot", "owl", "insect"});
    x.things = nouns({"book", "letter", "car", "key", "phone", "pen", "bag", "ball", "cake", "apple", "table", "chair",
                      "door", "window", "newspaper", "ticket", "bottle", "cup", "glass", "plate", "shoe",
                      "hat", "dress", "shirt", "bed", "watch", "computer", "radio", "gift", "photo", "umbrella", "bike",
                      "sandwich", "card", "map", "flower", "notebook", "pencil", "ruler", "eraser", "dictionary",
                      "passport", "suitcase", "postcard", "camera:photo", "toy", "doll", "clock", "lamp", "mirror",
                      "pillow", "blanket", "towel:bath", "soap", "box:small", "spoon", "fork", "knife", "bowl",
                      "laptop", "tablet:computer", "keyboard", "wallet", "necklace", "ring:jewel", "magazine:periodical",
                      "television", "coat:garment", "jacket:garment", "sweater:garment", "skirt", "scarf", "glove"});
    x.foods = nouns({"bread", "soup", "rice", "meat", "sugar", "salt", "butter", "fish", "cheese", "chocolate",
                     "chicken", "jam", "honey", "ham", "salad"});
    x.drinks = nouns({"coffee", "tea", "water", "milk", "wine", "juice", "beer", "lemonade"});
    x.places = nouns({"school", "park", "beach", "library", "market", "restaurant", "hospital", "station", "airport",
                      "office", "church", "cinema", "city", "village", "farm", "garden", "store", "kitchen", "museum",
                      "hotel", "country", "river", "mountain", "island", "lake", "bridge", "street", "bank", "bakery",
                      "pharmacy", "supermarket", "cafe", "theatre", "zoo", "stadium", "castle", "factory", "town"});
    x.buildings = nouns({"school", "library", "restaurant", "hospital", "station", "office", "church", "cinema", "store",
                         "museum", "hotel", "house", "bank", "bakery", "pharmacy", "supermarket", "cafe", "theatre",
                         "stadium", "castle", "factory", "tower"});
    x.rooms = nouns({"kitchen", "bedroom", "garden", "office", "room", "house", "car", "school", "park",
                     "bathroom:room", "garage"});
    x.containers = nouns({"cup", "glass", "bottle", "piece", "plate", "bag", "box:small", "bowl"});
    x.abstracts = nouns({"idea", "question", "answer", "problem", "story", "lesson", "music", "game", "job", "plan",
                         "word", "language", "history"});
    // Counted foods: "eats an apple / three potatoes" → "mange une pomme / trois pommes de terre".
    x.countables = nouns({"apple", "banana", "orange:fruit", "pear", "strawberry", "lemon", "tomato", "potato",
                          "carrot", "onion", "egg", "sausage", "biscuit", "pizza", "sandwich", "cake"});
    // Clothes to wear (porter).
    x.clothes = nouns({"coat:garment", "jacket:garment", "sweater:garment", "shirt", "skirt", "dress", "hat",
                       "cap:garment", "scarf", "glove", "sock", "shoe", "boot", "belt", "tie", "uniform", "watch",
                       "necklace", "ring:jewel"});
    // Big things at home: bought, sold, cleaned, painted, repaired, not carried about.
    x.furniture = nouns({"sofa", "armchair", "desk", "fridge", "cupboard", "table", "chair", "bed", "lamp", "shelf",
                         "mirror", "clock", "carpet", "curtain", "shower", "drawer"});
    // play the piano → jouer du piano; play tennis → jouer au tennis.
    x.instruments = nouns({"piano", "guitar", "violin", "flute", "trumpet", "drum"});
    x.sports = nouns({"football:sport", "tennis", "basketball", "volleyball", "golf:sport", "rugby"});
    // take the bus → prendre le bus; by bus → en bus.
    x.vehicles = nouns({"bus", "train", "car", "taxi", "plane", "boat", "metro", "tram", "bike"});
    x.transitive = verbs({"see", "eat", "drink", "read", "write", "buy", "sell", "open", "close", "find", "lose", "take",
                          "carry", "wash", "clean", "cook", "make", "watch", "help", "call", "visit", "meet", "know",
                          "understand", "forget", "learn", "use", "finish", "hear", "show", "send", "paint", "draw",
                          "keep", "choose", "prepare", "follow", "like", "love", "want", "break", "hide", "cut", "wear",
                          "build", "explain", "offer", "lend", "give", "hate", "kill", "pass", "serve", "add",
                          "cover", "raise", "receive", "discover", "describe", "accept", "tidy", "rent", "repair",
                          "order:request", "book:reserve", "borrow"});
    x.intransitive = verbs({"sleep", "run", "walk", "swim", "work", "play", "sing", "dance", "laugh", "cry", "wait", "appear",
                            "travel", "arrive", "leave", "come", "stay", "fall", "smile", "listen", "read", "write",
                            "eat", "cook", "study", "win", "lose", "return", "die", "move", "grow", "drive"});
    x.motion = verbs({"go", "come", "walk", "run", "drive", "return", "travel"});
    x.person_adj = adjectives({"tired", "happy", "sad", "sick", "angry", "busy", "ready", "young", "old", "tall",
                               "rich", "poor", "kind", "clever", "famous", "strong", "calm", "proud", "nervous", "funny",
                               "brave", "quiet", "free", "sure", "different", "strange", "dead", "lazy", "friendly",
                               "noisy", "weak"});
    x.thing_adj = adjectives({"big", "small", "new", "old", "red", "blue", "green", "black", "white", "beautiful",
                              "expensive", "cheap", "heavy", "light", "long", "short", "clean", "dirty", "empty", "full",
                              "open", "hot", "cold", "easy", "difficult", "important", "interesting",
                              "boring", "different", "strange", "useful", "modern", "simple", "good", "bad", "yellow",
                              "pink", "grey", "purple", "brown", "wet", "dry", "ugly", "pretty"});
    x.comparable = adjectives({"big", "small", "old", "young", "tall", "fast", "slow", "rich", "poor", "strong", "long",
                               "short", "heavy", "cheap", "expensive", "beautiful", "happy", "easy", "difficult",
                               "interesting", "important", "hot", "cold", "high", "low", "large", "great", "good",
                               "bad", "good", "bad"});
    return x;
  }();
  return v;
}


// ---- the verb group -------------------------------------------------------------------------------
// One clause's verb with everything French puts around it: tense and mood, a modal, negation (ne …
// pas / jamais / plus / rien / personne), clitic pronouns before the verb in French order (me te se
// nous, le la les, lui leur), participle agreement, an infinitive complement with its preposition,
// and the English forms with do-support, contractions and inversion for questions.

enum class Tn { Present, Past, PastProg, PresProg, Future, Cond, Perfect, GoingTo, JustDid, Pluperfect };
// can, could (conditional: pourrais), should (devrais), must, may (peut), might (pourrait), would like
// (voudrais), have to (doit; "don't have to" → n'a pas besoin de), had to (devait), will be able to
// (pourra).
enum class Md { None, Can, Could, Should, Must, May, Might, WouldLike, HaveTo, HadTo, AbleTo };
// not → pas; never → jamais; no longer → plus; nothing / not anything → rien (object); nobody / not
// anyone → personne (object).
enum class Ng { None, Not, Never, NoLonger, Nothing, Nobody };

struct VG {
  const LexVerb* verb = nullptr;  // English forms, and French ones unless `fr` is set; nullptr: the copula
  const LexVerb* fr = nullptr;
  bool reflexive = false;           // French pronominal (se lever): the pronoun, être in the passé composé
  std::string particle_en;          // after the English verb: "up" (wake up), "at" (look at)
  std::string prep_fr;              // before a French noun object ("à" in répondre à); "" for a direct object
  const LexAdjective* adj = nullptr;  // a predicate adjective, agreeing with the subject (is tired, seems tired)
  Words comp_en, comp_fr;           // another complement ("at home" / "à la maison")
  Tn tense = Tn::Present;
  Md modal = Md::None;
  Ng neg = Ng::None;
  bool contracted = true;           // isn't, don't, can't, won't (else is not, do not, cannot, will not)
  bool any_form = true;             // Ng::Nothing / Nobody: "doesn't see anything" (else "sees nothing")
  bool no_one = false;              // Ng::Nobody written "no one" (else "nobody")
  bool shall = false;               // Tn::Future with I or we: "shall"
  bool contract_subject = false;    // I'm, he's, we'll, I've, I'd
  std::string neg_fr;               // the French negation word instead of neg's: "plus" for "not … anymore"
  std::shared_ptr<NP> obj;          // direct object (or prep_fr's): a noun phrase or a pronoun
  std::shared_ptr<NP> iobj;         // indirect object: "to Marie" / "à Marie"; a pronoun is lui, leur, me, te, nous
  bool iobj_first = false;          // "gives Marie the book" (else "gives the book to Marie")
  std::string iprep_en = "to";
  std::string freq_en, freq_fr;     // often / souvent: before the English verb, after the French finite verb
  std::string degree_en, degree_fr; // very / très: right before the predicate adjective in both languages
  Words tail_en, tail_fr;           // after everything (a place, a time, a manner)
  std::shared_ptr<VG> inf;          // an infinitive complement: "wants to go" → "veut aller"
  std::string inf_to = "to", inf_prep_fr;  // English "to" or ""; French "de", "à" or ""
  bool inf_ing = false;             // the English complement is a gerund: "stops talking" → "arrête de parler"
  int fr_tense = -1;                // a French tense other than the English one: "when he arrives" → "quand il arrivera"
  bool en_affirmative = false;      // English without "not" though French negates: "has no money" → "n'a pas d'argent"
};

bool is_pronoun(const std::shared_ptr<NP>& np) { return np && np->det == Det::Pronoun; }
bool third(const NP& np) { return np.person == 2 || np.person == 5; }

const LexVerb& be_row() { return *pools().be; }
const LexVerb& have_row() { return *pools().have; }
// The French row: `fr`, else the English verb's own row, else être (the copula). An English copula may
// have a French verb of its own: "is hungry" → "a faim", "it is cold" → "il fait froid".
const LexVerb& fr_row(const VG& g) { return g.fr ? *g.fr : g.verb ? *g.verb : be_row(); }

// French subject agreement: gender and number of the subject (I, you, we, they: masculine).
std::size_t agree(const NP& subject) { return form_index(subject.gender, subject.plural || subject.person >= 3); }

// Clitics in French order. A reflexive pronoun or a first or second person object comes first, then
// le/la/les, then lui/leur. The grammar never builds two pronouns of the first slot together.
Words fr_clitics(const VG& g, const NP& subject) {
  static const std::array<const char*, 6> refl{"me", "te", "se", "nous", "vous", "se"};
  static const std::array<const char*, 6> near{"me", "te", "", "nous", "vous", ""};
  Words w;
  const NP* d = is_pronoun(g.obj) && g.prep_fr.empty() ? g.obj.get() : nullptr;
  const NP* i = is_pronoun(g.iobj) ? g.iobj.get() : nullptr;
  if (g.reflexive) w.push_back(refl[subject.person]);
  if (d && !third(*d)) w.push_back(near[d->person]);
  if (i && !third(*i)) w.push_back(near[i->person]);
  if (d && third(*d)) w.push_back(d->person == 5 ? "=les" : feminine(*d) ? "=la" : "=le");
  if (i && third(*i)) w.push_back(i->person == 5 ? "leur" : "lui");
  return w;
}

bool negated(const VG& g) { return g.neg != Ng::None; }

// What follows the verb in French: objects, the predicate, complements, the infinitive, the tail.
Words fr_after(const VG& g, const NP& subject);

// The infinitive with its clitics and what follows: "le manger", "me lever", "lui donner le livre".
Words fr_infinitive(const VG& g, const NP& subject) {
  Words w = fr_clitics(g, subject);
  w.push_back(fr_row(g).fr);
  append(w, fr_after(g, subject));
  return w;
}

Words fr_after(const VG& g, const NP& subject) {
  Words w;
  const bool neg_obj = negated(g) && g.neg != Ng::Nothing && g.neg != Ng::Nobody;
  if (g.obj && !(is_pronoun(g.obj) && g.prep_fr.empty())) {
    if (!g.prep_fr.empty()) w.push_back(g.prep_fr);
    append(w, fr_np(*g.obj, neg_obj && g.prep_fr.empty()));
  }
  if (g.neg == Ng::Nobody) w.push_back("personne");
  if (g.iobj && !is_pronoun(g.iobj)) {
    w.push_back("à");
    append(w, fr_np(*g.iobj));
  }
  if (g.adj) {
    if (!g.degree_fr.empty()) w.push_back(g.degree_fr);
    w.push_back(g.adj->fr[agree(subject)]);
  }
  append(w, g.comp_fr);
  if (g.inf) {  // veut aller au parc; demande à Marie de venir; aide Paul à porter le sac
    if (!g.inf_prep_fr.empty()) w.push_back(g.inf_prep_fr);
    // The negation of the main verb reaches the infinitive's object: je ne veux pas manger de viande.
    VG inner = *g.inf;
    if (negated(g) && inner.neg == Ng::None) inner.neg = Ng::Not, inner.contracted = false;
    Words inf = fr_clitics(inner, subject);
    inf.push_back(fr_row(inner).fr);
    append(inf, fr_after(inner, subject));
    append(w, inf);
  }
  append(w, g.tail_fr);
  return w;
}

const char* neg_word(Ng n) {
  switch (n) {
    case Ng::Not: return "pas";
    case Ng::Never: return "jamais";
    case Ng::NoLonger: return "plus";
    case Ng::Nothing: return "rien";
    default: return "";
  }
}

// The participle of `g` for the passé composé: agreeing with the subject for être (and pronominal
// verbs), with a direct object pronoun before avoir, else masculine singular.
std::string fr_participle(const VG& g, const NP& subject) {
  const LexVerb& v = fr_row(g);
  if (g.reflexive || (&v != &be_row() && v.etre)) return v.participle[agree(subject)];
  if (is_pronoun(g.obj) && g.prep_fr.empty()) return v.participle[form_index(g.obj->gender, g.obj->plural || g.obj->person >= 3)];
  return v.participle[0];
}

// The French verb group after the subject.
Words fr_group(const VG& g, const NP& subject) {
  const int p = subject.person;
  const LexVerb& v = fr_row(g);
  const bool neg = negated(g);
  Words w;
  if (neg) w.push_back("ne");
  auto finish_neg = [&] {
    if (neg && !g.neg_fr.empty()) w.push_back(g.neg_fr);
    else if (neg && *neg_word(g.neg)) w.push_back(neg_word(g.neg));
    if (!g.freq_fr.empty()) w.push_back(g.freq_fr);
  };
  // A modal, aller or venir de: the finite verb is theirs and the main verb an infinitive.
  const LexVerb* head = nullptr;
  const std::array<std::string, 6>* forms = nullptr;
  std::string link;  // "de" (venir de, avoir besoin de)
  switch (g.modal) {
    case Md::Can:
    case Md::May: head = &verb_row("can", "modal"), forms = &head->present; break;
    case Md::Could:
    case Md::Might: head = &verb_row("can", "modal"), forms = &head->conditional; break;
    case Md::AbleTo: head = &verb_row("can", "modal"), forms = &head->future; break;
    case Md::Should: head = &verb_row("must", "modal"), forms = &head->conditional; break;
    case Md::Must: head = &verb_row("must", "modal"), forms = &head->present; break;
    case Md::HadTo: head = &verb_row("must", "modal"), forms = &head->imperfect; break;
    case Md::WouldLike: head = &verb_row("want"), forms = &head->conditional; break;
    case Md::HaveTo:
      if (neg) {  // "doesn't have to go" → "n'a pas besoin de partir"
        w.push_back(have_row().present[p]);
        finish_neg();
        append(w, {"besoin", "de"});
        append(w, fr_infinitive(g, subject));
        return w;
      }
      head = &verb_row("must", "modal"), forms = &head->present;
      break;
    case Md::None:
      if (g.tense == Tn::GoingTo) head = &verb_row("go"), forms = &head->present;
      if (g.tense == Tn::JustDid) head = &verb_row("come"), forms = &head->present, link = "de";
      break;
  }
  if (head) {
    w.push_back((*forms)[p]);
    finish_neg();
    if (!link.empty()) w.push_back(link);
    // Under a negation a modal's infinitive takes "de" for its indefinite object (ne peut pas manger de pain).
    VG inner = g;
    inner.modal = Md::None;
    inner.tense = Tn::Present;
    inner.freq_en.clear();
    inner.freq_fr.clear();
    Words inf = fr_clitics(inner, subject);
    inf.push_back(v.fr);
    append(inf, fr_after(g, subject));
    append(w, inf);
    return w;
  }
  append(w, fr_clitics(g, subject));
  // A state in the past is the imparfait: "was tired" → "était fatigué" (not "a été").
  Tn tense = !g.verb && g.tense == Tn::Past ? Tn::PastProg : g.tense;
  // So is the past of a verb of a state: "wanted" → "voulait", "knew" → "savait", "needed" → "avait besoin".
  static const std::set<std::string> states{"want", "need", "know", "hope", "seem", "believe", "wish", "have",
                                            "love", "hate", "prefer"};
  if (g.verb && g.tense == Tn::Past && states.count(g.verb->en)) tense = Tn::PastProg;
  if (g.fr_tense >= 0) tense = static_cast<Tn>(g.fr_tense);
  switch (tense) {
    case Tn::Past:
    case Tn::Perfect:
    case Tn::Pluperfect: {
      const bool etre = g.reflexive || v.etre;
      const LexVerb& aux = etre ? be_row() : have_row();
      w.push_back(tense == Tn::Pluperfect ? aux.imperfect[p] : aux.present[p]);
      finish_neg();  // ne … pas / jamais / plus / rien around the auxiliary; personne after the participle
      w.push_back(fr_participle(g, subject));
      break;
    }
    case Tn::PastProg: w.push_back(v.imperfect[p]), finish_neg(); break;
    case Tn::Future: w.push_back(v.future[p]), finish_neg(); break;
    case Tn::Cond: w.push_back(v.conditional[p]), finish_neg(); break;
    default: w.push_back(v.present[p]), finish_neg(); break;
  }
  append(w, fr_after(g, subject));
  return w;
}

// English: the first auxiliary (inverted in a question) and the rest.
struct En {
  Words first, rest;
};

std::string en_3sg_or_base(const LexVerb& v, int p) { return p == 2 ? v.en_3sg : v.en; }
std::string have_en(int p) { return p == 2 ? "has" : "have"; }
std::string do_en(int p) { return p == 2 ? "does" : "do"; }

// The English words after the verb: particle, objects, predicate, infinitive, tail.
Words en_after(const VG& g) {
  Words w;
  if (!g.particle_en.empty()) w.push_back(g.particle_en);
  auto object_words = [&]() -> Words {
    if (g.neg == Ng::Nothing) return {g.any_form ? "anything" : "nothing"};
    if (g.neg == Ng::Nobody) return {g.any_form ? "anyone" : g.no_one ? "no one" : "nobody"};
    return g.obj ? en_np(*g.obj, true) : Words{};
  };
  if (g.iobj && g.iobj_first) {
    append(w, en_np(*g.iobj, true));
    append(w, object_words());
  } else {
    append(w, object_words());
    if (g.iobj) {
      w.push_back(g.iprep_en);
      append(w, en_np(*g.iobj, true));
    }
  }
  if (g.adj) {
    if (!g.degree_en.empty()) words_of(g.degree_en, w);
    if (!g.adj->en.empty()) w.push_back(g.adj->en);
  }
  append(w, g.comp_en);
  if (g.inf) {
    if (!g.inf_to.empty() && !g.inf_ing) w.push_back(g.inf_to);
    VG inner = *g.inf;
    Words base;
    base.push_back(inner.verb ? (g.inf_ing ? inner.verb->en_ing : inner.verb->en) : "be");
    append(base, en_after(inner));
    append(w, base);
  }
  append(w, g.tail_en);
  return w;
}

// The English verb group; `question` puts the first auxiliary apart (do-support where needed).
En en_group(const VG& g, const NP& subject, bool question) {
  const int p = subject.person;
  const bool cop = g.verb == nullptr;
  const LexVerb* v = g.verb;
  const bool neg = negated(g) && !g.en_affirmative &&
                   (g.neg == Ng::Not || ((g.neg == Ng::Nothing || g.neg == Ng::Nobody) && g.any_form));
  const std::string adv = g.neg == Ng::Never ? "never" : g.neg == Ng::NoLonger ? "no longer" : g.freq_en;
  En e;
  auto add_adv = [&](Words& w) {
    if (!adv.empty()) words_of(adv, w);
  };
  // An auxiliary with its negation: "isn't" / "is not"; am never contracts with not.
  auto aux = [&](const std::string& a) {
    if (!neg) {
      e.first = {a};
      return;
    }
    if (!g.contracted || a == "am") {
      e.first = {a};
      e.rest.insert(e.rest.begin(), "not");
      return;
    }
    static const std::map<std::string, std::string> nt{{"is", "isn't"},     {"are", "aren't"},   {"was", "wasn't"},
                                                       {"were", "weren't"}, {"do", "don't"},     {"does", "doesn't"},
                                                       {"did", "didn't"},   {"has", "hasn't"},   {"have", "haven't"},
                                                       {"will", "won't"},   {"would", "wouldn't"}, {"can", "can't"},
                                                       {"could", "couldn't"}, {"should", "shouldn't"}, {"must", "mustn't"},
                                                       {"had", "hadn't"}};
    e.first = {nt.at(a)};
  };
  const std::string base = cop ? "be" : v->en;
  Words tail = en_after(g);
  auto main_words = [&](const std::string& form) {
    Words w;
    add_adv(w);
    w.push_back(form);
    append(w, tail);
    return w;
  };
  // A modal: its word, then the base form.
  if (g.modal != Md::None) {
    std::string m;
    Words extra;  // words between the modal and the base form
    switch (g.modal) {
      case Md::Can: m = "can"; break;
      case Md::Could: m = "could"; break;
      case Md::Should: m = "should"; break;
      case Md::Must: m = "must"; break;
      case Md::May: m = "may"; break;
      case Md::Might: m = "might"; break;
      case Md::WouldLike: m = "would", extra = {"like", "to"}; break;
      case Md::AbleTo: m = "will", extra = {"be", "able", "to"}; break;
      case Md::HaveTo:
        if (neg || question) m = do_en(p), extra = {"have", "to"};
        else m = have_en(p), extra = {"to"};
        break;
      case Md::HadTo:
        if (neg || question) m = "did", extra = {"have", "to"};
        else m = "had", extra = {"to"};
        break;
      default: break;
    }
    if (neg && g.modal == Md::Can && !g.contracted) {
      e.first = {"cannot"};
    } else if (neg && (g.modal == Md::May || g.modal == Md::Might)) {
      e.first = {m};
      e.rest = {"not"};
    } else if ((g.modal == Md::HaveTo || g.modal == Md::HadTo) && !neg && !question) {
      e.rest = {m};  // "has to go", "had to go": nothing to invert or contract (not "I've to")
    } else {
      aux(m);
    }
    Words r;
    // "has never had to": the adverb after the modal; "must always"
    add_adv(r);
    append(r, extra);
    r.push_back(base);
    append(r, tail);
    append(e.rest, r);
    return e;
  }
  switch (g.tense) {
    case Tn::Present:
      if (cop) {
        aux(be_en(p, false));
        add_adv(e.rest);
        append(e.rest, tail);
      } else if (neg || question) {
        aux(do_en(p));
        append(e.rest, main_words(base));
      } else {
        e.rest = main_words(en_3sg_or_base(*v, p));
      }
      break;
    case Tn::Past:
      if (cop) {
        aux(be_en(p, true));
        add_adv(e.rest);
        append(e.rest, tail);
      } else if (neg || question) {
        aux("did");
        append(e.rest, main_words(base));
      } else {
        e.rest = main_words(v->en_past);
      }
      break;
    case Tn::PresProg:
    case Tn::PastProg:
      aux(be_en(p, g.tense == Tn::PastProg));
      append(e.rest, main_words(cop ? "being" : v->en_ing));
      break;
    case Tn::Future:
      aux(g.shall && (p == 0 || p == 3) && !neg ? "shall" : "will");
      append(e.rest, main_words(base));
      break;
    case Tn::Cond:
      aux("would");
      append(e.rest, main_words(base));
      break;
    case Tn::Perfect:
    case Tn::Pluperfect:
    case Tn::JustDid: {
      aux(g.tense == Tn::Pluperfect ? "had" : have_en(p));
      Words r;
      if (g.tense == Tn::JustDid) r.push_back("just");
      add_adv(r);
      r.push_back(cop ? "been" : v->en_pp);
      append(r, tail);
      append(e.rest, r);
      break;
    }
    case Tn::GoingTo:
      aux(be_en(p, false));
      append(e.rest, Words{"going", "to"});
      append(e.rest, main_words(base));
      break;
  }
  return e;
}

// The English subject, contracted with its auxiliary where English does (I'm, he's, we'll, I've, I'd).
Words en_subject_aux(const NP& subject, En e, bool contract) {
  Words w = en_np(subject);
  if (contract && subject.det == Det::Pronoun && e.first.size() == 1) {
    static const std::map<std::string, std::string> suffix{{"am", "'m"}, {"are", "'re"}, {"is", "'s"}, {"will", "'ll"},
                                                           {"would", "'d"}, {"have", "'ve"}};
    auto it = suffix.find(e.first.front());
    const bool negative = !e.rest.empty() && e.rest.front() == "not";
    const bool be = it != suffix.end() && (it->first == "am" || it->first == "are" || it->first == "is");
    if (it != suffix.end() && (!negative || be)) {
      w.back() += it->second;
      append(w, e.rest);
      return w;
    }
  }
  append(w, e.first);
  append(w, e.rest);
  return w;
}

// What a negation changes in a verb group drawn without one: "a bit tired" says nothing once negated
// ("n'est pas un peu fatigué"), and "avoir de la chance" becomes "pas de chance".
VG tidy(VG g) {
  if (negated(g)) {
    static const std::set<std::string> small{"a bit", "a little", "somewhat", "quite", "pretty", "rather"};
    if (small.count(g.degree_en)) g.degree_en.clear(), g.degree_fr.clear();
    for (std::string& w : g.comp_fr)
      if (w == "de la chance" && g.neg == Ng::Not && !g.en_affirmative) w = "de chance";
  }
  // "won't sleep again" → "ne dormira plus" (not "pas de nouveau")
  if (g.neg == Ng::Not && !g.en_affirmative && g.neg_fr.empty() && !g.tail_fr.empty() && g.tail_fr.back() == "de nouveau")
    g.tail_fr.pop_back(), g.neg_fr = "plus";
  if (g.inf) g.inf = std::make_shared<VG>(tidy(*g.inf));
  return g;
}

// A statement: subject and verb group in both languages.
struct Pair {
  Words en, fr;
};
Pair statement(const NP& subject, const VG& given) {
  const VG g = tidy(given);
  Pair s;
  s.en = en_subject_aux(subject, en_group(g, subject, false), g.contract_subject);
  s.fr = fr_np(subject);
  append(s.fr, fr_group(g, subject));
  return s;
}


// ---- choosing --------------------------------------------------------------------------------------

NP np_of(const LexNoun* n, bool plural, Det det) {
  NP np = noun_np(n, plural);
  np.det = det;
  if (det == Det::A) np.plural = false, np.person = 2;
  return np;
}
std::shared_ptr<NP> shared(NP np) { return std::make_shared<NP>(std::move(np)); }

// A noun given as words (people / gens): `noun` is nullptr.
NP word_np(const char* en, const char* fr, Gender g, bool plural, Det det = Det::Quant, const char* en_det = "",
           const char* fr_det = "") {
  NP np;
  np.en_word = en;
  np.fr_word = fr;
  np.gender = g;
  np.plural = plural;
  np.person = plural ? 5 : 2;
  np.det = det;
  np.en_det = en_det;
  np.fr_det = fr_det;
  return np;
}

// A pronoun "it" / "they" for a thing or an animal of the noun phrase `of`.
NP it_np(const NP& of) {
  NP np = pronoun_np(of.plural ? 5 : 2, of.gender);
  np.thing = true;
  np.plural = of.plural;
  return np;
}

// the, a, my/your/his/her/our/their, this/these: a determiner for a person, an animal or a thing.
void everyday_det(Rng& rng, NP& np) {
  const std::size_t r = uniform_below(rng, 100);
  if (r < 45) np.det = Det::The;
  else if (r < 60) np.det = Det::A, np.plural = false;
  else if (r < 88) {
    np.det = Det::Poss;
    static const std::array<int, 6> who{0, 1, 2, 3, 3, 5};
    np.poss = who[uniform_below(rng, who.size())];
    if (np.poss == 3 && chance(rng, 50)) np.poss = 2;  // his / her
  } else if (r < 95) np.det = Det::This;
  else {  // that / those → ce, cet, cette / ces
    np.det = Det::Quant;
    np.en_det = np.plural ? "those" : "that";
    np.fr_det = np.plural ? "ces" : feminine(np) ? "cette" : "ce";
  }
  np.person = np.plural ? 5 : 2;
}

NP person_np(Rng& rng, unsigned plural_percent = 25) {
  const Vocab& V = vocab();
  const LexNoun* n = chance(rng, 40) ? pick(rng, V.family) : pick(rng, V.people);
  NP np = noun_np(n, chance(rng, plural_percent));
  everyday_det(rng, np);
  if (np.det == Det::A && (n->en == "mother" || n->en == "father" || n->en == "wife" || n->en == "husband"))
    np.det = Det::Poss;  // "a mother" is rare in a textbook; "my mother"
  if (np.det == Det::Poss && (n->en == "man" || n->en == "woman")) np.det = Det::The;  // not "my woman"
  static const std::set<std::string> own{"friend", "teacher", "doctor", "baby", "neighbor", "cousin", "dentist",
                                         "guest", "student", "pupil", "boss"};
  if (np.det == Det::Poss && n->kind == NounKind::Person && !own.count(n->en) &&
      std::find(V.family.begin(), V.family.end(), n) == V.family.end())
    np.det = Det::The;  // "the waiter", not "his waiter"
  return np;
}

NP animal_np(Rng& rng) {
  NP np = noun_np(pick(rng, vocab().animals), chance(rng, 25));
  everyday_det(rng, np);
  return np;
}

// I, you, he, she, we, they (French masculine for all but she, as the wide grammar does).
NP pronoun_subject(Rng& rng) { return random_pronoun(rng); }

// Someone who acts: a pronoun, a name, a person or (sometimes) an animal.
NP subject_np(Rng& rng, bool animals = true) {
  const std::size_t r = uniform_below(rng, 100);
  if (r < 38) return pronoun_subject(rng);
  if (r < 52) return name_np(rng);
  if (animals && r < 60) return animal_np(rng);
  return person_np(rng);
}

// A thing to act on, with a determiner; a bare plural is "des" (French) and nothing (English).
NP thing_obj(Rng& rng, unsigned adj_percent = 20) {
  const Vocab& V = vocab();
  NP np = noun_np(pick(rng, V.things), chance(rng, 30));
  const std::size_t r = uniform_below(rng, 100);
  if (r < 40) np.det = Det::The;
  else if (r < 62) np.det = Det::A, np.plural = false;
  else if (r < 82) {
    np.det = Det::Poss;
    np.poss = static_cast<int>(uniform_below(rng, 6));
    if (np.poss == 4) np.poss = 1;
  } else if (r < 87) np.det = Det::This;
  else if (r < 90) {  // the second book → le deuxième livre
    static const std::vector<std::array<const char*, 2>> ord{{"first", "premier"}, {"second", "deuxième"},
                                                             {"third", "troisième"}, {"last", "dernier"}, {"next", "prochain"}};
    const auto& o = ord[uniform_below(rng, ord.size())];
    np.det = Det::Quant;
    np.plural = false;
    np.en_det = std::string("the ") + o[0];
    std::string f = o[1];
    if (feminine(np) && f == "premier") f = "première";
    if (feminine(np) && f == "dernier") f = "dernière";
    if (feminine(np) && f == "prochain") f = "prochaine";
    np.fr_det = std::string(feminine(np) ? "la " : "le ") + f;
  } else if (r < 95) {
    np.det = Det::Number;
    np.number = 2 + static_cast<int>(uniform_below(rng, 9));
    np.plural = true;
  } else np.det = Det::Some, np.plural = true;
  np.person = np.plural ? 5 : 2;
  if (chance(rng, adj_percent)) {
    const LexAdjective* a = pick(rng, V.thing_adj);
    (a->before ? np.adj_before : np.adj_after) = a;
  }
  return np;
}

// Some food or drink: "some bread" / "du pain" (or just "bread"); with a negation "any bread" / "de pain".
NP mass_np(Rng& rng, bool negated, const LexNoun* n = nullptr) {
  const Vocab& V = vocab();
  if (!n) n = chance(rng, 50) ? pick(rng, V.foods) : pick(rng, V.drinks);
  NP np = noun_np(n, false);
  np.det = Det::Partitive;
  np.en_det = chance(rng, 45) ? (negated ? "any" : "some") : "";
  return np;
}

// The possessive that refers back to a subject, as kPossEn's index: my, your, his, her, our, their.
int poss_of(const NP& s) {
  if (s.det == Det::Pronoun) {
    switch (s.person) {
      case 0: return 0;
      case 1: return 1;
      case 2: return feminine(s) ? 3 : 2;
      case 3: return 4;
      default: return 5;
    }
  }
  return s.plural || s.person >= 3 ? 5 : feminine(s) ? 3 : 2;
}

// The English name of a noun phrase's head, for keys.
std::string head(const NP& np) {
  if (np.noun) return np.noun->en;
  if (np.det == Det::Name) return "name";
  if (np.det == Det::Pronoun) return fmt::format("pronoun{}{}", np.person, feminine(np) ? "f" : "");
  if (np.det == Det::Coord) return "coord";
  return np.en_word;
}

struct Phrase {
  const char *en, *fr;
};
// Time adverbials and the tenses they go with.
enum TimeFit : unsigned { kPast = 1, kFuture = 2, kHabit = 4, kNow = 8 };
struct TimePhrase {
  const char *en, *fr;
  unsigned fit;
};
const std::vector<TimePhrase> kTimes{
    {"yesterday", "hier", kPast}, {"last night", "hier soir", kPast}, {"last week", "la semaine dernière", kPast},
    {"last year", "la année dernière", kPast}, {"two days ago", "il y a deux jours", kPast},
    {"a week ago", "il y a une semaine", kPast}, {"three years ago", "il y a trois ans", kPast},
    {"this morning", "ce matin", kPast | kFuture}, {"tomorrow", "demain", kFuture},
    {"next week", "la semaine prochaine", kFuture}, {"next year", "la année prochaine", kFuture},
    {"tonight", "ce soir", kFuture | kNow}, {"soon", "bientôt", kFuture}, {"later", "plus tard", kFuture},
    {"in two hours", "dans deux heures", kFuture}, {"every day", "tous les jours", kHabit},
    {"every morning", "tous les matins", kHabit}, {"every morning", "chaque matin", kHabit},
    {"every evening", "tous les soirs", kHabit}, {"every week", "chaque semaine", kHabit}, {"at night", "la nuit", kHabit},
    {"in the morning", "le matin", kHabit}, {"in the evening", "le soir", kHabit},
    {"in the afternoon", "le après-midi", kHabit}, {"on Sundays", "le dimanche", kHabit},
    {"on Mondays", "le lundi", kHabit}, {"in summer", "en été", kHabit}, {"in winter", "en hiver", kHabit},
    {"at the weekend", "le week-end", kHabit}, {"on Tuesdays", "le mardi", kHabit},
    {"on Wednesdays", "le mercredi", kHabit}, {"on Thursdays", "le jeudi", kHabit}, {"on Fridays", "le vendredi", kHabit},
    {"on Saturdays", "le samedi", kHabit}, {"on Saturday", "samedi", kPast | kFuture}, {"on Friday", "vendredi", kPast | kFuture},
    {"on Sunday", "dimanche", kPast | kFuture}, {"in spring", "au printemps", kHabit}, {"in autumn", "en automne", kHabit},
    {"in January", "en janvier", kPast | kFuture | kHabit}, {"in February", "en février", kPast | kFuture | kHabit},
    {"in March", "en mars", kPast | kFuture | kHabit}, {"in April", "en avril", kPast | kFuture | kHabit},
    {"in May", "en mai", kPast | kFuture | kHabit}, {"in June", "en juin", kPast | kFuture | kHabit},
    {"in July", "en juillet", kPast | kFuture | kHabit}, {"in August", "en août", kPast | kFuture | kHabit},
    {"in September", "en septembre", kPast | kFuture | kHabit}, {"in October", "en octobre", kPast | kFuture | kHabit},
    {"in November", "en novembre", kPast | kFuture | kHabit}, {"in December", "en décembre", kPast | kFuture | kHabit}, {"twice a week", "deux fois par semaine", kHabit},
    {"once a month", "une fois par mois", kHabit}, {"three times a day", "trois fois par jour", kHabit},
    {"twice per week", "deux fois par semaine", kHabit}, {"once per year", "une fois par an", kHabit},
    {"today", "aujourd'hui", kPast | kFuture | kHabit | kNow}, {"now", "maintenant", kNow},
    {"right now", "en ce moment", kNow}, {"at the moment", "en ce moment", kNow}};

const TimePhrase& time_for(Rng& rng, unsigned fit) {
  std::vector<const TimePhrase*> ok;
  for (const TimePhrase& t : kTimes)
    if (t.fit & fit) ok.push_back(&t);
  return *pick(rng, ok);
}

unsigned fit_of(Tn t, Md m) {
  if (m != Md::None) return m == Md::HadTo ? kPast : m == Md::AbleTo ? kFuture : kFuture | kHabit;
  switch (t) {
    case Tn::Past:
    case Tn::PastProg: return kPast;
    case Tn::Future:
    case Tn::GoingTo: return kFuture;
    case Tn::PresProg: return kNow;
    case Tn::Present: return kHabit;
    default: return 0;
  }
}

// Where: place adverbials.
const std::vector<Phrase> kPlaces{{"here", "ici"},
                                  {"there", "là"},
                                  {"at home", "à la maison"},
                                  {"at school", "à le école"},
                                  {"at work", "à le travail"},
                                  {"outside", "dehors"},
                                  {"inside", "à le intérieur"},
                                  {"upstairs", "en haut"},
                                  {"downstairs", "en bas"},
                                  {"everywhere", "partout"},
                                  {"abroad", "à le étranger"},
                                  {"far away", "loin"},
                                  {"in town", "en ville"},
                                  {"in the country", "à la campagne"},
                                  {"over there", "là-bas"},
                                  {"in the garden", "dans le jardin"},
                                  {"in the kitchen", "dans la cuisine"}};
// How: manner adverbs that end a French clause as they end an English one.
const std::vector<Phrase> kManners{{"slowly", "lentement"},   {"quickly", "vite"},       {"carefully", "soigneusement"},
                                   {"well", "bien"},          {"badly", "mal"},          {"quietly", "doucement"},
                                   {"loudly", "fort"},        {"together", "ensemble"},   {"early", "tôt"},
                                   {"late", "tard"},          {"again", "de nouveau"},    {"fast", "vite"},
                                   {"hard", "dur"},           {"immediately", "immédiatement"}, {"easily", "facilement"},
                                   {"suddenly", "soudain"},   {"happily", "joyeusement"}, {"at once", "tout de suite"}};
// How often and the like: before the English verb, after the French finite verb.
const std::vector<Phrase> kFreqs{{"always", "toujours"},   {"often", "souvent"},         {"sometimes", "parfois"},
                                 {"usually", "généralement"}, {"rarely", "rarement"},    {"seldom", "rarement"},
                                 {"really", "vraiment"},   {"probably", "probablement"}, {"certainly", "certainement"},
                                 {"also", "aussi"},        {"still", "encore"},          {"generally", "généralement"},
                                 {"finally", "finalement"}, {"apparently", "apparemment"},
                                 {"clearly", "clairement"}, {"obviously", "évidemment"}, {"simply", "simplement"},
                                 {"especially", "surtout"}, {"nearly", "presque"},       {"almost", "presque"},
                                 {"only", "seulement"},    {"hardly", "à peine"}};

// A tense for an everyday clause.
Tn pick_tn(Rng& rng) {
  static const std::vector<unsigned> w{26, 22, 8, 5, 12, 3, 11, 10, 3};
  return static_cast<Tn>(pick_weighted(rng, w));
}

// A counted food: "an apple", "the potatoes", "three eggs", "tomatoes" (des tomates). `cooked`: one
// that is cooked (potatoes, eggs, a pizza), not fruit.
NP countable_np(Rng& rng, bool cooked = false) {
  static const std::set<std::string> raw{"apple", "banana", "orange", "pear", "strawberry", "lemon", "biscuit", "sandwich"};
  const LexNoun* n = pick(rng, vocab().countables);
  for (int tries = 0; cooked && raw.count(n->en) && tries < 8; ++tries) n = pick(rng, vocab().countables);
  if (cooked && raw.count(n->en)) n = &noun_row("potato");
  NP np = noun_np(n, chance(rng, 45));
  const std::size_t r = uniform_below(rng, 100);
  if (r < 30) np.det = Det::The;
  else if (r < 60) np.det = Det::A, np.plural = false;
  else if (r < 78) np.det = Det::Number, np.number = 2 + static_cast<int>(uniform_below(rng, 5)), np.plural = true;
  else np.det = Det::Some, np.plural = true;
  np.person = np.plural ? 5 : 2;
  return np;
}

// A noun of `list` with a determiner (the, a, my, this, that): clothes, furniture, a vehicle.
NP listed_np(Rng& rng, const std::vector<const LexNoun*>& list, unsigned plural_percent = 20) {
  NP np = noun_np(pick(rng, list), chance(rng, plural_percent));
  everyday_det(rng, np);
  if (np.det == Det::Poss && np.poss == 4) np.poss = 1;
  return np;
}

// play the piano → jouer du piano (de + le); play tennis → jouer au tennis (à + le). The contraction and
// elision of "de le", "à le" are made when the sentence is finished.
VG play_vg(Rng& rng, std::vector<std::string>& combos) {
  const Vocab& V = vocab();
  VG g;
  g.verb = &verb_row("play");
  const bool music = chance(rng, 50);
  NP o = noun_np(pick(rng, music ? V.instruments : V.sports), false);
  o.det = Det::Quant;
  o.en_det = music ? "the" : "";
  o.fr_det = std::string(music ? "de " : "à ") + (feminine(o) ? "la" : "le");
  o.person = 2;
  g.obj = shared(o);
  // Four keys per instrument or sport, so that held-out combinations leave each of them in training.
  combos.push_back(key("ev", "play", fmt::format("{}_{}", head(o), uniform_below(rng, 4))));
  return g;
}

// by bus → en bus, by bike → à vélo, on foot → à pied: how one travels, after a verb of motion. A
// complement rather than a tail, so that a place or a time the caller adds comes after it.
void by_vehicle(Rng& rng, VG& g) {
  if (chance(rng, 12)) {
    g.comp_en = {"on", "foot"};
    g.comp_fr = {"à", "pied"};
    return;
  }
  const LexNoun* n = pick(rng, vocab().vehicles);
  g.comp_en = {"by", n->en};
  g.comp_fr = {n->en == "bike" ? "à" : "en", n->fr};
}

// A verb group on a transitive verb with a thing (or a person) as object.
VG transitive_vg(Rng& rng, std::vector<std::string>& combos) {
  const Vocab& V = vocab();
  if (chance(rng, 6)) return play_vg(rng, combos);
  VG g;
  g.verb = pick(rng, V.transitive);
  const std::string& en = g.verb->en;
  NP o;
  if (en == "visit" || en == "leave") o = np_of(pick(rng, V.buildings), false, Det::The);
  else if (en == "wear" || (en == "buy" && chance(rng, 25)) || ((en == "wash" || en == "choose") && chance(rng, 40)))
    o = listed_np(rng, V.clothes);
  else if (en == "take" && chance(rng, 35)) o = np_of(pick(rng, V.vehicles), false, Det::The);  // prendre le bus
  else if (en == "rent" || en == "tidy") {  // louer une voiture, un appartement; ranger la chambre
    static const std::vector<const char*> rented{"car", "bike", "boat", "apartment", "house", "bedroom"};
    static const std::vector<const char*> tidied{"kitchen", "bedroom", "room", "house", "office", "garage", "desk",
                                                 "cupboard", "bag"};
    const auto& from = en == "rent" ? rented : tidied;
    o = np_of(&noun_row(from[uniform_below(rng, from.size())]), false, Det::The);
    everyday_det(rng, o);
    if (o.det == Det::A && en == "tidy") o.det = Det::The;
  }
  else if (en == "book") {  // réserver une table, un billet, une chambre, un vol
    static const std::vector<const char*> booked{"table", "ticket", "bedroom", "flight", "taxi", "hotel"};
    o = np_of(&noun_row(booked[uniform_below(rng, booked.size())]), false, chance(rng, 60) ? Det::A : Det::The);
  } else if (en == "order")
    o = chance(rng, 50) ? countable_np(rng) : mass_np(rng, false);
  else if ((en == "repair" || en == "sell" || en == "clean" || en == "paint" || en == "buy") && chance(rng, 35))
    o = listed_np(rng, chance(rng, 70) ? V.furniture : V.vehicles);
  else if (en == "meet" || en == "help" || en == "call" || en == "follow" || en == "kill")
    o = chance(rng, 50) ? person_np(rng) : name_np(rng);
  else if (en == "know" || en == "love" || en == "hate" || en == "see" || en == "watch" || en == "hear")
    o = chance(rng, 50) ? person_np(rng) : chance(rng, 50) ? name_np(rng) : thing_obj(rng);
  else if (en == "eat" || en == "drink" || en == "cook" || en == "serve" || en == "add" || en == "prepare")
    o = chance(rng, 55) ? mass_np(rng, false) : countable_np(rng, en == "cook");
  else if (en == "buy")
    o = chance(rng, 30) ? mass_np(rng, false) : chance(rng, 30) ? countable_np(rng) : thing_obj(rng);
  else if (en == "write" || en == "read" || en == "paint" || en == "draw" || en == "send") {
    static const std::vector<const char*> text{"letter", "book", "story", "poem", "card", "message", "newspaper"};
    static const std::vector<const char*> image{"picture", "house", "wall", "door", "flower", "car", "tree", "map"};
    const auto& from = en == "paint" || en == "draw" ? image : text;
    const char* n = from[uniform_below(rng, from.size())];
    if (en == "write" && std::string(n) == "newspaper") n = "letter";
    o = np_of(&noun_row(n), chance(rng, 25), Det::The);
    everyday_det(rng, o);
  }
  else if (en == "learn" || en == "explain" || en == "describe" || en == "accept" || en == "discover" ||
           en == "understand" || en == "forget")
    o = np_of(pick(rng, V.abstracts), chance(rng, 30), chance(rng, 60) ? Det::The : Det::Poss);
  else o = thing_obj(rng);
  if (o.det == Det::Poss && o.poss == 4) o.poss = 1;
  // One drinks a drink (not "drinks sugar", "drinks fish"), and eats, cooks or adds a food (not "eats
  // beer", "ate some coffee").
  const auto in = [](const std::vector<const LexNoun*>& list, const NP& np) {
    return np.noun && std::find(list.begin(), list.end(), np.noun) != list.end();
  };
  if (en == "drink" && (o.det != Det::Partitive || !in(V.drinks, o))) o = mass_np(rng, false, pick(rng, V.drinks));
  if ((en == "eat" || en == "cook" || en == "add") && in(V.drinks, o)) o = mass_np(rng, false, pick(rng, V.foods));
  // Liking is said of the kind: "I like coffee / apples" → "J'aime le café / les pommes".
  if ((en == "like" || en == "love" || en == "hate") && (o.det == Det::Some || o.det == Det::Partitive)) o.det = Det::Generic;
  if ((en == "like" || en == "love" || en == "hate" || en == "want") && (o.det == Det::A || o.det == Det::Number) &&
      o.noun && o.noun->kind != NounKind::Person)
    o.det = Det::The;
  g.obj = shared(o);
  combos.push_back(key("ev", en, head(o)));
  return g;
}

VG intransitive_vg(Rng& rng, std::vector<std::string>& combos, const NP& subject) {
  VG g;
  g.verb = pick(rng, vocab().intransitive);
  const std::string& en = g.verb->en;
  if ((en == "travel" || en == "come" || en == "arrive" || en == "leave" || en == "return") && chance(rng, 30))
    by_vehicle(rng, g);
  combos.push_back(key("evs", head(subject), g.verb->en));
  return g;
}

// A predicate adjective for a subject (a person or an animal; a thing).
VG copula_vg(Rng& rng, const NP& subject, std::vector<std::string>& combos) {
  const Vocab& V = vocab();
  VG g;
  const bool animate = !subject.noun || subject.noun->kind == NounKind::Person || subject.noun->kind == NounKind::Animal;
  g.adj = animate ? pick(rng, V.person_adj) : pick(rng, V.thing_adj);
  if (chance(rng, 25) && g.adj->en != "dead") {  // very tired → très fatigué
    static const std::vector<Phrase> degrees{{"very", "très"},   {"quite", "assez"},     {"rather", "plutôt"},
                                             {"pretty", "assez"}, {"so", "si"},          {"a bit", "un peu"},
                                             {"somewhat", "un peu"}, {"really", "vraiment"}, {"too", "trop"},
                                             {"extremely", "extrêmement"}, {"a little", "un peu"}};
    const Phrase& d = pick(rng, degrees);
    g.degree_en = d.en;
    g.degree_fr = d.fr;
  }
  combos.push_back(key("adj", head(subject), g.adj->en));
  return g;
}

// Applies a random negation (not) to `g` with probability `percent`.
void negate(Rng& rng, VG& g, unsigned percent) {
  if (!chance(rng, percent)) return;
  g.neg = Ng::Not;
  g.contracted = !chance(rng, 35);
}

// "some bread" in a statement, "any bread" after not, "bread" after never or no longer.
void fix_some(VG& g) {
  if (g.obj && g.obj->det == Det::Partitive && !g.obj->en_det.empty())
    g.obj->en_det = g.neg == Ng::Not ? "any" : g.neg == Ng::None ? "some" : "";
}

// A key the held-out rule puts in training, for set phrases and facts ("Excuse me.", "The capital of
// Japan is Tokyo."): a model can only remember them, so a test sentence of one would measure nothing
// but chance. The first of key, key#1, key#2, … that combo_split sends to training.
std::string train_key(const std::string& k) {
  for (int i = 0;; ++i) {
    const std::string t = i == 0 ? k : k + "#" + std::to_string(i);
    if (combo_split(t) == Split::Train) return t;
  }
}

Example done(const Pair& p, std::string category, std::vector<std::string> combos) {
  return finish(p.en, p.fr, std::move(category), std::move(combos));
}

Pair end_with(Pair p, const char* mark) {
  p.en.push_back(mark);
  p.fr.push_back(mark);
  return p;
}

// Disjunctive pronouns (after a preposition or que): moi, toi, lui, elle, nous, eux, elles.
std::string disjunctive(const NP& np) {
  switch (np.person) {
    case 0: return "moi";
    case 1: return "toi";
    case 2: return feminine(np) ? "elle" : "lui";
    case 3: return "nous";
    case 4: return "vous";
    default: return feminine(np) ? "elles" : "eux";
  }
}
std::string object_en(const NP& np) { return pron_en(np, true); }


// A yes/no question: "Does he eat?" → "Est-ce qu'il mange ?"
Pair yes_no(const NP& subject, const VG& given) {
  const VG g = tidy(given);
  Pair p;
  const En e = en_group(g, subject, true);
  p.en = e.first;
  append(p.en, en_np(subject));
  append(p.en, e.rest);
  p.fr = {"est-ce", "que"};
  append(p.fr, fr_np(subject));
  append(p.fr, fr_group(g, subject));
  return p;
}

// A person as an object: a pronoun (me, you, him, her, us, them) that differs from the subject, a name
// or a noun phrase.
NP person_object(Rng& rng, const NP& subject, unsigned pronoun_percent) {
  if (chance(rng, pronoun_percent)) {
    NP o = random_pronoun(rng);
    const auto speaker = [](int p) { return p == 0 || p == 3; };
    if ((o.person == subject.person && !third(o)) || (speaker(o.person) && speaker(subject.person)))
      o = pronoun_np(subject.person == 1 ? 0 : 1, o.gender);
    return o;
  }
  return chance(rng, 35) ? name_np(rng) : person_np(rng, 20);
}

// ---- coordination ----------------------------------------------------------------------------------
// "The boy and the girl are tired." → "Le garçon et la fille sont fatigués." (masculine unless every
// part is feminine); objects joined by and / or; clauses joined by and, but, so; both … and (tous les
// deux), neither … nor (ni … ni), not … either (non plus), nor (et … non plus).

NP coordinated(NP a, NP b, const char* en, const char* fr) {
  NP s;
  s.det = Det::Coord;
  s.conj_en = en;
  s.conj_fr = fr;
  s.plural = true;
  s.person = a.person == 0 || b.person == 0 ? 3 : 5;
  s.gender = feminine(a) && feminine(b) ? Gender::Feminine : Gender::Masculine;
  s.parts = {std::move(a), std::move(b)};
  return s;
}

Example coordination(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  const std::size_t r = uniform_below(rng, 100);
  if (r < 35) {  // a coordinated subject
    NP a = chance(rng, 30) ? name_np(rng) : person_np(rng, 15);
    NP b = chance(rng, 30) ? name_np(rng) : chance(rng, 20) ? animal_np(rng) : person_np(rng, 15);
    if (head(a) == head(b)) b = name_np(rng);
    if (head(a) == head(b)) b = np_of(&noun_row("dog"), false, Det::The);
    const bool me = chance(rng, 15);  // "my brother and I" → "mon frère et moi" (nous)
    if (me) b = word_np("I", "moi", Gender::Masculine, false), b.person = 0;
    NP s = coordinated(a, b, "and", "et");
    const bool both = !me && chance(rng, 20);
    VG g;
    if (chance(rng, 55)) {
      g.adj = pick(rng, V.person_adj);
      if (g.adj->en == "alone" || g.adj->en == "different") g.adj = &adj_row("tired");
      const std::vector<unsigned> w{45, 30, 15, 10};
      static const std::array<Tn, 4> tenses{Tn::Present, Tn::Past, Tn::Future, Tn::Perfect};
      g.tense = tenses[pick_weighted(rng, w)];
      combos.push_back(key("adj", head(a), g.adj->en));
    } else {
      g.verb = pick(rng, V.intransitive);
      static const std::array<Tn, 5> tenses{Tn::Present, Tn::Past, Tn::Future, Tn::PresProg, Tn::Perfect};
      g.tense = tenses[uniform_below(rng, tenses.size())];
      if (chance(rng, 35)) {
        const Phrase& pl = pick(rng, kPlaces);
        words_of(pl.en, g.tail_en);
        g.tail_fr = {pl.fr};
      }
      combos.push_back(key("evs", head(a), g.verb->en));
    }
    if (both) {  // "Both the boy and the girl are tired." → "… sont tous les deux fatigués."
      s.en_det = "both";
      g.freq_fr = feminine(s) ? "toutes les deux" : "tous les deux";
    }
    negate(rng, g, both ? 0 : 15);
    combos.push_back(key("coord", head(a), head(b)));
    return done(end_with(statement(s, g), "."), "coord", combos);
  }
  if (r < 58) {  // coordinated objects: "She buys bread and milk." "Do you want tea or coffee?"
    const NP subject = subject_np(rng, false);
    VG g;
    const bool food = chance(rng, 55);
    const bool question = chance(rng, 30);
    const bool use_or = question ? chance(rng, 70) : chance(rng, 20);
    NP a, b;
    if (food) {
      static const std::vector<const char*> food_verbs{"eat", "drink", "buy", "want", "like", "cook", "prepare"};
      g.verb = &verb_row(food_verbs[uniform_below(rng, food_verbs.size())]);
      const bool drink = g.verb->en == "drink";
      // Nothing to drink after eat / cook / prepare ("Ils mangent du jus" was made).
      const bool solid = g.verb->en == "eat" || g.verb->en == "cook" || g.verb->en == "prepare";
      a = mass_np(rng, false, drink ? pick(rng, V.drinks) : solid ? pick(rng, V.foods) : nullptr);
      b = mass_np(rng, false, drink ? pick(rng, V.drinks) : solid ? pick(rng, V.foods) : nullptr);
      if (a.noun == b.noun)
        b = mass_np(rng, false, solid ? &noun_row(a.noun->en == "bread" ? "rice" : "bread")
                                      : &noun_row(a.noun->en == "tea" ? "milk" : "tea"));
      a.en_det = b.en_det = "";
      if (g.verb->en == "like") a.det = b.det = Det::Generic;
    } else {
      static const std::vector<const char*> see_verbs{"see", "meet", "call", "help", "visit", "watch", "invite"};
      const char* v = see_verbs[uniform_below(rng, see_verbs.size())];
      g.verb = lexicon_tables().verb(v) ? &verb_row(v) : &verb_row("see");
      a = chance(rng, 40) ? name_np(rng) : person_np(rng, 20);
      b = chance(rng, 40) ? name_np(rng) : person_np(rng, 20);
      if (head(a) == head(b)) b = np_of(&noun_row("teacher"), false, Det::The);
      if (head(a) == head(b)) b = np_of(&noun_row("doctor"), false, Det::The);
    }
    g.obj = shared(coordinated(a, b, use_or ? "or" : "and", use_or ? "ou" : "et"));
    g.tense = question ? (chance(rng, 60) ? Tn::Present : Tn::Past) : pick_tn(rng);
    if (g.verb->en == "want" || g.verb->en == "like") g.tense = chance(rng, 70) ? Tn::Present : Tn::Past;
    if (!question && !use_or) negate(rng, g, 10);
    if (g.neg != Ng::None && (a.det == Det::Partitive)) a.en_det = b.en_det = "";
    combos.push_back(key("coord", head(a), head(b)));
    combos.push_back(key("ev", g.verb->en, head(a)));
    if (question) return done(end_with(yes_no(subject, g), "?"), "coord", combos);
    return done(end_with(statement(subject, g), "."), "coord", combos);
  }
  if (r < 85 && chance(rng, 45)) {  // two whole clauses of set shapes
    const std::size_t shape = uniform_below(rng, 3);
    // "A, but B" / "A and B" in both languages.
    auto joined = [](Pair a, const Pair& b, bool but) {
      if (but) a.en.push_back(","), a.fr.push_back(",");
      a.en.push_back(but ? "but" : "and");
      a.fr.push_back(but ? "mais" : "et");
      append(a.en, b.en);
      append(a.fr, b.fr);
      return a;
    };
    if (shape == 0) {  // "The car is red and the house is white." → "La voiture est rouge et la maison est blanche."
      auto thing = [&](const LexNoun* avoid) {
        const LexNoun* n = chance(rng, 25) ? pick(rng, V.buildings) : pick(rng, V.things);
        if (n == avoid) n = &noun_row(n->en == "house" ? "car" : "house");
        NP np = noun_np(n, chance(rng, 15));
        const std::size_t d = uniform_below(rng, 100);
        if (d < 60) np.det = Det::The;
        else if (d < 85) {
          np.det = Det::Poss;
          static const std::array<int, 6> who{0, 1, 2, 3, 4, 5};
          np.poss = who[uniform_below(rng, who.size())];
        } else np.det = Det::This;
        np.person = np.plural ? 5 : 2;
        return np;
      };
      const NP s1 = thing(nullptr);
      const NP s2 = thing(s1.noun);
      VG g1, g2;
      g1.adj = pick(rng, V.thing_adj);
      g2.adj = pick(rng, V.thing_adj);
      if (g2.adj == g1.adj) g2.adj = &adj_row(g1.adj->en == "old" ? "new" : "old");
      g1.tense = g2.tense = chance(rng, 75) ? Tn::Present : Tn::Past;
      const bool but = chance(rng, 40);
      negate(rng, g2, but ? 30 : 10);
      if (g2.neg != Ng::None) g2.neg = Ng::Not;
      g1.contract_subject = g2.contract_subject = false;
      const Pair a = joined(statement(s1, g1), statement(s2, g2), but);
      combos.push_back(key("conj2", g1.adj->en, g2.adj->en + "_" + head(s1) + "_" + head(s2)));
      return done(end_with(a, "."), "coord", combos);
    }
    if (shape == 1) {  // "I like tea but my sister likes coffee." → "J'aime le thé mais ma sœur aime le café."
      const NP s1 = chance(rng, 60) ? pronoun_subject(rng) : name_np(rng);
      NP s2 = chance(rng, 60) ? person_np(rng, 15) : name_np(rng);
      if (head(s2) == head(s1)) s2 = np_of(&noun_row("sister"), false, Det::Poss);
      static const std::vector<const char*> vs{"like", "love", "prefer", "drink", "eat", "want"};
      const char* v = vs[uniform_below(rng, vs.size())];
      const std::string sv = v;
      const LexNoun* n1 = sv == "drink" ? pick(rng, V.drinks) : sv == "eat" ? pick(rng, V.foods)
                          : chance(rng, 50) ? pick(rng, V.drinks) : pick(rng, V.foods);
      const LexNoun* n2 = sv == "drink" ? pick(rng, V.drinks) : sv == "eat" ? pick(rng, V.foods)
                          : chance(rng, 50) ? pick(rng, V.drinks) : pick(rng, V.foods);
      if (n2 == n1 && sv == "eat") n2 = &noun_row(n1->en == "bread" ? "rice" : "bread");
      else if (n2 == n1) n2 = &noun_row(n1->en == "tea" ? "coffee" : "tea");
      VG g1, g2;
      g1.verb = g2.verb = &verb_row(v);
      g1.tense = g2.tense = chance(rng, 80) ? Tn::Present : Tn::Past;
      if (sv == "like" || sv == "love" || sv == "prefer" || sv == "want") g1.tense = g2.tense = Tn::Present;
      const bool generic = sv == "like" || sv == "love" || sv == "prefer";
      NP o1 = mass_np(rng, false, n1), o2 = mass_np(rng, false, n2);
      o1.en_det = o2.en_det = "";
      if (generic) o1.det = o2.det = Det::Generic;
      g1.obj = shared(o1);
      g2.obj = shared(o2);
      const bool but = chance(rng, 70);
      if (chance(rng, 20)) g2.neg = Ng::Not;  // "… but my sister doesn't like coffee" → "… n'aime pas le café"
      g1.contract_subject = false;
      const Pair a = joined(statement(s1, g1), statement(s2, g2), but);
      combos.push_back(key("conj2", sv, n1->en + "_" + n2->en + "_" + head(s2)));
      return done(end_with(a, "."), "coord", combos);
    }
    // "He is tired, so he goes to bed." → "Il est fatigué, alors il va au lit." (a cause, then what follows)
    struct Cause {
      const char* en;
      Words fr;
      bool avoir;  // avoir faim: English "is hungry"
      std::vector<int> results;
    };
    struct Result {
      const char *verb, *en, *fr;
    };
    static const std::vector<Result> results{{"go", "to bed", "à le lit"},     {"sleep", "", ""},
                                             {"eat", "a sandwich", "un sandwich"}, {"drink", "some water", "de le eau"},
                                             {"close", "the window", "la fenêtre"}, {"stay", "at home", "à la maison"},
                                             {"run", "", ""},                   {"take", "a taxi", "un taxi"},
                                             {"eat", "some bread", "du pain"}};
    static const std::vector<Cause> causes{{"tired", {}, false, {0, 1}},         {"hungry", {"faim"}, true, {2, 8}},
                                           {"thirsty", {"soif"}, true, {3}},     {"cold", {"froid"}, true, {4}},
                                           {"sick", {}, false, {5, 0}},          {"late", {"en", "retard"}, false, {6, 7}}};
    const Cause& c = causes[uniform_below(rng, causes.size())];
    const Result& res = results[c.results[uniform_below(rng, c.results.size())]];
    const NP s1 = subject_np(rng, false);
    NP s2 = s1;
    if (s1.det != Det::Pronoun) {
      s2 = pronoun_np(s1.plural ? 5 : s1.person, s1.gender);
      s2.plural = s1.plural || s1.person >= 3;
    }
    VG g1, g2;
    if (c.fr.empty()) g1.adj = &adj_row(c.en);
    else {
      g1.comp_en = {c.en};
      g1.comp_fr = c.fr;
      if (c.avoir) g1.fr = &have_row();
    }
    g2.verb = &verb_row(res.verb);
    words_of(res.en, g2.tail_en);
    words_of(res.fr, g2.tail_fr);
    const bool past = chance(rng, 30);  // était fatigué, alors il est allé au lit
    g1.tense = past ? Tn::Past : Tn::Present;
    g2.tense = past ? Tn::Past : Tn::Present;
    g1.contract_subject = chance(rng, 30);
    Pair a = statement(s1, g1), b = statement(s2, g2);
    append(a.en, {",", "so"});
    append(a.fr, {",", chance(rng, 60) ? "alors" : "donc"});
    append(a.en, b.en);
    append(a.fr, b.fr);
    combos.push_back(key("conj_so", c.en, std::string(res.verb) + "_" + head(s1)));
    return done(end_with(a, "."), "coord", combos);
  }
  if (r < 85) {  // two clauses: and, but, so
    static const std::vector<std::array<const char*, 2>> conj{{"and", "et"}, {"but", "mais"}, {"so", "alors"}};
    const auto& c = conj[pick_weighted(rng, {45, 40, 15})];
    const NP s1 = subject_np(rng);
    NP s2 = chance(rng, 40) ? s1 : subject_np(rng);
    // The same person again: "…, but she …" (he / she / they / it for a noun or a name).
    if (s2.det != Det::Pronoun && head(s1) == head(s2) && s1.det == s2.det) {
      NP p = pronoun_np(s1.plural ? 5 : s1.person, s1.gender);
      if (s1.noun && s1.noun->kind == NounKind::Animal) p.thing = true;
      p.plural = s1.plural || s1.person >= 3;
      s2 = p;
    }
    const Tn t = pick_tn(rng);
    auto clause_vg = [&](const NP& subj) {
      VG g;
      const std::size_t k = uniform_below(rng, 100);
      if (k < 45) g = transitive_vg(rng, combos);
      else if (k < 75) g = intransitive_vg(rng, combos, subj);
      else g = copula_vg(rng, subj, combos);
      g.tense = g.verb ? t : (t == Tn::Past || t == Tn::PastProg ? Tn::Past : t == Tn::Future ? Tn::Future : Tn::Present);
      if (g.verb && (g.verb->en == "like" || g.verb->en == "love" || g.verb->en == "want" || g.verb->en == "know" ||
                     g.verb->en == "understand" || g.verb->en == "hate") &&
          (g.tense == Tn::PresProg || g.tense == Tn::PastProg))
        g.tense = Tn::Present;
      return g;
    };
    VG g1 = clause_vg(s1), g2 = clause_vg(s2);
    if (std::string(c[0]) == "but") negate(rng, g2, 50);
    else negate(rng, g2, 10);
    negate(rng, g1, 10);
    g1.contract_subject = chance(rng, 30);
    g2.contract_subject = chance(rng, 30);
    Pair a = statement(s1, g1), b = statement(s2, g2);
    Pair p;
    p.en = a.en;
    p.fr = a.fr;
    if (std::string(c[0]) != "and") p.en.push_back(","), p.fr.push_back(",");
    p.en.push_back(c[0]);
    p.fr.push_back(c[1]);
    append(p.en, b.en);
    append(p.fr, b.fr);
    combos.push_back(key("conj", c[0], head(s1) + "_" + head(s2)));
    return done(end_with(p, "."), "coord", combos);
  }
  // neither … nor; not … either; nor
  const NP subject = subject_np(rng, false);
  VG g;
  static const std::vector<const char*> food_verbs{"eat", "drink", "buy", "want", "like"};
  g.verb = &verb_row(food_verbs[uniform_below(rng, food_verbs.size())]);
  const bool drink = g.verb->en == "drink";
  const bool eat = g.verb->en == "eat";
  const LexNoun* n1 = drink ? pick(rng, V.drinks) : eat || chance(rng, 50) ? pick(rng, V.foods) : pick(rng, V.drinks);
  const LexNoun* n2 = drink ? pick(rng, V.drinks) : eat || chance(rng, 50) ? pick(rng, V.foods) : pick(rng, V.drinks);
  if (n1 == n2) n2 = eat ? &noun_row(n1->en == "bread" ? "rice" : "bread")
                         : n1->en == "water" ? &noun_row("milk") : &noun_row("water");
  g.tense = chance(rng, 65) ? Tn::Present : Tn::Past;
  const std::size_t k = uniform_below(rng, 3);
  combos.push_back(key("neither", g.verb->en, n1->en + "_" + n2->en));
  if (k == 0) {  // "He eats neither meat nor fish." → "Il ne mange ni viande ni poisson."
    Pair p;
    const int per = subject.person;
    p.en = en_np(subject);
    p.en.push_back(g.tense == Tn::Present ? en_3sg_or_base(*g.verb, per) : g.verb->en_past);
    append(p.en, {"neither", lower(n1->en), "nor", lower(n2->en)});
    p.fr = fr_np(subject);
    p.fr.push_back("ne");
    if (g.tense == Tn::Present) p.fr.push_back(g.verb->present[per]);
    else append(p.fr, {have_row().present[per], g.verb->participle[0]});
    if (g.verb->en == "like") {  // aimer keeps the generic article: "n'aime ni le thé ni le café"
      auto the = [](const LexNoun* n) { return n->gender == Gender::Feminine ? "la" : "le"; };
      append(p.fr, {"ni", the(n1), n1->fr, "ni", the(n2), n2->fr});
    } else {
      append(p.fr, {"ni", n1->fr, "ni", n2->fr});
    }
    return done(end_with(p, "."), "coord", combos);
  }
  g.neg = Ng::Not;
  g.contracted = !chance(rng, 30);
  NP o = mass_np(rng, true, n1);
  if (g.verb->en == "like") o.det = Det::Generic;
  g.obj = shared(o);
  if (k == 1) {  // "I don't like coffee either." → "Je n'aime pas le café non plus."
    g.tail_en = {"either"};
    g.tail_fr = {"non plus"};
    return done(end_with(statement(subject, g), "."), "coord", combos);
  }
  // "Tom doesn't drink coffee, nor does Marie." → "Tom ne boit pas de café, et Marie non plus."
  NP other = chance(rng, 50) ? name_np(rng) : person_np(rng, 20);
  if (head(other) == head(subject)) other = np_of(&noun_row("teacher"), false, Det::The);
  Pair p = statement(subject, g);
  append(p.en, {",", "nor"});
  p.en.push_back(g.tense == Tn::Past ? "did" : do_en(other.person));
  append(p.en, en_np(other));
  append(p.fr, {",", "et"});
  append(p.fr, fr_np(other));
  p.fr.push_back("non plus");
  return done(end_with(p, "."), "coord", combos);
}

// ---- modals and the future --------------------------------------------------------------------------

Md pick_modal(Rng& rng) {
  static const std::vector<unsigned> w{0, 20, 10, 12, 10, 5, 6, 12, 10, 6, 5};
  return static_cast<Md>(pick_weighted(rng, w));
}

std::string modal_name(const VG& g) {
  static const std::array<const char*, 11> names{"", "can", "could", "should", "must", "may", "might", "would_like",
                                                 "have_to", "had_to", "able_to"};
  if (g.modal != Md::None) return names[static_cast<std::size_t>(g.modal)];
  static const std::array<const char*, 10> tenses{"present", "past", "past_prog", "pres_prog", "will", "would", "perfect",
                                                  "going_to", "just", "had"};
  return tenses[static_cast<std::size_t>(g.tense)];
}

Example modal(Rng& rng) {
  std::vector<std::string> combos;
  const NP subject = subject_np(rng);
  VG g;
  const std::size_t k = uniform_below(rng, 100);
  if (k < 55) {
    g = transitive_vg(rng, combos);
    const std::string& v = g.verb->en;
    if (chance(rng, 18) && (v == "help" || v == "call" || v == "meet" || v == "see" || v == "visit" || v == "follow" ||
                            v == "hear" || v == "watch" || v == "know"))
      g.obj = shared(person_object(rng, subject, 100));
  } else if (k < 80) {
    g = intransitive_vg(rng, combos, subject);
    if (chance(rng, 40)) {
      const Phrase& pl = pick(rng, kPlaces);
      words_of(pl.en, g.tail_en);
      g.tail_fr = {pl.fr};
    }
  } else {
    g = copula_vg(rng, subject, combos);
  }
  const bool future = chance(rng, 30);
  if (future) {  // will / won't / 'll, shall, would, going to
    static const std::array<Tn, 3> t{Tn::Future, Tn::GoingTo, Tn::Cond};
    g.tense = t[pick_weighted(rng, {55, 35, 10})];
    g.shall = g.tense == Tn::Future && chance(rng, 15);
  } else {
    g.modal = pick_modal(rng);
  }
  negate(rng, g, 25);
  fix_some(g);
  const bool question = chance(rng, 20) && g.modal != Md::Might && g.modal != Md::HadTo && !g.shall;
  g.contract_subject = chance(rng, 45);
  if (!question && chance(rng, 25)) {
    const unsigned fit = fit_of(g.tense, g.modal);
    if (fit) {
      const TimePhrase& t = time_for(rng, fit);
      words_of(t.en, g.tail_en);
      g.tail_fr.push_back(t.fr);
    }
  }
  combos.push_back(key("mod", modal_name(g), g.verb ? g.verb->en : g.adj->en));
  if (question) return done(end_with(yes_no(subject, g), "?"), "modal", combos);
  return done(end_with(statement(subject, g), "."), "modal", combos);
}

// ---- adverbs and adverbials -------------------------------------------------------------------------

Example adverbial(Rng& rng) {
  std::vector<std::string> combos;
  const NP subject = subject_np(rng);
  VG g;
  const std::size_t k = uniform_below(rng, 100);
  if (k < 45) g = transitive_vg(rng, combos);
  else if (k < 80) g = intransitive_vg(rng, combos, subject);
  else g = copula_vg(rng, subject, combos);
  g.tense = pick_tn(rng);
  if (!g.verb && g.tense != Tn::Past && g.tense != Tn::Future && g.tense != Tn::Perfect) g.tense = Tn::Present;
  if (g.tense == Tn::JustDid || g.tense == Tn::Cond) g.tense = Tn::Present;
  g.contract_subject = chance(rng, 35);
  Words open_en, open_fr;  // "Yesterday, …"
  std::string what;
  const std::size_t r = uniform_below(rng, 100);
  if (r < 28) {  // a time
    const unsigned fit = fit_of(g.tense, g.modal);
    if (fit) {
      const TimePhrase& t = time_for(rng, fit);
      what = t.en;
      if (chance(rng, 45)) {
        words_of(t.en, open_en);
        open_en.push_back(",");
        open_fr = {t.fr, ","};
      } else {
        words_of(t.en, g.tail_en);
        g.tail_fr.push_back(t.fr);
      }
    }
  } else if (r < 43) {  // a place
    const Phrase& p = pick(rng, kPlaces);
    what = p.en;
    words_of(p.en, g.tail_en);
    g.tail_fr.push_back(p.fr);
  } else if (r < 57 && g.verb) {  // a manner
    const Phrase* m = &pick(rng, kManners);
    if (std::string(m->en) == "together" && !(subject.plural || subject.person >= 3)) m = &kManners[0];
    const Phrase& p = *m;
    what = p.en;
    words_of(p.en, g.tail_en);
    g.tail_fr.push_back(p.fr);
  } else if (r < 74 && g.tense != Tn::GoingTo) {  // how often, how surely
    const Phrase& p = pick(rng, kFreqs);
    what = p.en;
    g.freq_en = p.en;
    g.freq_fr = p.fr;
  } else if (r < 84 && g.tense != Tn::GoingTo && g.tense != Tn::PresProg && g.tense != Tn::PastProg) {
    g.neg = Ng::Never;  // "He never eats meat." → "Il ne mange jamais de viande."
    what = "never";
  } else if (r < 89 && (g.tense == Tn::Present || (!g.verb && g.tense == Tn::Past))) {
    what = "no longer";
    if (chance(rng, 50)) {
      g.neg = Ng::NoLonger;  // "She no longer works here." → "Elle ne travaille plus ici."
    } else {  // "She doesn't work here anymore."
      g.neg = Ng::Not;
      g.neg_fr = "plus";
      g.contracted = true;
      g.tail_en.push_back("anymore");
      what = "anymore";
    }
  } else if (r < 95 && g.verb) {  // already / not yet
    g.tense = Tn::Perfect;
    if (chance(rng, 50)) {
      g.freq_en = "already";
      g.freq_fr = "déjà";
      what = "already";
    } else {
      g.neg = Ng::Not;
      g.contracted = chance(rng, 70);
      g.freq_fr = "encore";
      g.tail_en.push_back("yet");
      what = "yet";
    }
  } else {  // still
    g.tense = g.verb ? Tn::PresProg : Tn::Present;
    g.freq_en = "still";
    g.freq_fr = "toujours";
    what = "still";
  }
  if (g.neg == Ng::None && g.freq_en.empty()) negate(rng, g, 12);
  fix_some(g);
  if (g.verb && (g.verb->en == "like" || g.verb->en == "love" || g.verb->en == "want" || g.verb->en == "know" ||
                 g.verb->en == "understand" || g.verb->en == "hate") &&
      (g.tense == Tn::PresProg || g.tense == Tn::PastProg))
    g.tense = Tn::Present;
  combos.push_back(key("adv", what, g.verb ? g.verb->en : g.adj->en));
  Pair p = statement(subject, g);
  if (!open_en.empty()) {
    p.en.insert(p.en.begin(), open_en.begin(), open_en.end());
    p.fr.insert(p.fr.begin(), open_fr.begin(), open_fr.end());
  }
  return done(end_with(p, "."), "adverb", combos);
}


// ---- indirect objects -------------------------------------------------------------------------------
// "She gives the book to Marie." / "She gives Marie the book." → "Elle donne le livre à Marie."; a
// pronoun is a clitic: "She gives him the book." → "Elle lui donne le livre."; with a thing named in a
// first clause: "I bought a cake and I gave it to her." → "J'ai acheté un gâteau et je le lui ai donné."

struct Dative {
  const char* verb;
  int objects;  // 0 things, 1 letters and cards, 2 stories and books, 3 languages and subjects, 4 truth, answer
  const char* sense = "";
};
const std::vector<Dative> kDatives{{"give", 0},  {"show", 0},  {"send", 1}, {"lend", 0},    {"offer", 0},
                                   {"bring", 0, "thing"}, {"sell", 0}, {"read", 2}, {"write", 1}, {"teach", 3},
                                   {"explain", 3}, {"tell", 4}, {"send", 0}, {"give", 1}, {"show", 2},
                                   {"write", 1}, {"give", 0}};

NP dative_object(Rng& rng, int kind) {
  auto the_or_a = [&](const char* en) {
    NP np = noun_np(&noun_row(en), false);
    everyday_det(rng, np);
    return np;
  };
  switch (kind) {
    case 1: {
      static const std::vector<const char*> w{"letter", "card", "message", "photo", "picture", "gift"};
      return the_or_a(w[uniform_below(rng, w.size())]);
    }
    case 2: {
      static const std::vector<const char*> w{"story", "book", "letter", "newspaper", "song", "poem"};
      const char* n = w[uniform_below(rng, w.size())];
      return the_or_a(lexicon_tables().noun(n) ? n : "story");
    }
    case 3: {
      static const std::vector<std::array<const char*, 2>> subjects{
          {"French", "français"}, {"English", "anglais"}, {"Spanish", "espagnol"}, {"German", "allemand"}};
      if (chance(rng, 50)) {  // teach French → enseigner le français
        const auto& l = subjects[uniform_below(rng, subjects.size())];
        return word_np(l[0], l[1], Gender::Masculine, false, Det::Quant, "", "le");
      }
      static const std::vector<const char*> w{"lesson", "problem", "idea", "plan", "game", "rule", "history", "music"};
      const char* n = w[uniform_below(rng, w.size())];
      NP np = noun_np(&noun_row(lexicon_tables().noun(n) ? n : "lesson"), false);
      np.det = chance(rng, 60) ? Det::The : Det::Poss;
      np.poss = static_cast<int>(uniform_below(rng, 4));
      return np;
    }
    case 4: {
      static const std::vector<const char*> w{"truth", "answer"};
      NP np = noun_np(&noun_row(w[uniform_below(rng, w.size())]), false);
      np.det = Det::The;
      return np;
    }
    default: return thing_obj(rng, 15);
  }
}

Example dative(Rng& rng) {
  std::vector<std::string> combos;
  const Dative& d = kDatives[uniform_below(rng, kDatives.size())];
  const NP subject = subject_np(rng, false);
  VG g;
  g.verb = &verb_row(d.verb, d.sense);
  NP o = dative_object(rng, d.objects);
  if (std::string(d.verb) == "write" && o.noun && o.noun->en != "letter" && o.noun->en != "card" && o.noun->en != "message")
  {  // one writes a letter, not a photo or a gift
    o = noun_np(&noun_row("letter"), false);
    everyday_det(rng, o);
  }
  if (o.det == Det::Number || o.det == Det::Some) o.det = Det::A, o.plural = false, o.person = 2;
  NP to = person_object(rng, subject, 35);
  g.iobj = shared(to);
  g.iobj_first = is_pronoun(g.iobj) ? chance(rng, 70) : chance(rng, 45);
  if (std::string(d.verb) == "explain") g.iobj_first = false;  // "explains French to me", never "explains me French"
  g.tense = pick_tn(rng);
  if (chance(rng, 15)) g.modal = pick_modal(rng);
  negate(rng, g, 15);
  g.contract_subject = chance(rng, 35);
  combos.push_back(key("dat", d.verb, head(o)));
  combos.push_back(key("datto", d.verb, head(to)));
  // "for": "She bought a gift for her mother." → "… pour sa mère."
  if (chance(rng, 12)) {
    static const std::vector<const char*> for_verbs{"buy", "make", "cook", "find", "choose", "prepare"};
    g.verb = &verb_row(for_verbs[uniform_below(rng, for_verbs.size())]);
    g.iobj = nullptr;
    o = thing_obj(rng, 15);
    g.obj = shared(o);
    g.tail_en = {"for"};
    append(g.tail_en, is_pronoun(shared(to)) ? Words{object_en(to)} : en_np(to, true));
    g.tail_fr = {"pour"};
    append(g.tail_fr, to.det == Det::Pronoun ? Words{disjunctive(to)} : fr_np(to));
    fix_some(g);
    return done(end_with(statement(subject, g), "."), "dative", combos);
  }
  // A thing named first, then a pronoun for it: its gender shows in the first clause.
  if (chance(rng, 18) && d.objects == 0 && g.modal == Md::None) {
    o = thing_obj(rng, 0);
    if (o.det != Det::Number) o.det = Det::A, o.plural = false, o.person = 2;
    VG first;
    first.verb = chance(rng, 50) ? &verb_row("buy") : &verb_row("find");
    first.obj = shared(o);
    first.tense = Tn::Past;
    g.tense = Tn::Past;
    g.neg = Ng::None;
    g.obj = shared(it_np(o));
    g.iobj_first = false;  // "gave it to her", never "gave her it"
    const Pair a = statement(subject, first);
    NP again = subject.det == Det::Pronoun ? subject : pronoun_np(subject.person, subject.gender);
    if (subject.det != Det::Pronoun) again.plural = subject.plural, again.person = subject.plural ? 5 : 2;
    const Pair b = statement(again, g);
    Pair p = a;
    p.en.push_back("and");
    p.fr.push_back("et");
    append(p.en, b.en);
    append(p.fr, b.fr);
    return done(end_with(p, "."), "dative", combos);
  }
  g.obj = shared(o);
  fix_some(g);
  if (chance(rng, 10) && g.modal == Md::None) return done(end_with(yes_no(subject, g), "?"), "dative", combos);
  return done(end_with(statement(subject, g), "."), "dative", combos);
}

// ---- there is / there are ---------------------------------------------------------------------------
// "There are three apples on the table." → "Il y a trois pommes sur la table."; "There was no milk." →
// "Il n'y avait pas de lait."; "There will be a party." → "Il y aura une fête."; "Is there a hotel near
// here?" → "Est-ce qu'il y a un hôtel près d'ici ?"; "How many cats are there?" → "Combien de chats y a-t-il ?"

struct Where {
  const char *en, *fr;
  bool thing_place;  // "on the table" (a thing) or "in the park" (a place)
};

// A place for something to be: "on the table", "in the kitchen", "near the station".
std::pair<Words, Words> location(Rng& rng, std::string& place) {
  const Vocab& V = vocab();
  static const std::vector<std::array<const char*, 2>> on{{"on", "sur"}, {"under", "sous"}, {"near", "près de"},
                                                          {"behind", "derrière"}, {"in front of", "devant"},
                                                          {"next to", "à côté de"}};
  static const std::vector<const char*> furniture{"table", "chair", "bed", "door", "window", "car", "tree", "wall"};
  Words en, fr;
  if (chance(rng, 45)) {
    const auto& p = on[uniform_below(rng, on.size())];
    const char* n = furniture[uniform_below(rng, furniture.size())];
    NP np = np_of(&noun_row(n), false, Det::The);
    words_of(p[0], en);
    append(en, en_np(np, true));
    fr = {p[1]};
    append(fr, fr_np(np));
    place = n;
  } else {
    const LexNoun* n = chance(rng, 50) ? pick(rng, V.rooms) : pick(rng, V.places);
    NP np = np_of(n, false, Det::The);
    if (chance(rng, 30)) np.det = Det::Poss, np.poss = static_cast<int>(uniform_below(rng, 4));
    en = {"in"};
    append(en, en_np(np, true));
    fr = {n->en == "street" ? "dans" : "dans"};
    append(fr, fr_np(np));
    place = n->en;
  }
  return {en, fr};
}

Example there_is(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  NP n;
  const std::size_t k = uniform_below(rng, 100);
  if (k < 35) n = noun_np(pick(rng, V.things), chance(rng, 45));
  else if (k < 55) n = noun_np(pick(rng, V.animals), chance(rng, 45));
  else if (k < 75) n = noun_np(pick(rng, V.people), chance(rng, 45));
  else n = noun_np(pick(rng, chance(rng, 50) ? V.foods : V.drinks), false);
  const bool mass = k >= 75;
  const std::size_t tense = pick_weighted(rng, {55, 30, 15});  // is, was, will be
  const bool question = chance(rng, 20);
  const bool how_many = question && !mass && chance(rng, 35);
  const bool negative = !question && chance(rng, 25);
  if (how_many) n.plural = true;
  if (mass) {
    n.det = Det::Partitive;
    n.en_det = negative ? (chance(rng, 50) ? "any" : "") : (chance(rng, 50) ? "some" : "");
  } else if (n.plural) {
    const std::size_t d = uniform_below(rng, 100);
    if (negative || d < 35) n.det = Det::Some, n.en_det = "";
    else if (d < 65) n.det = Det::Number, n.number = 2 + static_cast<int>(uniform_below(rng, 9));
    else if (d < 85) n.det = Det::Quant, n.en_det = chance(rng, 50) ? "many" : "a lot of", n.fr_det = "beaucoup de";
    else n.det = Det::Quant, n.en_det = "a few", n.fr_det = "quelques";
  } else {
    n.det = Det::A;
  }
  n.person = n.plural ? 5 : 2;
  std::string place;
  const auto [where_en, where_fr] = location(rng, place);
  combos.push_back(key("exist", n.noun->en, place));
  static const std::array<const char*, 3> y{"a", "avait", "aura"};
  Pair p;
  if (how_many) {  // "How many cats are there in the garden?" → "Combien de chats y a-t-il dans le jardin ?"
    append(p.en, {"how", "many", n.noun->en_plural, tense == 1 ? "were" : tense == 2 ? "will" : "are", "there"});
    if (tense == 2) p.en.insert(p.en.end() - 1, "be"), std::swap(p.en[p.en.size() - 1], p.en[p.en.size() - 2]);
    append(p.en, where_en);
    append(p.fr, {"combien", "de", n.noun->fr_plural, "y", tense == 0 ? "a-t-il" : tense == 1 ? "avait-il" : "aura-t-il"});
    append(p.fr, where_fr);
    return done(end_with(p, "?"), "exist", combos);
  }
  const char* be = tense == 0 ? (n.plural ? "are" : "is") : tense == 1 ? (n.plural ? "were" : "was") : "will";
  Words thing = en_np(n, true);
  if (negative) {  // there is no milk / there isn't any milk
    const bool no = n.en_det.empty() && chance(rng, 50);
    if (no) {
      p.en = {"there", be};
      if (tense == 2) p.en.push_back("be");
      p.en.push_back("no");
      thing = en_np(n, true);
      if (n.det == Det::A) thing.erase(thing.begin());
    } else {
      const std::string b = be;
      p.en = {"there", tense == 2 ? "won't" : b + "n't"};
      if (tense == 2) p.en.push_back("be");
      if (n.det == Det::A) thing[0] = "a";
      else if (n.en_det.empty()) thing.insert(thing.begin(), "any");
    }
  } else if (question) {
    p.en = {be, "there"};
    if (tense == 2) p.en.push_back("be");
    if (n.det == Det::Some) thing.insert(thing.begin(), "any");
  } else {
    if (tense == 0 && !n.plural && chance(rng, 30)) p.en = {"there's"};
    else p.en = {"there", be};
    if (tense == 2) p.en.push_back("be");
  }
  append(p.en, thing);
  append(p.en, where_en);
  if (question) p.fr = {"est-ce", "que"};
  append(p.fr, {"il"});
  if (negative) p.fr.push_back("ne");
  append(p.fr, {"y", y[tense]});
  if (negative) p.fr.push_back("pas");
  append(p.fr, fr_np(n, negative));
  append(p.fr, where_fr);
  return done(end_with(p, question ? "?" : "."), "exist", combos);
}

// ---- imperatives ------------------------------------------------------------------------------------
// "Open the door, please." → "Ouvre la porte, s'il te plaît."; "Don't touch it." → "Ne le touche pas.";
// "Help me!" → "Aide-moi !"; "Sit down." → "Assieds-toi."; "Let's go to the park." → "Allons au parc.";
// "Let me help you." → "Laisse-moi t'aider." English "you" is tu, as everywhere.

// The affirmative imperative's pronouns after the verb: aide-moi, lève-toi, donne-lui, mange-le.
std::string after_verb(const VG& g, const std::string& form, const NP& subject) {
  std::string w = form;
  if (g.reflexive) w += subject.person == 3 ? "-nous" : "-toi";
  const NP* d = is_pronoun(g.obj) ? g.obj.get() : nullptr;
  const NP* i = is_pronoun(g.iobj) ? g.iobj.get() : nullptr;
  if (d) w += d->person == 0 ? "-moi" : d->person == 3 ? "-nous" : d->person == 5 ? "-les" : feminine(*d) ? "-la" : "-le";
  if (i) w += i->person == 0 ? "-moi" : i->person == 3 ? "-nous" : i->person == 5 ? "-leur" : "-lui";
  return w;
}

Example imperative(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  const bool lets = chance(rng, 15);
  NP you = pronoun_np(lets ? 3 : 1, Gender::Masculine);
  VG g;
  const std::size_t k = uniform_below(rng, 100);
  if (k < 45) {
    g = transitive_vg(rng, combos);
    for (int tries = 0; tries < 8; ++tries) {  // not the verbs of a state: "like the cake", "know Paul"
      static const std::set<std::string> states{"like", "love", "hate", "know", "want", "understand", "receive", "hear",
                                                "see", "lose", "kill"};
      if (!states.count(g.verb->en)) break;
      combos.clear();
      g = transitive_vg(rng, combos);
    }
    if (g.obj->det == Det::Poss) g.obj->poss = lets ? 4 : 1;  // our / your
    if (g.obj->det == Det::Number || g.obj->det == Det::This) g.obj->det = Det::The;
  } else if (k < 62) {  // help me, call him, wait for us
    static const std::vector<const char*> vs{"help", "call", "wait", "follow", "listen", "watch", "meet", "visit"};
    const char* v = vs[uniform_below(rng, vs.size())];
    g.verb = &verb_row(v);
    if (std::string(v) == "wait") g.particle_en = "for";
    if (std::string(v) == "listen") g.particle_en = "to";
    if (std::string(v) == "watch" && chance(rng, 50)) g.verb = &verb_row("look"), g.particle_en = "at";
    if (lets) g.obj = shared(chance(rng, 50) ? name_np(rng) : person_np(rng, 20));
    else g.obj = shared(person_object(rng, you, chance(rng, 50) ? 100 : 0));
    if (g.obj->det == Det::Pronoun && g.obj->person == 1) g.obj = shared(pronoun_np(0, Gender::Masculine));
    combos.push_back(key("imp", v, head(*g.obj)));
  } else if (k < 80) {  // come here, stay at home, go to the park
    g.verb = pick(rng, V.motion);
    if (g.verb->en == "drive" || g.verb->en == "travel" || g.verb->en == "return") g.verb = &verb_row("come");
    const Phrase& pl = pick(rng, kPlaces);
    if (g.verb->en == "come" && chance(rng, 50)) g.tail_en = {"here"}, g.tail_fr = {"ici"};
    else if (chance(rng, 50)) {
      const LexNoun* n = pick(rng, V.buildings);
      g.tail_en = {"to"};
      append(g.tail_en, en_np(np_of(n, false, Det::The), true));
      g.tail_fr = {"à"};
      append(g.tail_fr, fr_np(np_of(n, false, Det::The)));
      if (g.verb->en != "go" && g.verb->en != "come") g.verb = &verb_row("go");
    } else {
      words_of(pl.en, g.tail_en);
      g.tail_fr = {pl.fr};
      if (g.verb->en == "go" || g.verb->en == "come") g.verb = &verb_row("stay");
    }
    combos.push_back(key("imp", g.verb->en, g.tail_en.back()));
  } else if (k < 92 && !lets) {  // sit down, get up, wake up, go to bed
    static const std::vector<std::array<const char*, 3>> refl{
        {"sit", "down", "seat"}, {"get", "up", "raise"}, {"wake", "up", "wake"}, {"go to bed", "", "go to bed"}};
    const auto& r = refl[uniform_below(rng, refl.size())];
    g.verb = &verb_row(r[0] == std::string("sit") ? "seat" : r[0]);
    if (std::string(r[0]) == "sit") {
      static LexVerb sit = [] {
        LexVerb v = verb_row("seat");
        v.en = "sit";
        return v;
      }();
      g.verb = &sit;
      g.fr = &verb_row("seat");
    }
    if (std::string(r[0]) == "get") g.fr = &verb_row("raise"), g.verb = &verb_row("get");
    g.particle_en = r[1];
    g.reflexive = true;
    combos.push_back(key("imp", r[0], r[1]));
  } else {  // be quiet, be careful, be nice to your sister
    static const std::vector<const char*> adjs{"quiet", "calm", "kind", "ready", "brave", "polite"};
    const char* a = adjs[uniform_below(rng, adjs.size())];
    g.adj = lexicon_tables().adjective(a) ? &adj_row(a) : &adj_row("calm");
    if (g.adj->en == "kind" && chance(rng, 50)) {
      NP o = person_np(rng, 0);
      o.det = Det::Poss;
      o.poss = lets ? 4 : 1;  // our / your
      g.tail_en = {"to"};
      append(g.tail_en, en_np(o, true));
      g.tail_fr = {"avec"};
      append(g.tail_fr, fr_np(o));
    }
    combos.push_back(key("imp", "be", g.adj->en));
  }
  const bool negative = chance(rng, 25);
  if (negative) g.neg = Ng::Not;
  fix_some(g);
  // English
  Pair p;
  const bool please = !lets && chance(rng, 30);
  const bool please_first = please && chance(rng, 40);
  if (please_first) p.en = {"please"};
  if (lets) {
    append(p.en, {"let's"});
    if (negative) p.en.push_back("not");
  } else if (negative) {
    append(p.en, chance(rng, 75) ? Words{"don't"} : Words{"do", "not"});
  }
  p.en.push_back(g.verb ? g.verb->en : "be");
  append(p.en, en_after(g));
  if (please && !please_first) append(p.en, {",", "please"});
  // French
  const LexVerb& v = fr_row(g);
  const std::string form = v.imperative[lets ? 1 : 0];
  if (please_first) append(p.fr, {"s'il te plaît", ","});
  if (negative) {
    p.fr.push_back("ne");
    append(p.fr, fr_clitics(g, you));
    p.fr.push_back(form);
    p.fr.push_back("pas");
  } else {
    p.fr.push_back(after_verb(g, form, you));
  }
  VG rest = g;
  if (!negative) {  // the pronouns are on the verb already
    if (is_pronoun(rest.obj)) rest.obj = nullptr;
    if (is_pronoun(rest.iobj)) rest.iobj = nullptr;
  }
  if (g.adj) {
    p.fr.push_back(g.adj->fr[lets ? 2 : 0]);
    rest.adj = nullptr;
  }
  append(p.fr, fr_after(rest, you));
  if (please && !please_first) append(p.fr, {",", "s'il te plaît"});
  const bool bang = chance(rng, 20);
  return done(end_with(p, bang ? "!" : "."), "imperative", combos);
}

// "Let me help you." → "Laisse-moi t'aider."
Example let_me(Rng& rng) {
  std::vector<std::string> combos;
  VG inner = transitive_vg(rng, combos);
  const NP me = pronoun_np(0, Gender::Masculine);
  static const std::vector<const char*> helpful{"help", "call", "carry", "open", "close", "wash", "clean", "read", "cook",
                                                "prepare", "explain", "take", "finish", "choose", "watch"};
  inner.verb = &verb_row(helpful[uniform_below(rng, helpful.size())]);
  if (inner.verb->en == "help" || inner.verb->en == "call") inner.obj = shared(pronoun_np(1, Gender::Masculine));
  else if (inner.verb->en == "cook" || inner.verb->en == "prepare") inner.obj = shared(mass_np(rng, false, pick(rng, vocab().foods)));
  else if (inner.verb->en == "explain") inner.obj = shared(np_of(pick(rng, vocab().abstracts), false, Det::The));
  else inner.obj = shared(thing_obj(rng, 10));
  if (inner.obj->det == Det::Poss) inner.obj->poss = 1;
  Pair p;
  p.en = {"let", "me", inner.verb->en};
  append(p.en, en_after(inner));
  p.fr = {"laisse-moi"};
  append(p.fr, fr_infinitive(inner, me));
  combos.push_back(key("imp", "let", inner.verb->en));
  return done(end_with(p, "."), "imperative", combos);
}


// ---- comparison ------------------------------------------------------------------------------------
// "Paul is taller than his sister." → "Paul est plus grand que sa sœur."; "less … than" (moins … que), "as
// … as" (aussi … que); "the tallest boy in the class" → "le plus grand garçon de la classe"; better, best
// → meilleur; worse → pire; faster (adverb) → plus vite; better (adverb) → mieux; more books than →
// plus de livres que.

// Adjectives English compares with -er / -est (the rest take more / most).
const std::set<std::string>& short_adjectives() {
  static const std::set<std::string> s{"big", "small", "old", "young", "tall", "fast", "slow", "rich", "poor", "strong",
                                       "long", "short", "heavy", "cheap", "happy", "easy", "hot", "cold", "high", "low",
                                       "large", "great", "clean", "dirty", "busy", "funny", "quiet", "light", "calm",
                                       "brave", "sad", "angry", "kind", "new", "full", "strange", "good", "bad", "nice",
                                       "early", "late", "hard", "deep", "wide", "dark", "warm", "pretty", "clever", "lazy"};
  return s;
}
std::string en_degree(const std::string& a, bool superlative) {
  if (a == "good") return superlative ? "best" : "better";
  if (a == "bad") return superlative ? "worst" : "worse";
  const std::string end = superlative ? "est" : "er";
  static const std::set<std::string> doubles{"big", "hot", "sad", "fat", "thin", "wet"};
  if (doubles.count(a)) return a + a.back() + end;
  if (a.back() == 'e') return a + end.substr(1);
  if (a.back() == 'y' && a.size() > 2 && std::string_view("aeiou").find(a[a.size() - 2]) == std::string_view::npos)
    return a.substr(0, a.size() - 1) + "i" + end;
  return a + end;
}
// English "taller" or "more beautiful".
Words en_more(const LexAdjective& a, bool superlative) {
  if (short_adjectives().count(a.en)) return {en_degree(a.en, superlative)};
  return {superlative ? "most" : "more", a.en};
}
// French "plus grand", "meilleur", "pire" in the form `i` (ms, fs, mp, fp).
Words fr_more(const LexAdjective& a, std::size_t i) {
  if (a.en == "good") {
    static const std::array<const char*, 4> m{"meilleur", "meilleure", "meilleurs", "meilleures"};
    return {m[i]};
  }
  if (a.en == "bad") return {i >= 2 ? "pires" : "pire"};
  if (a.en == "cheap") {  // cheaper → moins cher (not "plus bon marché"); the cheapest → le moins cher
    static const std::array<const char*, 4> c{"cher", "chère", "chers", "chères"};
    return {"moins", c[i]};
  }
  return {"plus", a.fr[i]};
}

// Someone to compare with someone: a name, a person or a pronoun; the French after "que" is moi, toi,
// lui, elle, nous, eux, elles.
std::pair<Words, Words> compared_with(Rng& rng, const NP& subject) {
  NP other = chance(rng, 25) ? random_pronoun(rng) : chance(rng, 40) ? name_np(rng) : person_np(rng, 20);
  if (other.det == Det::Pronoun && other.person == subject.person) other = name_np(rng);
  if (other.det == Det::Name && subject.det == Det::Name && other.name == subject.name) other = person_np(rng, 0);
  if (other.det == Det::Pronoun) return {{object_en(other)}, {disjunctive(other)}};
  return {en_np(other, true), fr_np(other)};
}

Example comparison(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  const std::size_t k = uniform_below(rng, 100);
  const bool things = chance(rng, 35);
  NP subject = things ? np_of(pick(rng, V.things), chance(rng, 20), Det::The) : subject_np(rng, false);
  if (things && chance(rng, 30)) subject.det = Det::This;
  const LexAdjective* a = pick(rng, V.comparable);
  if (!things && (a->en == "cheap" || a->en == "expensive" || a->en == "heavy" || a->en == "hot" || a->en == "cold" ||
                  a->en == "high" || a->en == "low" || a->en == "large" || a->en == "long" || a->en == "short"))
    a = &adj_row(chance(rng, 50) ? "tall" : "strong");
  if (things && (a->en == "happy" || a->en == "tall" || a->en == "rich" || a->en == "poor" || a->en == "strong" ||
                 a->en == "young" || a->en == "great"))
    a = &adj_row(chance(rng, 50) ? "big" : "expensive");
  const std::size_t i = agree(subject);
  VG g;  // the copula with a comparative complement
  g.tense = pick_weighted(rng, {60, 30, 10}) == 0 ? Tn::Present : chance(rng, 75) ? Tn::Past : Tn::Future;
  g.contract_subject = chance(rng, 30);
  Pair p;
  if (k < 45) {  // taller than / more beautiful than / less … than / as … as / not as … as
    const std::size_t form = pick_weighted(rng, {55, 15, 15, 15});
    std::pair<Words, Words> other;
    if (things) {
      NP o = np_of(pick(rng, V.things), subject.plural, Det::The);
      if (o.noun == subject.noun) o = np_of(&noun_row(subject.noun->en == "car" ? "bike" : "car"), subject.plural, Det::The);
      other = {en_np(o, true), fr_np(o)};
    } else {
      other = compared_with(rng, subject);
    }
    if (form == 0) {
      g.comp_en = en_more(*a, false);
      g.comp_fr = fr_more(*a, i);
    } else if (form == 1) {
      g.comp_en = {"less", a->en};
      g.comp_fr = {"moins", a->fr[i]};
    } else {
      g.comp_en = {"as", a->en, "as"};
      g.comp_fr = {"aussi", a->fr[i]};
      if (form == 3) g.neg = Ng::Not, g.contracted = chance(rng, 60);
    }
    if (form != 2 && form != 3) g.comp_en.push_back("than");
    append(g.comp_en, other.first);
    g.comp_fr.push_back("que");
    append(g.comp_fr, other.second);
    combos.push_back(key("cmp", a->en, head(subject)));
    return done(end_with(statement(subject, g), "."), "compare", combos);
  }
  if (k < 70) {  // the tallest (boy in the class); the best; the most beautiful
    static const std::vector<std::array<const char*, 2>> groups{
        {"in the class", "de la classe"}, {"in the family", "de la famille"}, {"in the world", "du monde"},
        {"in the city", "de la ville"}, {"in the school", "de le école"}, {"in the village", "du village"}};
    static const std::vector<std::array<const char*, 2>> stores{
        {"in the store", "du magasin"}, {"in the house", "de la maison"}, {"in the room", "de la pièce"}};
    const auto& grp = things ? stores[uniform_below(rng, stores.size())] : groups[uniform_below(rng, groups.size())];
    const bool least = chance(rng, 12) && a->en != "good" && a->en != "bad" && a->en != "high" && a->en != "low" &&
                       a->en != "great";  // not "the least high"
    const char* art = i == 0 ? "le" : i == 1 ? "la" : "les";
    Words sup_en = least ? Words{"least", a->en} : en_more(*a, true);
    Words sup_fr = least ? Words{"moins", a->fr[i]} : fr_more(*a, i);
    if (chance(rng, 50) && subject.noun && !things) {  // "the tallest girl in the class"
      NP n = np_of(subject.noun, subject.plural, Det::The);
      Words en{"the"};
      append(en, sup_en);
      en.push_back(subject.plural ? subject.noun->en_plural : subject.noun->en);
      words_of(grp[0], en);
      Words fr{art};
      const std::string& noun = subject.plural ? subject.noun->fr_plural : subject.noun->fr;
      if (a->before || a->en == "good" || a->en == "bad") {  // le plus grand garçon; le meilleur élève
        append(fr, sup_fr);
        fr.push_back(noun);
      } else {  // la fille la plus intelligente
        fr.push_back(noun);
        fr.push_back(art);
        append(fr, sup_fr);
      }
      words_of(grp[1], fr);
      NP who = chance(rng, 50) ? name_np(rng) : random_pronoun(rng);
      // A name keeps its own gender ("David is the greatest wife" was made): he / she where it differs.
      if (who.det == Det::Name && who.gender != subject.gender) who = pronoun_np(2, subject.gender);
      who.gender = subject.gender;
      if (subject.plural) who = pronoun_np(5, subject.gender);
      if (who.det == Det::Pronoun && who.person != 5 && subject.plural) who = pronoun_np(5, subject.gender);
      if (who.det == Det::Pronoun && !subject.plural && (who.person == 3 || who.person == 5)) who = pronoun_np(2, subject.gender);
      g.comp_en = en;
      g.comp_fr = fr;
      combos.push_back(key("sup", a->en, subject.noun->en));
      return done(end_with(statement(who, g), "."), "compare", combos);
    }
    if (things && chance(rng, 55)) {  // "It's the biggest house in the city." → "C'est la plus grande maison de la ville."
      const bool building = chance(rng, 40);
      const LexNoun* n = building ? pick(rng, V.buildings) : subject.noun;
      const bool pl = subject.plural;
      const std::size_t j = form_index(n->gender, pl);
      const char* art2 = j == 0 ? "le" : j == 1 ? "la" : "les";
      const Words s_en = least ? Words{"least", a->en} : en_more(*a, true);
      const Words s_fr = least ? Words{"moins", a->fr[j]} : fr_more(*a, j);
      const bool past = chance(rng, 20);
      const std::size_t w = uniform_below(rng, 3);
      Pair q;
      if (pl) q.en = {w == 0 ? "these" : w == 1 ? "they" : "those", past ? "were" : "are"};
      else q.en = {w == 0 ? "this" : w == 1 ? "it" : "that", past ? "was" : "is"};
      q.en.push_back("the");
      append(q.en, s_en);
      q.en.push_back(pl ? n->en_plural : n->en);
      q.fr = pl ? (past ? Words{"c'étaient"} : Words{"ce", "sont"}) : Words{past ? "c'était" : "c'est"};
      q.fr.push_back(art2);
      const std::string& noun = pl ? n->fr_plural : n->fr;
      if (a->before || a->en == "good" || a->en == "bad") {  // la plus grande maison
        append(q.fr, s_fr);
        q.fr.push_back(noun);
      } else {  // le livre le plus intéressant
        q.fr.push_back(noun);
        q.fr.push_back(art2);
        append(q.fr, s_fr);
      }
      if (chance(rng, 65)) {
        static const std::vector<std::array<const char*, 2>> towns{
            {"in the city", "de la ville"}, {"in the village", "du village"}, {"in the country", "du pays"},
            {"in the world", "du monde"}};
        const auto& in = building ? towns[uniform_below(rng, towns.size())] : grp;
        words_of(in[0], q.en);
        words_of(in[1], q.fr);
      }
      combos.push_back(key("sup_n", a->en, n->en));
      return done(end_with(q, "."), "compare", combos);
    }
    g.comp_en = {"the"};
    append(g.comp_en, sup_en);
    g.comp_fr = {art};
    append(g.comp_fr, sup_fr);
    if (chance(rng, 50)) {
      words_of(grp[0], g.comp_en);
      words_of(grp[1], g.comp_fr);
    }
    combos.push_back(key("sup", a->en, head(subject)));
    return done(end_with(statement(subject, g), "."), "compare", combos);
  }
  if (k < 85) {  // runs faster than, sings better than
    static const std::vector<std::array<const char*, 5>> adv{{"run", "faster", "plus vite", "more slowly", "moins vite"},
                                                             {"walk", "faster", "plus vite", "more slowly", "plus lentement"},
                                                             {"sing", "better", "mieux", "worse", "moins bien"},
                                                             {"swim", "better", "mieux", "faster", "plus vite"},
                                                             {"work", "harder", "plus dur", "more", "plus"},
                                                             {"read", "more", "plus", "less", "moins"},
                                                             {"dance", "better", "mieux", "worse", "moins bien"},
                                                             {"drive", "faster", "plus vite", "more slowly", "plus lentement"}};
    const auto& d = adv[uniform_below(rng, adv.size())];
    if (things) subject = subject_np(rng, false);
    const auto other = compared_with(rng, subject);
    g.verb = &verb_row(d[0]);
    // Present or future: in the passé composé French puts mieux, plus before the participle.
    g.tense = chance(rng, 75) ? Tn::Present : Tn::Future;
    const bool second = chance(rng, 30);
    words_of(second ? d[3] : d[1], g.tail_en);
    g.tail_en.push_back("than");
    append(g.tail_en, other.first);
    g.tail_fr = {second ? d[4] : d[2], "que"};
    append(g.tail_fr, other.second);
    combos.push_back(key("cmpv", d[0], head(subject)));
    return done(end_with(statement(subject, g), "."), "compare", combos);
  }
  // more books than, less money than
  if (things) subject = subject_np(rng, false);
  const auto other = compared_with(rng, subject);
  g.verb = chance(rng, 60) ? &have_row() : &verb_row(chance(rng, 50) ? "buy" : "read");
  g.tense = chance(rng, 65) ? Tn::Present : Tn::Past;
  const bool mass = g.verb->en != "read" && chance(rng, 35);  // not "read more money"
  NP n;
  const bool less = chance(rng, 30);
  if (mass) {
    n = np_of(chance(rng, 50) ? &noun_row("money") : pick(rng, V.foods), false, Det::Quant);
    n.en_det = less ? "less" : "more";
  } else {
    n = np_of(g.verb->en == "read" ? &noun_row("book") : pick(rng, V.things), true, Det::Quant);
    n.en_det = less ? "fewer" : "more";
  }
  n.fr_det = less ? "moins de" : "plus de";
  g.obj = shared(n);
  g.tail_en = {"than"};
  append(g.tail_en, other.first);
  g.tail_fr = {"que"};
  append(g.tail_fr, other.second);
  combos.push_back(key("cmpn", head(n), head(subject)));
  return done(end_with(statement(subject, g), "."), "compare", combos);
}

// ---- wh-questions ------------------------------------------------------------------------------------
// "Where does your brother live?" → "Où est-ce que ton frère vit ?"; "What are you reading?" → "Qu'est-ce
// que tu lis ?"; "Who ate the cake?" → "Qui a mangé le gâteau ?"; "Which book do you want?" → "Quel
// livre est-ce que tu veux ?"; "Whose bag is this?" → "À qui est ce sac ?"; fixed forms with a simple
// inversion French allows ("Where is the station?" → "Où est la gare ?", "How are you?").

// wh + question word order: English wh + auxiliary + subject + rest; French wh + est-ce que + statement.
Pair wh(const Words& wh_en, const Words& wh_fr, const NP& subject, const VG& given) {
  const VG g = tidy(given);
  Pair p;
  p.en = wh_en;
  const En e = en_group(g, subject, true);
  append(p.en, e.first);
  append(p.en, en_np(subject));
  append(p.en, e.rest);
  p.fr = wh_fr;
  append(p.fr, {"est-ce", "que"});
  append(p.fr, fr_np(subject));
  append(p.fr, fr_group(g, subject));
  return p;
}

Example wh_question(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  NP subject = subject_np(rng);
  if (subject.det == Det::Pronoun && subject.person == 1 && chance(rng, 30)) subject = random_pronoun(rng);
  const std::size_t k = uniform_below(rng, 100);
  VG g;
  static const std::array<Tn, 4> wh_tenses{Tn::Present, Tn::Past, Tn::Future, Tn::PresProg};
  g.tense = wh_tenses[pick_weighted(rng, {45, 35, 10, 10})];
  if (k < 14) {  // where
    g.verb = pick(rng, V.intransitive);
    if (chance(rng, 40)) g.verb = &verb_row(chance(rng, 50) ? "live" : "go");
    if (g.verb->en == "go" && chance(rng, 60)) g.tense = Tn::PresProg;
    negate(rng, g, 5);
    combos.push_back(key("wh", "where", g.verb->en + head(subject)));
    if (g.verb->en == "come") {  // Where do you come from? → D'où est-ce que tu viens ?
      g.tail_en = {"from"};
      if (g.tense == Tn::PresProg || g.tense == Tn::Future) g.tense = Tn::Present;
      return done(end_with(wh({"where"}, {"de", "où"}, subject, g), "?"), "wh", combos);
    }
    return done(end_with(wh({"where"}, {"où"}, subject, g), "?"), "wh", combos);
  }
  if (k < 26) {  // when
    g.verb = pick(rng, V.intransitive);
    if (g.tense == Tn::PresProg) g.tense = Tn::Future;
    combos.push_back(key("wh", "when", g.verb->en));
    return done(end_with(wh({"when"}, {"quand"}, subject, g), "?"), "wh", combos);
  }
  if (k < 38) {  // why, often negated
    const std::size_t kind = uniform_below(rng, 3);
    g = kind == 0 ? transitive_vg(rng, combos) : kind == 1 ? intransitive_vg(rng, combos, subject) : copula_vg(rng, subject, combos);
    g.tense = pick_weighted(rng, {45, 40, 15}) == 0 ? Tn::Present : chance(rng, 75) ? Tn::Past : Tn::PresProg;
    if (!g.verb && g.tense == Tn::PresProg) g.tense = Tn::Present;
    negate(rng, g, 35);
    fix_some(g);
    combos.push_back(key("wh", "why", g.verb ? g.verb->en : g.adj->en));
    return done(end_with(wh({"why"}, {"pourquoi"}, subject, g), "?"), "wh", combos);
  }
  if (k < 50) {  // what (object) / who (object)
    const bool who = chance(rng, 35);
    if (who) {
      static const std::vector<const char*> vs{"see", "meet", "call", "help", "visit", "invite", "love", "wait"};
      g.verb = &verb_row(vs[uniform_below(rng, vs.size())]);
      if (g.verb->en == "wait") g.particle_en = "for";
    } else {
      static const std::vector<const char*> vs{"eat", "read", "buy", "want", "see", "write", "do", "cook", "drink",
                                               "find", "say", "learn", "study", "sell", "need"};
      const char* v = vs[uniform_below(rng, vs.size())];
      g.verb = std::string(v) == "need" ? &verb_row("want") : &verb_row(v);
    }
    if ((g.verb->en == "want" || g.verb->en == "love") && g.tense == Tn::PresProg) g.tense = Tn::Present;
    combos.push_back(key("wh", who ? "who" : "what", g.verb->en));
    return done(end_with(wh({who ? "who" : "what"}, {who ? "qui" : "que"}, subject, g), "?"), "wh", combos);
  }
  if (k < 60) {  // who / what as the subject
    const bool who = chance(rng, 65);
    NP q = word_np(who ? "who" : "what", who ? "qui" : "qu'est-ce qui", Gender::Masculine, false);
    if (who) {
      g = chance(rng, 60) ? transitive_vg(rng, combos) : intransitive_vg(rng, combos, q);
      if (g.tense == Tn::PresProg && g.verb && (g.verb->en == "know" || g.verb->en == "like" || g.verb->en == "want"))
        g.tense = Tn::Present;
    } else {
      g.verb = &verb_row(chance(rng, 70) ? "happen" : "fall");
      g.tense = chance(rng, 70) ? Tn::Past : Tn::Present;
      if (chance(rng, 50) && g.verb->en == "happen") {  // "What happened to your car?" → "Qu'est-ce qui est arrivé à ta voiture ?"
        NP o = thing_obj(rng, 0);
        o.det = Det::Poss, o.poss = 1, o.plural = false, o.person = 2;
        g.iobj = shared(o);
        g.iprep_en = "to";
      }
    }
    fix_some(g);
    combos.push_back(key("wh", who ? "who_subject" : "what_subject",
                         g.verb->en + "_" + (g.iobj ? head(*g.iobj) : g.obj ? head(*g.obj) : std::to_string(static_cast<int>(g.tense)))));
    return done(end_with(statement(q, g), "?"), "wh", combos);
  }
  if (k < 68) {  // how
    static const std::vector<std::array<const char*, 3>> how{
        {"go", "to school", "à le école"}, {"go", "to work", "à le travail"}, {"come", "here", "ici"},
        {"cook", "", ""}, {"travel", "", ""}, {"learn", "", ""}, {"drive", "", ""}, {"swim", "", ""}};
    const auto& h = how[uniform_below(rng, how.size())];
    g.verb = &verb_row(h[0]);
    if (*h[1]) words_of(h[1], g.tail_en), g.tail_fr = {h[2]};
    if (g.tense == Tn::PresProg) g.tense = Tn::Present;
    combos.push_back(key("wh", "how", g.verb->en));
    return done(end_with(wh({"how"}, {"comment"}, subject, g), "?"), "wh", combos);
  }
  if (k < 76 && chance(rng, 40)) {  // how much: a price or an amount
    if (chance(rng, 50)) {  // "How much is this bag?" / "How much does the car cost?" → "Combien coûte …"
      NP n = noun_np(pick(rng, V.things), chance(rng, 30));
      n.det = chance(rng, 50) ? Det::The : Det::This;
      n.person = n.plural ? 5 : 2;
      const bool past = chance(rng, 20);
      Pair p;
      p.en = {"how", "much"};
      if (chance(rng, 50) && !past) {
        p.en.push_back(n.plural ? "are" : "is");
        append(p.en, en_np(n));
      } else {
        p.en.push_back(past ? "did" : n.plural ? "do" : "does");
        append(p.en, en_np(n));
        p.en.push_back("cost");
      }
      p.fr = {"combien"};
      if (past) append(p.fr, {n.plural ? "ont" : "a", "coûté"});
      else p.fr.push_back(n.plural ? "coûtent" : "coûte");
      append(p.fr, fr_np(n));
      combos.push_back(key("wh", "how_much_cost", n.noun->en));
      return done(end_with(p, "?"), "wh", combos);
    }
    // "How much water do you drink?" → "Combien d'eau est-ce que tu bois ?"
    const std::size_t w = uniform_below(rng, 3);
    const LexNoun* n = w == 0 ? pick(rng, V.drinks) : w == 1 ? pick(rng, V.foods) : &noun_row("money");
    static const std::vector<const char*> food_verbs{"eat", "buy", "want"};
    g.verb = w == 0 ? &verb_row(chance(rng, 70) ? "drink" : "want")
             : w == 1 ? &verb_row(food_verbs[uniform_below(rng, food_verbs.size())])
                      : chance(rng, 60) ? &have_row() : &verb_row("want");
    g.tense = chance(rng, 75) ? Tn::Present : Tn::Future;  // the passé composé would agree with combien de
    combos.push_back(key("wh", "how_much", n->en + "_" + g.verb->en));
    return done(end_with(wh({"how", "much", n->en}, {"combien", "de", n->fr}, subject, g), "?"), "wh", combos);
  }
  if (k < 76) {  // how many
    static const std::vector<const char*> vs{"have", "buy", "want", "see", "need", "read", "eat"};
    const char* v = vs[uniform_below(rng, vs.size())];
    g.verb = std::string(v) == "have" ? &have_row() : std::string(v) == "need" ? &verb_row("want") : &verb_row(v);
    const LexNoun* n = std::string(v) == "read" ? &noun_row("book") : std::string(v) == "eat" ? &noun_row("apple")
                                                                                              : pick(rng, V.things);
    g.tense = chance(rng, 75) ? Tn::Present : Tn::Future;  // the passé composé would agree with combien de
    combos.push_back(key("wh", "how_many", n->en));
    return done(end_with(wh({"how", "many", n->en_plural}, {"combien", "de", n->fr_plural}, subject, g), "?"), "wh",
                combos);
  }
  if (k < 83) {  // which
    static const std::vector<const char*> vs{"want", "prefer", "like", "choose", "buy", "need"};
    const char* v = vs[uniform_below(rng, vs.size())];
    g.verb = std::string(v) == "need" ? &verb_row("want") : &verb_row(v);
    g.tense = chance(rng, 80) ? Tn::Present : Tn::Future;
    const LexNoun* n = pick(rng, V.things);
    const bool pl = chance(rng, 25);
    static const std::array<const char*, 4> quel{"quel", "quelle", "quels", "quelles"};
    combos.push_back(key("wh", "which", n->en));
    return done(end_with(wh({"which", pl ? n->en_plural : n->en}, {quel[form_index(n->gender, pl)], pl ? n->fr_plural : n->fr},
                            subject, g),
                         "?"),
                "wh", combos);
  }
  // fixed forms with a French inversion: where is, whose, what color, what time, how is
  Pair p;
  const std::size_t f = uniform_below(rng, 6);
  NP thing = thing_obj(rng, 0);
  if (thing.det != Det::Poss && thing.det != Det::This) thing.det = Det::The;
  if (thing.det == Det::Number || thing.det == Det::Some) thing.det = Det::The;
  const bool pl = thing.plural;
  switch (f) {
    case 0: {  // Where is the station? → Où est la gare ?
      NP place = np_of(pick(rng, chance(rng, 50) ? V.buildings : V.things), chance(rng, 20), Det::The);
      if (chance(rng, 40)) place.det = Det::Poss, place.poss = static_cast<int>(uniform_below(rng, 6)) % 4;
      p.en = {"where", place.plural ? "are" : "is"};
      append(p.en, en_np(place));
      p.fr = {"où", place.plural ? "sont" : "est"};
      append(p.fr, fr_np(place));
      combos.push_back(key("wh", "where_is", head(place)));
      break;
    }
    case 1: {  // Whose bag is this? → À qui est ce sac ?
      p.en = {"whose", pl ? thing.noun->en_plural : thing.noun->en, pl ? "are" : "is", pl ? "these" : "this"};
      NP c = np_of(thing.noun, pl, Det::This);
      p.fr = {"à", "qui", pl ? "sont" : "est"};
      append(p.fr, fr_np(c));
      combos.push_back(key("wh", "whose", thing.noun->en));
      break;
    }
    case 2: {  // What color is your car? → De quelle couleur est ta voiture ?
      p.en = {"what", "color", pl ? "are" : "is"};
      append(p.en, en_np(thing));
      p.fr = {"de", "quelle", "couleur", pl ? "sont" : "est"};
      append(p.fr, fr_np(thing));
      combos.push_back(key("wh", "color", thing.noun->en));
      break;
    }
    case 3: {  // What time does the film start? → À quelle heure est-ce que le film commence ?
      static const std::vector<std::array<const char*, 2>> events{{"film", "start"}, {"train", "leave"}, {"bus", "arrive"},
                                                                  {"lesson", "begin"}, {"game", "start"}, {"party", "start"}};
      const auto& e = events[uniform_below(rng, events.size())];
      NP ev = np_of(std::string(e[0]) == "party" ? lexicon_tables().noun("party", "celebration") : &noun_row(e[0]), false, Det::The);
      VG v;
      v.verb = &verb_row(e[1]);
      v.tense = chance(rng, 70) ? Tn::Present : Tn::Future;
      p = wh({"what", "time"}, {"à", "quelle", "heure"}, ev, v);
      combos.push_back(key("wh", "time", e[0]));
      break;
    }
    case 4: {  // How is your mother? → Comment va ta mère ?
      NP who = person_np(rng, 15);
      if (who.det != Det::Poss) who.det = Det::Poss, who.poss = static_cast<int>(uniform_below(rng, 4));
      p.en = {"how", who.plural ? "are" : "is"};
      append(p.en, en_np(who));
      p.fr = {"comment", who.plural ? "vont" : "va"};
      append(p.fr, fr_np(who));
      combos.push_back(key("wh", "how_is", head(who)));
      break;
    }
    default: {  // What is your name? / What is this? / What kind of music do you like?
      const std::size_t w = uniform_below(rng, 3);
      if (w == 0) {
        p.en = {"what", "is", kPossEn[static_cast<std::size_t>(uniform_below(rng, 4))], "name"};
        static const std::array<const char*, 4> fr{"mon", "ton", "son", "son"};
        const std::size_t i = p.en[2] == "my" ? 0 : p.en[2] == "your" ? 1 : 2;
        p.fr = {"quel", "est", fr[i], "nom"};
      } else if (w == 1) {
        p.en = {"what", "is", "this"};
        p.fr = {"que", "est-ce", "que", "c'est"};
      } else {
        static const std::vector<std::array<const char*, 3>> kinds{{"music", "musique", "f"}, {"book", "livre", "m"},
                                                                   {"film", "film", "m"}, {"car", "voiture", "f"},
                                                                   {"food", "nourriture", "f"}, {"game", "jeu", "m"}};
        const auto& kd = kinds[uniform_below(rng, kinds.size())];
        NP you = pronoun_np(1, Gender::Masculine);
        VG v;
        v.verb = &verb_row("like");
        p = wh({"what", "kind", "of", kd[0]}, {"quel", "genre", "de", kd[1]}, you, v);
      }
      combos.push_back(train_key(key("wh", "fixed", std::to_string(w) + p.en.back())));
      break;
    }
  }
  return done(end_with(p, "?"), "wh", combos);
}

// ---- subordinate clauses ----------------------------------------------------------------------------

// A short clause for a subordinate or a main clause: intransitive, transitive or the copula.
VG simple_vg(Rng& rng, const NP& subject, std::vector<std::string>& combos) {
  const std::size_t k = uniform_below(rng, 100);
  if (k < 40) return transitive_vg(rng, combos);
  if (k < 75) {
    VG g = intransitive_vg(rng, combos, subject);
    if (chance(rng, 30)) {
      const Phrase& pl = pick(rng, kPlaces);
      words_of(pl.en, g.tail_en);
      g.tail_fr = {pl.fr};
    }
    return g;
  }
  return copula_vg(rng, subject, combos);
}

bool stative(const VG& g) {
  static const std::set<std::string> s{"like", "love", "hate", "know", "want", "understand", "see", "hear"};
  return g.verb && s.count(g.verb->en);
}

// "it" of the weather: it rains, it snows.
NP weather_it() {
  NP it = pronoun_np(2, Gender::Masculine);
  it.thing = true;
  return it;
}

Example subordinate(Rng& rng) {
  std::vector<std::string> combos;
  NP s1 = subject_np(rng), s2 = subject_np(rng);
  if (chance(rng, 35)) s2 = s1;
  if (s2.det != Det::Pronoun && head(s1) == head(s2)) {  // "When Marie is tired, she sleeps."
    NP p = pronoun_np(s1.plural ? 5 : s1.person, s1.gender);
    p.plural = s1.plural || s1.person >= 3;
    if (s1.noun && s1.noun->kind == NounKind::Animal) p.thing = true;
    s2 = p;
  }
  VG sub = simple_vg(rng, s1, combos), main = simple_vg(rng, s2, combos);
  const bool rain = chance(rng, 12);
  if (rain) {
    s1 = weather_it();
    sub = VG{};
    sub.verb = &verb_row(chance(rng, 75) ? "rain" : "snow");
  }
  std::string en_conj, fr_conj;
  const std::size_t k = uniform_below(rng, 100);
  bool main_first = chance(rng, 40);
  if (k < 22) {  // if: si + présent, futur / si + imparfait, conditionnel
    en_conj = "if";
    fr_conj = "si";
    if (chance(rng, 65)) {
      sub.tense = Tn::Present;
      main.tense = chance(rng, 75) ? Tn::Future : Tn::Present;
      if (chance(rng, 20)) main.modal = Md::Can;
    } else {
      sub.tense = Tn::Past;
      sub.fr_tense = static_cast<int>(Tn::PastProg);  // if I had → si j'avais; if I were → si j'étais
      main.tense = Tn::Cond;
    }
  } else if (k < 44) {  // when
    en_conj = "when";
    fr_conj = "quand";
    const std::size_t w = uniform_below(rng, 4);
    if (w == 3) {  // "I was reading when the phone rang." → "Je lisais quand le téléphone a sonné."
      if (!main.verb || stative(main)) main = intransitive_vg(rng, combos, s2);
      if (main.verb->en == "appear") main.verb = &verb_row("work");  // not "she was appearing"
      if (!sub.verb || stative(sub) || sub.verb == main.verb) {
        sub = intransitive_vg(rng, combos, s1);
        if (sub.verb == main.verb) sub.verb = &verb_row(main.verb->en == "arrive" ? "leave" : "arrive");
        if (rain) sub.verb = &verb_row("rain");
      }
      main.tense = Tn::PastProg;  // the background: imparfait
      sub.tense = Tn::Past;       // what happened: passé composé
      main_first = true;
    } else if (w == 0) {  // "When he arrives, we will eat." → "Quand il arrivera, nous mangerons."
      sub.tense = Tn::Present;
      sub.fr_tense = static_cast<int>(Tn::Future);
      main.tense = Tn::Future;
      if (chance(rng, 25)) en_conj = "as soon as", fr_conj = "dès que";
    } else if (w == 1) {  // "When I was young, I lived in a village." (imparfait for both)
      sub.tense = Tn::Past;
      sub.fr_tense = static_cast<int>(Tn::PastProg);
      main.tense = Tn::Past;
      main.fr_tense = static_cast<int>(Tn::PastProg);
      if (!sub.verb) sub.fr_tense = -1;
      if (!main.verb) main.fr_tense = -1;
    } else {  // "When the phone rang, she answered." (passé composé for both) / habits in the present
      sub.tense = chance(rng, 50) ? Tn::Past : Tn::Present;
      main.tense = sub.tense;
      if (!sub.verb && sub.tense == Tn::Past) sub.tense = Tn::Present, main.tense = Tn::Present;
      if (!main.verb && main.tense == Tn::Past) main.tense = Tn::Present, sub.tense = Tn::Present;
    }
  } else if (k < 56) {  // while: pendant que + imparfait, passé composé
    en_conj = "while";
    fr_conj = "pendant que";
    if (!sub.verb || stative(sub)) {
      sub = intransitive_vg(rng, combos, s1);
      if (rain) sub.verb = &verb_row("rain");
    }
    sub.tense = Tn::PastProg;
    main.tense = main.verb ? Tn::Past : Tn::Past;
  } else if (k < 72) {  // because
    en_conj = "because";
    fr_conj = "parce que";
    main_first = true;
    const Tn t = pick_tn(rng);
    main.tense = t == Tn::JustDid ? Tn::Present : t;
    sub.tense = chance(rng, 50) ? main.tense : Tn::Present;
    if (main.tense == Tn::PresProg && stative(main)) main.tense = Tn::Present;
    if (sub.tense == Tn::PresProg && stative(sub)) sub.tense = Tn::Present;
    if (sub.tense == Tn::GoingTo || sub.tense == Tn::Cond) sub.tense = Tn::Present;
  } else if (k < 82) {  // although → même si (indicative); unless → sauf si
    const bool unless = chance(rng, 40);
    en_conj = unless ? "unless" : pick(rng, std::vector<const char*>{"although", "though", "even though"});
    fr_conj = unless ? "sauf si" : "même si";
    if (unless) {
      main_first = true;
      sub.tense = Tn::Present;
      main.tense = Tn::Future;
    } else {
      sub.tense = chance(rng, 50) ? Tn::Present : Tn::Past;
      main.tense = sub.tense;
      if (!sub.verb && sub.tense == Tn::Past) sub.fr_tense = -1;
    }
  } else if (k < 86) {  // since (a reason) → comme, first
    en_conj = chance(rng, 50) ? "since" : "as";
    fr_conj = "comme";
    main_first = false;
    sub.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
    main.tense = sub.tense == Tn::Present ? Tn::Future : Tn::Past;
  } else {  // before / after + -ing; until + a time
    const NP& s = s1;
    VG act = transitive_vg(rng, combos);
    if (act.verb->etre || stative(act)) act = transitive_vg(rng, combos);
    main = simple_vg(rng, s, combos);
    main.tense = chance(rng, 60) ? Tn::Past : Tn::Present;
    if (main.tense == Tn::Past && !main.verb) main.tense = Tn::Present;
    Pair p = statement(s, main);
    const std::size_t w = pick_weighted(rng, {40, 40, 20});
    if (w == 0) {  // before eating → avant de manger
      p.en.push_back("before");
      p.en.push_back(act.verb->en_ing);
      append(p.en, en_after(act));
      append(p.fr, {"avant", "de"});
      append(p.fr, fr_infinitive(act, s));
      combos.push_back(key("sub", "before", act.verb->en));
    } else if (w == 1) {  // after eating → après avoir mangé
      p.en.push_back("after");
      p.en.push_back(act.verb->en_ing);
      append(p.en, en_after(act));
      append(p.fr, {"après", "avoir", act.verb->participle[0]});
      VG rest = act;
      append(p.fr, fr_after(rest, s));
      combos.push_back(key("sub", "after", act.verb->en));
    } else {  // until noon → jusqu'à midi
      static const std::vector<std::array<const char*, 2>> until{{"noon", "midi"}, {"midnight", "minuit"},
                                                                 {"tomorrow", "demain"}, {"Monday", "lundi"},
                                                                 {"the end of the day", "la fin de la journée"},
                                                                 {"ten o'clock", "dix heures"}};
      const auto& u = until[uniform_below(rng, until.size())];
      VG w8;
      w8.verb = &verb_row(chance(rng, 50) ? "wait" : chance(rng, 50) ? "work" : "sleep");
      w8.tense = chance(rng, 60) ? Tn::Past : Tn::Future;
      p = statement(s, w8);
      p.en.push_back("until");
      words_of(u[0], p.en);
      append(p.fr, {"jusque", "à", u[1]});
      combos.push_back(key("sub", "until", std::string(u[0]) + "_" + w8.verb->en + std::to_string(static_cast<int>(w8.tense))));
    }
    return done(end_with(p, "."), "subord", combos);
  }
  if (rain && sub.tense == Tn::PresProg) sub.tense = Tn::Present;
  if (main.verb == nullptr && (main.tense == Tn::PastProg || main.tense == Tn::PresProg))
    main.tense = main.tense == Tn::PastProg ? Tn::Past : Tn::Present;
  if (main.tense == Tn::PresProg && stative(main)) main.tense = Tn::Present;
  if (sub.tense == Tn::PastProg && !sub.verb) sub.tense = Tn::Past;
  fix_some(sub);
  fix_some(main);
  sub.contract_subject = main.contract_subject = chance(rng, 25);
  // English "if I were" for the unreal condition with be.
  Pair a = statement(s1, sub);
  if (en_conj == "if" && sub.fr_tense == static_cast<int>(Tn::PastProg) && !sub.verb)
    for (auto& w : a.en)
      if (w == "was") w = "were";
  const Pair b = statement(s2, main);
  Pair p;
  Words conj_en, conj_fr;
  words_of(en_conj, conj_en);
  conj_fr = {fr_conj};
  if (main_first) {
    p = b;
    append(p.en, conj_en);
    append(p.fr, conj_fr);
    append(p.en, a.en);
    append(p.fr, a.fr);
  } else {
    p.en = conj_en;
    p.fr = conj_fr;
    append(p.en, a.en);
    append(p.fr, a.fr);
    p.en.push_back(",");
    p.fr.push_back(",");
    append(p.en, b.en);
    append(p.fr, b.fr);
  }
  combos.push_back(key("sub", en_conj, (sub.verb ? sub.verb->en : "be") + "_" + (main.verb ? main.verb->en : "be")));
  return done(end_with(p, "."), "subord", combos);
}

// ---- infinitive complements -------------------------------------------------------------------------
// want to go → veut aller; like to read → aime lire; try to → essaie de; forget to → oublie de; learn to
// → apprend à; need to → a besoin de; stop talking → arrête de parler; help Paul carry → aide Paul à
// porter; ask Marie to come → demande à Marie de venir; tell him to wait → lui dit d'attendre; let me go
// → me laisse partir; go swimming → va nager; to buy (a purpose) → pour acheter; too tired to → trop
// fatigué pour; it is easy to → il est facile de; would rather → préférerait.

struct InfVerb {
  const char* en;
  const char* prep;  // the French preposition before the infinitive
  int kind;          // 0 to + base; 1 -ing; 2 object + to (help: direct object); 3 person (à) + to; 4 let + object + base
};
const std::vector<InfVerb> kInfVerbs{
    {"want", "", 0},     {"like", "", 0},      {"love", "", 0},     {"hate", "", 0},   {"prefer", "", 0},
    {"hope", "", 0},     {"try", "de", 0},     {"forget", "de", 0}, {"decide", "de", 0}, {"refuse", "de", 0},
    {"promise", "de", 0}, {"learn", "à", 0},   {"begin", "à", 0},   {"start", "à", 0}, {"continue", "à", 0},
    {"need", "besoin de", 0}, {"wish", "", 0}, {"stop", "de", 1},   {"finish", "de", 1}, {"help", "à", 2},
    {"ask", "de", 3},    {"tell", "de", 3},    {"let", "", 4},      {"go", "", 1},     {"seem", "", 0},
    {"want", "", 0},     {"try", "de", 0},     {"need", "besoin de", 0}, {"learn", "à", 0}};

// An action for an infinitive: a verb with its object or a place.
VG action(Rng& rng, std::vector<std::string>& combos) {
  if (chance(rng, 55)) {
    VG g = transitive_vg(rng, combos);
    if (g.verb->en == "like" || g.verb->en == "love" || g.verb->en == "hate" || g.verb->en == "want") g = transitive_vg(rng, combos);
    return g;
  }
  VG g;
  g.verb = pick(rng, vocab().intransitive);
  if (chance(rng, 35)) {
    const Phrase& pl = pick(rng, kPlaces);
    words_of(pl.en, g.tail_en);
    g.tail_fr = {pl.fr};
  }
  return g;
}

Example infinitive(Rng& rng) {
  std::vector<std::string> combos;
  const NP subject = subject_np(rng, false);
  const std::size_t k = uniform_below(rng, 100);
  if (k < 70) {
    const InfVerb& iv = kInfVerbs[uniform_below(rng, kInfVerbs.size())];
    VG g;
    const bool need = std::string(iv.en) == "need";
    static const LexVerb need_row = [] {  // need: English forms of its own, French avoir besoin de
      LexVerb v = have_row();
      v.en = "need", v.en_3sg = "needs", v.en_past = "needed", v.en_pp = "needed", v.en_ing = "needing";
      return v;
    }();
    g.verb = need ? &need_row : &verb_row(iv.en);
    g.inf_prep_fr = iv.prep;
    VG act;
    if (iv.kind == 1 && std::string(iv.en) == "go") {  // go swimming → aller nager
      static const std::vector<const char*> sports{"swim", "run", "walk", "dance", "fish", "shop"};
      const char* a = sports[uniform_below(rng, sports.size())];
      act.verb = lexicon_tables().verb(a) ? &verb_row(a) : &verb_row("swim");
    } else {
      act = action(rng, combos);
    }
    g.inf = std::make_shared<VG>(act);
    g.inf_ing = iv.kind == 1;
    if (iv.kind == 2) {  // help Paul (to) carry the bag → aider Paul à porter le sac
      g.obj = shared(person_object(rng, subject, 40));
      g.inf_to = chance(rng, 50) ? "to" : "";
    } else if (iv.kind == 3) {  // ask Marie to come → demander à Marie de venir
      g.iobj = shared(person_object(rng, subject, 45));
      g.iobj_first = true;
    } else if (iv.kind == 4) {  // let me go → me laisser partir
      g.obj = shared(person_object(rng, subject, 60));
      g.inf_to = "";
    }
    const std::string& v = g.verb->en;
    const bool state = v == "want" || v == "like" || v == "love" || v == "hate" || v == "prefer" || v == "hope" ||
                       v == "need" || v == "wish" || v == "seem";
    g.tense = pick_tn(rng);
    if (state && (g.tense == Tn::PresProg || g.tense == Tn::PastProg || g.tense == Tn::GoingTo || g.tense == Tn::JustDid))
      g.tense = Tn::Present;
    if (v == "seem" && g.tense != Tn::Present) g.tense = Tn::Past;
    if (v == "seem") g.fr_tense = g.tense == Tn::Past ? static_cast<int>(Tn::PastProg) : -1;  // semblait
    if (v == "go" && g.tense == Tn::PresProg) g.tense = Tn::Present;
    if (iv.kind == 4 && g.tense == Tn::Past) g.tense = Tn::Present;  // laissé + infinitive: no agreement question
    if (g.tense == Tn::JustDid) g.tense = Tn::Past;
    negate(rng, g, 20);
    if (v == "seem") g.neg = Ng::None;
    fix_some(*g.inf);
    if (g.neg != Ng::None && g.inf->obj && g.inf->obj->det == Det::Partitive && !g.inf->obj->en_det.empty())
      g.inf->obj->en_det = "any";
    g.contract_subject = chance(rng, 35);
    combos.push_back(key("inf", iv.en, g.inf->verb->en));
    if (chance(rng, 12) && g.tense != Tn::Pluperfect) return done(end_with(yes_no(subject, g), "?"), "infinitive", combos);
    return done(end_with(statement(subject, g), "."), "infinitive", combos);
  }
  if (k < 82) {  // a purpose: "She went to the market to buy bread." → "… pour acheter du pain."
    VG g;
    g.verb = &verb_row(chance(rng, 70) ? "go" : "come");
    const LexNoun* place = pick(rng, vocab().buildings);
    g.tail_en = {"to"};
    append(g.tail_en, en_np(np_of(place, false, Det::The), true));
    g.tail_fr = {"à"};
    append(g.tail_fr, fr_np(np_of(place, false, Det::The)));
    g.tense = pick_weighted(rng, {30, 45, 25}) == 0 ? Tn::Present : chance(rng, 65) ? Tn::Past : Tn::Future;
    VG act = transitive_vg(rng, combos);  // a purpose is something done to something
    for (int tries = 0; tries < 6 && stative(act); ++tries) act = transitive_vg(rng, combos);
    act.tail_en.clear();
    act.tail_fr.clear();
    fix_some(act);
    Pair p = statement(subject, g);
    const bool in_order = chance(rng, 15);
    if (in_order) append(p.en, {"in", "order"});
    append(p.en, {"to", act.verb->en});
    append(p.en, en_after(act));
    p.fr.push_back("pour");
    append(p.fr, fr_infinitive(act, subject));
    combos.push_back(key("inf", "purpose", act.verb->en));
    return done(end_with(p, "."), "infinitive", combos);
  }
  if (k < 92) {  // too tired to work; old enough to drive
    VG g;
    g.adj = pick(rng, vocab().person_adj);
    const bool enough = chance(rng, 35);
    if (enough) {
      g.comp_en = {"enough"};
      g.degree_fr = "assez";
    } else {
      g.degree_en = "too";
      g.degree_fr = "trop";
    }
    g.tense = chance(rng, 55) ? Tn::Present : Tn::Past;
    VG act = action(rng, combos);
    fix_some(act);
    Pair p = statement(subject, g);
    append(p.en, {"to", act.verb->en});
    append(p.en, en_after(act));
    p.fr.push_back("pour");
    append(p.fr, fr_infinitive(act, subject));
    combos.push_back(key("inf", enough ? "enough" : "too", g.adj->en));
    return done(end_with(p, "."), "infinitive", combos);
  }
  // It is easy to learn French. → Il est facile d'apprendre le français.
  static const std::vector<const char*> adjs{"easy", "difficult", "important", "possible", "impossible", "necessary",
                                             "dangerous", "interesting", "useful"};
  const LexAdjective& a = adj_row(adjs[uniform_below(rng, adjs.size())]);
  VG act = action(rng, combos);
  fix_some(act);
  const std::size_t t = uniform_below(rng, 3);
  Pair p;
  p.en = {t == 0 ? (chance(rng, 40) ? "it's" : "it") : "it"};
  if (p.en[0] == "it") p.en.push_back(t == 1 ? "was" : t == 2 ? "will" : "is");
  if (t == 2) p.en.push_back("be");
  append(p.en, {a.en, "to", act.verb->en});
  append(p.en, en_after(act));
  p.fr = {"il", t == 0 ? "est" : t == 1 ? "était" : "sera", a.fr[0], "de"};
  append(p.fr, fr_infinitive(act, subject));
  combos.push_back(key("inf", a.en, act.verb->en));
  return done(end_with(p, "."), "infinitive", combos);
}

// ---- numbers and quantities -------------------------------------------------------------------------

const std::vector<std::array<const char*, 2>> kNumbers{
    {"two", "deux"},        {"three", "trois"},    {"four", "quatre"},      {"five", "cinq"},     {"six", "six"},
    {"seven", "sept"},      {"eight", "huit"},     {"nine", "neuf"},        {"ten", "dix"},       {"eleven", "onze"},
    {"twelve", "douze"},    {"thirteen", "treize"}, {"fourteen", "quatorze"}, {"fifteen", "quinze"}, {"sixteen", "seize"},
    {"seventeen", "dix-sept"}, {"eighteen", "dix-huit"}, {"nineteen", "dix-neuf"}, {"twenty", "vingt"},
    {"thirty", "trente"},   {"forty", "quarante"}, {"fifty", "cinquante"},  {"a hundred", "cent"}, {"a thousand", "mille"}};

// A quantity of a noun: (English determiner, French determiner, plural noun?).
struct Quantity {
  const char *en, *fr;
  int count;  // 1 countable (plural), 0 mass, 2 either
};
const std::vector<Quantity> kQuantities{
    {"a lot of", "beaucoup de", 2}, {"lots of", "beaucoup de", 2}, {"many", "beaucoup de", 1},
    {"a few", "quelques", 1},       {"several", "plusieurs", 1},   {"a little", "un peu de", 0},
    {"few", "peu de", 1},           {"little", "peu de", 0},       {"enough", "assez de", 2},
    {"too many", "trop de", 1},     {"too much", "trop de", 0},    {"more", "plus de", 2},
    {"some", "quelques", 1},        {"a great deal of", "beaucoup de", 0}, {"various", "divers", 1},
    {"certain", "certains", 1}};

Example quantity(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  const NP subject = subject_np(rng, false);
  const std::size_t k = uniform_below(rng, 100);
  VG g;
  static const std::vector<const char*> have_verbs{"have", "buy", "want", "need", "eat", "sell", "find", "see"};
  const char* hv = have_verbs[uniform_below(rng, have_verbs.size())];
  g.verb = std::string(hv) == "have" ? &have_row() : std::string(hv) == "need" ? &verb_row("want") : &verb_row(hv);
  g.tense = pick_weighted(rng, {50, 30, 20}) == 0 ? Tn::Present : chance(rng, 60) ? Tn::Past : Tn::Future;
  if (g.verb->en == "want") g.tense = Tn::Present;
  if (k < 22) {  // numbers: three apples, twenty books
    const auto& n = kNumbers[uniform_below(rng, kNumbers.size())];
    const LexNoun* noun = g.verb->en == "eat" ? &noun_row(chance(rng, 50) ? "apple" : "egg") : pick(rng, V.things);
    NP o = np_of(noun, true, Det::Quant);
    o.en_det = n[0];
    o.fr_det = n[1];
    g.obj = shared(o);
    negate(rng, g, 10);
    combos.push_back(key("qty", n[0], noun->en));
  } else if (k < 42) {  // a cup of coffee, two glasses of water, a piece of cake
    static const std::vector<std::array<const char*, 2>> of{{"cup", "coffee"}, {"cup", "tea"}, {"glass", "water"},
                                                            {"glass", "milk"}, {"glass", "wine"}, {"glass", "juice"},
                                                            {"bottle", "water"}, {"bottle", "wine"}, {"bottle", "milk"},
                                                            {"piece", "cake"}, {"piece", "bread"}, {"piece", "meat"},
                                                            {"plate", "rice"}, {"plate", "soup"}, {"bag", "apples"},
                                                            {"kilo", "apples"}};
    const auto& c = of[uniform_below(rng, of.size())];
    const bool kilo = std::string(c[0]) == "kilo";
    const LexNoun* cont = kilo ? nullptr : &noun_row(c[0]);
    const std::string what = c[1];
    const LexNoun* stuff = what == "apples" ? &noun_row("apple") : &noun_row(what);
    const bool many = chance(rng, 35);
    const auto& n = kNumbers[uniform_below(rng, 8)];
    NP o;
    if (kilo) o = word_np(many ? "kilos" : "kilo", many ? "kilos" : "kilo", Gender::Masculine, many);
    else o = np_of(cont, many, Det::Quant);
    o.det = Det::Quant;
    o.en_det = many ? n[0] : "a";
    o.fr_det = many ? n[1] : (kilo || cont->gender == Gender::Masculine) ? "un" : "une";
    // the contents: "of coffee" → "de café" (no article)
    NP inside = np_of(stuff, what == "apples", Det::Quant);
    o.pp = std::make_shared<PP>();
    o.pp->en = "of";
    o.pp->fr = "de";
    o.pp->np = shared(inside);
    if (g.verb->en == "see" || g.verb->en == "find" || g.verb->en == "sell") g.verb = &verb_row(chance(rng, 50) ? "want" : "drink");
    if (g.verb->en == "drink" && (what == "cake" || what == "bread" || what == "meat" || what == "rice" || what == "apples"))
      g.verb = &verb_row("eat");
    static const std::set<std::string> liquids{"coffee", "tea", "water", "milk", "wine", "juice"};
    if (g.verb->en == "eat" && liquids.count(what))
      g.verb = &verb_row("drink");
    if (g.verb->en == "want" && chance(rng, 50)) {  // I would like a cup of coffee. → Je voudrais une tasse de café.
      g.verb = &verb_row("like");
      g.fr = &verb_row("want");
      g.tense = Tn::Cond;
      g.contract_subject = chance(rng, 60);
      if (chance(rng, 40)) g.tail_en = {",", "please"}, g.tail_fr = {",", "s'il te plaît"};
    }
    if (g.verb->en == "want") g.tense = Tn::Present;
    g.obj = shared(o);
    combos.push_back(key("qty", c[0], what));
  } else if (k < 70) {  // a lot of, many, a few, several, too much, enough …
    const Quantity* q = &kQuantities[uniform_below(rng, kQuantities.size())];
    const bool mass = q->count == 0 || (q->count == 2 && chance(rng, 45));
    const LexNoun* noun = mass ? (chance(rng, 35) ? &noun_row("money") : chance(rng, 50) ? pick(rng, V.foods) : pick(rng, V.drinks))
                               : (g.verb->en == "eat" ? &noun_row("apple") : pick(rng, V.things));
    if (mass && g.verb->en == "eat" && noun->en == "money") noun = &noun_row("bread");
    NP o = np_of(noun, !mass, Det::Quant);
    o.en_det = q->en;
    o.fr_det = q->fr;
    if (std::string(q->en) == "various" || std::string(q->en) == "certain") {  // diverses villes, certaines personnes
      const LexAdjective& a = adj_row(q->en);
      o.fr_det = a.fr[form_index(noun->gender, true)];
    }
    // much and many in negations and questions; "no money" → "pas d'argent"
    if (chance(rng, 25) && q->count != 1 && mass) {
      g.neg = Ng::Not;
      g.contracted = chance(rng, 70);
      o.en_det = "much";
      o.fr_det = "beaucoup de";
    } else if (chance(rng, 15)) {
      g.neg = Ng::Not;
      g.en_affirmative = true;  // "has no money" → "n'a pas d'argent"
      o.en_det = "no";
      o.fr_det = "de";
      o.plural = !mass;
    }
    g.obj = shared(o);
    combos.push_back(key("qty", o.en_det, noun->en));
  } else if (k < 84) {  // most of, half of, none of, each of, both
    const std::size_t w = uniform_below(rng, 5);
    NP group = np_of(pick(rng, chance(rng, 60) ? V.people : V.family), true, Det::The);
    if (chance(rng, 40)) group.det = Det::Poss, group.poss = static_cast<int>(uniform_below(rng, 6)) % 6;
    if (group.det == Det::Poss && group.poss == 4) group.poss = 1;
    VG v = chance(rng, 50) ? copula_vg(rng, group, combos) : intransitive_vg(rng, combos, group);
    v.tense = chance(rng, 55) ? Tn::Present : Tn::Past;
    Pair p;
    if (w == 0) {  // Most students are tired. → La plupart des étudiants sont fatigués.
      NP most = group;
      most.det = Det::Quant;
      most.en_det = group.det == Det::Poss ? std::string("most of ") + kPossEn[group.poss] : "most";
      static const std::array<const char*, 6> mes{"mes", "tes", "ses", "nos", "vos", "leurs"};
      most.fr_det = "la plupart de " + std::string(group.det == Det::Poss ? mes[group.poss] : "les");
      p = statement(most, v);
      combos.push_back(key("qty", "most", head(group)));
    } else if (w == 1) {  // Both (of) my brothers are tall. → Mes deux frères sont grands.
      NP both = group;
      both.det = Det::Quant;
      static const std::array<const char*, 6> poss{"mes", "tes", "ses", "nos", "vos", "leurs"};
      both.en_det = group.det == Det::Poss ? std::string("both ") + kPossEn[group.poss] : "both";
      both.fr_det = group.det == Det::Poss ? std::string(poss[group.poss]) + " deux" : "les deux";
      p = statement(both, v);
      combos.push_back(key("qty", "both", head(group)));
    } else if (w == 2 || w == 3) {  // None of / each of my friends → aucun de / chacun de (singular)
      NP one = group;
      one.plural = false;
      one.person = 2;
      one.det = Det::Quant;
      static const std::array<const char*, 6> poss{"mes", "tes", "ses", "nos", "vos", "leurs"};
      const std::string of = group.det == Det::Poss ? std::string(" ") + kPossEn[group.poss] : " the";
      const std::string de = group.det == Det::Poss ? std::string("de ") + poss[group.poss] : "de les";
      const bool f = feminine(group);
      one.en_det = (w == 2 ? "none of" : "each of") + of;
      one.fr_det = std::string(w == 2 ? (f ? "aucune" : "aucun") : (f ? "chacune" : "chacun")) + " " + de;
      one.en_word = group.noun->en_plural;
      one.fr_word = group.noun->fr_plural;
      one.noun = nullptr;
      if (w == 2) v.neg = Ng::Not, v.en_affirmative = true;  // aucun … ne: "None of my friends came." → "Aucun de mes amis n'est venu."
      if (w == 2 && v.neg == Ng::Not) v.neg_fr = " ";
      p = statement(one, v);
      combos.push_back(key("qty", w == 2 ? "none" : "each", head(group)));
    } else {  // half of the cake / half an hour
      if (chance(rng, 50)) {
        NP cake = np_of(chance(rng, 50) ? &noun_row("cake") : pick(rng, V.foods), false, Det::The);
        VG e;
        e.verb = &verb_row("eat");
        e.tense = chance(rng, 70) ? Tn::Past : Tn::Present;
        NP half = word_np("half", "moitié", Gender::Feminine, false, Det::Quant, "", "la");
        half.pp = std::make_shared<PP>();
        half.pp->en = "of";
        half.pp->fr = "de";
        half.pp->np = shared(cake);
        e.obj = shared(half);
        p = statement(subject, e);
        combos.push_back(key("qty", "half", cake.noun->en));
      } else {
        VG e;
        e.verb = &verb_row(chance(rng, 60) ? "wait" : "walk");
        e.tense = chance(rng, 70) ? Tn::Past : Tn::Present;
        e.tail_en = {"for", "half", "an", "hour"};
        e.tail_fr = {"une", "demi-heure"};
        if (e.verb->en == "walk") e.tail_en = {"for", "half", "an", "hour"}, e.tail_fr = {"pendant", "une", "demi-heure"};
        p = statement(subject, e);
        combos.push_back(key("qty", "half_hour", e.verb->en));
      }
    }
    return done(end_with(p, "."), "quantity", combos);
  } else {  // people: many people, more than ten people, few people
    const std::size_t w = uniform_below(rng, 4);
    VG v = chance(rng, 50) ? intransitive_vg(rng, combos, subject) : transitive_vg(rng, combos);
    v.tense = chance(rng, 55) ? Tn::Present : Tn::Past;
    if (v.verb && (v.verb->en == "go" || v.verb->en == "come" || v.verb->en == "leave") && chance(rng, 50)) v.tense = Tn::Past;
    fix_some(v);
    NP people;
    if (w == 0) people = word_np("people", "gens", Gender::Masculine, true, Det::Quant, "many", "beaucoup de");
    else if (w == 1) people = word_np("people", "gens", Gender::Masculine, true, Det::Quant, "few", "peu de");
    else if (w == 2) {
      const auto& n = kNumbers[uniform_below(rng, kNumbers.size())];
      people = word_np("people", "personnes", Gender::Feminine, true, Det::Quant, "", "");
      people.en_det = std::string("more than ") + n[0];
      people.fr_det = std::string("plus de ") + n[1];
    } else {
      people = word_np("people", "gens", Gender::Masculine, true, Det::Generic);
      people.fr_det = "les";
      people.det = Det::Quant;
    }
    if (v.adj || (v.verb && v.verb->etre && v.tense == Tn::Past)) {
      // gens: an adjective or participle after it is masculine; personnes: feminine (both plural)
    }
    Pair p = statement(people, v);
    combos.push_back(key("qty", "people", v.verb ? v.verb->en : "be"));
    return done(end_with(p, "."), "quantity", combos);
  }
  g.contract_subject = chance(rng, 30);
  fix_some(g);
  return done(end_with(statement(subject, g), "."), "quantity", combos);
}

// ---- idioms of state, the weather, age, names ---------------------------------------------------------
// be hungry / thirsty / cold / hot / afraid (of) / right / wrong / sleepy → avoir faim / soif / froid /
// chaud / peur (de) / raison / tort / sommeil; it is raining → il pleut; it is cold → il fait froid; the
// weather is nice → il fait beau; I am ten (years old) → j'ai dix ans; how old are you → quel âge as-tu;
// I feel tired → je me sens fatigué; my name is Paul → je m'appelle Paul; and a few set phrases.

Example idiom(Rng& rng) {
  std::vector<std::string> combos;
  const std::size_t k = uniform_below(rng, 100);
  if (k < 30) {
    static const std::vector<std::array<const char*, 2>> avoir{{"hungry", "faim"}, {"thirsty", "soif"},
                                                               {"cold", "froid"},   {"hot", "chaud"},
                                                               {"afraid", "peur"},  {"right", "raison"},
                                                               {"wrong", "tort"},   {"sleepy", "sommeil"},
                                                               {"lucky", "de la chance"}};
    const auto& a = avoir[uniform_below(rng, avoir.size())];
    const NP subject = subject_np(rng);
    VG g;
    g.fr = &have_row();  // English "is hungry", French "a faim"
    const bool very = chance(rng, 20) && std::string(a[0]) != "right" && std::string(a[0]) != "wrong" &&
                      std::string(a[0]) != "lucky";
    if (very) g.comp_en = {"very"}, g.comp_fr = {"très"};
    g.comp_en.push_back(a[0]);
    g.comp_fr.push_back(a[1]);
    if (std::string(a[0]) == "afraid" && chance(rng, 60)) {  // afraid of the dog → peur du chien
      NP what = chance(rng, 60) ? animal_np(rng) : np_of(pick(rng, vocab().animals), true, Det::Generic);
      g.comp_en.push_back("of");
      append(g.comp_en, en_np(what, true));
      g.comp_fr.push_back("de");
      append(g.comp_fr, fr_np(what));
    }
    g.tense = static_cast<Tn>(pick_weighted(rng, {50, 30, 0, 0, 12, 0, 8}));
    negate(rng, g, 20);
    g.contract_subject = chance(rng, 45);
    combos.push_back(key("idiom", a[0], head(subject)));
    if (chance(rng, 15)) return done(end_with(yes_no(subject, g), "?"), "idiom", combos);
    return done(end_with(statement(subject, g), "."), "idiom", combos);
  }
  if (k < 52) {  // the weather
    NP it = weather_it();
    VG g;
    const std::size_t w = uniform_below(rng, 4);
    std::string what;
    if (w <= 1) {  // it rains, it snows
      g.verb = &verb_row(w == 0 ? "rain" : "snow");
      g.tense = static_cast<Tn>(pick_weighted(rng, {15, 25, 15, 25, 10, 0, 0, 10}));
      if (chance(rng, 10)) g.modal = Md::Might;
      what = g.verb->en;
    } else {  // it is cold → il fait froid; the weather is nice → il fait beau
      static const std::vector<std::array<const char*, 2>> fait{{"cold", "froid"}, {"hot", "chaud"}, {"nice", "beau"},
                                                                {"warm", "chaud"}, {"windy", "du vent"},
                                                                {"sunny", "beau"}, {"bad", "mauvais"}, {"dark", "nuit"}};
      const auto& f = fait[uniform_below(rng, fait.size())];
      g.fr = &verb_row("do");  // faire
      g.comp_en = {f[0]};
      g.comp_fr = {f[1]};
      g.tense = static_cast<Tn>(pick_weighted(rng, {55, 30, 0, 0, 15}));
      what = f[0];
      if (w == 3 && (what == "nice" || what == "bad")) {  // the weather is nice → il fait beau
        it = word_np("weather", "il", Gender::Masculine, false, Det::Quant, "the", "");
      } else if (w == 3 && what != "windy" && what != "sunny") {  // it is getting cold → il commence à faire froid
        VG get;
        get.verb = &verb_row("begin");
        get.inf_prep_fr = "à";
        get.tense = chance(rng, 60) ? Tn::Present : Tn::PastProg;
        Pair p;
        p.en = {"it", get.tense == Tn::Present ? (chance(rng, 40) ? "it's" : "is") : "was", "getting", f[0]};
        if (p.en[1] == "it's") p.en.erase(p.en.begin());
        p.fr = {"il", get.tense == Tn::Present ? "commence" : "commençait", "à", "faire", f[1]};
        combos.push_back(key("idiom", "getting", what));
        return done(end_with(p, "."), "idiom", combos);
      }
    }
    if (chance(rng, 25)) {
      const unsigned fit = fit_of(g.tense, g.modal);
      if (fit) {
        const TimePhrase& t = time_for(rng, fit);
        words_of(t.en, g.tail_en);
        g.tail_fr = {t.fr};
      }
    }
    if (g.comp_fr.empty() || g.comp_fr.front().rfind("du", 0) != 0) negate(rng, g, 15);  // not "pas du vent"
    g.contract_subject = chance(rng, 40);
    combos.push_back(key("idiom", "weather", what + std::to_string(static_cast<int>(g.tense))));
    if (chance(rng, 12) && g.modal == Md::None) return done(end_with(yes_no(it, g), "?"), "idiom", combos);
    return done(end_with(statement(it, g), "."), "idiom", combos);
  }
  if (k < 64) {  // age
    static const std::vector<std::array<const char*, 2>> ages{
        {"two", "deux"},   {"three", "trois"},   {"five", "cinq"},   {"six", "six"},         {"seven", "sept"},
        {"eight", "huit"}, {"nine", "neuf"},     {"ten", "dix"},     {"eleven", "onze"},     {"twelve", "douze"},
        {"fifteen", "quinze"}, {"twenty", "vingt"}, {"thirty", "trente"}, {"forty", "quarante"}, {"fifty", "cinquante"}};
    NP subject = chance(rng, 50) ? pronoun_subject(rng) : chance(rng, 40) ? name_np(rng) : person_np(rng, 0);
    if (chance(rng, 25)) {  // How old are you? → Quel âge as-tu ? / Quel âge a ta sœur ?
      Pair p;
      if (subject.det == Det::Pronoun) {
        static const std::array<const char*, 6> inv{"ai-je", "as-tu", "a-t-il", "avons-nous", "avez-vous", "ont-ils"};
        std::string fr = inv[subject.person];
        if (subject.person == 2 && feminine(subject)) fr = "a-t-elle";
        if (subject.person == 5 && feminine(subject)) fr = "ont-elles";
        if (subject.person == 0) subject = pronoun_np(1, Gender::Masculine), fr = "as-tu";
        p.en = {"how", "old", be_en(subject.person, false)};
        append(p.en, en_np(subject));
        p.fr = {"quel", "âge", fr};
      } else {
        p.en = {"how", "old", subject.plural ? "are" : "is"};
        append(p.en, en_np(subject));
        p.fr = {"quel", "âge", subject.plural ? "ont" : "a"};
        append(p.fr, fr_np(subject));
      }
      combos.push_back(key("idiom", "how_old", head(subject)));
      return done(end_with(p, "?"), "idiom", combos);
    }
    const auto& a = ages[uniform_below(rng, ages.size())];
    VG g;
    g.fr = &have_row();
    g.comp_en = {a[0]};
    const bool years = chance(rng, 60);
    if (years) append(g.comp_en, {"years", "old"});
    g.comp_fr = {a[1], "ans"};
    g.tense = chance(rng, 70) ? Tn::Present : chance(rng, 50) ? Tn::Past : Tn::Future;
    g.contract_subject = chance(rng, 45);
    combos.push_back(key("idiom", "age", std::string(a[0]) + "_" + head(subject)));
    return done(end_with(statement(subject, g), "."), "idiom", combos);
  }
  if (k < 78) {  // feel, seem, become, remain + an adjective
    const NP subject = subject_np(rng);
    VG g = copula_vg(rng, subject, combos);
    const std::size_t w = uniform_below(rng, 4);
    static const std::array<const char*, 4> verbs{"feel", "seem", "become", "stay"};
    g.verb = &verb_row(verbs[w]);
    if (w == 3 && chance(rng, 50)) {  // remain calm → rester calme
      static LexVerb remain = [] {
        LexVerb v = verb_row("stay");
        v.en = "remain", v.en_3sg = "remains", v.en_past = "remained", v.en_pp = "remained", v.en_ing = "remaining";
        return v;
      }();
      g.verb = &remain;
    }
    g.reflexive = w == 0;  // se sentir
    g.tense = static_cast<Tn>(pick_weighted(rng, {45, 35, 0, 0, 10, 0, 10}));
    if (w <= 1 && g.tense == Tn::Past) g.fr_tense = static_cast<int>(Tn::PastProg);  // se sentait, semblait
    if (w <= 1 && g.tense == Tn::Perfect) g.tense = Tn::Present;
    negate(rng, g, 12);
    combos.push_back(key("idiom", verbs[w], g.adj->en));
    return done(end_with(statement(subject, g), "."), "idiom", combos);
  }
  if (k < 88) {  // My name is Paul. → Je m'appelle Paul. His sister is called Anna. → Sa sœur s'appelle Anna.
    const NP name = name_np(rng);
    Pair p;
    if (chance(rng, 55)) {
      static const std::array<int, 6> persons{0, 1, 2, 2, 3, 5};
      const int who = persons[uniform_below(rng, persons.size())];
      NP sub = pronoun_np(who, who == 2 && feminine(name) ? Gender::Feminine : Gender::Masculine);
      const std::size_t poss = who == 2 ? (feminine(sub) ? 3 : 2) : who == 3 ? 4 : who == 5 ? 5 : static_cast<std::size_t>(who);
      if (who == 3 || who == 5) {
        p.en = {kPossEn[poss], "names", "are"};
        NP other = name_np(rng);
        if (other.name == name.name) other.name = name.name == "Tom" ? "Paul" : "Tom";
        append(p.en, {name.name, "and", other.name});
        p.fr = {kPronFr[who], who == 3 ? "nous" : "s'", who == 3 ? "appelons" : "appellent", name.name, "et", other.name};
      } else {
        p.en = {kPossEn[poss], "name", "is", name.name};
        if (chance(rng, 30)) p.en = {kPossEn[poss], "name's", name.name};
        p.fr = {pron_fr(sub), who == 0 ? "me" : who == 1 ? "te" : "se", verb_row("call").present[who], name.name};
      }
      combos.push_back(key("idiom", "name", kPossEn[poss] + name.name));
    } else {
      NP who = person_np(rng, 0);
      who.plural = false, who.person = 2;
      if (who.noun->gender != name.gender) who = np_of(feminine(name) ? &noun_row("sister") : &noun_row("brother"), false, Det::Poss);
      if (who.det == Det::A) who.det = Det::Poss;
      who.poss = who.det == Det::Poss ? who.poss : 0;
      p.en = en_np(who);
      append(p.en, {"is", "called", name.name});
      p.fr = fr_np(who);
      append(p.fr, {"se", verb_row("call").present[2], name.name});
      combos.push_back(key("idiom", "called", head(who) + name.name));
    }
    return done(end_with(p, "."), "idiom", combos);
  }
  // set phrases
  static const std::vector<std::array<const char*, 2>> fixed{
      {"How are you?", "Comment vas-tu ?"},
      {"I'm fine, thank you.", "Je vais bien, merci."},
      {"Thank you very much.", "Merci beaucoup."},
      {"You're welcome.", "De rien."},
      {"Good morning!", "Bonjour !"},
      {"Good night.", "Bonne nuit."},
      {"Happy birthday!", "Joyeux anniversaire !"},
      {"See you tomorrow.", "À demain."},
      {"Excuse me.", "Excuse-moi."},
      {"Of course.", "Bien sûr."},
      {"It doesn't matter.", "Ça ne fait rien."},
      {"What's the matter?", "Qu'est-ce qui ne va pas ?"},
      {"What is the weather like?", "Quel temps fait-il ?"},
      {"What time is it?", "Quelle heure est-il ?"},
      {"I agree with you.", "Je suis d'accord avec toi."},
      {"I don't agree.", "Je ne suis pas d'accord."},
      {"Yes, of course.", "Oui, bien sûr."},
      {"No, thank you.", "Non, merci."},
      {"Goodbye!", "Au revoir !"},
      {"Good luck!", "Bonne chance !"}};
  const std::size_t w = uniform_below(rng, 5);
  Pair p;
  if (w == 0) {  // It's seven o'clock. → Il est sept heures.
    static const std::vector<std::array<const char*, 2>> hours{{"one", "une heure"},   {"two", "deux heures"},
                                                               {"three", "trois heures"}, {"four", "quatre heures"},
                                                               {"five", "cinq heures"}, {"six", "six heures"},
                                                               {"seven", "sept heures"}, {"eight", "huit heures"},
                                                               {"nine", "neuf heures"}, {"ten", "dix heures"},
                                                               {"eleven", "onze heures"}};
    const auto& h = hours[uniform_below(rng, hours.size())];
    p.en = {chance(rng, 50) ? "it's" : "it is", h[0], "o'clock"};
    p.fr = {"il", "est", h[1]};
    combos.push_back(train_key(key("idiom", "clock", h[0])));
    return done(end_with(p, "."), "idiom", combos);
  }
  if (w == 1) {  // Thank you for the gift. → Merci pour le cadeau.
    NP t = thing_obj(rng, 15);
    if (t.det == Det::A || t.det == Det::Number || t.det == Det::Some) t.det = Det::The;
    p.en = {"thank", "you", "for"};
    append(p.en, en_np(t, true));
    p.fr = {"merci", "pour"};
    append(p.fr, fr_np(t));
    combos.push_back(key("idiom", "thanks", head(t)));
    return done(end_with(p, "."), "idiom", combos);
  }
  if (w == 2) {  // Once upon a time, there was a king. → Il était une fois un roi.
    NP who = np_of(pick(rng, chance(rng, 50) ? vocab().people : vocab().animals), false, Det::A);
    if (chance(rng, 30)) {
      const LexAdjective* a = pick(rng, vocab().person_adj);
      (a->before ? who.adj_before : who.adj_after) = a;
    }
    p.en = {"once", "upon", "a", "time", ",", "there", "was"};
    append(p.en, en_np(who, true));
    p.fr = {"il", "était", "une", "fois"};
    append(p.fr, fr_np(who));
    combos.push_back(key("idiom", "once", head(who)));
    return done(end_with(p, "."), "idiom", combos);
  }
  if (w == 3) {  // She is sorry for being late. → Elle est désolée d'être en retard.
    const NP subject = subject_np(rng, false);
    VG g;
    g.adj = &adj_row("sorry");
    g.tense = chance(rng, 75) ? Tn::Present : Tn::Past;
    g.contract_subject = chance(rng, 40);
    Pair q = statement(subject, g);
    static const std::vector<std::array<const char*, 2>> why{{"for being late", "de être en retard"},
                                                             {"for being so late", "de être si en retard"},
                                                             {"for the noise", "pour le bruit"},
                                                             {"for the delay", "pour le retard"}};
    const auto& r = why[uniform_below(rng, lexicon_tables().noun("noise") ? why.size() : 2)];
    words_of(r[0], q.en);
    q.fr.push_back(r[1]);
    combos.push_back(key("idiom", "sorry", head(subject)));
    return done(end_with(q, "."), "idiom", combos);
  }
  const auto& f = fixed[uniform_below(rng, fixed.size())];
  Example e;
  e.en = f[0];
  e.fr = f[1];
  // French typography's space before ? and ! is not written in this corpus.
  for (const char* mark : {" ?", " !"}) {
    const std::size_t at = e.fr.find(mark);
    if (at != std::string::npos) e.fr.erase(at, 1);
  }
  e.category = "idiom";
  e.combos = {train_key(key("idiom", "fixed", f[0]))};
  return e;
}

// ---- reported speech and indirect questions ---------------------------------------------------------
// He says (that) the soup is cold → il dit que la soupe est froide; after a past: she said she was
// tired → elle a dit qu'elle était fatiguée; he said he would come → il a dit qu'il viendrait; he told
// me he had eaten → il m'a dit qu'il avait mangé; ask whether → demander si; I don't know where he lives
// → je ne sais pas où il vit; I wonder if → je me demande si.

Example reported(Rng& rng) {
  std::vector<std::string> combos;
  const NP subject = subject_np(rng, false);
  NP s2 = chance(rng, 40) ? pronoun_subject(rng) : subject_np(rng, false);
  VG inner = simple_vg(rng, s2, combos);
  if (inner.verb && (inner.verb->en == "want" || inner.verb->en == "like" || inner.verb->en == "know")) inner.tense = Tn::Present;
  VG main;
  const std::size_t k = uniform_below(rng, 100);
  const bool past = chance(rng, 50);
  main.tense = past ? Tn::Past : Tn::Present;
  // the embedded tense, in the main clause's time
  const std::size_t when = pick_weighted(rng, {55, 25, 20});  // same time, earlier, later
  if (!past) {
    inner.tense = when == 0 ? Tn::Present : when == 1 ? Tn::Past : Tn::Future;
  } else {
    inner.tense = when == 0 ? Tn::Past : when == 1 ? Tn::Pluperfect : Tn::Cond;
    if (when == 0) inner.fr_tense = static_cast<int>(Tn::PastProg);  // was → était
    if (when == 0 && !inner.verb) inner.fr_tense = -1;
    // "said she was reading" → "a dit qu'elle lisait" (an event at the same time is in progress)
    if (when == 0 && inner.verb && !stative(inner)) inner.tense = Tn::PastProg, inner.fr_tense = -1;
  }
  fix_some(inner);
  if (k < 55) {  // say, think, believe, know, hope, read, write (that)
    static const std::vector<const char*> verbs{"say", "think", "believe", "know", "hope", "write", "read", "say", "explain"};
    const char* v = verbs[uniform_below(rng, verbs.size())];
    main.verb = std::string(v) == "know" ? &verb_row("know", "fact") : &verb_row(v);
    if (std::string(v) == "explain") main.iobj = shared(person_object(rng, subject, 50));
    // Never negated: "je ne pense pas que" wants the subjunctive, which this grammar does not build.
    combos.push_back(key("rep", v, inner.verb ? inner.verb->en : inner.adj ? inner.adj->en : "be"));
    Pair a = statement(subject, main), b = statement(s2, inner);
    if (chance(rng, 65)) a.en.push_back("that");
    a.fr.push_back("que");
    append(a.en, b.en);
    append(a.fr, b.fr);
    return done(end_with(a, "."), "reported", combos);
  }
  if (k < 70) {  // tell someone (that) …
    main.verb = &verb_row("tell");
    main.iobj = shared(person_object(rng, subject, 60));
    main.iobj_first = true;
    combos.push_back(key("rep", "tell", inner.verb ? inner.verb->en : inner.adj ? inner.adj->en : "be"));
    Pair a = statement(subject, main), b = statement(s2, inner);
    if (chance(rng, 60)) a.en.push_back("that");
    a.fr.push_back("que");
    append(a.en, b.en);
    append(a.fr, b.fr);
    return done(end_with(a, "."), "reported", combos);
  }
  if (k < 82) {  // ask (someone) if / whether …; I wonder if → je me demande si
    const bool wonder = chance(rng, 30);
    if (wonder) {
      static LexVerb w = [] {
        LexVerb v = verb_row("ask");
        v.en = "wonder", v.en_3sg = "wonders", v.en_past = "wondered", v.en_pp = "wondered", v.en_ing = "wondering";
        return v;
      }();
      main.verb = &w;
      main.fr = &verb_row("ask");
      main.reflexive = true;
      if (main.tense == Tn::Past) main.fr_tense = static_cast<int>(Tn::PastProg);  // se demandait
    } else {
      main.verb = &verb_row("ask");
      if (chance(rng, 60)) main.iobj = shared(person_object(rng, subject, 60)), main.iobj_first = true;
    }
    combos.push_back(key("rep", wonder ? "wonder" : "ask", inner.verb ? inner.verb->en : inner.adj ? inner.adj->en : "be"));
    Pair a = statement(subject, main), b = statement(s2, inner);
    a.en.push_back(chance(rng, 60) ? "if" : "whether");
    a.fr.push_back("si");
    append(a.en, b.en);
    append(a.fr, b.fr);
    return done(end_with(a, "."), "reported", combos);
  }
  // I don't know where he lives / what she wants / why they left / whether he is here
  main.verb = &verb_row("know", "fact");
  main.tense = Tn::Present;
  main.neg = chance(rng, 65) ? Ng::Not : Ng::None;
  main.contracted = chance(rng, 75);
  if (inner.tense == Tn::Pluperfect || inner.tense == Tn::Cond) inner.tense = Tn::Past, inner.fr_tense = -1;
  if (inner.tense == Tn::Past && inner.fr_tense >= 0) inner.fr_tense = -1;
  static const std::vector<std::array<const char*, 2>> words{{"where", "où"}, {"when", "quand"}, {"why", "pourquoi"},
                                                             {"whether", "si"}, {"if", "si"}, {"what", "ce que"}};
  std::size_t w = uniform_below(rng, words.size());
  if (w == 5) {  // what he wants → ce qu'il veut: the object is the question word
    static const std::vector<const char*> vs{"want", "eat", "read", "buy", "say", "need", "do", "cook"};
    const char* v = vs[uniform_below(rng, vs.size())];
    inner = VG{};
    inner.verb = std::string(v) == "need" ? &verb_row("want") : &verb_row(v);
    inner.tense = chance(rng, 70) ? Tn::Present : Tn::Past;
  }
  const bool question = main.neg == Ng::None && chance(rng, 40);
  Pair a;
  if (question) {  // Do you know where he lives? → Est-ce que tu sais où il vit ?
    NP you = pronoun_np(1, Gender::Masculine);
    a = yes_no(you, main);
  } else {
    a = statement(subject, main);
  }
  const Pair b = statement(s2, inner);
  a.en.push_back(words[w][0]);
  a.fr.push_back(words[w][1]);
  append(a.en, b.en);
  append(a.fr, b.fr);
  combos.push_back(key("rep", words[w][0], inner.verb ? inner.verb->en : inner.adj ? inner.adj->en : "be"));
  return done(end_with(a, question ? "?" : "."), "reported", combos);
}

// ---- the passive --------------------------------------------------------------------------------------
// "The letter was written by Marie." → "La lettre a été écrite par Marie." (the participle agrees);
// "The books are sold here." → "Les livres sont vendus ici."; "will be", "can be", "has been"; "I was born
// in 1990" → "Je suis né en 1990"; "known for" → "connu pour".

// A participle as an adjective: (English participle, the French participle's four forms).
const LexAdjective* participle_adj(const LexVerb& v) {
  static std::map<const LexVerb*, std::unique_ptr<LexAdjective>> cache;
  auto& a = cache[&v];
  if (!a) {
    a = std::make_unique<LexAdjective>();
    a->en = v.en_pp.rfind("been ", 0) == 0 ? v.en_pp.substr(5) : v.en_pp;  // "been born" → "born"
    a->fr = {v.participle[0], v.participle[1], v.participle[2], v.participle[3]};
    a->ms_vowel = v.participle[0];
    a->before = false;
    a->rank = 0;
  }
  return a.get();
}

Example passive(Rng& rng) {
  std::vector<std::string> combos;
  const std::size_t k = uniform_below(rng, 100);
  if (k < 75) {
    static const std::vector<std::pair<const char*, std::vector<const char*>>> acts{
        {"write", {"letter", "book", "song", "poem", "story"}},
        {"build", {"house", "bridge", "church", "school", "hotel", "museum"}},
        {"paint", {"picture", "house", "wall", "door"}},
        {"sell", {"car", "house", "book", "bike", "ticket"}},
        {"make", {"cake", "bread", "dress", "shirt", "table"}},
        {"open", {"door", "window", "store", "letter", "museum"}},
        {"close", {"door", "window", "store", "library"}},
        {"find", {"key", "dog", "bag", "phone", "umbrella"}},
        {"break", {"window", "glass", "cup", "plate", "chair"}},
        {"clean", {"room", "kitchen", "car", "window"}},
        {"eat", {"cake", "apple", "bread", "sandwich"}},
        {"read", {"letter", "book", "newspaper", "story"}},
        {"send", {"letter", "card", "message", "gift"}},
        {"give", {"gift", "book", "ticket", "key"}},
        {"show", {"film", "picture", "photo"}},
        {"take", {"photo", "picture", "bag", "key"}},
        {"do", {"work"}},
        {"see", {"dog", "man", "car", "bird"}},
        {"hear", {"song", "voice", "music"}},
        {"know", {"writer", "artist", "song", "story"}}};
    const auto& act = acts[uniform_below(rng, acts.size())];
    const LexVerb& v = verb_row(act.first);
    const char* nn = act.second[uniform_below(rng, act.second.size())];
    if (!lexicon_tables().noun(nn)) nn = act.second.front();
    NP subject = np_of(&noun_row(nn), chance(rng, 30), Det::The);
    if (chance(rng, 30)) subject.det = Det::Poss, subject.poss = static_cast<int>(uniform_below(rng, 6)) % 6;
    if (subject.det == Det::Poss && subject.poss == 4) subject.poss = 1;
    subject.person = subject.plural ? 5 : 2;
    VG g;
    g.adj = participle_adj(v);
    const std::size_t t = pick_weighted(rng, {25, 45, 12, 10, 8});
    if (t == 0) g.tense = Tn::Present;
    else if (t == 1) g.tense = Tn::Past, g.fr_tense = static_cast<int>(Tn::Perfect);  // was written → a été écrit
    else if (t == 2) g.tense = Tn::Future;
    else if (t == 3) g.tense = Tn::Perfect;
    else g.modal = chance(rng, 50) ? Md::Can : Md::Must;
    if (std::string(act.first) == "know") g.tense = Tn::Present, g.fr_tense = -1, g.modal = Md::None;
    negate(rng, g, 10);
    if (std::string(act.first) == "know") {  // known for → connu pour
      g.tail_en = {"for"};
      NP what = np_of(&noun_row(chance(rng, 50) ? "song" : "book"), true, Det::Poss);
      what.poss = subject.plural ? 5 : feminine(subject) ? 3 : 2;
      append(g.tail_en, en_np(what, true));
      g.tail_fr = {"pour"};
      append(g.tail_fr, fr_np(what));
    } else if (chance(rng, 45)) {  // by someone → par quelqu'un
      NP by = chance(rng, 40) ? name_np(rng) : person_np(rng, 20);
      g.tail_en = {"by"};
      append(g.tail_en, en_np(by, true));
      g.tail_fr = {"par"};
      append(g.tail_fr, fr_np(by));
    } else if (chance(rng, 30)) {
      const TimePhrase& tp = time_for(rng, g.tense == Tn::Past ? kPast : g.tense == Tn::Future ? kFuture : kHabit);
      words_of(tp.en, g.tail_en);
      g.tail_fr = {tp.fr};
    }
    combos.push_back(key("pas", act.first, nn));
    return done(end_with(statement(subject, g), "."), "passive", combos);
  }
  // I was born in 1990 / in Paris / in France / in a small village → je suis né en 1990 …
  const NP subject = chance(rng, 50) ? pronoun_subject(rng) : chance(rng, 50) ? name_np(rng) : person_np(rng, 10);
  VG g;
  g.adj = participle_adj(verb_row("be born"));
  g.tense = Tn::Past;
  g.fr_tense = static_cast<int>(Tn::Present);  // was born → est né
  static const std::vector<std::array<const char*, 2>> where{
      {"in 1990", "en 1990"},   {"in 1985", "en 1985"}, {"in 2001", "en 2001"},   {"in 1970", "en 1970"},
      {"in Paris", "à Paris"},   {"in London", "à Londres"}, {"in Rome", "à Rome"}, {"in France", "en France"},
      {"in Canada", "au Canada"}, {"in Spain", "en Espagne"}, {"in the United States", "aux États-Unis"},
      {"in a small village", "dans un petit village"}, {"in winter", "en hiver"}, {"in summer", "en été"}};
  const auto& w = where[uniform_below(rng, where.size())];
  words_of(w[0], g.tail_en);
  g.tail_fr = {w[1]};
  g.contract_subject = false;
  combos.push_back(key("pas", "born", head(subject) + w[0]));
  if (chance(rng, 15)) {  // Where were you born? → Où est-ce que tu es né ?
    NP you = subject.det == Det::Pronoun ? subject : pronoun_np(1, Gender::Masculine);
    g.tail_en.clear();
    g.tail_fr.clear();
    return done(end_with(wh({"where"}, {"où"}, you, g), "?"), "passive", combos);
  }
  return done(end_with(statement(subject, g), "."), "passive", combos);
}

// ---- possession ----------------------------------------------------------------------------------------
// the man's car → la voiture de l'homme; Marie's brother → le frère de Marie; its → son / sa / ses (by the
// possessed noun); his own room → sa propre chambre; this book is mine → ce livre est à moi; a friend of
// mine → un de mes amis; the man whose car is red → l'homme dont la voiture est rouge.

Example possession(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  const std::size_t k = uniform_below(rng, 100);
  if (k < 40) {  // 's
    NP owner = chance(rng, 45) ? name_np(rng) : person_np(rng, 0);
    owner.plural = false, owner.person = 2;
    if (owner.det == Det::A || owner.det == Det::This) owner.det = Det::The;
    NP thing = np_of(chance(rng, 70) ? pick(rng, V.things) : pick(rng, chance(rng, 50) ? V.family : V.animals),
                     chance(rng, 20), Det::Genitive);
    thing.owner = shared(owner);
    thing.person = thing.plural ? 5 : 2;
    if (chance(rng, 20)) {
      const LexAdjective* a = pick(rng, V.thing_adj);
      (a->before ? thing.adj_before : thing.adj_after) = a;
    }
    Pair p;
    if (chance(rng, 50)) {  // the subject: "Marie's car is red."
      VG g = copula_vg(rng, thing, combos);
      g.tense = chance(rng, 65) ? Tn::Present : Tn::Past;
      negate(rng, g, 15);
      p = statement(thing, g);
    } else {  // the object: "I like Marie's car."
      const NP subject = subject_np(rng, false);
      VG g;
      static const std::vector<const char*> vs{"like", "see", "take", "find", "wash", "use", "open", "carry", "sell", "clean"};
      g.verb = &verb_row(vs[uniform_below(rng, vs.size())]);
      if (thing.noun->kind == NounKind::Person || thing.noun->kind == NounKind::Animal)
        g.verb = &verb_row(chance(rng, 50) ? "see" : "call");
      g.obj = shared(thing);
      g.tense = pick_tn(rng);
      if (g.verb->en == "like" && (g.tense == Tn::PresProg || g.tense == Tn::PastProg)) g.tense = Tn::Present;
      p = statement(subject, g);
    }
    combos.push_back(key("poss", head(owner), head(thing)));
    return done(end_with(p, "."), "possessive", combos);
  }
  if (k < 55) {  // its
    NP who = chance(rng, 60) ? animal_np(rng) : np_of(pick(rng, V.buildings), false, Det::The);
    if (who.det == Det::Poss || who.det == Det::A) who.det = Det::The;
    who.plural = false, who.person = 2;
    Pair p;
    if (who.noun->kind == NounKind::Animal) {  // The cat is playing with its ball.
      static const std::vector<std::array<const char*, 3>> acts{
          {"play", "with", "avec"}, {"sleep", "in", "dans"}, {"wait", "near", "près de"}};
      const auto& a = acts[uniform_below(rng, acts.size())];
      static const std::vector<const char*> things{"ball", "bed", "house", "food", "box"};
      const char* n = std::string(a[0]) == "play" ? "ball" : things[1 + uniform_below(rng, 2)];
      NP its = np_of(&noun_row(n), chance(rng, 20), Det::Poss);
      its.poss = 2;
      its.its = true;
      VG g;
      g.verb = &verb_row(a[0]);
      g.tense = chance(rng, 50) ? Tn::PresProg : chance(rng, 50) ? Tn::Present : Tn::Past;
      g.tail_en = {a[1]};
      append(g.tail_en, en_np(its, true));
      g.tail_fr = {a[2]};
      append(g.tail_fr, fr_np(its));
      p = statement(who, g);
      combos.push_back(key("its", who.noun->en, n));
    } else {  // The city is famous for its museums.
      static const std::vector<const char*> things{"museum", "church", "garden", "restaurant", "hotel", "park", "bridge", "street"};
      const char* n = things[uniform_below(rng, things.size())];
      NP its = np_of(&noun_row(n), true, Det::Poss);
      its.poss = 2;
      its.its = true;
      NP place = np_of(&noun_row(chance(rng, 60) ? "city" : "village"), false, Det::The);
      if (chance(rng, 40)) place.det = Det::Poss, place.poss = static_cast<int>(uniform_below(rng, 4));
      VG g;
      g.adj = &adj_row("famous");
      g.tense = Tn::Present;
      g.tail_en = {"for"};
      append(g.tail_en, en_np(its, true));
      g.tail_fr = {"pour"};
      append(g.tail_fr, fr_np(its));
      p = statement(place, g);
      combos.push_back(key("its", place.noun->en, n));
    }
    return done(end_with(p, "."), "possessive", combos);
  }
  if (k < 70) {  // his own room → sa propre chambre
    const NP subject = subject_np(rng, false);
    NP own = np_of(pick(rng, chance(rng, 60) ? V.rooms : V.things), false, Det::Poss);
    own.poss = poss_of(subject);
    own.adj_before = &adj_row("own");
    own.plural = false;
    VG g;
    g.verb = &have_row();
    if (chance(rng, 40)) g.verb = &verb_row("want");
    g.obj = shared(own);
    g.tense = chance(rng, 70) ? Tn::Present : Tn::Past;
    negate(rng, g, 15);
    combos.push_back(key("own", head(subject), own.noun->en));
    return done(end_with(statement(subject, g), "."), "possessive", combos);
  }
  if (k < 87) {  // this book is mine → ce livre est à moi
    NP thing = np_of(pick(rng, V.things), chance(rng, 25), Det::This);
    if (chance(rng, 40)) {
      thing.det = Det::The;
      const LexAdjective* a = pick(rng, V.thing_adj);
      (a->before ? thing.adj_before : thing.adj_after) = a;
    }
    static const std::array<const char*, 6> mine{"mine", "yours", "his", "ours", "yours", "theirs"};
    NP who = random_pronoun(rng);
    std::string en = mine[who.person];
    if (who.person == 2 && feminine(who)) en = "hers";
    VG g;
    g.comp_en = {en};
    g.comp_fr = {"à", disjunctive(who)};
    g.tense = chance(rng, 80) ? Tn::Present : Tn::Past;
    negate(rng, g, 20);
    combos.push_back(key("mine", en, thing.noun->en));
    if (chance(rng, 25)) return done(end_with(yes_no(thing, g), "?"), "possessive", combos);
    return done(end_with(statement(thing, g), "."), "possessive", combos);
  }
  if (k < 94) {  // A friend of mine lives in Paris. → Un de mes amis vit à Paris.
    static const std::array<const char*, 6> mine{"mine", "yours", "his", "ours", "yours", "theirs"};
    static const std::array<const char*, 6> mes{"mes", "tes", "ses", "nos", "vos", "leurs"};
    const int per = static_cast<int>(uniform_below(rng, 6)) == 4 ? 1 : static_cast<int>(uniform_below(rng, 6)) % 4;
    NP friend_of = word_np("friend", "amis", Gender::Masculine, false, Det::Quant, "a", "");
    friend_of.fr_det = std::string("un de ") + mes[per];
    friend_of.en_word = std::string("friend of ") + mine[per];
    VG g = simple_vg(rng, friend_of, combos);
    g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
    if (!g.verb && g.tense == Tn::Past) g.tense = Tn::Present;
    fix_some(g);
    combos.push_back(key("friend_of", mine[per], g.verb ? g.verb->en : g.adj->en));
    return done(end_with(statement(friend_of, g), "."), "possessive", combos);
  }
  // the man whose car is red → l'homme dont la voiture est rouge
  NP owner = np_of(pick(rng, chance(rng, 50) ? V.people : V.family), false, Det::The);
  NP thing = np_of(pick(rng, chance(rng, 70) ? V.things : V.animals), chance(rng, 20), Det::The);
  VG inner = copula_vg(rng, thing, combos);
  inner.tense = Tn::Present;
  const NP subject = subject_np(rng, false);
  VG g;
  g.verb = &verb_row(chance(rng, 50) ? "know" : "see");
  g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
  if (g.verb->en == "know") g.tense = Tn::Present;
  Pair p = statement(subject, g);
  append(p.en, en_np(owner, true));
  append(p.fr, fr_np(owner));
  Pair r = statement(thing, inner);
  r.en.erase(r.en.begin());  // "the car is red" → "car is red" after whose
  p.en.push_back("whose");
  append(p.en, r.en);
  p.fr.push_back("dont");
  append(p.fr, r.fr);
  combos.push_back(key("whose", owner.noun->en, thing.noun->en));
  return done(end_with(p, "."), "possessive", combos);
}

// ---- the present perfect -------------------------------------------------------------------------------
// have you ever been to Paris → est-ce que tu es déjà allé à Paris; I have never seen the sea → je n'ai
// jamais vu la mer; she has lived here for ten years → elle vit ici depuis dix ans; he has been sick since
// Monday → il est malade depuis lundi; how long have you lived here → depuis combien de temps est-ce que tu
// vis ici; they have just arrived → ils viennent d'arriver.

Example perfect(Rng& rng) {
  std::vector<std::string> combos;
  NP subject = subject_np(rng);
  const std::size_t k = uniform_below(rng, 100);
  static const std::vector<std::array<const char*, 2>> places{
      {"Paris", "à Paris"},       {"London", "à Londres"},  {"Rome", "à Rome"},       {"France", "en France"},
      {"Spain", "en Espagne"},    {"Italy", "en Italie"},   {"Canada", "au Canada"},  {"Japan", "au Japon"},
      {"the United States", "aux États-Unis"}, {"the beach", "à la plage"}, {"the museum", "au musée"},
      {"the zoo", "au zoo"},      {"the mountains", "à la montagne"}};
  if (k < 30) {  // been to → aller
    const auto& pl = places[uniform_below(rng, places.size())];
    VG g;
    static LexVerb been = [] {
      LexVerb v = verb_row("go");
      v.en_pp = "been";
      return v;
    }();
    g.verb = &been;
    g.tense = Tn::Perfect;
    g.tail_en = {"to"};
    words_of(pl[0], g.tail_en);
    g.tail_fr = {pl[1]};
    const std::size_t w = uniform_below(rng, 3);
    combos.push_back(key("perf", "been", pl[0]));
    if (w == 0) {  // Have you ever been to Paris? → Est-ce que tu es déjà allé à Paris ?
      g.freq_en = "ever";
      g.freq_fr = "déjà";
      return done(end_with(yes_no(subject, g), "?"), "perfect", combos);
    }
    if (w == 1) g.neg = Ng::Never;
    else g.freq_en = chance(rng, 50) ? "already" : "", g.freq_fr = g.freq_en.empty() ? "" : "déjà";
    g.contract_subject = chance(rng, 40);
    return done(end_with(statement(subject, g), "."), "perfect", combos);
  }
  if (k < 50) {  // for / since → depuis (présent)
    static const std::vector<std::array<const char*, 2>> since{{"since Monday", "depuis lundi"},
                                                               {"since yesterday", "depuis hier"},
                                                               {"since 2010", "depuis 2010"},
                                                               {"since last year", "depuis la année dernière"},
                                                               {"for ten years", "depuis dix ans"},
                                                               {"for two weeks", "depuis deux semaines"},
                                                               {"for an hour", "depuis une heure"},
                                                               {"for three days", "depuis trois jours"},
                                                               {"for a long time", "depuis longtemps"}};
    const auto& d = since[uniform_below(rng, since.size())];
    VG g;
    if (chance(rng, 40)) {
      g = copula_vg(rng, subject, combos);
    } else {
      static const std::vector<std::array<const char*, 3>> states{{"live", "here", "ici"},   {"work", "here", "ici"},
                                                                  {"live", "in Paris", "à Paris"},
                                                                  {"wait", "", ""}, {"study", "French", "le français"},
                                                                  {"know", "", ""}};
      const auto& st = states[uniform_below(rng, states.size())];
      g.verb = &verb_row(st[0]);
      if (std::string(st[0]) == "know") g.obj = shared(person_object(rng, subject, 40));
      if (*st[1]) words_of(st[1], g.comp_en), g.comp_fr = {st[2]};
      if (std::string(st[0]) == "wait" && chance(rng, 50)) g.particle_en = "for", g.obj = shared(person_object(rng, subject, 30));
    }
    const bool how_long = chance(rng, 20);
    g.tense = Tn::Perfect;
    g.fr_tense = static_cast<int>(Tn::Present);  // has lived … for → vit … depuis
    combos.push_back(key("perf", "since", (g.verb ? g.verb->en : g.adj->en) + std::string("_") + d[0]));
    if (how_long) {  // How long have you lived here? → Depuis combien de temps est-ce que tu vis ici ?
      return done(end_with(wh({"how", "long"}, {"depuis", "combien", "de", "temps"}, subject, g), "?"), "perfect", combos);
    }
    words_of(d[0], g.tail_en);
    g.tail_fr = {d[1]};
    g.contract_subject = chance(rng, 40);
    return done(end_with(statement(subject, g), "."), "perfect", combos);
  }
  if (k < 62) {  // have just → venir de
    VG g = chance(rng, 55) ? transitive_vg(rng, combos) : intransitive_vg(rng, combos, subject);
    g.tense = Tn::JustDid;
    g.contract_subject = chance(rng, 40);
    fix_some(g);
    combos.push_back(key("perf", "just", g.verb->en));
    return done(end_with(statement(subject, g), "."), "perfect", combos);
  }
  // the present perfect in general: has eaten, hasn't finished, has never seen
  VG g = chance(rng, 60) ? transitive_vg(rng, combos) : intransitive_vg(rng, combos, subject);
  g.tense = Tn::Perfect;
  const std::size_t n = uniform_below(rng, 100);
  if (n < 25) g.neg = Ng::Not, g.contracted = chance(rng, 70);
  else if (n < 45) g.neg = Ng::Never;
  else if (n < 60) g.freq_en = "already", g.freq_fr = "déjà";
  else if (n < 70) g.freq_en = "recently", g.freq_fr = "récemment";
  fix_some(g);
  g.contract_subject = chance(rng, 40);
  combos.push_back(key("perf", n < 25 ? "not" : n < 45 ? "never" : "yes", g.verb->en));
  if (chance(rng, 15) && g.neg == Ng::None && g.freq_en.empty()) return done(end_with(yes_no(subject, g), "?"), "perfect", combos);
  return done(end_with(statement(subject, g), "."), "perfect", combos);
}

// ---- indefinite pronouns, -self, other, same, all -------------------------------------------------------

Example indefinite(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  const std::size_t k = uniform_below(rng, 100);
  NP subject = subject_np(rng, false);
  if (k < 22) {  // something / nothing / anything / everything as an object
    static const std::vector<const char*> vs{"see", "want", "buy", "eat", "say", "hear", "find", "know", "understand", "do"};
    VG g;
    g.verb = &verb_row(vs[uniform_below(rng, vs.size())]);
    if (g.verb->en == "know") g.verb = &verb_row("know", "fact");
    g.tense = chance(rng, 45) ? Tn::Present : chance(rng, 60) ? Tn::Past : Tn::Future;
    if (g.verb->en == "want" && g.tense == Tn::Past) g.tense = Tn::Present;
    const std::size_t w = uniform_below(rng, 5);
    std::string what;
    if (w == 0) {  // something (new) → quelque chose (de nouveau)
      NP sth = word_np("something", "quelque chose", Gender::Masculine, false);
      if (chance(rng, 35)) {
        static const std::vector<std::array<const char*, 2>> adjs{{"new", "de nouveau"}, {"strange", "de bizarre"},
                                                                  {"interesting", "de intéressant"}, {"else", "de autre"},
                                                                  {"good", "de bon"}, {"special", "de spécial"}};
        const auto& a = adjs[uniform_below(rng, adjs.size())];
        sth.en_word += std::string(" ") + a[0];
        sth.fr_word += std::string(" ") + a[1];
        if (std::string(a[0]) == "else") sth.fr_word = "autre chose";
      }
      g.obj = shared(sth);
      what = "something";
    } else if (w == 1 || w == 2) {  // nothing / not anything → rien (ne … rien)
      g.neg = Ng::Nothing;
      g.any_form = w == 2;
      g.contracted = chance(rng, 75);
      what = "nothing";
      if (g.verb->en == "do" && g.tense == Tn::Present) g.tense = Tn::Past;
    } else if (w == 3) {  // everything → tout (present and future only: j'ai tout vu moves it)
      if (g.tense == Tn::Past) g.tense = Tn::Present;
      g.obj = shared(word_np("everything", "tout", Gender::Masculine, false));
      what = "everything";
    } else {  // something to eat → quelque chose à manger
      static const std::vector<const char*> acts{"eat", "drink", "read", "do"};
      const char* a = acts[uniform_below(rng, acts.size())];
      g.verb = &verb_row(chance(rng, 50) ? "want" : "buy");
      if (g.verb->en == "want") g.tense = Tn::Present;
      NP sth = word_np("something", "quelque chose", Gender::Masculine, false);
      sth.en_word += std::string(" to ") + a;
      sth.fr_word += std::string(" à ") + verb_row(a).fr;
      g.obj = shared(sth);
      what = std::string("something_to_") + a;
    }
    g.contract_subject = chance(rng, 35);
    combos.push_back(key("indf", what, g.verb->en));
    if (w == 0 && chance(rng, 20)) {  // Do you want anything else? → Est-ce que tu veux autre chose ?
      g.obj->en_word = "anything";
      if (g.obj->fr_word == "autre chose") g.obj->en_word = "anything else";
      return done(end_with(yes_no(subject, g), "?"), "indefinite", combos);
    }
    return done(end_with(statement(subject, g), "."), "indefinite", combos);
  }
  if (k < 42) {  // someone / nobody / everyone as a subject or an object
    const std::size_t w = uniform_below(rng, 6);
    VG g;
    std::string what;
    if (w <= 2) {  // a subject
      NP who;
      if (w == 0) who = word_np(chance(rng, 50) ? "someone" : "somebody", "quelqu'un", Gender::Masculine, false), what = "someone";
      else if (w == 1) {
        who = word_np(chance(rng, 50) ? "nobody" : "no one", "personne", Gender::Masculine, false);
        what = "nobody";
      } else who = word_np(chance(rng, 50) ? "everyone" : "everybody", "tout le monde", Gender::Masculine, false), what = "everyone";
      g = simple_vg(rng, who, combos);
      if (!g.verb && g.adj->en == "alone") g.adj = &adj_row("happy");
      g.tense = chance(rng, 50) ? Tn::Present : Tn::Past;
      if (!g.verb && g.tense == Tn::Past) g.tense = Tn::Present;
      if (w == 1) {  // personne ne …: English without not
        g.neg = Ng::Not;
        g.en_affirmative = true;
        g.neg_fr = " ";  // no "pas": personne … ne
      }
      fix_some(g);
      if (w == 1 && g.obj && g.obj->det == Det::Partitive) g.obj->en_det = "";
      combos.push_back(key("indf", what, g.verb ? g.verb->en : g.adj->en));
      if (w == 0 && chance(rng, 25) && g.verb && g.tense == Tn::Past) {  // Did anyone call? → Est-ce que quelqu'un a appelé ?
        who.en_word = "anyone";
        return done(end_with(yes_no(who, g), "?"), "indefinite", combos);
      }
      return done(end_with(statement(who, g), "."), "indefinite", combos);
    }
    static const std::vector<const char*> vs{"see", "meet", "know", "call", "help", "hear", "invite", "wait"};
    g.verb = &verb_row(vs[uniform_below(rng, vs.size())]);
    if (g.verb->en == "wait") g.particle_en = "for";
    g.tense = chance(rng, 45) ? Tn::Present : chance(rng, 70) ? Tn::Past : Tn::Future;
    if (w == 3) g.obj = shared(word_np(chance(rng, 50) ? "someone" : "somebody", "quelqu'un", Gender::Masculine, false)), what = "someone";
    else if (w == 4) {
      g.neg = Ng::Nobody;
      g.any_form = chance(rng, 55);
      g.no_one = chance(rng, 50);
      g.contracted = chance(rng, 75);
      what = "nobody";
    } else {
      if (g.tense == Tn::Past) g.tense = Tn::Present;
      g.obj = shared(word_np(chance(rng, 50) ? "everyone" : "everybody", "tout le monde", Gender::Masculine, false));
      what = "everyone";
    }
    combos.push_back(key("indf", what, g.verb->en));
    return done(end_with(statement(subject, g), "."), "indefinite", combos);
  }
  if (k < 60) {  // -self: He made the cake himself. → Il a fait le gâteau lui-même.
    static const std::array<const char*, 6> self_en{"myself", "yourself", "himself", "ourselves", "yourselves", "themselves"};
    static const std::array<const char*, 6> self_fr{"moi-même", "toi-même", "lui-même", "nous-mêmes", "vous-mêmes", "eux-mêmes"};
    if (chance(rng, 25)) {  // The house itself is old. → La maison elle-même est vieille.
      NP thing = np_of(pick(rng, chance(rng, 50) ? V.things : V.buildings), chance(rng, 20), Det::The);
      VG g = copula_vg(rng, thing, combos);
      g.tense = chance(rng, 70) ? Tn::Present : Tn::Past;
      Pair p;
      p.en = en_np(thing);
      p.en.push_back(thing.plural ? "themselves" : "itself");
      p.fr = fr_np(thing);
      p.fr.push_back(thing.plural ? (feminine(thing) ? "elles-mêmes" : "eux-mêmes") : (feminine(thing) ? "elle-même" : "lui-même"));
      const Pair r = statement(it_np(thing), g);
      append(p.en, Words(r.en.begin() + 1, r.en.end()));
      append(p.fr, Words(r.fr.begin() + 1, r.fr.end()));
      combos.push_back(key("self", "itself", thing.noun->en));
      return done(end_with(p, "."), "indefinite", combos);
    }
    subject = pronoun_subject(rng);
    VG g;
    if (chance(rng, 35)) {  // I did it myself → je l'ai fait moi-même (le: what was done)
      g.verb = &verb_row("do");
      g.obj = shared(it_np(np_of(&noun_row("work"), false, Det::The)));
      g.obj->gender = Gender::Masculine;
    } else {
      g = transitive_vg(rng, combos);
    }
    g.tense = pick_weighted(rng, {30, 50, 20}) == 0 ? Tn::Present : chance(rng, 70) ? Tn::Past : Tn::Future;
    if (chance(rng, 15)) g.modal = Md::Can, g.tense = Tn::Present;
    std::string self = self_fr[subject.person];
    std::string en = self_en[subject.person];
    if (subject.person == 2 && feminine(subject)) self = "elle-même", en = "herself";
    if (subject.person == 5 && feminine(subject)) self = "elles-mêmes";
    if (subject.person == 1) en = "yourself";
    g.tail_en = {en};
    g.tail_fr = {self};
    fix_some(g);
    combos.push_back(key("self", en, g.verb->en));
    return done(end_with(statement(subject, g), "."), "indefinite", combos);
  }
  if (k < 78) {  // other, others, another, the same
    const std::size_t w = uniform_below(rng, 4);
    if (w == 0) {  // Some students are happy, others are sad. → Certains étudiants sont contents, d'autres sont tristes.
      const LexNoun* n = pick(rng, V.people);
      NP some = np_of(n, true, Det::Quant);
      some.en_det = "some";
      const LexAdjective& cert = adj_row("certain");
      some.fr_det = cert.fr[form_index(n->gender, true)];
      VG a = copula_vg(rng, some, combos), b = copula_vg(rng, some, combos);
      if (a.adj == b.adj) b.adj = &adj_row(a.adj->en == "tired" ? "happy" : "tired");
      a.tense = b.tense = chance(rng, 70) ? Tn::Present : Tn::Past;
      NP others = word_np("others", "autres", n->gender, true, Det::Quant, "", "de");
      Pair p = statement(some, a);
      const Pair q = statement(others, b);
      p.en.push_back(",");
      p.fr.push_back(",");
      append(p.en, q.en);
      append(p.fr, q.fr);
      combos.push_back(key("other", "others", n->en));
      return done(end_with(p, "."), "indefinite", combos);
    }
    NP thing = np_of(pick(rng, V.things), false, Det::Quant);
    const bool f = feminine(thing);
    if (w == 1) thing.en_det = "another", thing.fr_det = f ? "une autre" : "un autre";
    else if (w == 2) thing.en_det = "the other", thing.fr_det = "le autre", thing.plural = chance(rng, 30);
    else thing.en_det = "the same", thing.fr_det = f ? "la même" : "le même", thing.plural = chance(rng, 25);
    if (thing.plural) {
      if (w == 2) thing.fr_det = "les autres";
      if (w == 3) thing.fr_det = "les mêmes";
    }
    thing.person = thing.plural ? 5 : 2;
    VG g;
    static const std::vector<const char*> vs{"want", "have", "buy", "take", "use", "need", "choose"};
    const char* v = vs[uniform_below(rng, vs.size())];
    g.verb = std::string(v) == "have" ? &have_row() : std::string(v) == "need" ? &verb_row("want") : &verb_row(v);
    g.obj = shared(thing);
    g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
    if (g.verb->en == "want") g.tense = Tn::Present;
    combos.push_back(key("other", thing.en_det, thing.noun->en));
    return done(end_with(statement(subject, g), "."), "indefinite", combos);
  }
  if (k < 88) {  // all my friends → tous mes amis; the whole day → toute la journée; everything is ready → tout est prêt
    const std::size_t w = uniform_below(rng, 3);
    if (w == 0) {
      NP all = np_of(pick(rng, chance(rng, 50) ? V.people : V.family), true, Det::Quant);
      static const std::array<const char*, 6> mes{"mes", "tes", "ses", "nos", "vos", "leurs"};
      const int per = static_cast<int>(uniform_below(rng, 4));
      all.en_det = std::string("all ") + kPossEn[per];
      all.fr_det = std::string(feminine(all) ? "toutes " : "tous ") + mes[per];
      VG g = simple_vg(rng, all, combos);
      g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
      if (!g.verb && g.tense == Tn::Past) g.tense = Tn::Present;
      fix_some(g);
      combos.push_back(key("all", all.noun->en, g.verb ? g.verb->en : g.adj->en));
      return done(end_with(statement(all, g), "."), "indefinite", combos);
    }
    if (w == 1) {
      static const std::vector<std::array<const char*, 3>> whole{
          {"the whole day", "toute la journée", ""}, {"the whole night", "toute la nuit", ""},
          {"the whole week", "toute la semaine", ""}, {"all day", "toute la journée", ""},
          {"all night", "toute la nuit", ""},        {"the entire day", "toute la journée", ""},
          {"throughout the day", "toute la journée", ""}, {"throughout the year", "toute la année", ""}};
      const auto& wh = whole[uniform_below(rng, whole.size())];
      VG g = intransitive_vg(rng, combos, subject);
      g.tense = chance(rng, 60) ? Tn::Past : Tn::Present;
      words_of(wh[0], g.tail_en);
      g.tail_fr = {wh[1]};
      combos.push_back(key("all", wh[0], g.verb->en));
      return done(end_with(statement(subject, g), "."), "indefinite", combos);
    }
    NP fam = np_of(&noun_row(chance(rng, 50) ? "family" : "class"), false, Det::Quant);
    fam.en_det = chance(rng, 50) ? "the whole" : "the entire";
    fam.fr_det = "toute la";
    VG g = chance(rng, 50) ? copula_vg(rng, fam, combos) : intransitive_vg(rng, combos, fam);
    // cold / hot of people is avoir froid / chaud: not "toute la famille est froide"
    if (g.adj && (g.adj->en == "alone" || g.adj->en == "different" || g.adj->en == "cold" || g.adj->en == "hot"))
      g.adj = &adj_row("happy");
    g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
    if (!g.verb && g.tense == Tn::Past) g.tense = Tn::Present;
    combos.push_back(key("all", fam.en_det + fam.noun->en, g.verb ? g.verb->en : g.adj->en));
    return done(end_with(statement(fam, g), "."), "indefinite", combos);
  }
  // whatever → ce que; everything is ready → tout est prêt
  if (chance(rng, 50)) {
    static const std::vector<const char*> vs{"take", "eat", "buy", "read", "choose", "do"};
    const char* v = vs[uniform_below(rng, vs.size())];
    Pair p;
    p.en = {verb_row(v).en, "whatever", "you", "want"};
    p.fr = {verb_row(v).imperative[0], "ce", "que", "tu", "veux"};
    if (chance(rng, 40)) {  // You can eat whatever you like. → Tu peux manger ce que tu veux.
      p.en = {"you", "can", verb_row(v).en, "whatever", "you", chance(rng, 50) ? "want" : "like"};
      p.fr = {"tu", "peux", verb_row(v).fr, "ce", "que", "tu", "veux"};
    }
    combos.push_back(key("indf", "whatever", v));
    return done(end_with(p, "."), "indefinite", combos);
  }
  NP all = word_np("everything", "tout", Gender::Masculine, false);
  VG g;
  static const std::vector<const char*> adjs{"ready", "clean", "new", "different", "easy", "expensive", "quiet", "possible"};
  g.adj = &adj_row(adjs[uniform_below(rng, adjs.size())]);
  g.tense = chance(rng, 65) ? Tn::Present : Tn::Past;
  negate(rng, g, 10);
  combos.push_back(key("indf", "everything", g.adj->en));
  return done(end_with(statement(all, g), "."), "indefinite", combos);
}

// ---- countries, cities, the points of the compass ---------------------------------------------------------
// in France → en France, in Canada → au Canada, in the United States → aux États-Unis (plural in French:
// les États-Unis sont …); to Paris → à Paris; from Spain → d'Espagne; in the south of France → dans le sud
// de la France; southern France → le sud de la France; she speaks French → elle parle français.

struct Country {
  const char *en, *fr;  // "France" / "France"
  const char *in, *from, *the;  // en France, de France, la France
  bool plural;
};
const std::vector<Country> kCountries{
    {"France", "France", "en France", "de France", "la France", false},
    {"Spain", "Espagne", "en Espagne", "de Espagne", "la Espagne", false},
    {"Italy", "Italie", "en Italie", "de Italie", "la Italie", false},
    {"Germany", "Allemagne", "en Allemagne", "de Allemagne", "la Allemagne", false},
    {"England", "Angleterre", "en Angleterre", "de Angleterre", "la Angleterre", false},
    {"China", "Chine", "en Chine", "de Chine", "la Chine", false},
    {"Canada", "Canada", "au Canada", "du Canada", "le Canada", false},
    {"Japan", "Japon", "au Japon", "du Japon", "le Japon", false},
    {"Mexico", "Mexique", "au Mexique", "du Mexique", "le Mexique", false},
    {"Portugal", "Portugal", "au Portugal", "du Portugal", "le Portugal", false},
    {"the United States", "États-Unis", "aux États-Unis", "des États-Unis", "les États-Unis", true},
    {"the Soviet Union", "Union soviétique", "en Union soviétique", "de Union soviétique", "la Union soviétique", false}};
const std::vector<std::array<const char*, 2>> kCities{{"Paris", "Paris"}, {"London", "Londres"}, {"Rome", "Rome"},
                                                      {"Berlin", "Berlin"}, {"Madrid", "Madrid"}, {"Tokyo", "Tokyo"},
                                                      {"Montreal", "Montréal"}, {"Lisbon", "Lisbonne"}};
const std::vector<std::array<const char*, 2>> kLanguages{{"French", "français"},   {"English", "anglais"},
                                                         {"Spanish", "espagnol"},  {"German", "allemand"},
                                                         {"Italian", "italien"},   {"Japanese", "japonais"},
                                                         {"Chinese", "chinois"},   {"Portuguese", "portugais"}};

Example geography(Rng& rng) {
  std::vector<std::string> combos;
  const Country& c = kCountries[uniform_below(rng, kCountries.size())];
  const std::size_t k = uniform_below(rng, 100);
  NP subject = subject_np(rng, false);
  Pair p;
  if (k < 30) {  // lives / works / studies / lived in …, went to …, comes from …
    static const std::vector<const char*> vs{"live", "work", "study", "travel", "stay", "go", "come"};
    VG g;
    g.verb = &verb_row(vs[uniform_below(rng, vs.size())]);
    g.tense = pick_weighted(rng, {45, 35, 20}) == 0 ? Tn::Present : chance(rng, 70) ? Tn::Past : Tn::Future;
    const bool city = chance(rng, 35);
    const auto& town = kCities[uniform_below(rng, kCities.size())];
    if (g.verb->en == "come") {
      g.comp_en = {"from"};
      words_of(city ? town[0] : c.en, g.comp_en);
      g.comp_fr = {city ? std::string("de ") + town[1] : std::string(c.from)};
      if (g.tense == Tn::Past) g.tense = Tn::Present;
    } else {
      g.comp_en = {g.verb->en == "go" || g.verb->en == "travel" ? "to" : "in"};
      words_of(city ? town[0] : c.en, g.comp_en);
      g.comp_fr = {city ? std::string("à ") + town[1] : std::string(c.in)};
    }
    if (g.verb->en == "live" && g.tense == Tn::Past) g.fr_tense = static_cast<int>(Tn::PastProg);  // vivait
    negate(rng, g, 10);
    combos.push_back(key("geo", g.verb->en, city ? town[0] : c.en));
    p = statement(subject, g);
  } else if (k < 50) {  // Paris is in the north of France; he lives in southern France
    static const std::vector<std::array<const char*, 3>> points{{"north", "nord", "northern"}, {"south", "sud", "southern"},
                                                                {"east", "est", "eastern"},   {"west", "ouest", "western"}};
    const auto& pt = points[uniform_below(rng, points.size())];
    const Country& land = c.plural ? kCountries[0] : c;
    if (chance(rng, 50)) {  // true places only: Paris is in the north of France
      static const std::vector<std::array<const char*, 4>> towns{
          {"Paris", "Paris", "0", "north"},      {"Marseille", "Marseille", "0", "south"}, {"Naples", "Naples", "2", "south"},
          {"Milan", "Milan", "2", "north"},      {"Seville", "Séville", "1", "south"},     {"London", "Londres", "4", "south"},
          {"Berlin", "Berlin", "3", "east"},     {"Tokyo", "Tokyo", "7", "east"},          {"Montreal", "Montréal", "6", "east"},
          {"Lisbon", "Lisbonne", "9", "west"},   {"Munich", "Munich", "3", "south"},       {"Brest", "Brest", "0", "west"}};
      const auto& town = towns[uniform_below(rng, towns.size())];
      const Country& in = kCountries[static_cast<std::size_t>(town[2][0] - '0')];
      std::size_t pi = 0;
      while (std::string(points[pi][0]) != town[3]) ++pi;
      p.en = {town[0], "is", "in", "the", town[3], "of"};
      words_of(in.en, p.en);
      p.fr = {town[1], "est", "dans", "le", points[pi][1], "de", in.the};
      combos.push_back(train_key(key("geo", town[0], town[3])));
      return done(end_with(p, "."), "geo", combos);
    } else {
      VG g;
      g.verb = &verb_row(chance(rng, 50) ? "live" : "work");
      g.tense = chance(rng, 70) ? Tn::Present : Tn::Future;
      if (chance(rng, 50)) {
        g.comp_en = {"in", pt[2]};
        words_of(land.en, g.comp_en);
      } else {
        g.comp_en = {"in", "the", pt[0], "of"};
        words_of(land.en, g.comp_en);
      }
      g.comp_fr = {"dans", "le", pt[1], "de", land.the};
      p = statement(subject, g);
    }
    combos.push_back(key("geo", pt[0], land.en));
  } else if (k < 65) {  // France is a beautiful country. The United States is a big country.
    static const std::vector<const char*> adjs{"beautiful", "big", "rich", "old", "modern", "large", "famous",
                                               "interesting", "democratic"};
    const LexAdjective& a = adj_row(adjs[uniform_below(rng, adjs.size())]);
    NP country = noun_np(&noun_row("country"), false);
    country.det = Det::A;
    (a.before ? country.adj_before : country.adj_after) = &a;
    p.en = {};
    words_of(c.en, p.en);
    append(p.en, {"is"});
    append(p.en, en_np(country, true));
    p.fr = {c.the, c.plural ? "sont" : "est"};
    append(p.fr, fr_np(country));
    combos.push_back(key("geo", "country", std::string(c.en) + a.en));
  } else if (k < 80) {  // she speaks French
    const auto& l = kLanguages[uniform_below(rng, kLanguages.size())];
    VG g;
    g.verb = &verb_row(chance(rng, 70) ? "speak" : chance(rng, 50) ? "learn" : "understand");
    g.tense = pick_weighted(rng, {60, 25, 15}) == 0 ? Tn::Present : chance(rng, 50) ? Tn::Past : Tn::Future;
    g.comp_en = {l[0]};
    g.comp_fr = {g.verb->en == "speak" ? l[1] : std::string("le ") + l[1]};  // parler français; apprendre le français
    if (chance(rng, 25)) g.modal = Md::Can;
    negate(rng, g, 15);
    if (chance(rng, 20)) {
      const Phrase& m = chance(rng, 50) ? kManners[3] : kManners[0];  // well / slowly
      g.tail_en = {m.en};
      g.tail_fr = {m.fr};
    }
    combos.push_back(key("geo", "speak", l[0] + head(subject)));
    p = statement(subject, g);
  } else if (k < 90) {  // The capital of France is Paris. → La capitale de la France est Paris.
    static const std::vector<std::array<const char*, 3>> caps{{"France", "Paris", "la France"},   {"Italy", "Rome", "la Italie"},
                                                              {"England", "London", "la Angleterre"}, {"Spain", "Madrid", "la Espagne"},
                                                              {"Germany", "Berlin", "la Allemagne"}, {"Japan", "Tokyo", "le Japon"},
                                                              {"Portugal", "Lisbon", "le Portugal"}};
    const auto& cp = caps[uniform_below(rng, caps.size())];
    std::string fr_city = cp[1];
    for (const auto& t : kCities)
      if (fr_city == t[0]) fr_city = t[1];
    p.en = {"the", "capital", "of", cp[0], "is", cp[1]};
    p.fr = {"la", "capitale", "de", cp[2], "est", fr_city};
    combos.push_back(train_key(key("geo", "capital", cp[0])));
  } else {  // Western Europe, the people of …
    const bool west = chance(rng, 50);
    VG g;
    g.verb = &verb_row(chance(rng, 50) ? "visit" : "travel");
    g.tense = chance(rng, 50) ? Tn::Past : Tn::Future;
    if (g.verb->en == "visit") {
      g.comp_en = {west ? "Western" : "Eastern", "Europe"};
      g.comp_fr = {west ? "la Europe de le Ouest" : "la Europe de le Est"};
    } else {
      g.comp_en = {"in", west ? "Western" : "Eastern", "Europe"};
      g.comp_fr = {"en", west ? "Europe de le Ouest" : "Europe de le Est"};
    }
    combos.push_back(key("geo", "europe", head(subject) + (west ? "w" : "e")));
    p = statement(subject, g);
  }
  return done(end_with(p, "."), "geo", combos);
}

// ---- linking words and where things are --------------------------------------------------------------------
// however → cependant; therefore → donc; in fact → en fait; maybe → peut-être que; even → même; yes, no, oh;
// above → au-dessus de; below → en dessous de; between … and → entre … et; among → parmi; along → le long
// de; through the window → par la fenêtre; during → pendant; without → sans; except → sauf; despite →
// malgré; instead of → au lieu de; according to → selon; because of → à cause de; and phrasal verbs:
// wake up, get up, come back, go out, pick up, take off, throw away, turn off, write down, find out.

Example linking(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  const std::size_t k = uniform_below(rng, 100);
  NP subject = subject_np(rng);
  if (k < 30) {  // a linking word first
    static const std::vector<std::array<const char*, 2>> openers{
        {"however", "cependant"},    {"therefore", "par conséquent"}, {"thus", "ainsi"},
        {"in fact", "en fait"},      {"actually", "en fait"},         {"of course", "bien sûr"},
        {"in general", "en général"}, {"in particular", "en particulier"}, {"fortunately", "heureusement"},
        {"unfortunately", "malheureusement"}, {"suddenly", "soudain"}, {"finally", "finalement"},
        {"then", "ensuite"},         {"first", "de abord"},           {"later", "plus tard"},
        {"meanwhile", "pendant ce temps"}, {"indeed", "en effet"},     {"moreover", "de plus"},
        {"in addition", "en plus"},  {"besides", "de ailleurs"},      {"otherwise", "sinon"},
        {"anyway", "de toute façon"}, {"nevertheless", "néanmoins"},   {"at first", "au début"},
        {"at last", "enfin"},        {"in the end", "à la fin"},      {"for example", "par exemple"},
        {"yes", "oui"},              {"no", "non"},                   {"oh", "oh"},
        {"well", "eh bien"},         {"yet", "pourtant"},             {"still", "pourtant"},
        {"perhaps", "peut-être que"}, {"maybe", "peut-être que"},      {"probably", "probablement"},
        {"in any case", "en tout cas"}, {"on the other hand", "en revanche"}};
    const auto& o = openers[uniform_below(rng, openers.size())];
    VG g = simple_vg(rng, subject, combos);
    g.tense = pick_tn(rng);
    if (!g.verb && (g.tense == Tn::PresProg || g.tense == Tn::PastProg || g.tense == Tn::JustDid)) g.tense = Tn::Present;
    if (stative(g) && (g.tense == Tn::PresProg || g.tense == Tn::PastProg)) g.tense = Tn::Present;
    negate(rng, g, 20);
    fix_some(g);
    g.contract_subject = chance(rng, 35);
    Pair p = statement(subject, g);
    const std::string fr = o[1];
    Words en;
    words_of(o[0], en);
    if (fr == "peut-être que") {  // Maybe he is tired. → Peut-être qu'il est fatigué.
      p.en.insert(p.en.begin(), en.begin(), en.end());
      p.fr.insert(p.fr.begin(), {"peut-être", "que"});
    } else if (fr == "probablement") {  // Probably he … → Il … probablement: after the French verb instead
      g.freq_en = "probably";
      g.freq_fr = "probablement";
      if (g.neg != Ng::None) g.neg = Ng::None, fix_some(g);
      p = statement(subject, g);
    } else {
      en.push_back(",");
      p.en.insert(p.en.begin(), en.begin(), en.end());
      p.fr.insert(p.fr.begin(), {fr, ","});
    }
    combos.push_back(key("link", o[0], g.verb ? g.verb->en : g.adj->en));
    return done(end_with(p, "."), "linking", combos);
  }
  if (k < 40) {  // even → même
    NP who = chance(rng, 50) ? np_of(pick(rng, V.people), true, Det::The) : person_np(rng, 30);
    VG g = simple_vg(rng, who, combos);
    g.tense = chance(rng, 50) ? Tn::Past : Tn::Present;
    if (!g.verb && g.tense == Tn::Past) g.tense = Tn::Present;
    fix_some(g);
    Pair p = statement(who, g);
    p.en.insert(p.en.begin(), "even");
    p.fr.insert(p.fr.begin(), "même");
    combos.push_back(key("link", "even", head(who)));
    return done(end_with(p, "."), "linking", combos);
  }
  if (k < 70) {  // where: above, below, between, among, along, through, around, inside, outside, against, beyond, toward, upon
    static const std::vector<std::array<const char*, 2>> preps{
        {"above", "au-dessus de"}, {"below", "en dessous de"}, {"among", "parmi"}, {"along", "le long de"},
        {"around", "autour de"},   {"inside", "à le intérieur de"}, {"outside", "à le extérieur de"},
        {"against", "contre"},     {"beyond", "au-delà de"},    {"toward", "vers"}, {"upon", "sur"},
        {"within", "à le intérieur de"}, {"near", "près de"},   {"behind", "derrière"},
        {"across from", "en face de"}, {"on top of", "en haut de"}, {"at the bottom of", "en bas de"},
        {"at the end of", "au bout de"}, {"in the middle of", "au milieu de"}, {"on the other side of", "de le autre côté de"},
        {"in the center of", "au centre de"}, {"far from", "loin de"}, {"close to", "près de"}};
    const auto& pr = preps[uniform_below(rng, preps.size())];
    const std::string en = pr[0];
    NP where;
    if (en == "among") where = np_of(pick(rng, chance(rng, 50) ? V.animals : V.people), true, Det::The);
    else if (en == "along" || en == "on the other side of" || en == "at the end of")
      where = np_of(&noun_row(chance(rng, 50) ? "street" : "river"), false, Det::The);
    else if (en == "at the bottom of" || en == "on top of") where = np_of(&noun_row(chance(rng, 50) ? "hill" : "stair"), false, Det::The);
    else where = np_of(pick(rng, chance(rng, 50) ? V.things : V.buildings), false, Det::The);
    if (where.noun->en == "stair") where = np_of(&noun_row("mountain"), false, Det::The);
    if (chance(rng, 25) && en != "among") where.det = Det::Poss, where.poss = static_cast<int>(uniform_below(rng, 4));
    const bool between = chance(rng, 15);
    VG g;
    if (chance(rng, 50)) {
      g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;  // is / was above …
      if (subject.det == Det::Pronoun && subject.person != 2 && subject.person != 5) subject = np_of(pick(rng, V.things), false, Det::The);
      if (!between && chance(rng, 50) && subject.noun) subject = np_of(pick(rng, V.things), chance(rng, 20), Det::The);
    } else {
      g.verb = pick(rng, V.intransitive);
      g.tense = pick_tn(rng);
      if (g.tense == Tn::JustDid || g.tense == Tn::Cond) g.tense = Tn::Present;
    }
    if (between) {  // between the house and the tree → entre la maison et l'arbre
      NP a = np_of(pick(rng, V.things), false, Det::The), b = np_of(pick(rng, V.buildings), false, Det::The);
      g.comp_en = {"between"};
      append(g.comp_en, en_np(a, true));
      g.comp_en.push_back("and");
      append(g.comp_en, en_np(b, true));
      g.comp_fr = {"entre"};
      append(g.comp_fr, fr_np(a));
      g.comp_fr.push_back("et");
      append(g.comp_fr, fr_np(b));
      combos.push_back(key("where", "between", a.noun->en + "_" + b.noun->en));
    } else {
      words_of(pr[0], g.comp_en);
      append(g.comp_en, en_np(where, true));
      g.comp_fr = {pr[1]};
      append(g.comp_fr, fr_np(where));
      combos.push_back(key("where", en, where.noun->en));
    }
    negate(rng, g, 10);
    g.contract_subject = chance(rng, 30);
    return done(end_with(statement(subject, g), "."), "linking", combos);
  }
  if (k < 82) {  // with a noun: during, without, except, despite, instead of, according to, because of, due to, through, by
    static const std::vector<std::array<const char*, 3>> preps{
        {"during", "pendant", "time"},      {"without", "sans", "thing"},      {"except", "sauf", "person"},
        {"despite", "malgré", "weather"},   {"instead of", "au lieu de", "food"}, {"according to", "selon", "person"},
        {"because of", "à cause de", "weather"}, {"due to", "à cause de", "weather"}, {"through", "par", "window"},
        {"by", "en", "transport"},          {"with", "avec", "person"},        {"after", "après", "time"},
        {"before", "avant", "time"},        {"like", "comme", "person"},       {"as", "comme", "job"}};
    const auto& pr = preps[uniform_below(rng, preps.size())];
    const std::string kind = pr[2];
    Words en, fr;
    words_of(pr[0], en);
    fr = {pr[1]};
    NP n;
    if (kind == "time") {
      static const std::vector<const char*> times{"dinner", "breakfast", "night", "summer", "winter", "lesson", "film",
                                                  "game", "week", "exam"};
      n = np_of(&noun_row(times[uniform_below(rng, times.size())]), false, Det::The);
    } else if (kind == "thing") {
      n = thing_obj(rng, 0);
      if (n.det == Det::Number || n.det == Det::Some || n.det == Det::This) n.det = Det::A, n.plural = false, n.person = 2;
      if (n.det == Det::A) n.det = Det::Quant, n.en_det = "a", n.fr_det = "";  // sans parapluie
    } else if (kind == "person") {
      n = chance(rng, 50) ? name_np(rng) : person_np(rng, 20);
    } else if (kind == "weather") {
      n = np_of(&noun_row(chance(rng, 60) ? "rain" : "snow"), false, Det::The);
    } else if (kind == "food") {
      n = mass_np(rng, false);
      n.en_det = "";
      n.det = Det::Generic;
    } else if (kind == "window") {
      n = np_of(&noun_row(chance(rng, 60) ? "window" : "door"), false, Det::The);
    } else if (kind == "transport") {
      static const std::vector<std::array<const char*, 2>> by{{"car", "voiture"}, {"bus", "bus"}, {"train", "train"},
                                                              {"plane", "avion"}, {"bike", "vélo"}, {"boat", "bateau"}};
      const auto& b = by[uniform_below(rng, by.size())];
      n = word_np(b[0], b[1], Gender::Masculine, false);
    } else {  // as a teacher → comme professeur (no article)
      static const std::vector<const char*> jobs{"teacher", "doctor", "writer", "artist", "worker", "officer"};
      n = np_of(&noun_row(jobs[uniform_below(rng, jobs.size())]), false, Det::Quant);
      n.en_det = "a";
      n.fr_det = "";
    }
    append(en, en_np(n, true));
    append(fr, fr_np(n));
    VG g;
    std::string pre = pr[0];
    if (pre == "through") {  // looked through the window → a regardé par la fenêtre
      g.verb = &verb_row(chance(rng, 50) ? "look" : "enter");
      if (g.verb->en == "enter") g.verb = &verb_row("come");
    } else if (pre == "by") {
      g.verb = &verb_row(chance(rng, 50) ? "travel" : chance(rng, 50) ? "come" : "go");
    } else if (pre == "as") {
      g.verb = &verb_row("work");
    } else if (pre == "instead of") {
      g.verb = &verb_row(chance(rng, 50) ? "drink" : "eat");
      const bool drink = g.verb->en == "drink";
      n = mass_np(rng, false, drink ? pick(rng, V.drinks) : pick(rng, V.foods));
      n.en_det = "";
      NP other = mass_np(rng, false, drink ? pick(rng, V.drinks) : pick(rng, V.foods));
      if (other.noun == n.noun) other = mass_np(rng, false, drink ? &noun_row("water") : &noun_row("bread"));
      other.en_det = "";
      g.obj = shared(other);
      NP gen = n;
      gen.det = Det::Generic;
      en = {"instead", "of"};
      append(en, en_np(gen, true));
      fr = {"au", "lieu", "de"};
      append(fr, fr_np(gen));
    } else {
      g = simple_vg(rng, subject, combos);
    }
    g.tense = pick_weighted(rng, {40, 45, 15}) == 0 ? Tn::Present : chance(rng, 75) ? Tn::Past : Tn::Future;
    if (!g.verb && g.tense == Tn::Past) g.tense = Tn::Present;
    if (stative(g) && g.tense == Tn::Past) g.tense = Tn::Present;
    fix_some(g);
    if (g.verb && g.verb->en == "look" && pre == "through") g.tense = Tn::Past;
    Pair p;
    const bool first = (pre == "despite" || pre == "according to" || pre == "because of" || pre == "due to" ||
                        pre == "during" || pre == "after" || pre == "before") && chance(rng, 50);
    if (first) {
      p = statement(subject, g);
      Words e = en, f = fr;
      e.push_back(",");
      f.push_back(",");
      p.en.insert(p.en.begin(), e.begin(), e.end());
      p.fr.insert(p.fr.begin(), f.begin(), f.end());
    } else {
      append(g.tail_en, en);
      append(g.tail_fr, fr);
      p = statement(subject, g);
    }
    combos.push_back(key("with", pre, head(n) + "_" + head(subject)));
    return done(end_with(p, "."), "linking", combos);
  }
  // phrasal verbs
  struct Phrasal {
    const char *verb, *particle, *fr, *sense;
    int object;  // 0 none, 1 a thing, 2 reflexive
  };
  static const std::vector<Phrasal> phrasal{{"wake", "up", "wake", "", 2},     {"get", "up", "raise", "", 2},
                                            {"sit", "down", "seat", "", 2},    {"go to bed", "", "go to bed", "", 2},
                                            {"come", "back", "return", "", 0}, {"go out", "", "go out", "", 0},
                                            {"pick", "up", "collect", "", 1},  {"take", "off", "remove", "", 1},
                                            {"throw", "away", "throw", "", 1}, {"turn off", "", "turn off", "", 1},
                                            {"write", "down", "note", "", 1},  {"find", "out", "discover", "", 1},
                                            {"turn on", "", "light", "", 1},  {"put", "on", "put", "", 1},
                                            {"move", "forward", "advance", "", 0}, {"stand", "up", "raise", "", 2}};
  const Phrasal& ph = phrasal[uniform_below(rng, phrasal.size())];
  VG g;
  static LexVerb sit_row = [] {
    LexVerb v = verb_row("seat");
    v.en = "sit", v.en_3sg = "sits", v.en_past = "sat", v.en_pp = "sat", v.en_ing = "sitting";
    return v;
  }();
  static LexVerb turn_on_row = [] {
    LexVerb v = verb_row("light");
    v.en = "turn on", v.en_3sg = "turns on", v.en_past = "turned on", v.en_pp = "turned on", v.en_ing = "turning on";
    return v;
  }();
  static LexVerb pick_row = [] {
    LexVerb v = verb_row("pick");
    return v;
  }();
  const std::string en = ph.verb;
  static LexVerb stand_row = [] {  // stand up → se lever
    LexVerb v = verb_row("raise");
    v.en = "stand", v.en_3sg = "stands", v.en_past = "stood", v.en_pp = "stood", v.en_ing = "standing";
    return v;
  }();
  g.verb = en == "sit"       ? &sit_row
           : en == "stand"   ? &stand_row
           : en == "turn on" ? &turn_on_row
           : en == "pick"    ? &pick_row
                             : &verb_row(ph.verb);
  g.fr = en == "turn on" ? &verb_row("light") : &verb_row(ph.fr);
  g.particle_en = ph.particle;
  g.reflexive = ph.object == 2;
  if (ph.object == 1) {
    NP o;
    if (en == "take" || en == "put") {
      static const std::vector<const char*> clothes{"hat", "shoe", "shirt", "dress"};
      o = np_of(&noun_row(clothes[uniform_below(rng, clothes.size())]), chance(rng, 40), Det::Poss);
      o.poss = poss_of(subject);
      if (o.noun->en == "shoe") o.plural = true;
      if (en == "put") g.fr = &verb_row("put");  // mettre son chapeau
    } else if (en == "turn off" || en == "turn on") {
      o = np_of(&noun_row(chance(rng, 50) ? "light" : chance(rng, 50) ? "radio" : "television"), false, Det::The);
    } else if (en == "find") {
      o = np_of(&noun_row(chance(rng, 50) ? "truth" : "answer"), false, Det::The);
    } else if (en == "write") {
      static const std::vector<const char*> notes{"word", "name", "answer", "address", "number"};
      const char* nn = notes[uniform_below(rng, notes.size())];
      o = np_of(lexicon_tables().noun(nn) ? &noun_row(nn) : &noun_row("word"), chance(rng, 30), Det::The);
    } else {
      o = thing_obj(rng, 10);
    }
    g.obj = shared(o);
  }
  if (en == "come") g.verb = &verb_row("come"), g.fr = &verb_row("return");
  g.tense = pick_tn(rng);
  if (g.tense == Tn::JustDid) g.tense = Tn::Past;
  if (g.reflexive && (g.tense == Tn::Perfect || g.tense == Tn::Past) && chance(rng, 30)) {
    const TimePhrase& t = time_for(rng, kPast);
    words_of(t.en, g.tail_en);
    g.tail_fr = {t.fr};
  } else if (g.reflexive && chance(rng, 40)) {  // I get up at seven → je me lève à sept heures
    static const std::vector<std::array<const char*, 2>> at{{"at seven", "à sept heures"}, {"at six", "à six heures"},
                                                            {"at eight", "à huit heures"}, {"early", "tôt"}, {"late", "tard"}};
    const auto& a = at[uniform_below(rng, at.size())];
    words_of(a[0], g.tail_en);
    g.tail_fr = {a[1]};
    if (g.tense == Tn::PresProg || g.tense == Tn::PastProg) g.tense = Tn::Present;
  }
  negate(rng, g, 12);
  fix_some(g);
  g.contract_subject = chance(rng, 35);
  combos.push_back(key("phrasal", en + "_" + ph.particle, head(subject)));
  return done(end_with(statement(subject, g), "."), "linking", combos);
}

// ---- public life and other set topics -------------------------------------------------------------------
// Adjectives that fit only some nouns, in pairs that are right in both languages (the federal government
// → le gouvernement fédéral, a foreign language → une langue étrangère, nuclear energy → l'énergie
// nucléaire, the former president → l'ancien président), and nouns that need their own frame: a member
// of the council → membre du conseil, her hair is long → ses cheveux sont longs, this type of car → ce type
// de voiture, the state of the road → l'état de la route, from my point of view → de mon point de vue.

struct Collocation {
  const char *adj, *noun;
};
const std::vector<Collocation> kCollocations{
    {"federal", "government"},  {"national", "government"}, {"local", "government"},   {"new", "government"},
    {"political", "party"},     {"political", "problem"},   {"political", "system"},    {"economic", "growth"},
    {"economic", "problem"},    {"economic", "situation"},  {"economic", "policy"},     {"social", "problem"},
    {"social", "life"},         {"social", "policy"},       {"national", "park"},       {"national", "team"},
    {"local", "newspaper"},     {"local", "school"},        {"local", "police"},        {"public", "school"},
    {"public", "library"},      {"private", "school"},      {"private", "life"},        {"military", "plane"},
    {"nuclear", "energy"},      {"nuclear", "war"},         {"religious", "school"},    {"international", "airport"},
    {"industrial", "city"},     {"medical", "problem"},     {"technical", "problem"},   {"professional", "team"},
    {"physical", "exercise"},   {"moral", "problem"},       {"personal", "question"},   {"special", "day"},
    {"special", "price"},       {"foreign", "language"},    {"foreign", "country"},     {"human", "body"},
    {"main", "street"},         {"main", "reason"},         {"main", "problem"},        {"total", "cost"},
    {"total", "number"},        {"normal", "day"},          {"normal", "price"},        {"average", "age"},
    {"average", "price"},       {"current", "situation"},   {"current", "president"},   {"current", "government"},
    {"former", "president"},    {"former", "teacher"},      {"democratic", "country"},  {"common", "friend"},
    {"similar", "problem"},     {"similar", "situation"},   {"final", "exam"},          {"final", "answer"},
    {"final", "decision"},      {"specific", "reason"},     {"specific", "question"},   {"additional", "ticket"},
    {"fiscal", "policy"},       {"real", "friend"},         {"real", "problem"},        {"single", "word"},
    {"simple", "question"},     {"modern", "art"},          {"natural", "color"},       {"general", "idea"},
    {"important", "decision"},  {"different", "reason"},    {"strong", "character"},    {"good", "character"},
    {"right", "direction"},     {"wrong", "direction"},     {"first", "section"},       {"last", "scene"},
    {"new", "material"},        {"old", "court"}};

const LexAdjective& collocation_adj(const char* en) {
  if (std::string(en) == "real") return *lexicon_tables().adjective("real", "true");
  // The ordinals are not adjectives of the tables: their four forms, placed before the noun.
  static const LexAdjective first{"first", {"premier", "première", "premiers", "premières"}, "premier", true, "", 0};
  static const LexAdjective last{"last", {"dernier", "dernière", "derniers", "dernières"}, "dernier", true, "", 0};
  if (std::string(en) == "first") return first;
  if (std::string(en) == "last") return last;
  if (std::string(en) == "right") {  // the right direction → la bonne direction
    static const LexAdjective good = [] {
      LexAdjective a = adj_row("good");
      a.en = "right";
      return a;
    }();
    return good;
  }
  if (std::string(en) == "wrong") {  // the wrong direction → la mauvaise direction
    static const LexAdjective bad = [] {
      LexAdjective a = adj_row("bad");
      a.en = "wrong";
      return a;
    }();
    return bad;
  }
  if (std::string(en) == "strong") {  // a strong character → un fort caractère
    static const LexAdjective strong = [] {
      LexAdjective a = adj_row("strong");
      a.before = true;
      return a;
    }();
    return strong;
  }
  return adj_row(en);
}

Example topic(Rng& rng) {
  std::vector<std::string> combos;
  const std::size_t k = uniform_below(rng, 100);
  if (k < 45) {
    const Collocation& c = kCollocations[uniform_below(rng, kCollocations.size())];
    const LexNoun* n = std::string(c.noun) == "party" ? lexicon_tables().noun("party") : &noun_row(c.noun);
    const LexAdjective& a = collocation_adj(c.adj);
    NP np = np_of(n, false, Det::The);
    const bool countable = n->en != "growth" && n->en != "energy" && n->en != "life" && n->en != "police" &&
                           n->en != "art" && n->en != "policy" && n->en != "exercise" && n->en != "war";
    if (countable && chance(rng, 30)) np.det = Det::A;
    if (countable && chance(rng, 15)) np.plural = true, np.det = Det::The;
    if (std::string(c.adj) == "single") np.det = Det::A, np.plural = false;
    np.person = np.plural ? 5 : 2;
    (a.before ? np.adj_before : np.adj_after) = &a;
    // The pair with what the sentence says of it: every pair occurs in training in some frame.
    const std::size_t f = uniform_below(rng, 4);
    const std::string pair = std::string(c.adj) + "_" + c.noun;
    if (f == 0 && np.det != Det::A) {  // The federal government is important.
      VG g;
      static const std::vector<const char*> adjs{"important", "new", "different", "difficult", "interesting", "strong",
                                                 "expensive", "famous", "old", "good", "bad", "simple"};
      g.adj = &adj_row(adjs[uniform_below(rng, adjs.size())]);
      if (g.adj->en == a.en) g.adj = &adj_row("important");
      g.tense = pick_weighted(rng, {55, 35, 10}) == 0 ? Tn::Present : chance(rng, 80) ? Tn::Past : Tn::Future;
      negate(rng, g, 15);
      combos.push_back(key("topic", pair, g.adj->en));
      return done(end_with(statement(np, g), "."), "topic", combos);
    }
    const NP subject = subject_np(rng, false);
    VG g;
    if (f <= 1) {  // We talked about the economic situation. → Nous avons parlé de la situation économique.
      g.verb = &verb_row("talk");
      g.particle_en = "about";
      g.prep_fr = "de";
    } else if (f == 2) {  // They discussed / studied / explained …
      static const std::vector<const char*> vs{"discuss", "study", "explain", "describe", "understand", "consider", "change"};
      g.verb = &verb_row(vs[uniform_below(rng, vs.size())]);
    } else if (countable && (n->kind == NounKind::Place || n->kind == NounKind::Thing || n->en == "school" ||
                             n->en == "team" || n->en == "party")) {
      // There is a national park in this country. → Il y a un parc national dans ce pays.
      np.det = Det::A;
      np.plural = false;
      Pair p;
      p.en = {"there", chance(rng, 60) ? "is" : "was"};
      append(p.en, en_np(np, true));
      append(p.en, {"in", "this", chance(rng, 50) ? "city" : "country"});
      p.fr = {"il", "y", p.en[1] == "is" ? "a" : "avait"};
      append(p.fr, fr_np(np));
      append(p.fr, {"dans", p.en.back() == "city" ? "cette" : "ce", p.en.back() == "city" ? "ville" : "pays"});
      combos.push_back(key("topic", pair, "there_" + p.en[1] + p.en.back()));
      return done(end_with(p, "."), "topic", combos);
    } else {
      g.verb = &verb_row("talk");
      g.particle_en = "about";
      g.prep_fr = "de";
    }
    g.obj = shared(np);
    g.tense = pick_tn(rng);
    if (g.tense == Tn::JustDid) g.tense = Tn::Past;
    if ((g.verb->en == "understand" || g.verb->en == "consider") && (g.tense == Tn::PresProg || g.tense == Tn::PastProg))
      g.tense = Tn::Present;
    negate(rng, g, 12);
    g.contract_subject = chance(rng, 30);
    combos.push_back(key("topic", pair, g.verb->en + "_" + head(subject)));
    return done(end_with(statement(subject, g), "."), "topic", combos);
  }
  const NP subject = subject_np(rng, false);
  const std::size_t w = uniform_below(rng, 14);
  Pair p;
  switch (w) {
    case 0: {  // a member of the council → membre du conseil
      static const std::vector<const char*> bodies{"council", "commission", "association", "organization", "team",
                                                   "party", "family", "club", "group", "staff"};
      const char* b = bodies[uniform_below(rng, bodies.size())];
      const LexNoun* n = lexicon_tables().noun(b) ? &noun_row(b) : &noun_row("team");
      VG g;
      g.comp_en = {"a", "member", "of"};
      NP body = np_of(n, false, Det::The);
      if (chance(rng, 30)) body.det = Det::Poss, body.poss = static_cast<int>(uniform_below(rng, 4));
      append(g.comp_en, en_np(body, true));
      g.comp_fr = {subject.plural || subject.person >= 3 ? "membres" : "membre", "de"};
      if (subject.plural || subject.person >= 3) g.comp_en = {"members", "of"}, append(g.comp_en, en_np(body, true));
      append(g.comp_fr, fr_np(body));
      g.tense = chance(rng, 70) ? Tn::Present : Tn::Past;
      negate(rng, g, 15);
      combos.push_back(key("topic", "member", n->en + head(subject)));
      p = statement(subject, g);
      break;
    }
    case 1: {  // Her hair is long. → Ses cheveux sont longs.
      NP hair = word_np("hair", "cheveux", Gender::Masculine, true, Det::Poss);
      hair.poss = static_cast<int>(uniform_below(rng, 6));
      if (hair.poss == 4) hair.poss = 1;
      hair.person = 5;  // French plural, English singular: the verb is written by hand
      static const std::vector<const char*> adjs{"long", "short", "black", "white", "red", "beautiful", "clean", "wet"};
      const LexAdjective& a = adj_row(adjs[uniform_below(rng, adjs.size())]);
      const bool past = chance(rng, 30);
      p.en = {kPossEn[hair.poss], "hair", past ? "was" : "is", a.en};
      p.fr = fr_np(hair);
      append(p.fr, {past ? "étaient" : "sont", a.fr[2]});
      combos.push_back(key("topic", "hair", a.en));
      break;
    }
    case 2: {  // This type of car is expensive. → Ce type de voiture est cher.
      const LexNoun* n = pick(rng, chance(rng, 50) ? vocab().things : vocab().animals);
      NP type = np_of(&noun_row("type"), chance(rng, 25), chance(rng, 50) ? Det::This : Det::The);
      type.pp = std::make_shared<PP>();
      type.pp->en = "of";
      type.pp->fr = "de";
      type.pp->np = shared(np_of(n, false, Det::Quant));
      VG g = copula_vg(rng, np_of(n, false, Det::The), combos);
      g.tense = chance(rng, 75) ? Tn::Present : Tn::Past;
      combos.push_back(key("topic", "type", n->en));
      p = statement(type, g);
      break;
    }
    case 3: {  // The state of the road is bad. → L'état de la route est mauvais.
      static const std::vector<const char*> of{"road", "house", "car", "bridge", "street", "school"};
      NP st = np_of(&noun_row(chance(rng, 50) ? "state" : "position"), false, Det::The);
      st.pp = std::make_shared<PP>();
      st.pp->en = "of";
      st.pp->fr = "de";
      st.pp->np = shared(np_of(&noun_row(of[uniform_below(rng, of.size())]), false, Det::The));
      VG g;
      g.adj = &adj_row(chance(rng, 50) ? "bad" : chance(rng, 50) ? "good" : "strange");
      g.tense = chance(rng, 70) ? Tn::Present : Tn::Past;
      combos.push_back(key("topic", st.noun->en, st.pp->np->noun->en));
      p = statement(st, g);
      break;
    }
    case 4: {  // From my point of view, … → De mon point de vue, …
      VG g = simple_vg(rng, subject, combos);
      g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
      if (!g.verb && g.tense == Tn::Past) g.tense = Tn::Present;
      if (stative(g)) g.tense = Tn::Present;
      fix_some(g);
      const int poss = static_cast<int>(uniform_below(rng, 4));
      static const std::array<const char*, 4> fr{"mon", "ton", "son", "son"};
      p = statement(subject, g);
      p.en.insert(p.en.begin(), {"from", kPossEn[poss], "point", "of", "view", ","});
      p.fr.insert(p.fr.begin(), {"de", fr[poss], "point", "de", "vue", ","});
      combos.push_back(key("topic", "point_of_view", g.verb ? g.verb->en : g.adj->en));
      break;
    }
    case 5: {  // The team has ten points. → L'équipe a dix points.
      const auto& n = kNumbers[uniform_below(rng, 12)];
      NP team = np_of(&noun_row("team"), false, chance(rng, 60) ? Det::The : Det::Poss);
      team.poss = static_cast<int>(uniform_below(rng, 6)) % 4;
      VG g;
      g.verb = &have_row();
      NP pts = np_of(&noun_row("point"), true, Det::Quant);
      pts.en_det = n[0];
      pts.fr_det = n[1];
      g.obj = shared(pts);
      g.tense = chance(rng, 70) ? Tn::Present : Tn::Past;
      combos.push_back(key("topic", "points", n[0]));
      p = statement(team, g);
      break;
    }
    case 6: {  // the subject of the letter, the last scene of the film, the date of the party, the chief of police
      static const std::vector<std::array<const char*, 2>> pairs{{"subject", "letter"}, {"subject", "book"},
                                                                 {"scene", "film"},     {"date", "exam"},
                                                                 {"date", "election"},  {"date", "game"},
                                                                 {"figure", "study"},   {"division", "city"},
                                                                 {"chief", "police"},   {"spirit", "team"},
                                                                 {"staff", "hotel"},    {"staff", "school"},
                                                                 {"section", "book"},   {"figure", "report"},
                                                                 {"nature", "problem"}, {"division", "work"}};
      const auto& pr = pairs[uniform_below(rng, pairs.size())];
      const LexNoun* of = lexicon_tables().noun(pr[1]) ? &noun_row(pr[1]) : &noun_row("book");
      NP head_np = np_of(&noun_row(pr[0]), false, Det::The);
      head_np.pp = std::make_shared<PP>();
      head_np.pp->en = "of";
      head_np.pp->fr = "de";
      head_np.pp->np = shared(np_of(of, false, Det::The));
      VG g;
      static const std::vector<const char*> adjs{"interesting", "strange", "important", "new", "different", "simple",
                                                 "good", "bad", "correct", "friendly"};
      g.adj = &adj_row(adjs[uniform_below(rng, adjs.size())]);
      if (std::string(pr[0]) == "figure") head_np.plural = true, head_np.person = 5, g.adj = &adj_row("correct");
      if (std::string(pr[0]) == "staff") g.adj = &adj_row(chance(rng, 50) ? "friendly" : "busy");
      g.tense = chance(rng, 70) ? Tn::Present : Tn::Past;
      combos.push_back(key("topic", std::string(pr[0]) + "_" + of->en, g.adj->en + std::to_string(static_cast<int>(g.tense))));
      p = statement(head_np, g);
      break;
    }
    case 7: {  // They want justice. → Ils veulent la justice. He loves nature. → Il aime la nature.
      static const std::vector<const char*> ideas{"justice", "peace", "nature", "music", "freedom", "art", "history"};
      const char* i = ideas[uniform_below(rng, ideas.size())];
      const LexNoun* n = lexicon_tables().noun(i) ? &noun_row(i) : &noun_row("peace");
      VG g;
      g.verb = &verb_row(chance(rng, 50) ? "want" : chance(rng, 50) ? "love" : "like");
      g.obj = shared(np_of(n, false, Det::Generic));
      g.tense = Tn::Present;
      negate(rng, g, 15);
      combos.push_back(key("topic", "want", n->en + head(subject)));
      p = statement(subject, g);
      break;
    }
    case 8: {  // The school provides books. The price includes breakfast. We must determine the cause.
      static const std::vector<std::array<const char*, 3>> acts{{"school", "provide", "book"},
                                                                {"price", "include", "breakfast"},
                                                                {"newspaper", "report", "news"},
                                                                {"teacher", "suggest", "idea"},
                                                                {"doctor", "determine", "cause"},
                                                                {"government", "establish", "law"},
                                                                {"friend", "expect", "letter"},
                                                                {"student", "consider", "problem"},
                                                                {"army", "provide", "food"},
                                                                {"hotel", "include", "breakfast"},
                                                                {"court", "determine", "cause"},
                                                                {"organization", "provide", "information"},
                                                                {"president", "lead", "country"},
                                                                {"officer", "lead", "army"},
                                                                {"teacher", "lead", "group"},
                                                                {"woman", "lead", "team"}};
      const auto& a = acts[uniform_below(rng, acts.size())];
      NP sub = np_of(&noun_row(a[0]), false, Det::The);
      if (chance(rng, 30)) sub.det = Det::Poss, sub.poss = static_cast<int>(uniform_below(rng, 4));
      VG g;
      g.verb = &verb_row(a[1]);
      const std::string o = a[2];
      NP obj = np_of(&noun_row(o), o == "book", o == "book" ? Det::Some : Det::The);
      if (o == "idea" || o == "letter" || o == "law") obj.det = Det::A;
      if (o == "food" || o == "information") obj.det = Det::Partitive, obj.en_det = "";
      g.obj = shared(obj);
      g.tense = pick_tn(rng);
      if (g.tense == Tn::JustDid || g.tense == Tn::PresProg || g.tense == Tn::PastProg) g.tense = Tn::Past;
      if (chance(rng, 15)) g.modal = Md::Must;
      fix_some(g);
      combos.push_back(key("topic", a[1], std::string(a[0]) + "_" + std::to_string(static_cast<int>(g.tense)) +
                                               (sub.det == Det::Poss ? "p" : "t")));
      p = statement(sub, g);
      break;
    }
    case 9: {  // He is in the army. → Il est dans l'armée. He went in the right direction.
      VG g;
      g.comp_en = {"in", "the", "army"};
      g.comp_fr = {"dans", "la", "armée"};
      g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
      negate(rng, g, 10);
      combos.push_back(key("topic", "army", head(subject)));
      p = statement(subject, g);
      break;
    }
    case 10: {  // It's such a good idea. → C'est une si bonne idée.
      const LexNoun* n = pick(rng, chance(rng, 50) ? vocab().things : vocab().abstracts);
      const LexAdjective* a = pick(rng, vocab().thing_adj);
      NP np = np_of(n, chance(rng, 25), Det::Quant);
      const bool f = feminine(np);
      p.en = {np.plural ? "they" : (chance(rng, 50) ? "it's" : "that's")};
      if (np.plural) p.en.push_back("are");
      p.en.push_back("such");
      if (!np.plural) p.en.push_back("a");
      append(p.en, {a->en, np.plural ? n->en_plural : n->en});
      p.fr = {np.plural ? "ce sont" : "c'est"};
      const std::size_t i = form_index(np.gender, np.plural);
      if (a->before) {  // une si bonne idée; de si belles fleurs
        p.fr.push_back(np.plural ? "de" : f ? "une" : "un");
        p.fr.push_back("si");
        p.fr.push_back(i == 0 && !a->ms_vowel.empty() && vowel_sound(n->fr) ? a->ms_vowel : a->fr[i]);
        p.fr.push_back(np.plural ? n->fr_plural : n->fr);
      } else {  // un livre si intéressant
        p.fr.push_back(np.plural ? "des" : f ? "une" : "un");
        p.fr.push_back(np.plural ? n->fr_plural : n->fr);
        append(p.fr, {"si", a->fr[i]});
      }
      combos.push_back(key("topic", "such", n->en));
      break;
    }
    case 11: {  // That's true. It's normal. → C'est vrai. C'est normal.
      static const std::vector<const char*> adjs{"normal", "possible", "impossible", "interesting", "strange", "easy",
                                                 "difficult", "important", "true", "good", "different", "likely",
                                                 "correct", "useful", "simple", "dangerous"};
      const char* a = adjs[uniform_below(rng, adjs.size())];
      const LexAdjective& adj = std::string(a) == "true" ? *lexicon_tables().adjective("real", "true") : adj_row(a);
      const std::string en = std::string(a) == "true" ? "true" : adj.en;
      const std::size_t t = uniform_below(rng, 3);
      p.en = {t == 0 ? "that's" : t == 1 ? "it's" : "this is"};
      const bool neg = chance(rng, 20);
      if (neg) p.en = {t == 0 ? "that" : t == 1 ? "it" : "this", "isn't"};
      p.en.push_back(en);
      p.fr = {neg ? "ce" : "c'est"};
      if (neg) append(p.fr, {"ne", "est", "pas"});
      p.fr.push_back(adj.fr[0]);
      combos.push_back(key("topic", "that_is", en + std::to_string(t)));
      break;
    }
    case 12: {  // He stood near the door. → Il était debout près de la porte. She is sitting. → Elle est assise.
      static LexVerb stand = [] {
        LexVerb v = be_row();
        v.en = "stand", v.en_3sg = "stands", v.en_past = "stood", v.en_pp = "stood", v.en_ing = "standing";
        return v;
      }();
      static LexVerb sit = [] {
        LexVerb v = be_row();
        v.en = "sit", v.en_3sg = "sits", v.en_past = "sat", v.en_pp = "sat", v.en_ing = "sitting";
        return v;
      }();
      const bool standing = chance(rng, 55);
      VG g;
      g.verb = standing ? &stand : &sit;
      g.fr = &be_row();
      if (standing) g.comp_fr = {"debout"};
      else g.adj = participle_adj(verb_row("seat")), g.adj = [] {
        static LexAdjective assis = *participle_adj(verb_row("seat"));
        assis.en = "";
        return &assis;
      }();
      g.tense = chance(rng, 45) ? Tn::Past : chance(rng, 60) ? Tn::PresProg : Tn::Present;
      if (g.tense == Tn::Past) g.fr_tense = static_cast<int>(Tn::PastProg);  // stood → était debout
      else g.fr_tense = static_cast<int>(Tn::Present);
      std::string place;
      const auto [en, fr] = location(rng, place);
      g.tail_en = en;
      g.tail_fr = fr;
      combos.push_back(key("topic", standing ? "stand" : "sit", place));
      p = statement(subject, g);
      // the empty English adjective of assis
      p.en.erase(std::remove(p.en.begin(), p.en.end(), std::string()), p.en.end());
      break;
    }
    default: {  // The sun rises in the east. → Le soleil se lève à l'est.
      static LexVerb rise = [] {
        LexVerb v = verb_row("rise");
        return v;
      }();
      NP sun = np_of(&noun_row("sun"), false, Det::The);
      VG g;
      g.verb = &rise;
      g.fr = &verb_row("raise");
      g.reflexive = true;
      g.tense = pick_weighted(rng, {60, 25, 15}) == 0 ? Tn::Present : chance(rng, 50) ? Tn::Past : Tn::Future;
      if (g.tense == Tn::Past) g.tense = Tn::Perfect, g.fr_tense = static_cast<int>(Tn::Past);
      const bool early = chance(rng, 50);
      g.tail_en = early ? Words{"early"} : Words{"in", "the", "east"};
      g.tail_fr = early ? Words{"tôt"} : Words{"à", "le", "est"};
      if (g.tense == Tn::Perfect) g.tense = Tn::Past;
      combos.push_back(key("topic", "rise", early ? "early" : "east"));
      p = statement(sun, g);
      break;
    }
  }
  return done(end_with(p, "."), "topic", combos);
}

// ---- more set forms ---------------------------------------------------------------------------------------
// remember → se souvenir de; went into the room → est entré dans la pièce; the woman whom I saw → la femme
// que j'ai vue; further → plus loin, earlier → plus tôt; as expected → comme prévu; including → y compris;
// go straight ahead → va tout droit; what does this word mean → que veut dire ce mot; this means that →
// cela veut dire que; it is likely that → il est probable que; what have you done → qu'est-ce que tu as fait.

Example set_forms(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  NP subject = subject_np(rng);
  const std::size_t w = uniform_below(rng, 10);
  Pair p;
  switch (w) {
    case 0: {  // I remember the story. → Je me souviens de l'histoire.
      VG g;
      g.verb = &verb_row("remember");
      g.reflexive = true;
      g.prep_fr = "de";
      NP o = chance(rng, 40) ? person_np(rng, 20) : np_of(pick(rng, chance(rng, 50) ? V.abstracts : V.things), false, Det::The);
      if (o.det == Det::A) o.det = Det::The;
      if (chance(rng, 30)) o = name_np(rng);
      g.obj = shared(o);
      g.tense = chance(rng, 70) ? Tn::Present : Tn::Future;
      negate(rng, g, 30);
      g.contract_subject = chance(rng, 30);
      combos.push_back(key("set", "remember", head(o)));
      if (chance(rng, 20)) return done(end_with(yes_no(subject, g), "?"), "phrase", combos);
      p = statement(subject, g);
      break;
    }
    case 1: {  // He went into the kitchen. → Il est entré dans la cuisine.
      VG g;
      static LexVerb into = [] {
        LexVerb v = verb_row("enter");
        v.en = "go", v.en_3sg = "goes", v.en_past = "went", v.en_pp = "gone", v.en_ing = "going";
        return v;
      }();
      g.verb = chance(rng, 60) ? &into : &verb_row("enter");
      if (g.verb == &into) g.fr = &verb_row("enter");
      const LexNoun* room = pick(rng, chance(rng, 50) ? V.rooms : V.buildings);
      NP where = np_of(room, false, Det::The);
      if (chance(rng, 30)) where.det = Det::Poss, where.poss = static_cast<int>(uniform_below(rng, 6)) % 4;
      g.tail_en = {g.verb == &into ? "into" : ""};
      if (g.tail_en[0].empty()) g.tail_en.clear();
      append(g.tail_en, en_np(where, true));
      g.tail_fr = {"dans"};
      append(g.tail_fr, fr_np(where));
      g.tense = chance(rng, 70) ? Tn::Past : Tn::Present;
      combos.push_back(key("set", "into", room->en + head(subject)));
      p = statement(subject, g);
      break;
    }
    case 2: {  // The woman whom I met is a doctor. → La femme que j'ai rencontrée …
      NP person = np_of(pick(rng, chance(rng, 50) ? V.people : V.family), chance(rng, 20), Det::The);
      auto rel = std::make_shared<Rel>();
      rel->object_rel = true;
      rel->en_word = "whom";
      rel->subject = std::make_shared<NP>(random_pronoun(rng));
      static const std::vector<const char*> vs{"meet", "see", "call", "help", "visit", "invite", "love", "know"};
      rel->vp.verb = &verb_row(vs[uniform_below(rng, vs.size())]);
      rel->vp.tense = chance(rng, 65) ? Tense::Past : Tense::Present;
      person.rel = rel;
      VG g = copula_vg(rng, person, combos);
      g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
      p = statement(person, g);
      combos.push_back(key("set", "whom", person.noun->en + "_" + rel->vp.verb->en));
      break;
    }
    case 3: {  // She walks further than me; he arrived earlier than Marie
      static const std::vector<std::array<const char*, 4>> cmp{{"walk", "further", "plus loin", ""},
                                                               {"run", "further", "plus loin", ""},
                                                               {"arrive", "earlier", "plus tôt", ""},
                                                               {"leave", "earlier", "plus tôt", ""},
                                                               {"arrive", "later", "plus tard", ""},
                                                               {"come", "earlier", "plus tôt", ""}};
      const auto& c = cmp[uniform_below(rng, cmp.size())];
      if (subject.det == Det::Pronoun && subject.person == 0) subject = name_np(rng);
      const auto other = compared_with(rng, subject);
      VG g;
      g.verb = &verb_row(c[0]);
      g.tense = chance(rng, 55) ? Tn::Past : Tn::Present;
      if (!g.verb->etre && g.tense == Tn::Past) g.tense = Tn::Present;  // a marché plus loin: the adverb would move
      g.tail_en = {c[1], "than"};
      append(g.tail_en, other.first);
      g.tail_fr = {c[2], "que"};
      append(g.tail_fr, other.second);
      combos.push_back(key("set", c[1], c[0] + head(subject)));
      p = statement(subject, g);
      break;
    }
    case 4: {  // As expected, … / …, including …
      VG g = simple_vg(rng, subject, combos);
      g.tense = chance(rng, 60) ? Tn::Past : Tn::Present;
      if (!g.verb && g.tense == Tn::Past) g.tense = Tn::Present;
      if (stative(g)) g.tense = Tn::Present;
      fix_some(g);
      if (chance(rng, 50)) {
        p = statement(subject, g);
        p.en.insert(p.en.begin(), {"as", "expected", ","});
        p.fr.insert(p.fr.begin(), {"comme", "prévu", ","});
        combos.push_back(key("set", "as_expected", g.verb ? g.verb->en : g.adj->en));
      } else {  // Everyone came, including the children. → Tout le monde est venu, y compris les enfants.
        NP all = word_np("everyone", "tout le monde", Gender::Masculine, false);
        VG v = intransitive_vg(rng, combos, all);
        v.tense = chance(rng, 60) ? Tn::Past : Tn::Present;
        NP inc = np_of(pick(rng, chance(rng, 50) ? V.people : V.family), true, Det::The);
        if (chance(rng, 30)) inc = name_np(rng);
        p = statement(all, v);
        append(p.en, {",", "including"});
        append(p.en, en_np(inc, true));
        append(p.fr, {",", "y compris"});
        append(p.fr, fr_np(inc));
        combos.push_back(key("set", "including", head(inc) + v.verb->en));
      }
      break;
    }
    case 5: {  // Go straight ahead. → Va tout droit. Turn left. → Tourne à gauche.
      static const std::vector<std::array<const char*, 4>> ways{{"go", "straight ahead", "va", "tout droit"},
                                                                {"turn", "left", "tourne", "à gauche"},
                                                                {"turn", "right", "tourne", "à droite"},
                                                                {"keep", "going straight ahead", "continue", "tout droit"}};
      const auto& wy = ways[uniform_below(rng, ways.size())];
      p.en = {wy[0]};
      words_of(wy[1], p.en);
      p.fr = {wy[2], wy[3]};
      if (chance(rng, 40)) {
        static const std::vector<std::array<const char*, 2>> after{{"at the end of the street", "au bout de la rue"},
                                                                   {"after the bridge", "après le pont"},
                                                                   {"at the station", "à la gare"},
                                                                   {"after the church", "après la église"}};
        const auto& a = after[uniform_below(rng, after.size())];
        words_of(a[0], p.en);
        p.fr.push_back(a[1]);
      }
      combos.push_back(train_key(key("set", "way", std::string(wy[0]) + wy[1] + std::to_string(p.en.size()))));
      break;
    }
    case 6: {  // What does this word mean? → Que veut dire ce mot ?
      static const std::vector<const char*> things{"word", "sign", "sentence", "name", "letter", "idea", "story"};
      const char* t = things[uniform_below(rng, things.size())];
      NP np = np_of(lexicon_tables().noun(t) ? &noun_row(t) : &noun_row("word"), false, chance(rng, 60) ? Det::This : Det::The);
      p.en = {"what", "does"};
      append(p.en, en_np(np));
      p.en.push_back("mean");
      p.fr = {"que", "veut", "dire"};
      append(p.fr, fr_np(np));
      combos.push_back(key("set", "mean", np.noun->en));
      return done(end_with(p, "?"), "phrase", combos);
    }
    case 7: {  // This means that … → Cela veut dire que …; It is likely that … → Il est probable que …
      const bool likely = chance(rng, 50);
      NP s2 = subject_np(rng);
      VG g = simple_vg(rng, s2, combos);
      g.tense = likely ? (chance(rng, 60) ? Tn::Future : Tn::Present) : pick_tn(rng);
      if (g.tense == Tn::JustDid || g.tense == Tn::Cond) g.tense = Tn::Present;
      if (!g.verb && (g.tense == Tn::PresProg || g.tense == Tn::PastProg)) g.tense = Tn::Present;
      if (stative(g) && (g.tense == Tn::PresProg || g.tense == Tn::PastProg)) g.tense = Tn::Present;
      fix_some(g);
      p = statement(s2, g);
      if (likely) {
        p.en.insert(p.en.begin(), {"it", "is", "likely", "that"});
        p.fr.insert(p.fr.begin(), {"il", "est", "probable", "que"});
      } else {
        const bool past = chance(rng, 30);
        p.en.insert(p.en.begin(), {chance(rng, 50) ? "this" : "it", past ? "meant" : "means", "that"});
        p.fr.insert(p.fr.begin(), {"cela", past ? "voulait" : "veut", "dire", "que"});
        if (past) {  // concordance: "meant that he was" → "voulait dire qu'il était"
          g.tense = g.tense == Tn::Future ? Tn::Cond : Tn::Past;
          if (g.verb && g.tense == Tn::Past) g.fr_tense = static_cast<int>(Tn::PastProg);
          const Pair q = statement(s2, g);
          p.en.resize(3);
          p.fr.resize(4);
          append(p.en, q.en);
          append(p.fr, q.fr);
        }
      }
      combos.push_back(key("set", likely ? "likely" : "means", g.verb ? g.verb->en : g.adj->en));
      break;
    }
    case 8: {  // What have you done? → Qu'est-ce que tu as fait ? I have done my work. → J'ai fait mon travail.
      VG g;
      g.verb = &verb_row("do");
      g.tense = Tn::Perfect;
      if (chance(rng, 50)) {
        combos.push_back(key("set", "done", head(subject)));
        return done(end_with(wh({"what"}, {"que"}, subject, g), "?"), "phrase", combos);
      }
      static const std::vector<std::array<const char*, 3>> jobs{{"work", "", "travail"}, {"shopping", "m", "courses"},
                                                                {"dishes", "f", "vaisselle"}};
      const auto& j = jobs[uniform_below(rng, jobs.size())];
      NP o;
      if (std::string(j[0]) == "work") {
        o = np_of(&noun_row("work"), false, Det::Poss);
        o.poss = poss_of(subject);
      } else if (std::string(j[0]) == "shopping") {
        o = word_np("shopping", "courses", Gender::Feminine, true, Det::Quant, "the", "les");
      } else {
        o = word_np("dishes", "vaisselle", Gender::Feminine, false, Det::Quant, "the", "la");
      }
      g.obj = shared(o);
      const std::size_t t = uniform_below(rng, 3);
      if (t == 1) g.neg = Ng::Not, g.contracted = chance(rng, 70), g.freq_fr = "encore", g.tail_en = {"yet"};
      if (t == 2) g.freq_en = "already", g.freq_fr = "déjà";
      combos.push_back(key("set", "done", j[0] + head(subject)));
      p = statement(subject, g);
      break;
    }
    default: {  // Alone: he lives alone → il vit seul (seule, seuls, seules)
      VG g;
      g.verb = &verb_row(chance(rng, 50) ? "live" : chance(rng, 50) ? "travel" : "work");
      g.tense = chance(rng, 60) ? Tn::Present : Tn::Past;
      if (g.verb->en == "live" && g.tense == Tn::Past) g.fr_tense = static_cast<int>(Tn::PastProg);
      const LexAdjective& alone = adj_row("alone");
      g.tail_en = {"alone"};
      g.tail_fr = {alone.fr[agree(subject)]};
      combos.push_back(key("set", "alone", g.verb->en + head(subject)));
      p = statement(subject, g);
      break;
    }
  }
  return done(end_with(p, "."), "phrase", combos);
}

// ---- fixed cases --------------------------------------------------------------------------------------------
// Sentences built with chosen words through the same code as the corpus, so a test can pin the French of
// each construction (tests/unit/test_corpus_everyday.cpp) and docs/corpus.md can show it.

NP the(const char* en, bool plural = false) { return np_of(&noun_row(en), plural, Det::The); }
NP a(const char* en) { return np_of(&noun_row(en), false, Det::A); }
NP named(const char* name, Gender g) {
  NP np;
  np.det = Det::Name;
  np.name = name;
  np.gender = g;
  return np;
}
NP pro(int person, Gender g = Gender::Masculine) { return pronoun_np(person, g); }
NP mass(const char* en, const char* en_det = "") {
  NP np = np_of(&noun_row(en), false, Det::Partitive);
  np.en_det = en_det;
  return np;
}
VG verb(const char* en, Tn t = Tn::Present) {
  VG g;
  g.verb = &verb_row(en);
  g.tense = t;
  return g;
}
Example say(const Pair& p, const char* mark) { return done(end_with(p, mark), "case", {}); }

std::map<std::string, std::function<Example()>> cases() {
  std::map<std::string, std::function<Example()>> c;
  const Gender F = Gender::Feminine, M = Gender::Masculine;
  c["coordinated subject"] = [=] {  // The boy and the girl are tired.
    VG g;
    g.adj = &adj_row("tired");
    return say(statement(coordinated(the("boy"), the("girl"), "and", "et"), g), ".");
  };
  c["coordinated feminine subject"] = [=] {  // Marie and Anna arrived.
    return say(statement(coordinated(named("Marie", F), named("Anna", F), "and", "et"), verb("arrive", Tn::Past)), ".");
  };
  c["coordinated objects"] = [=] {  // She buys bread and milk.
    VG g = verb("buy");
    g.obj = shared(coordinated(mass("bread"), mass("milk"), "and", "et"));
    return say(statement(pro(2, F), g), ".");
  };
  c["both"] = [=] {  // Both Marie and Anna are happy.
    NP s = coordinated(named("Marie", F), named("Anna", F), "and", "et");
    s.en_det = "both";
    VG g;
    g.adj = &adj_row("happy");
    g.freq_fr = "toutes les deux";
    return say(statement(s, g), ".");
  };
  c["there are"] = [=] {  // There are three apples on the table.
    Pair p{{"there", "are", "three", "apples", "on", "the", "table"}, {"il", "y", "a", "trois", "pommes", "sur"}};
    append(p.fr, fr_np(the("table")));
    return say(p, ".");
  };
  c["would like"] = [=] {  // I would like a cup of coffee, please.
    VG g;
    g.verb = &verb_row("like");
    g.fr = &verb_row("want");
    g.tense = Tn::Cond;
    NP cup = np_of(&noun_row("cup"), false, Det::Quant);
    cup.en_det = std::string("a");  // (assigning the literal trips a false -Wrestrict in GCC 12)
    cup.fr_det = "une";
    cup.pp = std::make_shared<PP>();
    cup.pp->en = "of";
    cup.pp->fr = "de";
    cup.pp->np = shared(np_of(&noun_row("coffee"), false, Det::Quant));
    g.obj = shared(cup);
    g.tail_en = {",", "please"};
    g.tail_fr = {",", "s'il te plaît"};
    return say(statement(pro(0), g), ".");
  };
  c["can with a pronoun"] = [=] {  // I can help you.
    VG g = verb("help");
    g.modal = Md::Can;
    g.obj = shared(pro(1));
    return say(statement(pro(0), g), ".");
  };
  c["cannot"] = [=] {  // She cannot swim.
    VG g = verb("swim");
    g.modal = Md::Can;
    g.neg = Ng::Not;
    g.contracted = false;
    return say(statement(pro(2, F), g), ".");
  };
  c["should"] = [=] {  // You should read this book.
    VG g = verb("read");
    g.modal = Md::Should;
    g.obj = shared(np_of(&noun_row("book"), false, Det::This));
    return say(statement(pro(1), g), ".");
  };
  c["won't"] = [=] {  // We won't eat meat.
    VG g = verb("eat", Tn::Future);
    g.neg = Ng::Not;
    g.obj = shared(mass("meat"));
    return say(statement(pro(3), g), ".");
  };
  c["going to"] = [=] {  // They are going to buy a car.
    VG g = verb("buy", Tn::GoingTo);
    g.obj = shared(a("car"));
    return say(statement(pro(5), g), ".");
  };
  c["never"] = [=] {  // He never drinks coffee.
    VG g = verb("drink");
    g.neg = Ng::Never;
    g.obj = shared(mass("coffee"));
    return say(statement(pro(2), g), ".");
  };
  c["indirect pronoun"] = [=] {  // She gives him the book.
    VG g = verb("give");
    g.obj = shared(the("book"));
    g.iobj = shared(pro(2));
    g.iobj_first = true;
    return say(statement(pro(2, F), g), ".");
  };
  c["indirect noun"] = [=] {  // We write a letter to our grandmother.
    VG g = verb("write");
    g.obj = shared(a("letter"));
    NP gm = np_of(&noun_row("grandmother"), false, Det::Poss);
    gm.poss = 4;  // our
    g.iobj = shared(gm);
    return say(statement(pro(3), g), ".");
  };
  c["two pronouns"] = [=] {  // I bought a cake and I gave it to her.
    VG first = verb("buy", Tn::Past);
    const NP cake = a("cake");
    first.obj = shared(cake);
    VG g = verb("give", Tn::Past);
    g.obj = shared(it_np(cake));
    g.iobj = shared(pro(2, F));
    Pair p = statement(pro(0), first);
    p.en.push_back("and");
    p.fr.push_back("et");
    const Pair b = statement(pro(0), g);
    append(p.en, b.en);
    append(p.fr, b.fr);
    return say(p, ".");
  };
  c["comparative"] = [=] {  // Paul is taller than his sister.
    VG g;
    g.comp_en = en_more(adj_row("tall"), false);
    g.comp_fr = fr_more(adj_row("tall"), 0);
    append(g.comp_en, {"than", "his", "sister"});
    append(g.comp_fr, {"que", "sa", "sœur"});
    return say(statement(named("Paul", M), g), ".");
  };
  c["superlative"] = [=] {  // Marie is the tallest girl in the class.
    VG g;
    g.comp_en = {"the", en_degree("tall", true), "girl", "in", "the", "class"};
    g.comp_fr = {"la", "plus", "grande", "fille", "de", "la", "classe"};
    return say(statement(named("Marie", F), g), ".");
  };
  c["best"] = [=] {  // This cake is the best.
    VG g;
    g.comp_en = {"the"};
    append(g.comp_en, en_more(adj_row("good"), true));
    g.comp_fr = {"le"};
    append(g.comp_fr, fr_more(adj_row("good"), 0));
    return say(statement(np_of(&noun_row("cake"), false, Det::This), g), ".");
  };
  c["imperative"] = [=] {  // Open the door, please.
    VG g = verb("open");
    g.obj = shared(the("door"));
    Pair p{{"open"}, {verb_row("open").imperative[0]}};
    append(p.en, en_after(g));
    append(p.fr, fr_after(g, pro(1)));
    append(p.en, {",", "please"});
    append(p.fr, {",", "s'il te plaît"});
    return say(p, ".");
  };
  c["negative imperative"] = [=] {  // Don't call him.
    VG g = verb("call");
    g.obj = shared(pro(2));
    Pair p{{"don't", "call", "him"}, {"ne"}};
    append(p.fr, fr_clitics(g, pro(1)));
    append(p.fr, {verb_row("call").imperative[0], "pas"});
    return say(p, ".");
  };
  c["imperative with a pronoun"] = [=] {  // Help me!
    VG g = verb("help");
    g.obj = shared(pro(0));
    return say(Pair{{"help", "me"}, {after_verb(g, verb_row("help").imperative[0], pro(1))}}, "!");
  };
  c["where"] = [=] {  // Where do you live?
    return say(wh({"where"}, {"où"}, pro(1), verb("live")), "?");
  };
  c["what"] = [=] {  // What are you reading?
    return say(wh({"what"}, {"que"}, pro(1), verb("read", Tn::PresProg)), "?");
  };
  c["if"] = [=] {  // If it rains, we will stay at home.
    Pair p{{"if"}, {"si"}};
    const Pair a1 = statement(weather_it(), verb("rain"));
    VG stay = verb("stay", Tn::Future);
    stay.tail_en = {"at", "home"};
    stay.tail_fr = {"à la maison"};
    const Pair b = statement(pro(3), stay);
    append(p.en, a1.en);
    append(p.fr, a1.fr);
    p.en.push_back(",");
    p.fr.push_back(",");
    append(p.en, b.en);
    append(p.fr, b.fr);
    return say(p, ".");
  };
  c["when"] = [=] {  // When he arrives, we will eat.
    VG arrive = verb("arrive");
    arrive.fr_tense = static_cast<int>(Tn::Future);
    Pair p{{"when"}, {"quand"}};
    const Pair a1 = statement(pro(2), arrive), b = statement(pro(3), verb("eat", Tn::Future));
    append(p.en, a1.en);
    append(p.fr, a1.fr);
    p.en.push_back(",");
    p.fr.push_back(",");
    append(p.en, b.en);
    append(p.fr, b.fr);
    return say(p, ".");
  };
  c["try to"] = [=] {  // She tries to read the book.
    VG g = verb("try");
    g.inf_prep_fr = "de";
    VG r = verb("read");
    r.obj = shared(the("book"));
    g.inf = std::make_shared<VG>(r);
    return say(statement(pro(2, F), g), ".");
  };
  c["learn to"] = [=] {  // He learns to swim.
    VG g = verb("learn");
    g.inf_prep_fr = "à";
    g.inf = std::make_shared<VG>(verb("swim"));
    return say(statement(pro(2), g), ".");
  };
  c["want to"] = [=] {  // I don't want to eat bread.
    VG g = verb("want");
    g.neg = Ng::Not;
    VG e = verb("eat");
    e.obj = shared(mass("bread"));
    g.inf = std::make_shared<VG>(e);
    return say(statement(pro(0), g), ".");
  };
  c["a lot of"] = [=] {  // We have a lot of money.
    VG g;
    g.verb = &have_row();
    NP m = np_of(&noun_row("money"), false, Det::Quant);
    m.en_det = "a lot of";
    m.fr_det = "beaucoup de";
    g.obj = shared(m);
    return say(statement(pro(3), g), ".");
  };
  c["no money"] = [=] {  // He has no money.
    VG g;
    g.verb = &have_row();
    g.neg = Ng::Not;
    g.en_affirmative = true;
    NP m = np_of(&noun_row("money"), false, Det::Quant);
    m.en_det = "no";
    m.fr_det = "de";
    g.obj = shared(m);
    return say(statement(pro(2), g), ".");
  };
  c["was reading"] = [=] {  // He was reading a book.
    VG g = verb("read", Tn::PastProg);
    g.obj = shared(a("book"));
    return say(statement(pro(2), g), ".");
  };
  c["hungry"] = [=] {  // I am hungry.
    VG g;
    g.fr = &have_row();
    g.comp_en = {"hungry"};
    g.comp_fr = {"faim"};
    return say(statement(pro(0), g), ".");
  };
  c["afraid of"] = [=] {  // She is afraid of the dog.
    VG g;
    g.fr = &have_row();
    g.comp_en = {"afraid", "of", "the", "dog"};
    g.comp_fr = {"peur", "de", "le", "chien"};
    return say(statement(pro(2, F), g), ".");
  };
  c["it is raining"] = [=] { return say(statement(weather_it(), verb("rain", Tn::PresProg)), "."); };
  c["nice weather"] = [=] {  // The weather is nice.
    VG g;
    g.fr = &verb_row("do");
    g.comp_en = {"nice"};
    g.comp_fr = {"beau"};
    return say(statement(word_np("weather", "il", M, false, Det::Quant, "the", ""), g), ".");
  };
  c["age"] = [=] {  // I am ten years old.
    VG g;
    g.fr = &have_row();
    g.comp_en = {"ten", "years", "old"};
    g.comp_fr = {"dix", "ans"};
    return say(statement(pro(0), g), ".");
  };
  c["been to"] = [=] {  // She has never been to Paris.
    static LexVerb been = [] {
      LexVerb v = verb_row("go");
      v.en_pp = "been";
      return v;
    }();
    VG g;
    g.verb = &been;
    g.tense = Tn::Perfect;
    g.neg = Ng::Never;
    g.tail_en = {"to", "Paris"};
    g.tail_fr = {"à Paris"};
    return say(statement(pro(2, F), g), ".");
  };
  c["passive"] = [=] {  // The letter was written by Marie.
    VG g;
    g.adj = participle_adj(verb_row("write"));
    g.tense = Tn::Past;
    g.fr_tense = static_cast<int>(Tn::Perfect);
    g.tail_en = {"by", "Marie"};
    g.tail_fr = {"par", "Marie"};
    return say(statement(the("letter"), g), ".");
  };
  c["reported"] = [=] {  // She said that she was tired.
    VG said = verb("say", Tn::Past);
    VG tired;
    tired.adj = &adj_row("tired");
    tired.tense = Tn::Past;
    Pair p = statement(pro(2, F), said);
    p.en.push_back("that");
    p.fr.push_back("que");
    const Pair b = statement(pro(2, F), tired);
    append(p.en, b.en);
    append(p.fr, b.fr);
    return say(p, ".");
  };
  c["genitive"] = [=] {  // Marie's brother is tall.
    NP b = np_of(&noun_row("brother"), false, Det::Genitive);
    b.owner = shared(named("Marie", F));
    VG g;
    g.adj = &adj_row("tall");
    return say(statement(b, g), ".");
  };
  c["its"] = [=] {  // The cat is playing with its ball.
    NP ball = np_of(&noun_row("ball"), false, Det::Poss);
    ball.poss = 2;
    ball.its = true;
    VG g = verb("play", Tn::PresProg);
    g.tail_en = {"with"};
    append(g.tail_en, en_np(ball, true));
    g.tail_fr = {"avec"};
    append(g.tail_fr, fr_np(ball));
    return say(statement(the("cat"), g), ".");
  };
  c["nothing"] = [=] {  // I didn't see anything.
    VG g = verb("see", Tn::Past);
    g.neg = Ng::Nothing;
    return say(statement(pro(0), g), ".");
  };
  c["nobody"] = [=] {  // I didn't see anyone.
    VG g = verb("see", Tn::Past);
    g.neg = Ng::Nobody;
    return say(statement(pro(0), g), ".");
  };
  c["every morning"] = [=] {  // Every morning, he drinks tea.
    VG g = verb("drink");
    g.obj = shared(mass("tea"));
    Pair p = statement(pro(2), g);
    p.en.insert(p.en.begin(), {"every", "morning", ","});
    p.fr.insert(p.fr.begin(), {"tous les matins", ","});
    return say(p, ".");
  };
  c["there is no"] = [=] {  // There isn't any milk in the kitchen.
    Pair p{{"there", "isn't", "any", "milk", "in", "the", "kitchen"}, {"il", "ne", "y", "a", "pas"}};
    append(p.fr, fr_np(mass("milk"), true));
    p.fr.push_back("dans");
    append(p.fr, fr_np(the("kitchen")));
    return say(p, ".");
  };
  c["job after etre"] = [=] {  // She is a doctor. → Elle est médecin. (no article)
    VG g;
    g.comp_en = {"a", "doctor"};
    g.comp_fr = {"médecin"};
    return say(statement(pro(2, F), g), ".");
  };
  c["job negated"] = [=] {  // I am not a student. → Je ne suis pas étudiant.
    VG g;
    g.comp_en = {"a", "student"};
    g.comp_fr = {"étudiant"};
    g.neg = Ng::Not;
    return say(statement(pro(0), g), ".");
  };
  c["how much"] = [=] {  // How much water do you drink?
    return say(wh({"how", "much", "water"}, {"combien", "de", "eau"}, pro(1), verb("drink")), "?");
  };
  c["was doing when"] = [=] {  // I was reading when Marie arrived. → imparfait, quand, passé composé
    Pair p = statement(pro(0), verb("read", Tn::PastProg));
    p.en.push_back("when");
    p.fr.push_back("quand");
    const Pair b = statement(named("Marie", F), verb("arrive", Tn::Past));
    append(p.en, b.en);
    append(p.fr, b.fr);
    return say(p, ".");
  };

  return c;
}

// ---- the categories ---------------------------------------------------------------------------------

struct Category {
  const char* name;
  unsigned weight;
  Example (*sample)(Rng&);
};

// ---- jobs: "I am a student." ------------------------------------------------------------------------
// A profession or role after être takes no article: "I am a student." → "Je suis étudiant.", "She is a
// doctor." → "Elle est médecin.", "They are not teachers." → "Ils ne sont pas professeurs." With an
// adjective the article stays, and he / she / they become ce: "He is a good doctor." → "C'est un bon
// médecin."; "I am a good cook." → "Je suis un bon cuisinier." "This is a student." → "C'est un
// étudiant." The French noun agrees with the subject (infirmier / infirmière); I, you, we and they
// are masculine, as everywhere in this grammar.

struct Job {
  const char* en;
  const char* en_f;  // the English word for a woman where it differs (waitress, actress)
  const char* en_pl;
  const char* en_f_pl;
  std::array<const char*, 4> fr;  // ms, fs, mp, fp
};

const std::vector<Job>& jobs() {
  static const std::vector<Job> j{
      {"student", "student", "students", "students", {"étudiant", "étudiante", "étudiants", "étudiantes"}},
      {"doctor", "doctor", "doctors", "doctors", {"médecin", "médecin", "médecins", "médecins"}},
      {"teacher", "teacher", "teachers", "teachers", {"professeur", "professeure", "professeurs", "professeures"}},
      {"nurse", "nurse", "nurses", "nurses", {"infirmier", "infirmière", "infirmiers", "infirmières"}},
      {"engineer", "engineer", "engineers", "engineers", {"ingénieur", "ingénieure", "ingénieurs", "ingénieures"}},
      {"lawyer", "lawyer", "lawyers", "lawyers", {"avocat", "avocate", "avocats", "avocates"}},
      {"cook", "cook", "cooks", "cooks", {"cuisinier", "cuisinière", "cuisiniers", "cuisinières"}},
      {"singer", "singer", "singers", "singers", {"chanteur", "chanteuse", "chanteurs", "chanteuses"}},
      {"waiter", "waitress", "waiters", "waitresses", {"serveur", "serveuse", "serveurs", "serveuses"}},
      {"actor", "actress", "actors", "actresses", {"acteur", "actrice", "acteurs", "actrices"}},
      {"farmer", "farmer", "farmers", "farmers", {"agriculteur", "agricultrice", "agriculteurs", "agricultrices"}},
      {"writer", "writer", "writers", "writers", {"écrivain", "écrivaine", "écrivains", "écrivaines"}},
      {"baker", "baker", "bakers", "bakers", {"boulanger", "boulangère", "boulangers", "boulangères"}},
      {"artist", "artist", "artists", "artists", {"artiste", "artiste", "artistes", "artistes"}},
      {"pilot", "pilot", "pilots", "pilots", {"pilote", "pilote", "pilotes", "pilotes"}},
      {"journalist", "journalist", "journalists", "journalists", {"journaliste", "journaliste", "journalistes", "journalistes"}},
      {"dentist", "dentist", "dentists", "dentists", {"dentiste", "dentiste", "dentistes", "dentistes"}},
      {"secretary", "secretary", "secretaries", "secretaries", {"secrétaire", "secrétaire", "secrétaires", "secrétaires"}},
      {"musician", "musician", "musicians", "musicians", {"musicien", "musicienne", "musiciens", "musiciennes"}},
      {"police officer", "police officer", "police officers", "police officers", {"policier", "policière", "policiers", "policières"}},
      {"mechanic", "mechanic", "mechanics", "mechanics", {"mécanicien", "mécanicienne", "mécaniciens", "mécaniciennes"}},
      {"painter", "painter", "painters", "painters", {"peintre", "peintre", "peintres", "peintres"}},
      {"vet", "vet", "vets", "vets", {"vétérinaire", "vétérinaire", "vétérinaires", "vétérinaires"}},
  };
  return j;
}

Example job(Rng& rng) {
  const Vocab& V = vocab();
  std::vector<std::string> combos;
  // Who: a pronoun, a name, or a family member (my sister, his parents).
  NP s;
  const std::size_t who = uniform_below(rng, 100);
  if (who < 55) s = pronoun_subject(rng);
  else if (who < 75) s = name_np(rng);
  else {
    const LexNoun* n = pick(rng, V.family);
    const std::string& en = n->en;
    // "my brothers", not "my fathers"
    const bool one = en == "mother" || en == "father" || en == "wife" || en == "husband" || en == "grandmother" ||
                     en == "grandfather";
    s = noun_np(n, !one && chance(rng, 15));
    s.det = Det::Poss;
    static const std::array<int, 6> owner{0, 0, 1, 2, 3, 5};
    s.poss = owner[uniform_below(rng, owner.size())];
    s.person = s.plural ? 5 : 2;
  }
  const Job& jb = pick(rng, jobs());
  const bool pl = s.plural || s.person >= 3;
  const std::size_t i = form_index(s.gender, pl);
  const bool fem_en = feminine(s);
  Words en_job, fr_job;
  words_of(pl ? (fem_en ? jb.en_f_pl : jb.en_pl) : (fem_en ? jb.en_f : jb.en), en_job);
  fr_job.push_back(jb.fr[i]);
  combos.push_back(key("job", head(s), jb.en));
  const std::size_t form = uniform_below(rng, 100);
  if (form < 14) {  // with an adjective the article stays: "He is a good doctor." → "C'est un bon médecin."
    struct JA {
      const char* en;
      std::array<const char*, 4> fr;
      bool before;
    };
    static const std::vector<JA> adjs{{"good", {"bon", "bonne", "bons", "bonnes"}, true},
                                      {"bad", {"mauvais", "mauvaise", "mauvais", "mauvaises"}, true},
                                      {"young", {"jeune", "jeune", "jeunes", "jeunes"}, true},
                                      {"excellent", {"excellent", "excellente", "excellents", "excellentes"}, true},
                                      {"new", {"nouveau", "nouvelle", "nouveaux", "nouvelles"}, true},
                                      {"famous", {"célèbre", "célèbre", "célèbres", "célèbres"}, false}};
    const JA& a = pick(rng, adjs);
    VG g;
    g.tense = chance(rng, 75) ? Tn::Present : Tn::Past;
    negate(rng, g, 15);
    g.contract_subject = chance(rng, 30);
    if (!pl) g.comp_en.push_back("a");
    g.comp_en.push_back(a.en);
    append(g.comp_en, en_job);
    Words np_fr;
    // de bons médecins (des before an adjective that comes first); des médecins célèbres
    np_fr.push_back(pl ? (a.before ? "de" : "des") : feminine(s) ? "une" : "un");
    std::string adj = a.fr[i];
    if (a.before && adj == "nouveau" && vowel_sound(jb.fr[0])) adj = "nouvel";
    if (a.before) np_fr.push_back(adj);
    np_fr.push_back(jb.fr[i]);
    if (!a.before) np_fr.push_back(adj);
    combos.push_back(key("job_adj", a.en, jb.en));
    Pair p;
    if (s.det == Det::Pronoun && third(s)) {  // il / elle / ils / elles → ce
      p.en = statement(s, g).en;
      const bool past = g.tense == Tn::Past;
      const char* verb = pl ? (past ? "étaient" : "sont") : (past ? "était" : "est");
      // ce elides by hand before est / était (the joiner would write "cet").
      if (negated(g)) p.fr = {"ce", "ne", verb, "pas"};
      else if (pl && !past) p.fr = {"ce", "sont"};
      else p.fr = {std::string("c'") + verb};
      append(p.fr, np_fr);
    } else {
      g.comp_fr = np_fr;
      p = statement(s, g);
    }
    return done(end_with(p, "."), "job", combos);
  }
  if (form < 22) {  // "This is a student." → "C'est un étudiant." "That's my teacher." (no subject gender)
    Pair p;
    const bool plural = chance(rng, 20);
    const Job& j2 = jb;
    const bool fem = chance(rng, 40);
    const std::size_t k = form_index(fem ? Gender::Feminine : Gender::Masculine, plural);
    Words en_noun;
    words_of(plural ? (fem ? j2.en_f_pl : j2.en_pl) : (fem ? j2.en_f : j2.en), en_noun);
    // English shows the gender only for waitress / actress: keep the masculine where it does not.
    const bool shows = std::string(j2.en) != j2.en_f;
    const std::size_t kk = shows ? k : form_index(Gender::Masculine, plural);
    const bool that = chance(rng, 50);
    if (plural) p.en = {that ? "those" : "these", "are"};
    else p.en = {that ? "that's" : "this", that ? "" : "is", "a"};
    p.en.erase(std::remove(p.en.begin(), p.en.end(), std::string()), p.en.end());
    append(p.en, en_noun);
    p.fr = plural ? Words{"ce", "sont", "des"} : Words{"c'est", kk == 1 ? "une" : "un"};
    p.fr.push_back(j2.fr[kk]);
    combos.push_back(key("job_this", j2.en, plural ? "pl" : "sg"));
    return done(end_with(p, "."), "job", combos);
  }
  VG g;
  append(g.comp_en, pl ? Words{} : Words{"a"});
  append(g.comp_en, en_job);
  g.comp_fr = fr_job;
  const std::size_t t = uniform_below(rng, 100);
  if (t < 55) g.tense = Tn::Present;
  else if (t < 70) g.tense = Tn::Past;  // "was a teacher" → "était professeur"
  else if (t < 80) g.tense = Tn::Future;
  else {  // wants to be / would like to be / is going to be
    VG inner = g;
    g = VG{};
    const std::size_t m = uniform_below(rng, 3);
    if (m == 0) {
      g.verb = &verb_row("want");
      g.inf = std::make_shared<VG>(inner);
      g.tense = chance(rng, 75) ? Tn::Present : Tn::Past;
    } else {
      g = inner;
      if (m == 1) g.modal = Md::WouldLike;
      else g.tense = Tn::GoingTo;
    }
  }
  negate(rng, g, 20);
  if (g.neg != Ng::None && g.neg != Ng::Not) g.neg = Ng::Not;
  if (g.neg != Ng::None && !g.inf && g.modal == Md::None && g.tense != Tn::GoingTo && chance(rng, 20))
    g.neg = Ng::NoLonger;  // "She is no longer a nurse." → "Elle n'est plus infirmière."
  g.contract_subject = chance(rng, 35);
  combos.push_back(key("job_t", modal_name(g), jb.en));
  if (chance(rng, 15) && g.modal == Md::None && !g.inf) {  // "Is your sister a nurse?"
    g.contract_subject = false;
    g.neg = Ng::None;
    return done(end_with(yes_no(s, g), "?"), "job", combos);
  }
  return done(end_with(statement(s, g), "."), "job", combos);
}

Example imperative_or_let(Rng& rng) { return chance(rng, 8) ? let_me(rng) : imperative(rng); }

const std::vector<Category>& own_categories() {
  static const std::vector<Category> c{
      {"coord", 7, coordination},  {"modal", 8, modal},       {"adverb", 8, adverbial},
      {"dative", 5, dative},       {"exist", 4, there_is},    {"imperative", 5, imperative_or_let},
      {"compare", 5, comparison},  {"wh", 8, wh_question},    {"subord", 8, subordinate},
      {"infinitive", 6, infinitive}, {"quantity", 6, quantity}, {"idiom", 6, idiom},
      {"reported", 5, reported},   {"passive", 4, passive},   {"possessive", 4, possession},
      {"perfect", 4, perfect},     {"indefinite", 5, indefinite}, {"geo", 3, geography},
      {"linking", 7, linking},     {"topic", 5, topic},       {"phrase", 4, set_forms},
      {"job", 3, job},
  };
  return c;
}

// The wide grammar's categories keep this share of the everyday corpus, in their own proportions.
constexpr unsigned kWideShare = 30;

}  // namespace

const std::vector<std::string>& everyday_categories() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> all = grammar_categories();
    for (const Category& k : own_categories()) all.push_back(k.name);
    return all;
  }();
  return c;
}

std::size_t pick_everyday_category(Rng& rng) {
  const std::size_t wide = grammar_categories().size();
  static const std::vector<unsigned> weights = [] {
    unsigned own = 0;
    for (const Category& k : own_categories()) own += k.weight;
    // The wide categories as one block of kWideShare percent, then each of ours.
    std::vector<unsigned> w{own * kWideShare / (100 - kWideShare)};
    for (const Category& k : own_categories()) w.push_back(k.weight);
    return w;
  }();
  const std::size_t i = pick_weighted(rng, weights);
  return i == 0 ? pick_grammar_category(rng) : wide + i - 1;
}

std::vector<std::string> everyday_case_names() {
  std::vector<std::string> names;
  for (const auto& [name, build] : cases()) names.push_back(name);
  return names;
}

Example everyday_case(const std::string& name) {
  const auto all = cases();
  auto it = all.find(name);
  if (it == all.end()) throw InputError("no everyday case named \"" + name + "\"");
  return it->second();
}

Example sample_everyday(Rng& rng, std::size_t category) {
  const std::size_t wide = grammar_categories().size();
  if (category < wide) return sample_grammar(rng, category);
  return own_categories().at(category - wide).sample(rng);
}

}  // namespace attnlab::corpus
