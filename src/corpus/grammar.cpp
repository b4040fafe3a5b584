#include "corpus/grammar.hpp"
#include "corpus/grammar_parts.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "corpus/lexicon.hpp"
#include "corpus/tables.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace attnlab::corpus {

// The wide grammar's parts are in namespace gram (grammar_parts.hpp), so that the everyday grammar
// (everyday.cpp) builds on them; the categories below use them as they always did.
namespace gram {

std::string key(std::string_view family, std::string_view a, std::string_view b) {
  return fmt::format("{}:{}|{}", family, a, b);
}

// ---- spelling --------------------------------------------------------------------------------------

// Splits items that hold several words ("près de", "tarte aux pommes") so the rules see every word.
Words split_items(const Words& items) {
  Words out;
  for (const std::string& item : items) {
    std::size_t start = 0;
    for (std::size_t sp = item.find(' '); sp != std::string::npos; sp = item.find(' ', start)) {
      if (sp > start) out.push_back(item.substr(start, sp - start));
      start = sp + 1;
    }
    if (start < item.size()) out.push_back(item.substr(start));
  }
  return out;
}

// French words that begin with an aspirated h (le héros, la hauteur): no elision before them. The
// nouns come from the tables (elides = 0); the few adjectives and numbers are listed here.
const std::set<std::string>& aspirated_h() {
  static const std::set<std::string> words = [] {
    std::set<std::string> w{"haut", "haute", "hauts", "hautes", "huit", "hardi", "hardie", "hardis", "hardies",
                            "honteux", "honteuse", "honteuses", "hideux", "hideuse", "hideuses"};
    for (const LexNoun& n : lexicon_tables().nouns)
      if (!n.elides) {
        w.insert(text::fold_case(n.fr.substr(0, n.fr.find(' '))));
        w.insert(text::fold_case(n.fr_plural.substr(0, n.fr_plural.find(' '))));
      }
    return w;
  }();
  return words;
}

// The templates' rule (lexicon.hpp: a vowel or h), less the aspirated h the tables know of.
bool vowel_sound(const std::string& word) {
  return !aspirated_h().count(text::fold_case(word)) && starts_with_vowel_sound(word);
}

// French text from words: contractions (à le → au, de les → des, de des → de), mon/ton/son for a
// feminine possessive and cet before a vowel sound, then elision. "=le", "=la", "=les" are object
// pronouns, which elide (je l'aime) but never contract (commencer à le voir).
std::string join_french(const Words& items) {
  const Words w = split_items(items);
  Words out;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (i + 1 < w.size()) {
      const std::string &a = w[i], &b = w[i + 1];
      // "le" before a vowel sound elides instead: de l'outil, à l'hôtel (not du outil, au hôtel).
      const bool le = b == "le" && !(i + 2 < w.size() && vowel_sound(w[i + 2]));
      const char* merged = a == "à" && le           ? "au"
                           : a == "à" && b == "les" ? "aux"
                           : a == "de" && le        ? "du"
                           : a == "de" && b == "les" ? "des"
                           : a == "de" && b == "des" ? "de"
                                                     : nullptr;
      if (merged) {
        out.push_back(merged);
        ++i;
        continue;
      }
    }
    out.push_back(w[i]);
  }
  static const std::set<std::string> elides{"le", "la", "=le", "=la", "de", "ne", "je", "me", "te", "se", "que", "jusque"};
  for (std::size_t i = 0; i + 1 < out.size(); ++i) {
    std::string& x = out[i];
    const std::string& next = out[i + 1];
    if (!vowel_sound(next)) continue;
    if (x == "ma") x = "mon";
    else if (x == "ta") x = "ton";
    else if (x == "sa") x = "son";
    else if (x == "ce") x = "cet";
    else if (x == "si" && (next == "il" || next == "ils")) x = "s'";
    else if (elides.count(x)) x = x.substr(x[0] == '=' ? 1 : 0, x.size() - (x[0] == '=' ? 2 : 1)) + "'";
  }
  for (std::string& x : out)
    if (!x.empty() && x[0] == '=') x.erase(0, 1);
  return text::detokenize(out);
}

// English text from words, with "a" → "an" before a vowel sound.
std::string join_english(Words w) {
  for (std::size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] != "a") continue;
    const std::string next = text::fold_case(w[i + 1]);
    bool vowel = !next.empty() && std::string_view("aeiou").find(next[0]) != std::string_view::npos;
    for (std::string_view p : {"uni", "use", "usu", "eu", "one", "once"})
      if (next.rfind(p, 0) == 0) vowel = false;
    for (std::string_view p : {"hour", "honest", "honor", "heir"})
      if (next.rfind(p, 0) == 0) vowel = true;
    if (vowel) w[i] = "an";
  }
  return text::detokenize(w);
}

// ---- the words the grammar uses -------------------------------------------------------------------

// Rows the tables hold but the grammar leaves out: nouns filed under a concrete kind that are not
// one in everyday use (a "person" row for "type" or "spirit"), words whose translation depends on a
// context the grammar does not build (bank: the sense category builds it), verbs that need a
// complement English or French grammar wants and this grammar does not give (seem, put, tell), and
// rows whose French lemma is wrong in everyday use. scripts/lexicon.sh is where a row is fixed;
// this list only keeps the grammar's sentences clean meanwhile.
const std::set<std::string, std::less<>> kSkipNouns{
    "type", "spirit", "nature", "character", "authority", "date", "help", "page", "youth", "beauty", "soul", "talent",
    "target", "personality", "transfer", "fate", "ideal", "pitcher", "screw", "gram", "white", "cancer", "suicide",
    "trailer", "replacement", "terror", "rider", "speaker", "fellow", "counsel", "official", "mate", "general",
    "guerrilla", "relative", "executive", "bride", "scholar", "player", "dealer", "farmer", "master", "slave",
    "work", "need", "figure", "record", "subject", "total", "existence", "stock", "element", "addition", "means",
    "objective", "portion", "solution", "agent", "anode", "platform", "suit", "coat", "court", "staff", "shot",
    "bit", "base", "block", "load", "cover", "copy", "stand", "breath", "flesh", "tissue", "section", "panel",
    "material", "institution", "structure", "facility", "protection", "preparation", "particle", "switch",
    "headquarters", "machinery", "cell", "artery", "clothes", "hair", "bank", "state", "point", "side", "end",
    "position", "right", "source", "direction", "range", "front", "top", "scene", "union", "goal", "department",
    "bottom", "spot", "hell", "site", "post", "presence", "seat", "trend", "quarter", "medium", "origin", "safety",
    "core", "setting", "plot", "tip", "minimum", "inside", "outside", "extreme", "reservation", "crest", "interior",
    "realm", "tract", "orbit", "green", "female", "male", "human", "mankind", "giant", "wing", "feather",
    "tail", "livestock", "cattle", "bat", "fly", "oyster", "egg", "insect", "builder", "god", "devil", "angel",
    "stockholder", "taxpayer", "voter", "legislator", "linguist", "deputy", "delegate", "commissioner", "counsel",
    "substitute", "investor", "operator", "consumer", "representative", "spokesman", "successor", "carrier",
    "performer", "administrator", "adviser", "consultant", "educator", "chairman", "ally", "host", "guard", "chief"};
const std::set<std::string, std::less<>> kSkipVerbs{
    "be", "do", "get", "let", "seem", "become", "say", "tell", "give", "put", "mean", "provide", "allow", "consider",
    "suggest", "require", "involve", "expect", "include", "try", "begin", "start", "continue", "hope", "wish",
    "decide", "agree", "appear", "happen", "remain", "tend", "fail", "manage", "refuse", "intend", "afford", "ask",
    "add", "set", "turn", "lead", "enter", "move", "look", "listen", "wait", "talk", "speak", "think", "work", "live",
    "sit", "stand", "lie", "rise", "fall", "belong", "depend", "refer", "point", "deal", "care", "apply", "act",
    "exist", "occur", "result", "consist", "contribute", "please", "insist", "arise", "emerge", "participate",
    "proceed", "last", "compete", "prevail", "suit", "doubt", "resemble", "correspond", "persist", "benefit",
    "coincide", "interfere", "release", "seek", "represent", "determine", "establish", "assume", "indicate",
    "claim", "argue", "remember", "need", "run", "play", "face", "matter", "state", "charge", "suppose", "wonder",
    "pass", "report", "concern", "mark", "note", "form", "cover", "serve", "raise"};
const std::set<std::string, std::less<>> kSkipAdjectives{
    "fortunate", "right", "left", "present", "past", "top", "upper", "mere", "prime", "plain", "grand",
    "just", "fair", "close", "near", "far", "light", "own", "certain", "particular", "whole", "entire", "main",
    "principal", "maximum", "minimum", "additional", "likely", "able", "unable", "sure", "aware", "sorry", "glad",
    "alive", "ill", "possible", "general", "local", "public", "social", "political", "economic", "national",
    "federal", "fiscal", "nuclear", "military", "religious", "sexual", "racial", "communist", "liberal",
    "legislative", "governmental", "constitutional", "ideological", "administrative", "residential", "metropolitan",
    "municipal", "clinical", "structural", "operational", "primary", "secondary", "initial", "final", "total",
    "actual", "real", "individual", "specific", "different", "similar", "equal", "equivalent", "corresponding",
    "relative", "respective", "mean", "wrong", "hard", "straight", "sweet", "fresh", "cool", "safe", "broad",
    "outside", "inner", "outer", "middle", "average", "standard", "future", "current", "immediate", "previous",
    "annual", "daily", "regular", "usual", "normal", "ordinary", "common", "double", "single", "objective",
    "potential", "proper", "odd", "raw", "tough", "firm", "mad", "crazy", "dead", "native", "western"};

// The everyday vocabulary the grammar draws from: the rows ranked within kMaxRank by English frequency,
// every animal, and the words of the explainers' sentences (source_sentences). A rarer word is in the
// tables but not in the corpus, so the model's vocabulary stays what a small model can learn well.
constexpr int kMaxRank = 2000;
constexpr int kMaxAbstractRank = 1000;
const std::set<std::string, std::less<>> kAlwaysNouns{"puppy", "mouse", "journey", "table", "street", "animal", "phone",
                                                      "pie", "apple pie", "apple", "step", "cat", "dog", "king", "queen"};
// Adjectives of everyday sentences ranked below kMaxRank in Brown, or added by the lexicon review.
const std::set<std::string, std::less<>> kAlwaysAdjectives{"wooden", "delicious", "tired", "ugly", "cheap", "kind",
                                                           "angry", "afraid", "sleepy", "clever", "wet", "smart"};


const LexVerb& must_verb(const LexiconTables& t, std::string_view en, std::string_view sense) {
  const LexVerb* v = t.verb(en, sense);
  if (!v) throw InputError(fmt::format("data/lexicon/verbs.tsv: the grammar needs the verb \"{}\"{}", en,
                                       sense.empty() ? "" : fmt::format(" (sense {})", sense)));
  return *v;
}

const Pools& pools() {
  static const Pools built = [] {
    const LexiconTables& t = lexicon_tables();
    Pools p;
    // Rows of the everyday scope came after this grammar's corpus was fixed: it never draws them.
    for (const LexNoun& n : t.nouns) {
      if (n.everyday_only || !n.sense.empty() || kSkipNouns.count(n.en) || (n.en.find(' ') != std::string::npos && n.en != "apple pie"))
        continue;
      if (n.rank > kMaxRank && n.kind != NounKind::Animal && !kAlwaysNouns.count(n.en)) continue;
      switch (n.kind) {
        case NounKind::Person: p.persons.push_back(&n); break;
        case NounKind::Animal: p.animals.push_back(&n); break;
        case NounKind::Place: p.places.push_back(&n); break;
        case NounKind::Thing: p.things.push_back(&n); break;
        case NounKind::Abstract:
          if (n.rank <= kMaxAbstractRank || kAlwaysNouns.count(n.en)) p.abstracts.push_back(&n);
          break;
      }
    }
    p.foods = rows_named(t.nouns, {"bread", "cheese", "coffee", "tea", "water", "milk", "soup", "cake", "rice", "meat",
                                   "fruit", "pie", "apple pie", "wine", "chocolate", "sugar", "salt", "butter", "apple"});
    p.gadgets = rows_named(t.nouns, {"phone", "telephone", "computer", "car", "radio", "machine", "camera", "watch",
                                     "device", "product", "engine", "screen", "television", "program"});
    // Verbs the tables mark transitive (in French) that English uses without an object.
    static const std::set<std::string, std::less<>> english_intransitive{
        "swim", "lean", "smile", "sleep", "walk", "travel", "rest", "laugh", "cry", "arrive", "return", "jump",
        "hurry", "rush", "shout", "sing", "dance", "hide", "fly", "kneel", "sit", "breathe", "sigh", "shine"};
    for (const LexVerb& v : t.verbs) {
      if (v.everyday_only || !v.sense.empty() || kSkipVerbs.count(v.en) || v.en.find(' ') != std::string::npos) continue;
      if (english_intransitive.count(v.en)) {
        p.intransitive.push_back(&v);
        continue;
      }
      if (v.rank > kMaxRank && v.en != "adopt" && v.en != "unveil" && v.en != "chase") continue;
      (v.transitive ? p.transitive : p.intransitive).push_back(&v);
    }
    // Verbs English uses without an object although French gives them one; added to the intransitive
    // pool ("The cat sleeps." is in it already).
    for (const LexVerb* v : rows_named(t.verbs, {"eat", "read", "write", "sing", "dance", "swim", "run", "play", "drink",
                                                "cook", "work", "win", "lose", "wait", "listen", "think", "live"}))
      p.intransitive.push_back(v);
    for (const LexAdjective& a : t.adjectives) {
      if (a.everyday_only || !a.sense.empty() || kSkipAdjectives.count(a.en) || a.en.find(' ') != std::string::npos) continue;
      if (a.rank > kMaxRank && !kAlwaysAdjectives.count(a.en)) continue;
      (a.before ? p.before : p.after).push_back(&a);
    }
    p.animate = rows_named(t.adjectives, {"tired", "sick", "sad", "nervous", "anxious", "proud", "lonely", "curious",
                                          "weak", "happy", "hungry", "angry", "scared", "afraid", "sleepy", "brave",
                                          "kind", "clever", "smart", "wet"});
    p.place_props = rows_named(t.adjectives, {"narrow", "wide", "deep", "dark", "empty", "dirty", "crowded", "busy",
                                              "steep", "quiet", "noisy"});
    p.thing_props = rows_named(t.adjectives, {"heavy", "expensive", "dirty", "fragile", "big", "large"});
    p.food_props = rows_named(t.adjectives, {"hot", "cold", "bitter", "dry", "salty", "spicy", "delicious"});
    for (const LexAdverb& a : t.adverbs)
      if (!a.everyday_only && a.sense.empty() && a.en.size() > 4 && a.en.compare(a.en.size() - 2, 2, "ly") == 0 && a.fr.find(' ') == std::string::npos &&
          a.en != "only" && a.en != "early" && a.en != "likely" && a.en != "nearly" && a.en != "really")
        p.manner.push_back(&a);
    for (const LexAdverb* a : rows_named(t.adverbs, {"often", "always", "sometimes", "already", "finally"}))
      p.manner.push_back(a);
    p.be = &must_verb(t, "be");
    p.have = &must_verb(t, "have");
    p.chase = &must_verb(t, "chase");
    p.pursue = &must_verb(t, "chase", "pursue");
    for (auto* pool : {&p.persons, &p.animals, &p.places, &p.things})
      if (pool->empty()) throw InputError("data/lexicon/nouns.tsv: a noun kind the grammar needs has no rows");
    if (p.transitive.empty() || p.intransitive.empty() || p.before.empty() || p.after.empty() || p.animate.empty() ||
        p.place_props.empty() || p.manner.empty() || p.foods.empty() || p.gadgets.empty())
      throw InputError("data/lexicon: a word class the grammar needs has no rows");
    return p;
  }();
  return built;
}

// ---- noun phrases ----------------------------------------------------------------------------------



bool feminine(const NP& np) { return np.gender == Gender::Feminine; }
std::size_t form_index(Gender g, bool plural) { return (g == Gender::Feminine ? 1 : 0) + (plural ? 2 : 0); }

std::string pron_en(const NP& np, bool object) {
  if (np.thing) return np.plural ? (object ? "them" : "they") : "it";
  if (np.person == 2) return object ? (feminine(np) ? "her" : "him") : (feminine(np) ? "she" : "he");
  return object ? kPronObjEn[np.person] : kPronEn[np.person];
}
std::string pron_fr(const NP& np) {
  if (np.person == 2) return feminine(np) ? "elle" : "il";
  if (np.person == 5) return feminine(np) ? "elles" : "ils";
  return kPronFr[np.person];
}


Words en_rel(const Rel& r, const NP& antecedent) {
  Words w;
  if (r.commas) w.push_back(",");
  if (!r.en_word.empty()) w.push_back(r.en_word);
  if (r.object_rel) {
    append(w, en_np(*r.subject));
    append(w, en_vp(r.vp, *r.subject));
  } else {
    append(w, en_vp(r.vp, antecedent));
  }
  if (r.commas) w.push_back(",");
  return w;
}

Words fr_rel(const Rel& r, const NP& antecedent) {
  Words w;
  if (r.commas) w.push_back(",");
  if (r.object_rel) {
    w.push_back("que");
    append(w, fr_np(*r.subject));
    append(w, fr_vp(r.vp, *r.subject, std::make_pair(antecedent.gender, antecedent.plural)));
  } else {
    w.push_back("qui");
    append(w, fr_vp(r.vp, antecedent, std::nullopt));
  }
  if (r.commas) w.push_back(",");
  return w;
}

// The everyday grammar's words of a noun phrase: a quantifier's, a bare noun's.
void words_of(std::string_view text, Words& w) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t sp = text.find(' ', start);
    if (sp == std::string_view::npos) sp = text.size();
    if (sp > start) w.emplace_back(text.substr(start, sp - start));
    start = sp + 1;
  }
}

Words en_np(const NP& np, bool object) {
  if (np.det == Det::Pronoun) return {pron_en(np, object)};
  Words w;
  if (np.det == Det::Coord) {  // "the boy and the girl", "tea, coffee or milk", "both … and …"
    words_of(np.en_det, w);
    for (std::size_t i = 0; i < np.parts.size(); ++i) {
      if (i > 0) w.push_back(i + 1 == np.parts.size() ? np.conj_en : ",");
      append(w, en_np(np.parts[i], object));
    }
    return w;
  }
  switch (np.det) {
    case Det::Partitive:
    case Det::Quant: words_of(np.en_det, w); break;
    case Det::Genitive:  // "the man's", "Marie's"
      w = en_np(*np.owner, false);
      w.back() += "'s";
      break;
    case Det::The: w.push_back("the"); break;
    case Det::A:  // a plural indefinite is bare in English: "des pommes" → "apples"
      if (!np.plural) w.push_back("a");
      break;
    case Det::Poss: w.push_back(np.its ? "its" : kPossEn[np.poss]); break;
    case Det::This: w.push_back(np.plural ? "these" : "this"); break;
    case Det::AllThe: append(w, {"all", "the"}); break;
    case Det::Every: w.push_back("every"); break;
    case Det::Number: w.push_back(kNumEn[np.number]); break;
    default: break;
  }
  if (np.det == Det::Name) {
    w.push_back(np.name);
  } else {
    if (np.adj_before) w.push_back(np.adj_before->en);
    if (np.adj_after) w.push_back(np.adj_after->en);
    if (np.noun) w.push_back(np.plural ? np.noun->en_plural : np.noun->en);
    else words_of(np.en_word, w);  // the everyday grammar's nouns given as words
  }
  if (np.pp) {
    w.push_back(np.pp->en);
    append(w, en_np(*np.pp->np, true));
  }
  if (np.rel) append(w, en_rel(*np.rel, np));
  return w;
}

Words fr_np(const NP& np, bool negated_object) {
  if (np.det == Det::Pronoun) return {pron_fr(np)};
  Words w;
  if (np.det == Det::Coord) {  // "le garçon et la fille"
    for (std::size_t i = 0; i < np.parts.size(); ++i) {
      if (i > 0) w.push_back(i + 1 == np.parts.size() ? np.conj_fr : ",");
      append(w, fr_np(np.parts[i], negated_object));
    }
    return w;
  }
  const bool f = feminine(np), pl = np.plural;
  if (np.det == Det::Name) {
    w.push_back(np.name);
  } else {
    switch (np.det) {
      case Det::The:
      case Det::Genitive:  // la voiture de l'homme
      case Det::Generic: w.push_back(pl ? "les" : f ? "la" : "le"); break;
      case Det::Partitive:  // du pain, de la soupe, de l'eau, des pommes; pas de pain
        if (negated_object || (pl && np.adj_before)) w.push_back("de");
        else if (pl) w.push_back("des");
        else append(w, {"de", f ? "la" : "le"});
        break;
      case Det::Quant: words_of(np.fr_det, w); break;
      case Det::A:
      case Det::Some:
        // pas de chien; de vieilles tables (des before an adjective that precedes the noun)
        w.push_back(negated_object || (pl && np.adj_before) ? "de" : pl ? "des" : f ? "une" : "un");
        break;
      case Det::Poss: {
        static const std::array<std::array<const char*, 3>, 6> forms{
            {{"mon", "ma", "mes"}, {"ton", "ta", "tes"}, {"son", "sa", "ses"}, {"son", "sa", "ses"}, {"notre", "notre", "nos"}, {"leur", "leur", "leurs"}}};
        w.push_back(forms[np.poss][pl ? 2 : f ? 1 : 0]);
        break;
      }
      case Det::This: w.push_back(pl ? "ces" : f ? "cette" : "ce"); break;
      case Det::AllThe: append(w, {f ? "toutes" : "tous", "les"}); break;
      case Det::Every: w.push_back("chaque"); break;
      case Det::Number: w.push_back(np.number == 1 ? (f ? "une" : "un") : kNumFr[np.number]); break;
      default: break;
    }
    const std::string& noun = np.noun ? (pl ? np.noun->fr_plural : np.noun->fr) : np.fr_word;
    if (np.adj_before) {
      const LexAdjective& a = *np.adj_before;
      const std::size_t i = form_index(np.gender, pl);
      w.push_back(i == 0 && !a.ms_vowel.empty() && vowel_sound(noun) ? a.ms_vowel : a.fr[i]);
    }
    w.push_back(noun);
    if (np.adj_after) w.push_back(np.adj_after->fr[form_index(np.gender, pl)]);
    if (np.owner) {
      w.push_back("de");
      append(w, fr_np(*np.owner));
    }
  }
  if (np.pp) {
    w.push_back(np.pp->fr);
    append(w, fr_np(*np.pp->np));
  }
  if (np.rel) append(w, fr_rel(*np.rel, np));
  return w;
}

// ---- verb phrases ----------------------------------------------------------------------------------

std::string be_en(int person, bool past) {
  if (past) return person == 0 || person == 2 ? "was" : "were";
  return person == 0 ? "am" : person == 2 ? "is" : "are";
}
// "isn't" or "is not" ("am not" either way: English has no contraction of it).
Words be_not_en(int person, bool past, bool contracted) {
  if (!contracted || (person == 0 && !past)) return {be_en(person, past), "not"};
  return {be_en(person, past) + "n't"};
}

// Negates `vp` with probability `percent`. A third of the negations are written out in full ("is not",
// "did not"): learners type both, and a model that read only "isn't" drops the "not" of "is not".
void maybe_negate(Rng& rng, VP& vp, unsigned percent) {
  vp.negated = chance(rng, percent);
  if (vp.negated) vp.contracted = !chance(rng, 33);
}

bool progressive(Tense t) { return t == Tense::PastProgressive || t == Tense::PresentProgressive; }

// The object after the verb (a noun phrase; an object pronoun is a clitic in French, after the
// verb in English) and the adjunct.
void en_complements(const VP& vp, Words& w) {
  if (!vp.particle_en.empty()) w.push_back(vp.particle_en);
  if (vp.object) append(w, en_np(*vp.object, true));
  if (vp.adjunct) {
    w.push_back(vp.adjunct->en);
    append(w, en_np(*vp.adjunct->np, true));
  }
}

Words en_vp(const VP& vp, const NP& subject, bool question) {
  const int p = subject.person;
  Words w;
  const std::string adv = vp.adverb ? vp.adverb->en : "";
  auto add_adv = [&] {
    if (!adv.empty()) w.push_back(adv);
  };
  if (!vp.verb) {  // copula
    const bool past = vp.tense != Tense::Present;
    if (!question) {
      if (vp.negated) append(w, be_not_en(p, past, vp.contracted));
      else w.push_back(be_en(p, past));
    }
    add_adv();
    if (!vp.intens_en.empty()) w.push_back(vp.intens_en);
    if (vp.predicate) w.push_back(vp.predicate->en);
    else en_complements(vp, w);
    return w;
  }
  const LexVerb& v = *vp.verb;
  switch (vp.tense) {
    case Tense::Present:
      if (question) w.push_back(v.en);
      else if (vp.negated && vp.contracted) append(w, {p == 2 ? "doesn't" : "don't", v.en});
      else if (vp.negated) append(w, {p == 2 ? "does" : "do", "not", v.en});
      else {
        add_adv();
        w.push_back(p == 2 ? v.en_3sg : v.en);
      }
      break;
    case Tense::Past:
      if (question) w.push_back(v.en);
      else if (vp.negated) append(w, vp.contracted ? Words{"didn't", v.en} : Words{"did", "not", v.en});
      else {
        add_adv();
        w.push_back(v.en_past);
      }
      break;
    case Tense::PastProgressive:
    case Tense::PresentProgressive: {
      const bool past = vp.tense == Tense::PastProgressive;
      if (!question) {
        if (vp.negated) append(w, be_not_en(p, past, vp.contracted));
        else w.push_back(be_en(p, past));
      }
      add_adv();
      w.push_back(v.en_ing);
      break;
    }
  }
  en_complements(vp, w);
  return w;
}

// `preceding_object`: the gender and number of a direct object placed before the verb (a clitic
// pronoun, or the antecedent of "que"), with which a participle conjugated with avoir agrees.
Words fr_vp(const VP& vp, const NP& subject, std::optional<std::pair<Gender, bool>> preceding_object) {
  const Pools& P = pools();
  const int p = subject.person;
  Words w;
  if (vp.negated) w.push_back("ne");
  if (!vp.verb) {  // copula: présent, or imparfait for every past
    w.push_back(vp.tense == Tense::Present ? P.be->present[p] : P.be->imperfect[p]);
    if (vp.negated) w.push_back("pas");
    if (vp.adverb) w.push_back(vp.adverb->fr);
    if (!vp.intens_fr.empty()) w.push_back(vp.intens_fr);
    if (vp.predicate) {
      w.push_back(vp.predicate->fr[form_index(subject.gender, subject.plural)]);
    } else {
      w.push_back(vp.adjunct->fr);
      append(w, fr_np(*vp.adjunct->np));
    }
    return w;
  }
  // "was chasing" is an ongoing pursuit (poursuivre); "chased" a chase (chasser).
  const LexVerb& v = vp.fr_verb ? *vp.fr_verb : (vp.verb == P.chase && progressive(vp.tense)) ? *P.pursue : *vp.verb;
  const NP* clitic = vp.object && vp.object->det == Det::Pronoun ? vp.object.get() : nullptr;
  if (clitic) {
    static const std::array<const char*, 6> obj{"me", "te", "", "nous", "vous", ""};
    if (clitic->person == 2) w.push_back(feminine(*clitic) ? "=la" : "=le");
    else if (clitic->person == 5) w.push_back("=les");
    else w.push_back(obj[clitic->person]);
    preceding_object = std::make_pair(clitic->gender, clitic->plural);
  }
  if (vp.tense == Tense::Past) {
    w.push_back(v.etre ? P.be->present[p] : P.have->present[p]);
    if (vp.negated) w.push_back("pas");
    std::size_t i = 0;
    if (v.etre) i = form_index(subject.gender, subject.plural);
    else if (preceding_object) i = form_index(preceding_object->first, preceding_object->second);
    w.push_back(v.participle[i]);
  } else {
    w.push_back(vp.tense == Tense::PastProgressive ? v.imperfect[p] : v.present[p]);
    if (vp.negated) w.push_back("pas");
  }
  if (vp.adverb) w.push_back(vp.adverb->fr);
  if (!vp.prep_fr.empty()) w.push_back(vp.prep_fr);
  if (vp.object && !clitic) append(w, fr_np(*vp.object, vp.negated && vp.prep_fr.empty()));
  if (vp.adjunct) {
    w.push_back(vp.adjunct->fr);
    append(w, fr_np(*vp.adjunct->np));
  }
  return w;
}

// ---- choosing --------------------------------------------------------------------------------------

struct Prep {
  const char *en, *fr;
  bool places;  // takes a place or a thing (else a person, an animal or a thing)
};
const std::vector<Prep> kPreps{{"under", "sous", true},       {"on", "sur", true},          {"in", "dans", true},
                               {"near", "près de", true},     {"behind", "derrière", true}, {"in front of", "devant", true},
                               {"next to", "à côté de", true}, {"across", "à travers", true}, {"with", "avec", false},
                               {"without", "sans", false},    {"towards", "vers", true}};

// A prepositional verb: English verb and particle, French infinitive and preposition ("" when the
// French verb takes a direct object: "looks at the dog" → "regarde le chien").
struct Frame {
  const char *en, *particle, *fr, *prep;
  bool places;  // its object is a place or a thing (else a person or an animal)
};
const std::vector<Frame> kFrames{{"look", "at", "regarder", "", false},    {"listen", "to", "écouter", "", false},
                                 {"wait", "for", "attendre", "", false},   {"look", "for", "chercher", "", true},
                                 {"ask", "for", "demander", "", true},     {"start", "with", "commencer", "par", true},
                                 {"begin", "with", "commencer", "par", true}, {"end", "with", "finir", "par", true},
                                 {"think", "about", "penser", "à", false}, {"talk", "to", "parler", "à", false},
                                 {"talk", "about", "parler", "de", true},  {"depend", "on", "dépendre", "de", false},
                                 {"belong", "to", "appartenir", "à", false}, {"go", "to", "aller", "à", true},
                                 {"come", "from", "venir", "de", true},   {"live", "in", "vivre", "dans", true},
                                 {"arrive", "at", "arriver", "à", true},  {"laugh", "at", "rire", "de", false}};

const LexVerb* french_row(std::string_view fr) {
  for (const LexVerb& v : lexicon_tables().verbs)
    if (v.fr == fr && !v.everyday_only) return &v;
  return nullptr;
}

Tense pick_tense(Rng& rng) {
  static const std::vector<unsigned> w{40, 35, 15, 10};
  return static_cast<Tense>(pick_weighted(rng, w));
}

NP noun_np(const LexNoun* n, bool plural) {
  NP np;
  np.noun = n;
  np.plural = plural;
  np.person = plural ? 5 : 2;
  np.gender = n->gender;
  return np;
}

// A determiner for a noun phrase; `plural` may be changed to fit it. `bare` is the determiner a bare
// plural stands for in this position (Generic for a subject, Some for an object), or The for none.
void pick_det(Rng& rng, NP& np, Det bare) {
  const std::size_t r = uniform_below(rng, 100);
  if (r < 40) np.det = Det::The;
  else if (r < 58) {
    np.det = Det::A;
    np.plural = false;
  }
  else if (r < 76) {
    np.det = Det::Poss;
    np.poss = static_cast<int>(uniform_below(rng, 6));
    if (np.poss == 4) np.poss = 1;  // "your" is tu's: ton, ta, tes
  } else if (r < 82) np.det = Det::This;
  else if (r < 87) {
    np.det = Det::AllThe;
    np.plural = true;
  } else if (r < 90) {
    np.det = Det::Every;
    np.plural = false;
  } else if (r < 96) {
    np.det = Det::Number;
    np.number = 1 + static_cast<int>(uniform_below(rng, 10));
    np.plural = np.number > 1;
  } else if (bare != Det::The) {
    np.det = bare;
    np.plural = true;
  } else {
    np.det = Det::The;
  }
  np.person = np.plural ? 5 : 2;
}

// Up to two adjectives, one on each side of the French noun (la vieille table en bois).
void pick_adjectives(Rng& rng, NP& np, unsigned percent) {
  const Pools& P = pools();
  if (!chance(rng, percent)) return;
  const std::size_t r = uniform_below(rng, 10);
  if (r < 4 || r == 9) np.adj_before = pick(rng, P.before);
  if (r >= 4) np.adj_after = pick(rng, P.after);
}

const LexNoun* pick_noun(Rng& rng, std::initializer_list<const std::vector<const LexNoun*>*> pools_) {
  std::size_t total = 0;
  for (auto* p : pools_) total += p->size();
  std::size_t i = uniform_below(rng, total);
  for (auto* p : pools_) {
    if (i < p->size()) return (*p)[i];
    i -= p->size();
  }
  return nullptr;
}

const std::vector<std::pair<const char*, Gender>> kNames{
    {"Marie", Gender::Feminine}, {"Paul", Gender::Masculine}, {"Alice", Gender::Feminine}, {"Tom", Gender::Masculine},
    {"Emma", Gender::Feminine},  {"Lucas", Gender::Masculine}, {"Sarah", Gender::Feminine}, {"David", Gender::Masculine},
    {"Anna", Gender::Feminine},  {"Hugo", Gender::Masculine}};

NP pronoun_np(int person, Gender g) {
  NP np;
  np.det = Det::Pronoun;
  np.person = person;
  np.gender = g;
  np.plural = person >= 3;
  return np;
}

// English marks gender only in he/she: I, you, we and they are masculine in French (je suis allé,
// ils), so the French never depends on a choice the English does not show.
NP random_pronoun(Rng& rng) {
  static const std::array<int, 6> persons{0, 1, 2, 2, 3, 5};
  const int p = persons[uniform_below(rng, persons.size())];
  return pronoun_np(p, p == 2 && chance(rng, 50) ? Gender::Feminine : Gender::Masculine);
}

NP name_np(Rng& rng) {
  const auto& [name, g] = kNames[uniform_below(rng, kNames.size())];
  NP np;
  np.det = Det::Name;
  np.name = name;
  np.gender = g;
  return np;
}

// Someone or something that acts: a person or an animal (a noun phrase), a name or a pronoun.
NP agent(Rng& rng, bool allow_pronoun) {
  const Pools& P = pools();
  const std::size_t r = uniform_below(rng, 100);
  if (allow_pronoun && r < 20) return random_pronoun(rng);
  if (r < 28) return name_np(rng);
  NP np = noun_np(pick_noun(rng, {&P.persons, &P.animals, &P.animals}), chance(rng, 30));
  pick_det(rng, np);
  pick_adjectives(rng, np, 25);
  return np;
}

std::shared_ptr<NP> thing_np(Rng& rng, bool places, Det bare, unsigned adj_percent) {
  const Pools& P = pools();
  const LexNoun* n = places ? pick_noun(rng, {&P.places, &P.things, &P.things})
                            : pick_noun(rng, {&P.persons, &P.animals, &P.things, &P.things, &P.abstracts});
  auto np = std::make_shared<NP>(noun_np(n, chance(rng, 25)));
  pick_det(rng, *np, bare);
  pick_adjectives(rng, *np, adj_percent);
  // "the door of the house" → "la porte de la maison" (de le → du, de les → des in join_french).
  if (chance(rng, 6)) {
    auto of = std::make_shared<PP>();
    of->en = "of";
    of->fr = "de";
    of->np = std::make_shared<NP>(noun_np(pick_noun(rng, {&P.places, &P.things, &P.persons}), chance(rng, 20)));
    const std::size_t r = uniform_below(rng, 10);
    of->np->det = r < 7 ? Det::The : r < 9 ? Det::Poss : Det::A;
    of->np->poss = static_cast<int>(uniform_below(rng, 6));
    np->pp = of;
  }
  return np;
}

std::shared_ptr<PP> random_pp(Rng& rng) {
  auto pp = std::make_shared<PP>();
  // "down the street" → "dans la rue": "down" only before a street or a road.
  if (chance(rng, 8)) {
    const LexNoun* n = lexicon_tables().noun(chance(rng, 60) ? "street" : "road");
    if (n) {
      pp->en = "down";
      pp->fr = "dans";
      pp->np = std::make_shared<NP>(noun_np(n, false));
      if (chance(rng, 30)) pp->np->det = Det::Poss, pp->np->poss = static_cast<int>(uniform_below(rng, 4));
      return pp;
    }
  }
  const Prep& p = kPreps[uniform_below(rng, kPreps.size())];
  pp->en = p.en;
  pp->fr = p.fr;
  pp->np = thing_np(rng, p.places);
  if (pp->np->det == Det::Every || pp->np->det == Det::AllThe) pp->np->det = Det::The;
  return pp;
}

const LexAdverb* maybe_adverb(Rng& rng, unsigned percent) {
  return chance(rng, percent) ? pick(rng, pools().manner) : nullptr;
}

// A verb phrase with a verb (not the copula); `kind` 0 transitive, 1 prepositional, 2 intransitive.
VP verb_phrase(Rng& rng, int kind, bool allow_pronoun_object, std::vector<std::string>& combos, const NP& subject) {
  const Pools& P = pools();
  VP vp;
  vp.tense = pick_tense(rng);
  maybe_negate(rng, vp, 20);
  if (!vp.negated) vp.adverb = maybe_adverb(rng, 15);
  const std::string subj = subject.noun ? subject.noun->en : subject.det == Det::Name ? "name" : "pronoun";
  if (kind == 1) {
    const Frame& f = kFrames[uniform_below(rng, kFrames.size())];
    vp.verb = lexicon_tables().verb(f.en);
    vp.fr_verb = french_row(f.fr);
    if (vp.verb && vp.fr_verb) {
      vp.particle_en = f.particle;
      vp.prep_fr = f.prep;
      vp.object = thing_np(rng, f.places);
      if (vp.object->det == Det::Every && chance(rng, 50)) vp.object->det = Det::The;
      combos.push_back(key("vo", std::string(f.en) + "_" + f.particle, vp.object->noun->en));
      return vp;
    }
    kind = 0;
    vp.fr_verb = nullptr;
  }
  if (kind == 0) {
    vp.verb = pick(rng, P.transitive);
    if (allow_pronoun_object && chance(rng, 15)) {
      NP o = random_pronoun(rng);
      if (subject.det == Det::Pronoun && o.person == subject.person && o.person != 2 && o.person != 5)
        o = pronoun_np(subject.person == 1 ? 0 : 1, o.gender);
      vp.object = std::make_shared<NP>(o);
      combos.push_back(key("vp", vp.verb->en, "pronoun"));
    } else {
      vp.object = thing_np(rng, false, Det::Some);
      combos.push_back(key("vo", vp.verb->en, vp.object->noun->en));
    }
  } else {
    vp.verb = pick(rng, P.intransitive);
    combos.push_back(key("sv", subj, vp.verb->en));
    if (chance(rng, 35)) vp.adjunct = random_pp(rng);
  }
  return vp;
}

void add_adjective_keys(const NP& np, std::vector<std::string>& combos) {
  if (!np.noun) return;
  if (np.adj_before) combos.push_back(key("adj", np.noun->en, np.adj_before->en));
  if (np.adj_after) combos.push_back(key("adj", np.noun->en, np.adj_after->en));
}

Example finish(const Words& en, const Words& fr, std::string category, std::vector<std::string> combos) {
  Example e;
  e.en = join_english(en);
  e.fr = join_french(fr);
  e.category = std::move(category);
  std::sort(combos.begin(), combos.end());
  combos.erase(std::unique(combos.begin(), combos.end()), combos.end());
  e.combos = std::move(combos);
  return e;
}

std::string lower(std::string_view s) { return text::fold_case(s); }

// ---- categories ------------------------------------------------------------------------------------

struct Opening {
  const char *en, *fr;
  int tense;  // -1 any, 0 present only, 1 past only
};
const std::vector<Opening> kOpenings{{"yesterday", "hier", 1},           {"today", "aujourd'hui", -1},
                                     {"every morning", "chaque matin", 0}, {"last night", "la nuit dernière", 1},
                                     {"now", "maintenant", 0},            {"in the morning", "le matin", 0}};

// "Your journey starts with one step." → "Ton voyage commence par un pas.": an abstract subject and a
// verb whose English "with" is French "par".
Example starts_with(Rng& rng) {
  const Pools& P = pools();
  static const std::vector<std::pair<const char*, const char*>> frames{{"start", "commencer"}, {"begin", "commencer"}, {"end", "finir"}};
  const auto& [en_verb, fr_verb] = frames[uniform_below(rng, frames.size())];
  NP subject = noun_np(pick_noun(rng, {&P.abstracts, &P.things}), chance(rng, 20));
  pick_det(rng, subject, Det::Generic);
  if (subject.det == Det::Number) subject.det = Det::Poss;
  VP vp;
  vp.verb = lexicon_tables().verb(en_verb);
  vp.fr_verb = french_row(fr_verb);
  if (!vp.verb || !vp.fr_verb) throw InputError(fmt::format("data/lexicon/verbs.tsv: the grammar needs \"{}\" → {}", en_verb, fr_verb));
  vp.particle_en = "with";
  vp.prep_fr = "par";
  vp.tense = chance(rng, 60) ? Tense::Present : Tense::Past;
  maybe_negate(rng, vp, 10);
  vp.object = std::make_shared<NP>(noun_np(pick_noun(rng, {&P.abstracts, &P.things}), false));
  const std::size_t r = uniform_below(rng, 10);
  vp.object->det = r < 4 ? Det::Number : r < 7 ? Det::A : r < 9 ? Det::The : Det::Poss;
  vp.object->poss = static_cast<int>(uniform_below(rng, 4));
  pick_adjectives(rng, *vp.object, 20);
  Words en = en_np(subject), fr = fr_np(subject);
  append(en, en_vp(vp, subject));
  en.push_back(".");
  append(fr, fr_vp(vp, subject, std::nullopt));
  fr.push_back(".");
  std::vector<std::string> combos{key("sv", subject.noun->en, en_verb), key("vo", std::string(en_verb) + "_with", vp.object->noun->en)};
  add_adjective_keys(*vp.object, combos);
  return finish(en, fr, "clause", combos);
}

Example clause(Rng& rng) {
  if (chance(rng, 8)) return starts_with(rng);
  std::vector<std::string> combos;
  const NP subject = agent(rng);
  const std::size_t r = uniform_below(rng, 100);
  VP vp = verb_phrase(rng, r < 55 ? 0 : r < 70 ? 1 : 2, true, combos, subject);
  if (!vp.adjunct && vp.object && chance(rng, 15)) vp.adjunct = random_pp(rng);
  Words en, fr;
  if (chance(rng, 10)) {
    const Opening& o = kOpenings[uniform_below(rng, kOpenings.size())];
    const bool past = vp.tense == Tense::Past || vp.tense == Tense::PastProgressive;
    if (o.tense < 0 || (o.tense == 1) == past) {
      append(en, {o.en, ","});
      append(fr, {o.fr, ","});
    }
  }
  append(en, en_np(subject));
  append(en, en_vp(vp, subject));
  en.push_back(".");
  append(fr, fr_np(subject));
  append(fr, fr_vp(vp, subject, std::nullopt));
  fr.push_back(".");
  add_adjective_keys(subject, combos);
  if (vp.object) add_adjective_keys(*vp.object, combos);
  return finish(en, fr, "clause", combos);
}

// A copular predicate for a noun phrase: "is too tired" → "est trop fatigué".
VP copula(Rng& rng, const LexAdjective* pred) {
  VP vp;
  vp.predicate = pred;
  vp.tense = chance(rng, 50) ? Tense::Present : Tense::Past;
  maybe_negate(rng, vp, 20);
  if (!vp.negated && chance(rng, 15)) {
    static const std::vector<std::pair<const char*, const char*>> advs{
        {"finally", "enfin"}, {"always", "toujours"}, {"often", "souvent"}, {"sometimes", "parfois"}, {"really", "vraiment"}};
    const auto& [en, fr] = advs[uniform_below(rng, advs.size())];
    if (const LexAdverb* a = lexicon_tables().adverb(en); a && a->fr == fr) vp.adverb = a;
  }
  if (chance(rng, 35)) {
    static const std::vector<std::pair<const char*, const char*>> intens{{"too", "trop"}, {"very", "très"}, {"so", "si"}};
    const auto& [en, fr] = intens[uniform_below(rng, intens.size())];
    vp.intens_en = en;
    vp.intens_fr = fr;
  }
  return vp;
}

// Where something is: "The cat is near the river." → "Le chat est près de la rivière."
std::shared_ptr<PP> location_pp(Rng& rng) {
  static const std::vector<Prep> where{{"under", "sous", true},  {"on", "sur", true},          {"in", "dans", true},
                                       {"near", "près de", true}, {"behind", "derrière", true}, {"in front of", "devant", true},
                                       {"next to", "à côté de", true}};
  auto pp = std::make_shared<PP>();
  const Prep& p = where[uniform_below(rng, where.size())];
  pp->en = p.en;
  pp->fr = p.fr;
  pp->np = thing_np(rng, true);
  if (pp->np->det != Det::A && pp->np->det != Det::Poss) pp->np->det = Det::The;
  return pp;
}

// "The cat is (not) near the river.", "The keys were under the table."
Example located(Rng& rng) {
  NP subject = chance(rng, 60) ? agent(rng) : *thing_np(rng, false, Det::The, 20);
  if (subject.det == Det::Every || subject.det == Det::AllThe || subject.det == Det::Generic) subject.det = Det::The;
  VP vp;
  vp.tense = chance(rng, 55) ? Tense::Present : Tense::Past;
  maybe_negate(rng, vp, 30);
  // Meant to give "is still near" → "est toujours près de", but the lexicon's "still" is "encore", so
  // no sentence gets it. The draw stays: removing it would change the corpus the shipped
  // translate-wide learned from (docs/models.md); fix it with the next retraining.
  if (!vp.negated && chance(rng, 10)) vp.adverb = lexicon_tables().adverb("still");
  if (vp.adverb && vp.adverb->fr != "toujours") vp.adverb = nullptr;
  vp.adjunct = location_pp(rng);
  Words en = en_np(subject), fr = fr_np(subject);
  append(en, en_vp(vp, subject));
  en.push_back(".");
  append(fr, fr_vp(vp, subject, std::nullopt));
  fr.push_back(".");
  std::vector<std::string> combos{key("loc", subject.noun ? subject.noun->en : subject.det == Det::Name ? "name" : "pronoun",
                                      vp.adjunct->np->noun->en)};
  add_adjective_keys(subject, combos);
  add_adjective_keys(*vp.adjunct->np, combos);
  return finish(en, fr, "copula", combos);
}

Example copular(Rng& rng) {
  if (chance(rng, 30)) return located(rng);
  const Pools& P = pools();
  NP subject;
  const LexAdjective* pred = nullptr;
  const std::size_t r = uniform_below(rng, 100);
  if (r < 20) {  // "Apple pie is delicious." "Bread is cheap."
    subject = noun_np(pick(rng, P.foods), false);
    subject.det = chance(rng, 50) ? Det::Generic : Det::The;
    pred = chance(rng, 60) ? pick(rng, P.food_props) : pick(rng, chance(rng, 50) ? P.before : P.after);
  } else if (r < 45) {
    subject = agent(rng);
    pred = chance(rng, 60) ? pick(rng, P.animate) : pick(rng, chance(rng, 50) ? P.before : P.after);
  } else {
    subject = *thing_np(rng, true, Det::Generic, 20);
    pred = pick(rng, chance(rng, 50) ? P.before : P.after);
  }
  if (subject.det == Det::Generic && !subject.plural && subject.noun && !std::count(P.foods.begin(), P.foods.end(), subject.noun))
    subject.plural = true, subject.person = 5;
  const VP vp = copula(rng, pred);
  Words en = en_np(subject), fr = fr_np(subject);
  append(en, en_vp(vp, subject));
  en.push_back(".");
  append(fr, fr_vp(vp, subject, std::nullopt));
  fr.push_back(".");
  std::vector<std::string> combos{key("adj", subject.noun ? subject.noun->en : subject.det == Det::Name ? "name" : "pronoun", pred->en)};
  add_adjective_keys(subject, combos);
  return finish(en, fr, "copula", combos);
}

Example relative(Rng& rng) {
  const Pools& P = pools();
  std::vector<std::string> combos;
  NP subject = noun_np(pick_noun(rng, {&P.persons, &P.animals, &P.animals, &P.things}), chance(rng, 25));
  pick_det(rng, subject, Det::The);
  if (subject.det == Det::AllThe || subject.det == Det::Every) subject.det = Det::The;
  pick_adjectives(rng, subject, 20);
  auto rel = std::make_shared<Rel>();
  rel->object_rel = chance(rng, 45);
  rel->commas = chance(rng, 25);
  const bool person = subject.noun->kind == NounKind::Person;
  if (rel->commas) rel->en_word = person ? "who" : "which";
  else if (rel->object_rel && chance(rng, 20)) rel->en_word = "";
  else rel->en_word = person && chance(rng, 50) ? "who" : chance(rng, 80) ? "that" : person ? "who" : "which";
  if (rel->object_rel) {
    rel->subject = std::make_shared<NP>(chance(rng, 60) ? random_pronoun(rng) : agent(rng, false));
    rel->vp.verb = pick(rng, P.transitive);
    rel->vp.tense = pick_tense(rng);
    maybe_negate(rng, rel->vp, 10);
    combos.push_back(key("vo", rel->vp.verb->en, subject.noun->en));
  } else {
    rel->vp = verb_phrase(rng, uniform_below(rng, 100) < 70 ? 0 : 2, false, combos, subject);
    if (!rel->vp.adjunct && rel->vp.object && chance(rng, 30)) rel->vp.adjunct = random_pp(rng);
  }
  subject.rel = rel;
  VP main;
  if (chance(rng, 50)) {
    main = copula(rng, subject.noun->kind == NounKind::Thing ? pick(rng, chance(rng, 50) ? P.before : P.after)
                                                              : pick(rng, P.animate));
    if (chance(rng, 20)) {  // "The cat that I adopted is under the table."
      main.predicate = nullptr;
      main.intens_en.clear();
      main.intens_fr.clear();
      main.adjunct = location_pp(rng);
      combos.push_back(key("loc", subject.noun->en, main.adjunct->np->noun->en));
    } else {
      combos.push_back(key("adj", subject.noun->en, main.predicate->en));
    }
  } else {
    main.verb = pick(rng, P.intransitive);
    main.tense = pick_tense(rng);
    maybe_negate(rng, main, 10);
    if (!main.negated) main.adverb = maybe_adverb(rng, 15);
    combos.push_back(key("sv", subject.noun->en, main.verb->en));
  }
  Words en = en_np(subject), fr = fr_np(subject);
  append(en, en_vp(main, subject));
  en.push_back(".");
  append(fr, fr_vp(main, subject, std::nullopt));
  fr.push_back(".");
  add_adjective_keys(subject, combos);
  Example e = finish(en, fr, "relative", combos);
  if (!rel->en_word.empty()) {
    e.focus_en = rel->en_word;
    e.focus_fr = rel->object_rel ? "que" : "qui";
    const auto fr_tokens = text::tokenize(e.fr);
    if (rel->object_rel && std::find(fr_tokens.begin(), fr_tokens.end(), "que") == fr_tokens.end()) e.focus_fr = "qu'";
    e.context_en = {lower(subject.noun->en)};
  }
  return e;
}

// "The animal didn't cross the street because it was too tired.": the predicate fits only one of
// the two nouns, both come in both genders, so il/elle (ils/elles) needs the right noun.
Example coreference(Rng& rng) {
  const Pools& P = pools();
  static const std::vector<const char*> place_verbs{"cross", "reach", "explore", "visit", "find", "clean", "leave", "paint"};
  static const std::vector<const char*> food_verbs{"eat", "drink", "taste", "finish", "cook", "buy"};
  static const std::vector<const char*> thing_verbs{"carry", "buy", "lift", "take", "open", "sell", "keep"};
  NP a = noun_np(pick(rng, P.animals), chance(rng, 25));
  pick_det(rng, a, Det::The);
  if (a.det == Det::AllThe || a.det == Det::Every || a.det == Det::Number) a.det = Det::The;
  const std::size_t kind = uniform_below(rng, 3);
  const auto& verbs = kind == 0 ? place_verbs : kind == 1 ? food_verbs : thing_verbs;
  const LexVerb* verb = nullptr;
  for (int tries = 0; tries < 8 && !verb; ++tries) {
    const LexVerb* v = lexicon_tables().verb(verbs[uniform_below(rng, verbs.size())]);
    if (v && v->transitive && !v->etre) verb = v;
  }
  if (!verb) verb = lexicon_tables().verb("see");
  const auto& objects = kind == 0 ? P.places : kind == 1 ? P.foods : P.things;
  const auto& props = kind == 0 ? P.place_props : kind == 1 ? P.food_props : P.thing_props;
  auto obj = std::make_shared<NP>(noun_np(pick(rng, objects), chance(rng, 25)));
  pick_det(rng, *obj, Det::The);
  if (obj->det == Det::AllThe || obj->det == Det::Every || obj->det == Det::Number || obj->det == Det::A) obj->det = Det::The;
  const bool to_animal = chance(rng, 50);
  const NP& ref = to_animal ? a : *obj;
  const LexAdjective* pred = pick(rng, to_animal ? P.animate : props);
  VP vp;
  vp.verb = verb;
  vp.tense = chance(rng, 80) ? Tense::Past : Tense::PastProgressive;
  if (vp.tense == Tense::Past) maybe_negate(rng, vp, 60);
  vp.object = obj;
  Words en = en_np(a), fr = fr_np(a);
  append(en, en_vp(vp, a));
  append(fr, fr_vp(vp, a, std::nullopt));
  NP it = pronoun_np(ref.plural ? 5 : 2, ref.gender);
  const std::string it_en = ref.plural ? "they" : "it";
  append(en, {"because", it_en, ref.plural ? "were" : "was", "too", pred->en, "."});
  const std::string il = pron_fr(it);
  append(fr, {"parce", "que", il, P.be->imperfect[it.person], "trop", pred->fr[form_index(ref.gender, ref.plural)], "."});
  Example e = finish(en, fr, "coref", {key("adj", ref.noun->en, pred->en), key("vo", verb->en, obj->noun->en)});
  e.focus_en = it_en;
  e.focus_fr = il;
  // A compound's head word ("apple pie" → pie): context words are single words of the sentence.
  const std::string& ref_en = ref.plural ? ref.noun->en_plural : ref.noun->en;
  e.context_en = {lower(ref_en.substr(ref_en.rfind(' ') + 1))};
  e.verb_en = lower(vp.negated ? verb->en : vp.tense == Tense::Past ? verb->en_past : verb->en_ing);
  e.subject_en = lower(a.plural ? a.noun->en_plural : a.noun->en);
  return e;
}

// Apple the company against apple the fruit; "chased" (chasser) against "was chasing" (poursuivre).
Example sense(Rng& rng) {
  const Pools& P = pools();
  const std::size_t r = uniform_below(rng, 100);
  if (r < 35) {  // Apple unveiled a new phone.
    static const std::vector<const char*> verbs{"unveil", "sell", "launch", "design", "build", "make", "create", "produce"};
    NP apple;
    apple.det = Det::Name;
    apple.name = "Apple";
    apple.gender = Gender::Feminine;
    VP vp;
    vp.verb = lexicon_tables().verb(verbs[uniform_below(rng, verbs.size())]);
    if (!vp.verb || !vp.verb->transitive) vp.verb = lexicon_tables().verb("unveil");
    vp.tense = chance(rng, 50) ? Tense::Past : Tense::Present;
    maybe_negate(rng, vp, 10);
    auto obj = std::make_shared<NP>(noun_np(pick(rng, P.gadgets), chance(rng, 30)));
    obj->det = chance(rng, 60) ? Det::A : Det::The;
    if (obj->plural && obj->det == Det::A && chance(rng, 50)) obj->det = Det::Some;  // "sells computers"
    if (chance(rng, 60)) {
      static const std::vector<const char*> adjs{"new", "small", "expensive", "cheap", "fast", "beautiful", "strange"};
      const LexAdjective* a = lexicon_tables().adjective(adjs[uniform_below(rng, adjs.size())]);
      if (a) (a->before ? obj->adj_before : obj->adj_after) = a;
    }
    vp.object = obj;
    Words en = en_np(apple), fr = fr_np(apple);
    append(en, en_vp(vp, apple));
    append(fr, fr_vp(vp, apple, std::nullopt));
    en.push_back(".");
    fr.push_back(".");
    Example e = finish(en, fr, "sense", {key("apple", "company", vp.verb->en)});
    e.focus_en = "apple";
    e.focus_fr = "apple";
    e.context_en = {lower(vp.verb->en_3sg), lower(obj->noun->en)};
    return e;
  }
  if (r < 65) {  // apple the fruit: "Apple pie is delicious.", "The boy ate an apple."
    const LexNoun* apple = lexicon_tables().noun("apple");
    const LexNoun* pie = lexicon_tables().noun("apple pie");
    Words en, fr;
    std::string focus_fr = "pomme";
    std::string ctx;
    if (pie && chance(rng, 50)) {
      NP s = noun_np(pie, false);
      s.det = chance(rng, 60) ? Det::Generic : chance(rng, 50) ? Det::The : Det::Poss;
      s.poss = static_cast<int>(uniform_below(rng, 4));
      const VP vp = copula(rng, pick(rng, chance(rng, 70) ? P.food_props : P.after));
      en = en_np(s);
      fr = fr_np(s);
      append(en, en_vp(vp, s));
      append(fr, fr_vp(vp, s, std::nullopt));
      focus_fr = "pommes";
      ctx = "pie";
    } else if (apple) {
      const NP s = agent(rng);
      VP vp;
      static const std::vector<const char*> verbs{"eat", "buy", "wash", "cut", "like", "take", "find", "pick"};
      vp.verb = lexicon_tables().verb(verbs[uniform_below(rng, verbs.size())]);
      if (!vp.verb || !vp.verb->transitive) vp.verb = lexicon_tables().verb("eat");
      vp.tense = pick_tense(rng);
      auto obj = std::make_shared<NP>(noun_np(apple, chance(rng, 40)));
      obj->det = chance(rng, 50) ? Det::A : Det::The;
      if (chance(rng, 40)) obj->adj_after = lexicon_tables().adjective(chance(rng, 50) ? "red" : "green");
      vp.object = obj;
      en = en_np(s);
      fr = fr_np(s);
      append(en, en_vp(vp, s));
      append(fr, fr_vp(vp, s, std::nullopt));
      focus_fr = obj->plural ? "pommes" : "pomme";
      ctx = lower(vp.verb->en);
    }
    en.push_back(".");
    fr.push_back(".");
    Example e = finish(en, fr, "sense", {key("apple", "fruit", ctx)});
    e.focus_en = "apple";
    for (const auto& w : text::tokenize(e.en))
      if (w == "apples") e.focus_en = "apples";
    e.focus_fr = focus_fr;
    e.context_en = {ctx};
    return e;
  }
  // chase: "The dog chased the cat." (a chassé) / "The dog was chasing the cats." (poursuivait)
  const NP s = agent(rng, false);
  VP vp;
  vp.verb = P.chase;
  vp.tense = chance(rng, 50) ? Tense::Past : chance(rng, 70) ? Tense::PastProgressive : Tense::PresentProgressive;
  maybe_negate(rng, vp, 15);
  if (!vp.negated) vp.adverb = maybe_adverb(rng, 25);
  vp.object = std::make_shared<NP>(noun_np(pick_noun(rng, {&P.animals, &P.persons}), chance(rng, 40)));
  pick_det(rng, *vp.object, Det::Some);
  if (chance(rng, 25)) vp.adjunct = random_pp(rng);
  Words en = en_np(s), fr = fr_np(s);
  append(en, en_vp(vp, s));
  append(fr, fr_vp(vp, s, std::nullopt));
  en.push_back(".");
  fr.push_back(".");
  const bool pursue = progressive(vp.tense);
  Example e = finish(en, fr, "sense", {key("chase", pursue ? "pursue" : "chase", vp.object->noun->en)});
  e.focus_en = pursue ? "chasing" : vp.tense == Tense::Past && !vp.negated ? "chased" : "chase";
  const LexVerb& v = pursue ? *P.pursue : *P.chase;
  const int p = s.person;
  e.focus_fr = vp.tense == Tense::Past ? v.participle[0]
               : vp.tense == Tense::PastProgressive ? v.imperfect[p]
                                                    : v.present[p];
  // The auxiliary's first word as the tokenizer splits it ("wasn't" → wasn 't; "was not" → was not).
  if (pursue) {
    std::string aux = be_not_en(p, vp.tense == Tense::PastProgressive, vp.negated && vp.contracted).front();
    if (vp.negated && vp.contracted) aux = aux.substr(0, aux.size() - 2);
    e.context_en = {lower(aux)};
  }
  return e;
}

// "I love you." "We know him." "She saw them." (Elle les a vus.)
Example pronouns(Rng& rng) {
  const NP subject = random_pronoun(rng);
  VP vp;
  vp.verb = pick(rng, pools().transitive);
  vp.tense = pick_tense(rng);
  maybe_negate(rng, vp, 20);
  NP o = random_pronoun(rng);
  // Not "I love me" or "we know us" (French would need a reflexive).
  const auto speaker = [](int p) { return p == 0 || p == 3; };
  if ((o.person == subject.person && o.person != 2 && o.person != 5) || (speaker(o.person) && speaker(subject.person)))
    o = pronoun_np(subject.person == 1 ? 0 : 1, o.gender);
  if (chance(rng, 25)) o = name_np(rng);
  vp.object = std::make_shared<NP>(o);
  Words en = en_np(subject), fr = fr_np(subject);
  append(en, en_vp(vp, subject));
  en.push_back(".");
  append(fr, fr_vp(vp, subject, std::nullopt));
  fr.push_back(".");
  return finish(en, fr, "pronoun", {key("pro", vp.verb->en, o.det == Det::Name ? "name" : "pronoun")});
}

// "Did the boy cross the street?" → "Est-ce que le garçon a traversé la rue ?"
Example question(Rng& rng) {
  const Pools& P = pools();
  std::vector<std::string> combos;
  NP subject = agent(rng);
  VP vp;
  if (chance(rng, 30)) {
    vp = copula(rng, pick(rng, chance(rng, 50) ? P.animate : P.after));
    vp.negated = false;
    vp.adverb = nullptr;
    combos.push_back(key("adj", subject.noun ? subject.noun->en : "pronoun", vp.predicate->en));
  } else {
    vp = verb_phrase(rng, uniform_below(rng, 100) < 70 ? 0 : 2, true, combos, subject);
    vp.negated = false;
    vp.adverb = nullptr;
  }
  Words en;
  const int p = subject.person;
  if (!vp.verb) en.push_back(be_en(p, vp.tense != Tense::Present));
  else if (vp.tense == Tense::Present) en.push_back(p == 2 ? "does" : "do");
  else if (vp.tense == Tense::Past) en.push_back("did");
  else en.push_back(be_en(p, vp.tense == Tense::PastProgressive));
  append(en, en_np(subject));
  append(en, en_vp(vp, subject, true));
  en.push_back("?");
  Words fr{"est-ce", "que"};
  append(fr, fr_np(subject));
  append(fr, fr_vp(vp, subject, std::nullopt));
  fr.push_back("?");
  add_adjective_keys(subject, combos);
  return finish(en, fr, "question", combos);
}

}  // namespace gram

using namespace gram;

const std::vector<std::string>& grammar_categories() {
  static const std::vector<std::string> c{"clause", "relative", "copula", "coref", "sense", "pronoun", "question"};
  return c;
}

std::size_t pick_grammar_category(Rng& rng) {
  static const std::vector<unsigned> weights{28, 20, 12, 16, 10, 7, 7};
  return pick_weighted(rng, weights);
}

Example sample_grammar(Rng& rng, std::size_t category) {
  switch (category) {
    case 0: return clause(rng);
    case 1: return relative(rng);
    case 2: return copular(rng);
    case 3: return coreference(rng);
    case 4: return sense(rng);
    case 5: return pronouns(rng);
    default: return question(rng);
  }
}

const std::vector<Example>& source_sentences() {
  static const std::vector<Example> s = [] {
    auto ex = [](const char* en, const char* fr, const char* category, const char* focus_en = "", const char* focus_fr = "") {
      Example e;
      e.en = en;
      e.fr = fr;
      e.category = category;
      e.focus_en = focus_en;
      e.focus_fr = focus_fr;
      return e;
    };
    return std::vector<Example>{
        ex("The animal didn't cross the street because it was too tired.",
           "L'animal n'a pas traversé la rue parce qu'il était trop fatigué.", "coref", "it", "il"),
        ex("The animal didn't cross the street because it was too wide.",
           "L'animal n'a pas traversé la rue parce qu'elle était trop large.", "coref", "it", "elle"),
        ex("The boy trains the puppy.", "Le garçon entraîne le chiot.", "sense", "trains", "entraîne"),
        ex("The cat that I adopted sleeps.", "Le chat que j'ai adopté dort.", "relative", "that", "que"),
        ex("The cat that chased the mouse under the old wooden table was tired.",
           "Le chat qui a chassé la souris sous la vieille table en bois était fatigué.", "relative", "that", "qui"),
        ex("The cat, which was happily chasing all the dogs down the street, was finally tired.",
           "Le chat, qui poursuivait joyeusement tous les chiens dans la rue, était enfin fatigué.", "relative", "which", "qui"),
        ex("Apple unveiled a new phone.", "Apple a dévoilé un nouveau téléphone.", "sense", "apple", "apple"),
        ex("Apple pie is delicious.", "La tarte aux pommes est délicieuse.", "sense", "apple", "pommes"),
        ex("I love you.", "Je t'aime.", "pronoun"),
        ex("Your journey starts with one step.", "Ton voyage commence par un pas.", "clause"),
    };
  }();
  return s;
}

std::string french_text(const std::vector<std::string>& words) { return join_french(words); }

bool is_source_sentence(const std::string& en) {
  auto norm = [](std::string_view s) {
    std::string t = text::fold_case(s);
    while (!t.empty() && (t.back() == '.' || t.back() == ' ' || t.back() == '!' || t.back() == '?')) t.pop_back();
    return t;
  };
  static const std::set<std::string> keys = [&] {
    std::set<std::string> k;
    for (const Example& e : source_sentences()) k.insert(norm(e.en));
    return k;
  }();
  return keys.count(norm(en)) > 0;
}

}  // namespace attnlab::corpus
