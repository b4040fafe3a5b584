#include "corpus/corpus.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

#include "corpus/grammar.hpp"
#include "corpus/lexicon.hpp"
#include "corpus/random.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace attnlab::corpus {

namespace {

using Words = std::vector<std::string>;

void append(Words& w, const Words& more) { w.insert(w.end(), more.begin(), more.end()); }
std::string str(std::string_view v) { return std::string(v); }
std::string en_noun(const Noun& n, bool plural) { return str(plural ? n.en_plural : n.en); }
std::string key(std::string_view family, std::string_view a, std::string_view b) {
  return fmt::format("{}:{}|{}", family, a, b);
}
// Noun–adjective pairs share one key family whether the adjective is an attribute ("the tired dog")
// or a coreference predicate ("... because it was too tired"): a pair held out for test appears in
// training in neither form.
std::string adj_key(const Noun& n, const Adjective& a) { return key("adj", n.en, a.en); }
// `e` with the words that decide its focus word (Example::context_en); multi-word items are split, and
// the words in `skip` (articles, "to") left out.
// `e` with a verb of its English sentence and that verb's subject (Example::verb_en, subject_en).
// Multi-word verbs ("waits for") are recorded by their first word.
Example with_subject(Example e, std::string_view verb, std::string_view subject) {
  auto lower = [](std::string_view w) {
    std::string out(w.substr(0, w.find(' ')));
    for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
  };
  e.verb_en = lower(verb);
  e.subject_en = lower(subject);
  return e;
}

// The fields every template writes, so that a braced list names them all (Example's later fields,
// the probes' context, are filled by with_context and with_subject).
struct Pair {
  std::string en, fr, category, focus_en, focus_fr;
  std::vector<std::string> combos;
};
Example example(Pair p) {
  Example e;
  e.en = std::move(p.en);
  e.fr = std::move(p.fr);
  e.category = std::move(p.category);
  e.focus_en = std::move(p.focus_en);
  e.focus_fr = std::move(p.focus_fr);
  e.combos = std::move(p.combos);
  return e;
}

Example with_context(Pair p, const std::vector<std::string>& words, const std::set<std::string>& skip = {}) {
  Example e = example(std::move(p));
  for (const auto& w : words) {
    std::string word;
    for (std::size_t i = 0; i <= w.size(); ++i) {
      if (i == w.size() || w[i] == ' ') {
        if (!word.empty() && !skip.count(word)) e.context_en.push_back(word);
        word.clear();
      } else {
        word += static_cast<char>(std::tolower(static_cast<unsigned char>(w[i])));
      }
    }
  }
  return e;
}
std::string pronoun_fr(const Noun& n, bool plural) {
  if (n.gender == Gender::Masculine) return plural ? "ils" : "il";
  return plural ? "elles" : "elle";
}
// The form of `adj` that appears in a noun phrase (bel/nouvel/vieil before a vowel) or as a predicate.
std::string attributive_form(const Adjective& adj, const Noun& n, bool plural) {
  return str(adj.before_noun ? agree(adj, n.gender, plural, plural ? n.fr_plural : n.fr) : agree(adj, n.gender, plural));
}

template <class T>
const T* pick_ptr(Rng& rng, const std::vector<const T*>& v) {
  return v[uniform_below(rng, v.size())];
}

// ---- coreference ---------------------------------------------------------------------------------
// "The animal didn't cross the street because it was too tired." (the animal is the subject), or
// "The road worried the dog because it was too busy." (the place is the subject). The predicate
// fits only one of the two nouns, and both nouns come in both genders, so il/elle (ils/elles) can
// only be chosen by looking at the right noun.

// An English phrase and its French translation (a verb, an opening, a state).
struct Phrase {
  std::string_view en, fr;
};
// English past tense; French past participle (with avoir).
const std::vector<Phrase> kAnimalSubjectVerbs{{"cross", "traversé"}, {"reach", "atteint"}, {"explore", "exploré"}};
const std::vector<Phrase> kPlaceSubjectVerbs{{"worried", "inquiété"}, {"surprised", "surpris"}};

struct CorefChoice {
  const Noun* animal;
  bool animal_plural;
  const Noun* place;
  bool place_plural;
  bool animal_is_subject;
  std::size_t verb;
  bool refers_to_animal;
  const Adjective* predicate;
};

Example build_coref(const CorefChoice& c) {
  const Noun& ref = c.refers_to_animal ? *c.animal : *c.place;
  const bool ref_plural = c.refers_to_animal ? c.animal_plural : c.place_plural;
  const std::string it = ref_plural ? "they" : "it";
  const std::string il = pronoun_fr(ref, ref_plural);
  Words en, fr;
  if (c.animal_is_subject) {
    const Phrase& v = kAnimalSubjectVerbs[c.verb];
    en = {"the", en_noun(*c.animal, c.animal_plural), "didn't", str(v.en), "the", en_noun(*c.place, c.place_plural)};
    fr = french_noun_phrase(*c.animal, c.animal_plural, true);
    append(fr, {"ne", c.animal_plural ? "ont" : "a", "pas", str(v.fr)});
    append(fr, french_noun_phrase(*c.place, c.place_plural, true));
  } else {
    const Phrase& v = kPlaceSubjectVerbs[c.verb];
    en = {"the", en_noun(*c.place, c.place_plural), str(v.en), "the", en_noun(*c.animal, c.animal_plural)};
    fr = french_noun_phrase(*c.place, c.place_plural, true);
    append(fr, {c.place_plural ? "ont" : "a", str(v.fr)});
    append(fr, french_noun_phrase(*c.animal, c.animal_plural, true));
  }
  append(en, {"because", it, ref_plural ? "were" : "was", "too", str(c.predicate->en), "."});
  const std::string form = str(agree(*c.predicate, ref.gender, ref_plural));
  append(fr, {"parce", "que", il, ref_plural ? "étaient" : "était", "trop", form, "."});
  Example e = with_context({english(en), french(fr), "coref", it, il, {adj_key(ref, *c.predicate)}}, {en_noun(ref, ref_plural)});
  return c.animal_is_subject ? with_subject(e, kAnimalSubjectVerbs[c.verb].en, en_noun(*c.animal, c.animal_plural))
                             : with_subject(e, kPlaceSubjectVerbs[c.verb].en, en_noun(*c.place, c.place_plural));
}

Example sample_coref(Rng& rng) {
  static const auto animals = nouns_of(kAnimal), places = nouns_of(kPlace);
  static const auto animal_preds = coref_predicates(kAnimal), place_preds = coref_predicates(kPlace);
  CorefChoice c{};
  c.animal = pick_ptr(rng, animals);
  c.animal_plural = chance(rng, 25);
  c.place = pick_ptr(rng, places);
  c.place_plural = chance(rng, 25);
  c.animal_is_subject = chance(rng, 70);
  c.verb = uniform_below(rng, c.animal_is_subject ? kAnimalSubjectVerbs.size() : kPlaceSubjectVerbs.size());
  c.refers_to_animal = chance(rng, 50);
  c.predicate = pick_ptr(rng, c.refers_to_animal ? animal_preds : place_preds);
  return build_coref(c);
}

// ---- word sense: bank ------------------------------------------------------------------------------
// "bank" is "banque" when the context is about money and "rive" when it is about a river. The
// context comes after the word ("... to the bank to open an account") or before it ("The girl is
// thirsty, so she walks to the bank.").

// A phrase in the singular and plural of its subject (English, French).
struct Inflected {
  std::string_view en, en_plural, fr, fr_plural;
};
std::string_view en_form(const Inflected& p, bool plural) { return plural ? p.en_plural : p.en; }
std::string_view fr_form(const Inflected& p, bool plural) { return plural ? p.fr_plural : p.fr; }

struct Context {
  Inflected text;
  bool money;
};
const std::vector<Context> kBankPurposes{
    {{"to get some money", "to get some money", "pour chercher de l'argent", "pour chercher de l'argent"}, true},
    {{"to open an account", "to open an account", "pour ouvrir un compte", "pour ouvrir un compte"}, true},
    {{"to ask for a loan", "to ask for a loan", "pour demander un prêt", "pour demander un prêt"}, true},
    {{"to pay a bill", "to pay a bill", "pour payer une facture", "pour payer une facture"}, true},
    {{"to watch the fish", "to watch the fish", "pour regarder les poissons", "pour regarder les poissons"}, false},
    {{"to drink some water", "to drink some water", "pour boire de l'eau", "pour boire de l'eau"}, false},
    {{"to watch the ducks", "to watch the ducks", "pour regarder les canards", "pour regarder les canards"}, false},
    {{"to swim in the river", "to swim in the river", "pour nager dans la rivière", "pour nager dans la rivière"}, false},
    {{"to fish", "to fish", "pour pêcher", "pour pêcher"}, false},
};
const std::vector<Context> kBankReasons{
    {{"needs money", "need money", "a besoin d'argent", "ont besoin d'argent"}, true},
    {{"wants a loan", "want a loan", "veut un prêt", "veulent un prêt"}, true},
    {{"has no money", "have no money", "n'a pas d'argent", "n'ont pas d'argent"}, true},
    {{"wants to open an account", "want to open an account", "veut ouvrir un compte", "veulent ouvrir un compte"}, true},
    {{"is thirsty", "are thirsty", "a soif", "ont soif"}, false},
    {{"wants to fish", "want to fish", "veut pêcher", "veulent pêcher"}, false},
    {{"wants to swim", "want to swim", "veut nager", "veulent nager"}, false},
    {{"wants to see the ducks", "want to see the ducks", "veut voir les canards", "veulent voir les canards"}, false},
};
const std::vector<Inflected> kMotions{{"walks", "walk", "marche", "marchent"},
                                      {"runs", "run", "court", "courent"},
                                      {"goes", "go", "va", "vont"}};
// Optional openings that make the sentence longer, so the context is further from "bank".
const std::vector<Phrase> kWhen{{"", ""}, {"every morning", "chaque matin"}, {"today", "aujourd'hui"}};

// Starts a sentence with the opening `when` ("Every morning, ...") unless it is empty.
void open_with(const Phrase& when, Words& en, Words& fr) {
  if (when.en.empty()) return;
  append(en, {str(when.en), ","});
  append(fr, {str(when.fr), ","});
}

Example build_bank(const Noun& subject, bool plural, const Inflected& motion, const Context& ctx, bool reason_first,
                   const Phrase& when) {
  const std::string bank = ctx.money ? "banque" : "rive";
  Words en, fr;
  open_with(when, en, fr);
  append(en, {"the", en_noun(subject, plural)});
  append(fr, french_noun_phrase(subject, plural, true));
  if (reason_first) {
    const std::string he = plural                      ? "they"
                           : subject.kind != kPerson   ? "it"
                           : subject.gender == Gender::Masculine ? "he"
                                                                 : "she";
    append(en, {str(en_form(ctx.text, plural)), ",", "so", he, str(en_form(motion, plural)), "to", "the", "bank", "."});
    append(fr, {str(fr_form(ctx.text, plural)), ",", "alors", pronoun_fr(subject, plural), str(fr_form(motion, plural)),
                "jusque", "à", "la", bank, "."});
  } else {
    append(en, {str(en_form(motion, plural)), "to", "the", "bank", str(en_form(ctx.text, plural)), "."});
    append(fr, {str(fr_form(motion, plural)), "jusque", "à", "la", bank, str(fr_form(ctx.text, plural)), "."});
  }
  const Example e = with_context({english(en), french(fr), "sense", "bank", bank, {key("bank", subject.en, ctx.text.en)}},
                                 {str(en_form(ctx.text, plural))}, {"to", "the", "a", "an", "some"});
  // The verb of motion: its subject is the pronoun when the reason comes first ("..., so she walks").
  const std::string pronoun = plural ? "they" : subject.kind != kPerson ? "it" : subject.gender == Gender::Masculine ? "he" : "she";
  return with_subject(e, en_form(motion, plural), reason_first ? pronoun : en_noun(subject, plural));
}

Example sample_bank(Rng& rng) {
  const bool reason_first = chance(rng, 50);
  const Context& ctx = pick(rng, reason_first ? kBankReasons : kBankPurposes);
  // Animals go to a river bank, not to a bank for a loan.
  static const auto people = nouns_of(kPerson), living = nouns_of(kPerson | kAnimal);
  const Noun& subject = *pick_ptr(rng, ctx.money ? people : living);
  const bool plural = chance(rng, 25);
  const Inflected& motion = pick(rng, kMotions);
  return build_bank(subject, plural, motion, ctx, reason_first, reason_first ? kWhen[0] : pick(rng, kWhen));
}

// ---- word sense: apple -----------------------------------------------------------------------------
// The tokenizer folds "Apple" to "apple", so only the context tells the company (kept as "Apple" in
// French) from the fruit ("pomme"): an article before it, and what is done with it.

struct AppleUse {
  std::string_view id;
  bool company;
  unsigned subject_kinds;
  Inflected text;  // what follows the subject
};
const std::vector<AppleUse> kAppleUses{
    {"works-for", true, kPerson, {"works for Apple", "work for Apple", "travaille pour Apple", "travaillent pour Apple"}},
    {"buys-phone", true, kPerson,
     {"buys a phone from Apple", "buy a phone from Apple", "achète un téléphone chez Apple", "achètent un téléphone chez Apple"}},
    {"buys-computer", true, kPerson,
     {"buys a computer from Apple", "buy a computer from Apple", "achète un ordinateur chez Apple",
      "achètent un ordinateur chez Apple"}},
    {"likes-company", true, kPerson, {"likes Apple", "like Apple", "aime Apple", "aiment Apple"}},
    {"eats-an", false, kPerson | kAnimal, {"eats an apple", "eat an apple", "mange une pomme", "mangent une pomme"}},
    {"eats-the", false, kPerson | kAnimal, {"eats the apple", "eat the apple", "mange la pomme", "mangent la pomme"}},
    {"buys-fruit", false, kPerson,
     {"buys an apple at the market", "buy an apple at the market", "achète une pomme au marché",
      "achètent une pomme au marché"}},
    {"likes-fruit", false, kPerson | kAnimal, {"likes the apple", "like the apple", "aime la pomme", "aiment la pomme"}},
};

Example build_apple(const Noun& subject, bool plural, const AppleUse& use, const Phrase& when) {
  Words en, fr;
  open_with(when, en, fr);
  append(en, {"the", en_noun(subject, plural), str(en_form(use.text, plural)), "."});
  append(fr, french_noun_phrase(subject, plural, true));
  append(fr, {str(fr_form(use.text, plural)), "."});
  return with_subject(with_context({english(en), french(fr), "sense", "apple", use.company ? "apple" : "pomme", {key("apple", subject.en, use.id)}},
                                   {str(en_form(use.text, plural))}, {"apple"}),
                      en_form(use.text, plural), en_noun(subject, plural));
}

Example sample_apple(Rng& rng) {
  const AppleUse& use = pick(rng, kAppleUses);
  const Noun& subject = *pick_ptr(rng, nouns_of(use.subject_kinds));
  const bool plural = chance(rng, 25);
  return build_apple(subject, plural, use, pick(rng, kWhen));
}

// ---- word sense: trains ----------------------------------------------------------------------------
// "trains" after a subject is the verb (entraîne); after "the" it is the noun (trains). Each state
// below has a single key, so its words must also occur elsewhere (fast, slow, new, old, long are in
// the adjective table) or a held-out state would bring words never seen in training.

const std::vector<Phrase> kTrainStates{{"late", "en retard"}, {"fast", "rapides"}, {"slow", "lents"},
                                         {"new", "nouveaux"},  {"old", "vieux"},      {"long", "longs"}};
const std::vector<Inflected> kTrainWatchers{{"watches", "watch", "regarde", "regardent"},
                                            {"likes", "like", "aime", "aiment"},
                                            {"waits for", "wait for", "attend", "attendent"}};
const std::vector<Phrase> kTrainingTimes{
    {"", ""}, {"every day", "tous les jours"}, {"every morning", "chaque matin"}, {"in the park", "dans le parc"}};

Example build_trains_verb(const Noun& trainer, const Noun& animal, bool plural, const Phrase& when) {
  Words en{"the", str(trainer.en), "trains", "the", en_noun(animal, plural)}, fr = french_noun_phrase(trainer, false, true);
  fr.emplace_back("entraîne");
  append(fr, french_noun_phrase(animal, plural, true));
  if (!when.en.empty()) {
    en.emplace_back(when.en);
    fr.emplace_back(when.fr);
  }
  en.emplace_back(".");
  fr.emplace_back(".");
  return with_subject(with_context({english(en), french(fr), "sense", "trains", "entraîne", {key("trains", trainer.en, animal.en)}}, {str(trainer.en)}),
                      "trains", trainer.en);
}

Example build_trains_state(const Phrase& state) {
  return with_subject(with_context({english({"the", "trains", "are", str(state.en), "."}), french({"les", "trains", "sont", str(state.fr), "."}),
                                    "sense", "trains", "trains", {key("trains", "trains", state.en)}},
                                   {"the", "are"}),
                      "are", "trains");
}

Example build_trains_watched(const Noun& subject, bool plural, const Inflected& verb, const Phrase& when) {
  Words en, fr;
  open_with(when, en, fr);
  append(en, {"the", en_noun(subject, plural), str(en_form(verb, plural)), "the", "trains", "."});
  append(fr, french_noun_phrase(subject, plural, true));
  append(fr, {str(fr_form(verb, plural)), "les", "trains", "."});
  return with_subject(with_context({english(en), french(fr), "sense", "trains", "trains", {key("trains", subject.en, verb.en)}},
                                   {"the", str(en_form(verb, plural))}),
                      en_form(verb, plural), en_noun(subject, plural));
}

Example sample_trains(Rng& rng) {
  static const auto people = nouns_of(kPerson), animals = nouns_of(kAnimal);
  const std::size_t which = pick_weighted(rng, {55, 15, 30});
  if (which == 0) {
    const Noun* trainer = pick_ptr(rng, people);
    const Noun* animal = pick_ptr(rng, animals);
    const bool plural = chance(rng, 30);
    return build_trains_verb(*trainer, *animal, plural, pick(rng, kTrainingTimes));
  }
  if (which == 1) return build_trains_state(pick(rng, kTrainStates));
  const Noun* subject = pick_ptr(rng, people);
  const bool plural = chance(rng, 30);
  const Inflected& verb = pick(rng, kTrainWatchers);
  return build_trains_watched(*subject, plural, verb, pick(rng, kWhen));
}

Example sample_sense(Rng& rng) {
  switch (pick_weighted(rng, {40, 30, 30})) {
    case 0: return sample_bank(rng);
    case 1: return sample_apple(rng);
    default: return sample_trains(rng);
  }
}

// ---- agreement -------------------------------------------------------------------------------------
// Articles, adjectives and verbs agree in gender and number, and most French adjectives follow the
// noun: "the red car" → "la voiture rouge", "the small dog" → "le petit chien", "an old tree" →
// "un vieil arbre". "The small cars are red." → "Les petites voitures sont rouges." puts a second,
// distant adjective in agreement with the noun.

Example build_agreement_object(const Pronoun& subject, const Verb& verb, const Noun& n, const Adjective& adj, bool plural,
                               bool definite) {
  Words en{str(subject.en), str(subject.third_singular ? verb.en_3sg : verb.en), definite ? "the" : "a", str(adj.en),
           en_noun(n, plural), "."};
  Words fr{str(subject.fr), str(verb.fr[static_cast<std::size_t>(subject.person)])};
  append(fr, french_noun_phrase(n, plural, definite, &adj));
  fr.emplace_back(".");
  return with_subject(with_context({english(en), french(fr), "agreement", str(adj.en), attributive_form(adj, n, plural), {adj_key(n, adj)}},
                                   {en_noun(n, plural)}),
                      subject.third_singular ? verb.en_3sg : verb.en, subject.en);
}

Example build_agreement_predicate(const Noun& n, const Adjective& attribute, const Adjective& predicate, bool plural) {
  Words en{"the", str(attribute.en), en_noun(n, plural), plural ? "are" : "is", str(predicate.en), "."};
  Words fr = french_noun_phrase(n, plural, true, &attribute);
  const std::string form = str(agree(predicate, n.gender, plural));
  append(fr, {plural ? "sont" : "est", form, "."});
  return with_subject(with_context({english(en), french(fr), "agreement", str(predicate.en), form, {adj_key(n, attribute), adj_key(n, predicate)}},
                                   {en_noun(n, plural)}),
                      plural ? "are" : "is", en_noun(n, plural));
}

Example sample_agreement(Rng& rng) {
  const std::size_t which = pick_weighted(rng, {40, 35, 25});
  if (which == 1) {
    static const auto all = nouns_of(kAnimal | kPerson | kPlace | kThing);
    const Noun& n = *pick_ptr(rng, all);
    const auto fits = adjectives_for(n.kind);
    const Adjective* attribute = pick_ptr(rng, fits);
    std::vector<const Adjective*> others;
    for (const Adjective* a : fits)
      if (a != attribute && (a->group.empty() || a->group != attribute->group)) others.push_back(a);
    const Adjective* predicate = pick_ptr(rng, others);
    return build_agreement_predicate(n, *attribute, *predicate, chance(rng, 35));
  }
  const Pronoun& subject = pick(rng, subject_pronouns());
  const Verb& verb = pick(rng, agreement_verbs());
  const Noun& n = *pick_ptr(rng, nouns_of(verb.object_kinds));
  const Adjective& adj = *pick_ptr(rng, adjectives_for(n.kind));
  const bool definite = which == 0;
  return build_agreement_object(subject, verb, n, adj, definite && chance(rng, 35), definite);
}

// ---- plain -----------------------------------------------------------------------------------------
// Simple sentences; object pronouns move before the French verb ("I love you" → "Je t'aime").

struct ObjectPronoun {
  std::string_view en, fr;
  int person;  // 0 me, 1 you, 2 him/her, 3 us (to rule out "I see me", "we see us", "you see you")
};
const std::vector<ObjectPronoun> kObjectPronouns{{"me", "me", 0}, {"you", "te", 1}, {"him", "le", 2}, {"her", "la", 2}, {"us", "nous", 3}};

bool reflexive(const Pronoun& s, const ObjectPronoun& o) {
  const bool s_first = s.person == 0 || s.person == 3, o_first = o.person == 0 || o.person == 3;
  return (s_first && o_first) || (s.person == 1 && o.person == 1);
}

Example build_plain_pronoun(const Pronoun& s, const Verb& v, const ObjectPronoun& o) {
  const std::string verb_fr = str(v.fr[static_cast<std::size_t>(s.person)]);
  return with_subject(example({english({str(s.en), str(s.third_singular ? v.en_3sg : v.en), str(o.en), "."}),
                       french({str(s.fr), str(o.fr), verb_fr, "."}), "plain", "", "", {key("plain", v.en, o.en)}}),
                      s.third_singular ? v.en_3sg : v.en, s.en);
}

Example build_plain_noun(const Pronoun& s, const Verb& v, const Noun& n, bool plural) {
  Words fr{str(s.fr), str(v.fr[static_cast<std::size_t>(s.person)])};
  append(fr, french_noun_phrase(n, plural, true));
  fr.emplace_back(".");
  return with_subject(example({english({str(s.en), str(s.third_singular ? v.en_3sg : v.en), "the", en_noun(n, plural), "."}), french(fr),
                       "plain", "", "", {key("plain", v.en, n.en)}}),
                      s.third_singular ? v.en_3sg : v.en, s.en);
}

Example sample_plain(Rng& rng) {
  const Pronoun& s = pick(rng, subject_pronouns());
  const Verb& v = pick(rng, plain_verbs());
  if (chance(rng, 40)) {
    std::vector<const ObjectPronoun*> objects;
    for (const ObjectPronoun& o : kObjectPronouns)
      if (!reflexive(s, o)) objects.push_back(&o);
    return build_plain_pronoun(s, v, *pick_ptr(rng, objects));
  }
  const Noun& n = *pick_ptr(rng, nouns_of(v.object_kinds));
  return build_plain_noun(s, v, n, chance(rng, 30));
}

std::size_t pick_category(Rng& rng, const CategoryWeights& w) {
  return pick_weighted(rng, {w.coref, w.sense, w.agreement, w.plain});
}

Example sample_category(Rng& rng, std::size_t category) {
  switch (category) {
    case 0: return sample_coref(rng);
    case 1: return sample_sense(rng);
    case 2: return sample_agreement(rng);
    default: return sample_plain(rng);
  }
}

// ---- language-model sentences ----------------------------------------------------------------------

const std::vector<std::string_view> kJourneyOwners{"your", "my", "our", "the", "every", "each", "a"};
const std::vector<std::string_view> kJourneys{"journey", "day", "story", "trip", "lesson", "song", "book", "game"};
const std::vector<std::string_view> kFirstThings{"step", "word", "idea", "smile", "note", "page", "move"};
const std::vector<std::string_view> kEffortOwners{"every", "each", "your"};
const std::vector<std::string_view> kEfforts{"effort", "step", "word", "lesson", "day", "song", "smile", "idea"};
const std::vector<std::string_view> kEffortVerbs{"moves", "helps", "changes", "teaches"};
const std::vector<std::string_view> kMoveAdverbs{"", "forward", "closer"};

struct LmSentence {
  std::string text;
  std::string combo;
};

LmSentence build_journey(std::string_view owner, std::string_view journey, std::string_view first) {
  return {english({str(owner), str(journey), "starts", "with", "one", str(first), "."}), key("lm", journey, first)};
}

LmSentence build_effort(std::string_view owner, std::string_view effort, std::string_view verb, std::string_view adverb) {
  Words w{str(owner), str(effort), str(verb), "you"};
  if (!adverb.empty()) w.emplace_back(adverb);
  w.emplace_back(".");
  return {english(w), key("lm", effort, verb)};
}

LmSentence sample_lm(Rng& rng) {
  if (chance(rng, 50))
    return build_journey(pick(rng, kJourneyOwners), pick(rng, kJourneys), pick(rng, kFirstThings));
  const std::string_view verb = pick(rng, kEffortVerbs);
  return build_effort(pick(rng, kEffortOwners), pick(rng, kEfforts), verb, verb == "moves" ? pick(rng, kMoveAdverbs) : "");
}

// ---- splits --------------------------------------------------------------------------------------

const std::set<std::string, std::less<>>& lesson_combos() {
  static const std::set<std::string, std::less<>> keys = [] {
    std::set<std::string, std::less<>> k{key("lm", "journey", "step"), key("lm", "effort", "moves")};
    for (const Example& e : lesson_examples()) k.insert(e.combos.begin(), e.combos.end());
    return k;
  }();
  return keys;
}

Split most_held_out(const std::vector<std::string>& combos) {
  Split s = Split::Train;
  for (const auto& c : combos) s = std::max(s, combo_split(c));
  return s;
}

std::uint64_t stream_of(Split s, bool lm) { return (lm ? 10 : 0) + static_cast<std::uint64_t>(s) + 1; }

void check_size(std::string_view what, std::size_t n) {
  if (n > kMaxSplitSize)
    throw InputError(fmt::format("{} size {} is too large (at most {})", what, n, kMaxSplitSize));
}

// Draws examples for split `s` until there are `n`: sample, keep it if all its keys belong to `s`
// (and, outside train, if it is new), repeat. Lesson examples come first in train; a final shuffle
// spreads them out.
std::vector<Example> draw_split(Split s, std::size_t n, const CorpusOptions& o) {
  // Everyday is a superset of Wide: wherever the wide grammar is meant, so is the everyday one. Its
  // streams are its own, so it never shares a draw with the wide corpus.
  const bool wide = o.grammar != Grammar::Lessons;
  const bool everyday = o.grammar == Grammar::Everyday;
  Rng rng(derive_seed(o.seed, stream_of(s, false) + (everyday ? 200 : wide ? 100 : 0)));
  std::vector<Example> out;
  std::unordered_set<std::string> seen;
  // The wide grammar's categories follow the templates' four: a draw picks the templates with
  // probability template_percent, else one of the grammar's categories by its weights.
  const std::size_t n_templates = categories().size();
  auto pick = [&]() -> std::size_t {
    if (!wide || chance(rng, o.template_percent)) return pick_category(rng, o.weights);
    return n_templates + (everyday ? pick_everyday_category(rng) : pick_grammar_category(rng));
  };
  auto sample = [&](std::size_t category) {
    if (category < n_templates) return sample_category(rng, category);
    return everyday ? sample_everyday(rng, category - n_templates) : sample_grammar(rng, category - n_templates);
  };
  if (s == Split::Train && !wide)
    for (const Example& e : lesson_examples()) {
      out.push_back(e);
      seen.insert(e.en);
    }
  // The category is drawn first and the rejection happens within it: rejecting across categories
  // would over-represent the categories that happen to have more held-out keys.
  // Normally an example is accepted within a few dozen draws; this many draws in a row without one
  // means the split's distinct sentences are used up.
  constexpr std::size_t kMaxFailures = 100'000;
  std::size_t failures = 0;
  while (out.size() < n) {
    const std::size_t category = pick();
    while (true) {
      if (++failures == kMaxFailures)
        throw InputError(fmt::format("could only find {} distinct {} sentences of the {} asked for; ask for fewer or "
                                     "give more weight to the larger categories",
                                     out.size(), split_name(s), n));
      Example e = sample(category);
      if (example_split(e) != s) continue;
      if (wide && is_source_sentence(e.en)) continue;
      // Training may repeat a sentence, so that small categories keep their weight; validation and
      // test sentences are distinct, so each one counts once in the scores.
      if (!seen.insert(e.en).second && s != Split::Train) continue;
      out.push_back(std::move(e));
      failures = 0;
      break;
    }
  }
  shuffle(rng, out);
  return out;
}

std::vector<std::string> draw_lm_split(Split s, std::size_t n, const LmOptions& o) {
  Rng rng(derive_seed(o.seed, stream_of(s, true)));
  std::vector<std::string> out;
  if (s == Split::Train) out = lm_lesson_sentences();
  const CategoryWeights weights;
  while (out.size() < n) {
    // A third from the journey/effort templates, the rest English sides of translation examples.
    if (chance(rng, 33)) {
      LmSentence l = sample_lm(rng);
      while (most_held_out({l.combo}) != s) l = sample_lm(rng);
      out.push_back(std::move(l.text));
    } else {
      const std::size_t category = pick_category(rng, weights);
      Example e = sample_category(rng, category);
      while (example_split(e) != s) e = sample_category(rng, category);
      out.push_back(std::move(e.en));
    }
  }
  shuffle(rng, out);
  return out;
}

}  // namespace

const char* grammar_name(Grammar g) {
  switch (g) {
    case Grammar::Lessons: return "lessons";
    case Grammar::Wide: return "wide";
    default: return "everyday";
  }
}

std::optional<Grammar> parse_grammar(std::string_view name) {
  for (Grammar g : {Grammar::Lessons, Grammar::Wide, Grammar::Everyday})
    if (name == grammar_name(g)) return g;
  return std::nullopt;
}

const char* split_name(Split s) {
  switch (s) {
    case Split::Train: return "train";
    case Split::Valid: return "valid";
    default: return "test";
  }
}

const std::vector<std::string>& categories() {
  static const std::vector<std::string> c{"coref", "sense", "agreement", "plain"};
  return c;
}

Split combo_split(std::string_view combo) {
  if (lesson_combos().count(combo)) return Split::Train;
  switch (fnv1a(combo) % 7) {
    case 0: return Split::Test;
    case 1: return Split::Valid;
    default: return Split::Train;
  }
}

Split example_split(const Example& example) { return most_held_out(example.combos); }

const std::vector<Example>& lesson_examples() {
  static const std::vector<Example> lessons = [] {
    const Adjective& tired = adjective("tired");
    const Adjective& wide = adjective("wide");
    CorefChoice c{&noun("animal"), false, &noun("street"), false, true, 0, true, &tired};
    std::vector<Example> l;
    l.push_back(build_coref(c));
    c.refers_to_animal = false;
    c.predicate = &wide;
    l.push_back(build_coref(c));
    l.push_back(build_trains_verb(noun("boy"), noun("puppy"), false, kTrainingTimes[0]));
    l.push_back(build_trains_state(kTrainStates[0]));
    const Pronoun& i = subject_pronouns()[0];
    l.push_back(build_plain_pronoun(i, plain_verbs()[0], kObjectPronouns[1]));
    l.push_back(build_agreement_object(i, agreement_verbs()[0], noun("car"), adjective("red"), false, true));
    l.push_back(build_agreement_object(i, agreement_verbs()[0], noun("dog"), adjective("small"), false, true));
    l.push_back(build_bank(noun("woman"), false, kMotions[0], kBankPurposes[0], false, kWhen[0]));
    l.push_back(build_bank(noun("girl"), false, kMotions[0], kBankReasons[4], true, kWhen[0]));
    l.push_back(build_apple(noun("girl"), false, kAppleUses[4], kWhen[0]));
    l.push_back(build_apple(noun("man"), false, kAppleUses[0], kWhen[0]));
    return l;
  }();
  return lessons;
}

Corpus generate(const CorpusOptions& options) {
  check_size("train", options.train);
  check_size("valid", options.valid);
  check_size("test", options.test);
  if (options.grammar == Grammar::Lessons && options.train < lesson_examples().size())
    throw InputError(fmt::format("train size {} is too small: the training split always holds the {} lesson sentences",
                                 options.train, lesson_examples().size()));
  const CategoryWeights& w = options.weights;
  if (w.coref + w.sense + w.agreement + w.plain == 0) throw InputError("the category weights are all zero");
  Corpus c;
  c.train = draw_split(Split::Train, options.train, options);
  c.valid = draw_split(Split::Valid, options.valid, options);
  c.test = draw_split(Split::Test, options.test, options);
  return c;
}

text::Vocab build_vocab(const std::vector<Example>& examples, std::size_t min_count) {
  std::vector<std::vector<std::string>> streams;
  streams.reserve(2 * examples.size());
  for (const Example& e : examples) {
    streams.push_back(text::tokenize(e.en));
    streams.push_back(text::tokenize(e.fr));
  }
  return text::Vocab::build(streams, min_count);
}

const std::vector<std::string>& lm_lesson_sentences() {
  static const std::vector<std::string> s{build_journey("your", "journey", "step").text,
                                          build_effort("every", "effort", "moves", "").text};
  return s;
}

LmCorpus generate_lm(const LmOptions& options) {
  check_size("LM train", options.train);
  check_size("LM valid", options.valid);
  check_size("LM test", options.test);
  if (options.train < lm_lesson_sentences().size())
    throw InputError(fmt::format("LM train size {} is too small: it always holds the {} lesson sentences", options.train,
                                 lm_lesson_sentences().size()));
  LmCorpus c;
  c.train = draw_lm_split(Split::Train, options.train, options);
  c.valid = draw_lm_split(Split::Valid, options.valid, options);
  c.test = draw_lm_split(Split::Test, options.test, options);
  return c;
}

text::Vocab build_lm_vocab(const std::vector<std::string>& sentences, std::size_t min_count) {
  std::vector<std::vector<std::string>> streams;
  streams.reserve(sentences.size());
  for (const auto& s : sentences) streams.push_back(text::tokenize(s));
  return text::Vocab::build(streams, min_count);
}

SplitStats split_stats(const std::vector<Example>& examples) {
  SplitStats st;
  st.examples = examples.size();
  for (const auto& c : categories()) st.per_category[c] = 0;
  std::set<std::string> combos;
  for (const Example& e : examples) {
    ++st.per_category[e.category];
    st.max_en_tokens = std::max(st.max_en_tokens, text::tokenize(e.en).size());
    st.max_fr_tokens = std::max(st.max_fr_tokens, text::tokenize(e.fr).size());
    combos.insert(e.combos.begin(), e.combos.end());
  }
  st.combos = combos.size();
  return st;
}

}  // namespace attnlab::corpus
