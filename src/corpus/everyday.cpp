#include "corpus/grammar.hpp"
#include "corpus/grammar_parts.hpp"

namespace attnlab::corpus {

const std::vector<std::string>& everyday_categories() { return grammar_categories(); }
std::size_t pick_everyday_category(Rng& rng) { return pick_grammar_category(rng); }
Example sample_everyday(Rng& rng, std::size_t category) { return sample_grammar(rng, category); }

}  // namespace attnlab::corpus
