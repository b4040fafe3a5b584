#pragma once
// Word-level tokenizer shared by English and French, so that one vocabulary serves both languages
// (and the source and target embeddings can be tied).
//
// Rules, in the order they apply:
//  - Text is UTF-8. Invalid byte sequences become U+FFFD, so every token is valid UTF-8 (and can be
//    written to JSON). ’ (U+2019) is read as an ASCII apostrophe, “ ” as ASCII '"'.
//  - Whitespace separates tokens: ASCII spaces, tabs and newlines, and the no-break spaces that
//    French typography puts before ? ! : ; (U+00A0, U+202F, U+2009).
//  - Case is folded: ASCII A–Z, plus a small table of the accented capitals of French
//    (À→à, É→é, Ç→ç, Œ→œ ...). No ICU: other scripts are left as they are.
//  - Punctuation becomes its own token: . , ! ? ; : " ( ) « » … and every other ASCII symbol.
//  - A word is a run of letters (any non-ASCII code point counts as a letter), digits, apostrophes
//    and hyphens. Hyphens stay inside words ("peut-être"); apostrophes at either end of a word are
//    quotation marks and split off as "'".
//  - French elision is split after the apostrophe when the part before it is one of the French
//    elided words (c d j l m n s t qu jusqu lorsqu puisqu quoiqu presqu): "l'animal" → "l'" "animal",
//    "qu'il" → "qu'" "il", "jusqu'à" → "jusqu'" "à". This way "animal" is one vocabulary entry
//    whether or not an article is glued to it.
//  - English contractions stay one token ("didn't", "it's", "i'm"): their first part is never one
//    of the elided French words, so the rule above leaves them alone. Likewise "aujourd'hui".
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::text {

// Lower-cases ASCII letters and the French accented capitals; other code points are unchanged.
std::string fold_case(std::string_view text);

// Upper-cases the first letter of `word` (ASCII or a French accented letter); used for display.
std::string capitalize_first(std::string_view word);

// True for tokens that are punctuation (". , ! ? ; : \" ( ) « » …" and other ASCII symbols).
bool is_punctuation(std::string_view token);

// True for a French elided token such as "l'", "qu'" or "jusqu'" (lower case).
bool is_elided(std::string_view token);

// Splits text into case-folded word and punctuation tokens (rules above). Never throws.
std::vector<std::string> tokenize(std::string_view text);

// Joins tokens into a readable sentence: one space between words, none before closing punctuation
// (. , ! ? ; : ) » …), none after opening punctuation (( «) or an elided "l'"/"qu'", quotes
// attached to what they enclose. The first letter of the text and of each sentence after . ! ? is
// capitalised, and the English pronoun "i" is written "I". Case folding loses proper nouns, so
// tokenize → detokenize gives back "apple", not "Apple", in the middle of a sentence.
std::string detokenize(const std::vector<std::string>& tokens);

}  // namespace attnlab::text
