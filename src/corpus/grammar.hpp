#pragma once
// The wide grammar: English→French sentence pairs built from the lexicon tables of data/lexicon/
// (corpus/tables.hpp), for the translation model that learners type their own sentences into
// (docs/corpus.md, "The wide corpus").
//
// Where the lesson-sized templates of corpus.cpp fix a few dozen words in a few sentence shapes, this
// grammar composes phrases: noun phrases with a determiner (the, a, my/your/his/her/our/their, this,
// all the, every, a number, none for a generic plural), up to two adjectives that agree and stand
// where French puts them (la vieille table en bois), a prepositional phrase and a relative clause
// (qui / que, restrictive or between commas); verb phrases in four tenses (present → présent, past →
// passé composé with avoir or être and participle agreement, "was chasing" → imparfait, "is chasing"
// → présent), negation (ne … pas, pas de), a manner adverb, an object noun phrase or an object pronoun
// (I love you → Je t'aime); copular sentences (… est trop fatigué), yes/no questions (Est-ce que …?),
// coreference of it/they across "because", and words whose sense the context decides (Apple the
// company against apple the fruit and apple pie; "chase" → chasser, but "was chasing" → poursuivait).
//
// The French is built by rule from the tables, so every form is one the tables hold: the grammar adds
// articles, contractions (au, aux, du, des), elision (l', qu', n', j', t'), mon/ton/son before a vowel,
// ce → cet, des → de before an adjective and after a negation, and participle agreement.
//
// English "you" is always singular and informal (tu, te, ton), as in the lesson corpus.
#include <cstddef>
#include <string>
#include <vector>

#include "corpus/corpus.hpp"
#include "corpus/random.hpp"

namespace attnlab::corpus {

// The categories of the wide grammar, in the order summaries list them.
const std::vector<std::string>& grammar_categories();

// One sentence pair of category grammar_categories()[category], with its held-out keys.
Example sample_grammar(Rng& rng, std::size_t category);

// A category index drawn by the grammar's weights.
std::size_t pick_grammar_category(Rng& rng);

// The everyday grammar (everyday.cpp; docs/corpus.md, "The everyday grammar"): a superset of the wide
// grammar for the sentences of a beginners' textbook (coordination, modals and the future, adverbs,
// indirect objects, comparison, there is, imperatives, wh-questions, subordinate clauses, infinitive
// complements, quantities, idioms, reported speech, the passive, ...). Its categories are the wide
// grammar's, in the same order, followed by its own.
const std::vector<std::string>& everyday_categories();
std::size_t pick_everyday_category(Rng& rng);
Example sample_everyday(Rng& rng, std::size_t category);

// Sentences of each everyday construction built with chosen words through the grammar's own code
// ("coordinated subject" → "The boy and the girl are tired." / "Le garçon et la fille sont
// fatigués."), for the tests and the documentation. everyday_case throws InputError for another name.
std::vector<std::string> everyday_case_names();
Example everyday_case(const std::string& name);

// The sentences of the explainers that learners bring, each with the translation the model should
// give. They are in the grammar's reach as structures, and never in any split: `generate` rejects
// them, and `attnlab eval` reports them separately.
const std::vector<Example>& source_sentences();

// True when `en` is one of source_sentences() (case and final punctuation ignored).
bool is_source_sentence(const std::string& en);

// French text from words as the grammar writes them: contractions (à le → au, à les → aux, de le → du,
// de les → des, de des → de), mon/ton/son and cet before a vowel sound, then elision (l', j', n', qu',
// d', m', t', s', s'il) except before an aspirated h (le héros). "=le", "=la", "=les" are object
// pronouns: they elide (je l'aime) but never contract. Items may hold several words ("près de").
std::string french_text(const std::vector<std::string>& words);

}  // namespace attnlab::corpus
