#include "text/tokenizer.hpp"

#include <array>
#include <utility>

#include "util/utf8.hpp"

namespace attnlab::text {

namespace {

// One code point at s[i], i advanced past it (U+FFFD for an invalid byte), and its encoding: the
// one UTF-8 reader of util/utf8.hpp.
char32_t next_code_point(std::string_view s, std::size_t& i) { return utf8::next(s, i); }
void append_utf8(std::string& out, char32_t cp) { utf8::append(out, cp); }

// The capital and small forms of the letters French writes with accents (plus the ligatures æ, œ).
// This is all the case folding the corpus needs; other scripts are left unchanged rather than
// folded wrongly.
constexpr std::array<std::pair<char32_t, char32_t>, 19> kFrenchCase{{
    {U'À', U'à'}, {U'Â', U'â'}, {U'Ä', U'ä'}, {U'Æ', U'æ'}, {U'Ç', U'ç'}, {U'É', U'é'}, {U'È', U'è'},
    {U'Ê', U'ê'}, {U'Ë', U'ë'}, {U'Î', U'î'}, {U'Ï', U'ï'}, {U'Ô', U'ô'}, {U'Ö', U'ö'}, {U'Œ', U'œ'},
    {U'Ù', U'ù'}, {U'Û', U'û'}, {U'Ü', U'ü'}, {U'Ÿ', U'ÿ'}, {U'Ñ', U'ñ'},
}};

char32_t to_lower(char32_t c) {
  if (c >= U'A' && c <= U'Z') return c - U'A' + U'a';
  for (const auto& [upper, lower] : kFrenchCase)
    if (c == upper) return lower;
  return c;
}

char32_t to_upper(char32_t c) {
  if (c >= U'a' && c <= U'z') return c - U'a' + U'A';
  for (const auto& [upper, lower] : kFrenchCase)
    if (c == lower) return upper;
  return c;
}

bool is_space(char32_t c) {
  return c == U' ' || c == U'\t' || c == U'\n' || c == U'\r' || c == U'\v' || c == U'\f' ||
         c == 0x00A0 || c == 0x202F || c == 0x2009;
}

// Non-ASCII punctuation that is a token of its own; everything else outside ASCII is a letter.
bool is_unicode_punctuation(char32_t c) {
  return c == U'«' || c == U'»' || c == U'…' || c == U'–' || c == U'—';
}

// The French words that lose their last vowel before a vowel, written without the apostrophe.
constexpr std::array<std::string_view, 14> kElisionPrefixes{
    "c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu", "presqu"};

bool is_elision_prefix(std::string_view w) {
  for (std::string_view p : kElisionPrefixes)
    if (w == p) return true;
  return false;
}

// Splits a raw word (already folded; apostrophes normalised to ASCII) into tokens: quote marks
// and stray hyphens at its ends, French elisions at its front, and what remains.
void emit_word(std::string_view w, std::vector<std::string>& out) {
  std::vector<std::string> tail;  // trailing marks, emitted after the word (in reading order)
  while (!w.empty() && (w.front() == '\'' || w.front() == '-')) {
    out.emplace_back(1, w.front());
    w.remove_prefix(1);
  }
  while (!w.empty() && (w.back() == '\'' || w.back() == '-')) {
    // "l' animal" typed with a space: the apostrophe belongs to the elided article, not a quote.
    if (w.back() == '\'' && is_elision_prefix(w.substr(0, w.size() - 1))) break;
    tail.emplace_back(1, w.back());
    w.remove_suffix(1);
  }
  for (std::size_t pos = w.find('\''); pos != std::string_view::npos && pos + 1 < w.size(); pos = w.find('\'')) {
    if (!is_elision_prefix(w.substr(0, pos))) break;
    out.emplace_back(w.substr(0, pos + 1));
    w.remove_prefix(pos + 1);
    // What follows an elision starts a word of its own: its leading quote marks and stray hyphens
    // split off as well ("l''animal" → "l'" "'" "animal", not "l'" "'animal").
    while (!w.empty() && (w.front() == '\'' || w.front() == '-')) {
      out.emplace_back(1, w.front());
      w.remove_prefix(1);
    }
  }
  if (!w.empty()) out.emplace_back(w);
  out.insert(out.end(), tail.rbegin(), tail.rend());
}

bool in(std::string_view tok, std::initializer_list<std::string_view> set) {
  for (std::string_view s : set)
    if (tok == s) return true;
  return false;
}

}  // namespace

std::string fold_case(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) append_utf8(out, to_lower(next_code_point(text, i)));
  return out;
}

std::string capitalize_first(std::string_view word) {
  if (word.empty()) return {};
  std::size_t i = 0;
  const char32_t first = next_code_point(word, i);
  std::string out;
  append_utf8(out, to_upper(first));
  out.append(word.substr(i));
  return out;
}

bool is_punctuation(std::string_view token) {
  if (token.empty()) return false;
  std::size_t i = 0;
  const char32_t c = next_code_point(token, i);
  if (i != token.size()) return token == "...";
  if (c < 0x80) return c != U'\'' && c != U'-' && !(c >= U'a' && c <= U'z') && !(c >= U'A' && c <= U'Z') &&
                       !(c >= U'0' && c <= U'9') && c > U' ';
  return is_unicode_punctuation(c);
}

bool is_elided(std::string_view token) {
  if (token.size() < 2 || token.back() != '\'') return false;
  return is_elision_prefix(fold_case(token.substr(0, token.size() - 1)));
}

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  std::string word;  // the word being read, folded, apostrophes normalised
  const auto flush = [&] {
    if (!word.empty()) emit_word(word, out);
    word.clear();
  };
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = next_code_point(text, i);
    if (c == 0x2019 || c == 0x2018) c = U'\'';
    if (c == 0x201C || c == 0x201D) c = U'"';
    if (is_space(c) || c < 0x20 || c == 0x7F) {  // control characters separate words like spaces
      flush();
    } else if (c < 0x80 && !(c >= U'a' && c <= U'z') && !(c >= U'A' && c <= U'Z') && !(c >= U'0' && c <= U'9') &&
               c != U'\'' && c != U'-') {
      flush();
      out.emplace_back(1, static_cast<char>(c));
    } else if (is_unicode_punctuation(c)) {
      flush();
      std::string p;
      append_utf8(p, c);
      out.push_back(std::move(p));
    } else {
      append_utf8(word, to_lower(c));
    }
  }
  flush();
  return out;
}

std::string detokenize(const std::vector<std::string>& tokens) {
  std::string out;
  bool capitalize_next = true;  // start of the text or of a new sentence
  bool glue_next = true;        // no space before the next token
  bool double_quote_open = false, single_quote_open = false;
  for (const std::string& tok : tokens) {
    if (tok.empty()) continue;
    const bool is_dq = tok == "\"", is_sq = tok == "'";
    const bool closing = in(tok, {".", ",", "!", "?", ";", ":", ")", "»", "…", "..."}) ||
                         (is_dq && double_quote_open) || (is_sq && single_quote_open);
    const bool opening = in(tok, {"(", "«"}) || (is_dq && !double_quote_open) || (is_sq && !single_quote_open);
    if (!out.empty() && !glue_next && !closing) out += ' ';
    std::string shown = tok == "i" ? std::string("I") : tok;
    if (capitalize_next && !is_punctuation(tok) && !is_sq) {
      shown = capitalize_first(shown);
      capitalize_next = false;
    }
    out += shown;
    if (is_dq) double_quote_open = !double_quote_open;
    if (is_sq) single_quote_open = !single_quote_open;
    glue_next = opening || is_elided(tok);
    if (in(tok, {".", "!", "?", "…", "..."})) capitalize_next = true;
  }
  return out;
}

}  // namespace attnlab::text
