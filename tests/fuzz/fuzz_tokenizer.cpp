// Fuzz target: the tokenizer (text/tokenizer.hpp) and the vocabulary (text/vocab.hpp) on arbitrary
// bytes: valid and invalid UTF-8, accents, typographic apostrophes and spaces, unknown words.
//
// tokenize() never throws, so here even an attnlab::Error from it is a bug. Invariants checked on
// every input:
//  - every token is non-empty, valid UTF-8 (invalid input becomes U+FFFD), already case-folded, and
//    holds no whitespace or control character;
//  - tokenizing the tokens joined by spaces gives the same tokens back (the tokenizer is idempotent
//    on its own output), and fold_case is idempotent;
//  - encoding with the lessons' vocabulary (data/vocab.txt) gives ids inside it, <unk> exactly for the
//    words it lacks, each unknown word listed once; tokens_of/decode/detokenize accept the result;
//  - a vocabulary built from the tokens holds them all and survives to_json → from_json.
// When the input is itself JSON, Vocab::from_json reads it too, and may only throw attnlab::Error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "text/tokenizer.hpp"
#include "text/vocab.hpp"

using namespace attnlab;
using text::Vocab;

namespace {

// The vocabulary of the lessons' random mode: data/vocab.txt, one word a line, '#' comments.
const Vocab& lesson_vocab() {
  static const Vocab v = [] {
    Vocab out;
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/data/vocab.txt");
    if (!in) {
      std::fprintf(stderr, "fuzz_tokenizer: cannot read %s/data/vocab.txt\n", ATTNLAB_SOURCE_DIR);
      std::abort();
    }
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line[0] != '#') out.add(line);
    return out;
  }();
  return v;
}

bool has_space_or_control(std::string_view tok) {
  for (char c : tok) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x20 || b == 0x7F) return true;
  }
  // The no-break spaces the tokenizer also splits on: U+00A0, U+202F, U+2009.
  return tok.find("\xC2\xA0") != std::string_view::npos || tok.find("\xE2\x80\xAF") != std::string_view::npos ||
         tok.find("\xE2\x80\x89") != std::string_view::npos;
}

std::string join(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) out += (out.empty() ? "" : " ") + t;
  return out;
}

void check_tokens(const std::vector<std::string>& tokens) {
  for (const std::string& t : tokens) {
    FUZZ_CHECK(!t.empty());
    FUZZ_CHECK(fuzz::valid_utf8(t));
    FUZZ_CHECK(!has_space_or_control(t));
    FUZZ_CHECK(text::fold_case(t) == t);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 16)) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  // The tokenizer and the text helpers: documented never to throw, so nothing is caught here.
  const std::vector<std::string> tokens = text::tokenize(input);
  check_tokens(tokens);
  FUZZ_CHECK(text::tokenize(join(tokens)) == tokens);
  const std::string folded = text::fold_case(input);
  FUZZ_CHECK(fuzz::valid_utf8(folded));
  FUZZ_CHECK(text::fold_case(folded) == folded);
  const std::string cap = text::capitalize_first(input);
  FUZZ_CHECK(cap.empty() == input.empty());
  (void)text::is_punctuation(input);
  (void)text::is_elided(input);
  const std::string sentence = text::detokenize(tokens);
  FUZZ_CHECK(fuzz::valid_utf8(sentence));

  // Vocabulary lookups: the lessons' vocabulary, then one built from these tokens.
  fuzz::only_attnlab_errors([&] {
    const Vocab& v = lesson_vocab();
    std::vector<std::string> unknown;
    const std::vector<text::TokenId> ids = v.encode(input, &unknown);
    FUZZ_CHECK(ids.size() == tokens.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      FUZZ_CHECK(ids[i] >= 0 && static_cast<std::size_t>(ids[i]) < v.size());
      FUZZ_CHECK((ids[i] == Vocab::kUnk) == !v.contains(tokens[i]));
      if (ids[i] != Vocab::kUnk) FUZZ_CHECK(v.word(ids[i]) == tokens[i]);
    }
    for (std::size_t i = 0; i < unknown.size(); ++i) {
      FUZZ_CHECK(!v.contains(unknown[i]));
      FUZZ_CHECK(std::count(unknown.begin(), unknown.end(), unknown[i]) == 1);
    }
    FUZZ_CHECK(text::unknown_words_warning(unknown).empty() == unknown.empty());
    FUZZ_CHECK(v.tokens_of(ids).size() == ids.size());
    FUZZ_CHECK(fuzz::valid_utf8(v.decode(ids)));

    const Vocab built = Vocab::build({tokens});
    for (const std::string& t : tokens) FUZZ_CHECK(built.contains(t) && built.word(built.id(t)) == t);
    const Vocab back = Vocab::from_json(nlohmann::json::parse(built.to_json().dump()));
    FUZZ_CHECK(back == built);
    FUZZ_CHECK(built.decode(built.encode(input)) == built.decode(built.encode_tokens(tokens)));
  });

  // Input that happens to be JSON: the vocabulary reader of checkpoints and vocab.json files.
  const nlohmann::json j = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) {
    fuzz::only_attnlab_errors([&] {
      const Vocab v = Vocab::from_json(j);
      FUZZ_CHECK(v.size() >= Vocab::kSpecials.size());
      FUZZ_CHECK(Vocab::from_json(v.to_json()) == v);
    });
  }
  return 0;
}
