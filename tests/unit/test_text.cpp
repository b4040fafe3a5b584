// The tokenizer and the shared EN+FR vocabulary.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/tokenizer.hpp"
#include "text/vocab.hpp"
#include "util/error.hpp"

using namespace attnlab;
using namespace attnlab::text;
using Tokens = std::vector<std::string>;

TEST_CASE("tokenize: words are case folded and punctuation is split off") {
  CHECK(tokenize("The animal didn't cross the street because it was too tired.") ==
        Tokens{"the", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired", "."});
  CHECK(tokenize("Hello, world! (Really?) \"Yes\"; no: maybe") ==
        Tokens{"hello", ",", "world", "!", "(", "really", "?", ")", "\"", "yes", "\"", ";", "no", ":", "maybe"});
  CHECK(tokenize("  \t\n ").empty());
  CHECK(tokenize("").empty());
  CHECK(tokenize("a/b") == Tokens{"a", "/", "b"});
}

TEST_CASE("tokenize: accented capitals fold to their small letters") {
  CHECK(tokenize("ÉCOLE Élève À Ça ÇA Œuvre ÎLE Être") ==
        Tokens{"école", "élève", "à", "ça", "ça", "œuvre", "île", "être"});
  CHECK(fold_case("ÀÂÄÆÇÉÈÊËÎÏÔÖŒÙÛÜŸ") == "àâäæçéèêëîïôöœùûüÿ");
  CHECK(capitalize_first("école") == "École");
  CHECK(capitalize_first("ça") == "Ça");
  CHECK(capitalize_first("œuf") == "Œuf");
  // Letters outside the table are kept, not mangled.
  CHECK(fold_case("Ωmega") == "Ωmega");
}

TEST_CASE("tokenize: French elision splits after the apostrophe, English contractions stay whole") {
  CHECK(tokenize("L'animal n'a pas traversé la rue parce qu'il était trop fatigué.") ==
        Tokens{"l'", "animal", "n'", "a", "pas", "traversé", "la", "rue", "parce", "qu'", "il", "était", "trop",
               "fatigué", "."});
  CHECK(tokenize("Je t'aime.") == Tokens{"je", "t'", "aime", "."});
  CHECK(tokenize("jusqu'à l'école, lorsqu'elle") == Tokens{"jusqu'", "à", "l'", "école", ",", "lorsqu'", "elle"});
  // The typographic apostrophe is the same token as the ASCII one.
  CHECK(tokenize("L’animal") == Tokens{"l'", "animal"});
  // An elided article typed with a space is the same token.
  CHECK(tokenize("l' animal") == Tokens{"l'", "animal"});
  CHECK(tokenize("didn't it's I'm don't aujourd'hui") == Tokens{"didn't", "it's", "i'm", "don't", "aujourd'hui"});
  // Apostrophes at the ends of a word are quotation marks; hyphens inside words stay.
  CHECK(tokenize("'peut-être'") == Tokens{"'", "peut-être", "'"});
  CHECK(tokenize("a - b") == Tokens{"a", "-", "b"});
  // ... also at the front of what follows an elision, so tokenizing the tokens again changes nothing
  // (found by fuzz_tokenizer: "d''1" gave "d'" "'1"; tests/fuzz/regressions/tokenizer/).
  CHECK(tokenize("l''animal") == Tokens{"l'", "'", "animal"});
  CHECK(tokenize("d''1") == Tokens{"d'", "'", "1"});
  CHECK(tokenize("qu'-il") == Tokens{"qu'", "-", "il"});
  CHECK(tokenize("d' ' 1") == tokenize("d''1"));
}

TEST_CASE("tokenize: French spacing and quotes, invalid UTF-8 never leaks") {
  CHECK(tokenize("Quoi\u00a0? «\u202fOui\u202f»") == Tokens{"quoi", "?", "«", "oui", "»"});
  CHECK(tokenize("“Yes”") == Tokens{"\"", "yes", "\""});
  const Tokens bad = tokenize(std::string("ab\xff") + "c \xc3");
  REQUIRE(bad.size() == 2);
  CHECK(bad[0] == "ab\xef\xbf\xbd" "c");
  CHECK(bad[1] == "\xef\xbf\xbd");
}

TEST_CASE("is_elided and is_punctuation") {
  CHECK(is_elided("l'"));
  CHECK(is_elided("qu'"));
  CHECK(is_elided("jusqu'"));
  CHECK(is_elided("L'"));
  CHECK_FALSE(is_elided("'"));
  CHECK_FALSE(is_elided("didn't"));
  CHECK_FALSE(is_elided("l"));
  CHECK(is_punctuation("."));
  CHECK(is_punctuation("«"));
  CHECK(is_punctuation("\""));
  CHECK_FALSE(is_punctuation("a"));
  CHECK_FALSE(is_punctuation("l'"));
  CHECK_FALSE(is_punctuation("é"));
}

TEST_CASE("detokenize: readable sentences, and a round trip on the lesson sentences") {
  for (const std::string s : {"The animal didn't cross the street because it was too tired.",
                              "The animal didn't cross the street because it was too wide.",
                              "L'animal n'a pas traversé la rue parce qu'il était trop fatigué.",
                              "L'animal n'a pas traversé la rue parce qu'elle était trop large.",
                              "The boy trains the puppy.", "Le garçon entraîne le chiot.", "I love you.",
                              "Je t'aime.", "Your journey starts with one step", "Every effort moves you",
                              "La fille a soif, alors elle marche jusqu'à la rive.",
                              "École (la grande): «oui». Il dit \"non\"! Et I think so?"}) {
    INFO(s);
    CHECK(detokenize(tokenize(s)) == s);
  }
  CHECK(detokenize({"é", "tait", "."}) == "É tait.");
  CHECK(detokenize({}).empty());
  CHECK(detokenize({"hello", ".", "world", "!"}) == "Hello. World!");
}

TEST_CASE("vocab: special tokens first, unknown words map to <unk>") {
  Vocab v;
  CHECK(v.size() == 4);
  CHECK(v.word(Vocab::kPad) == "<pad>");
  CHECK(v.word(Vocab::kUnk) == "<unk>");
  CHECK(v.word(Vocab::kBos) == "<bos>");
  CHECK(v.word(Vocab::kEos) == "<eos>");
  CHECK(v.id("anything") == Vocab::kUnk);
  CHECK_THROWS_AS(v.word(4), InputError);
  CHECK_THROWS_AS(v.word(-1), InputError);
  // The literal text "<pad>" in a sentence is not the pad token: the tokenizer splits the brackets.
  CHECK(tokenize("<pad>") == Tokens{"<", "pad", ">"});
}

TEST_CASE("vocab: built by count then byte order, min_count respected, deterministic") {
  const std::vector<Tokens> streams{{"le", "chien", "le", "chat", "."}, {"the", "dog", "the", "cat", "."}};
  const Vocab v = Vocab::build(streams);
  REQUIRE(v.size() == 4 + 7);
  // counts: "." 2, le 2, the 2, then the singletons in byte order
  CHECK(v.words() == Tokens{"<pad>", "<unk>", "<bos>", "<eos>", ".", "le", "the", "cat", "chat", "chien", "dog"});
  const Vocab v2 = Vocab::build(streams, 2);
  CHECK(v2.size() == 4 + 3);
  CHECK(v2.id("dog") == Vocab::kUnk);
  CHECK(Vocab::build(streams) == v);
}

TEST_CASE("vocab: encode collects each unknown word once, decode stops at <eos>") {
  const Vocab v = Vocab::build({tokenize("The dog sees the cat.")});
  std::vector<std::string> unknown;
  const auto ids = v.encode("The zebra sees the Xylophone and the zebra.", &unknown);
  CHECK(ids.size() == 9);
  CHECK(ids[1] == Vocab::kUnk);
  CHECK(ids[0] == v.id("the"));
  CHECK(unknown == std::vector<std::string>{"zebra", "xylophone", "and"});
  CHECK(unknown_words_warning(unknown) ==
        "warning: 3 words are not in the vocabulary and become <unk>: \"zebra\", \"xylophone\", \"and\"");
  CHECK(unknown_words_warning({"zebra"}) == "warning: 1 word is not in the vocabulary and becomes <unk>: \"zebra\"");
  CHECK(unknown_words_warning({}).empty());
  CHECK(v.encode("the dog").size() == 2);  // no unknown list given: still fine

  std::vector<TokenId> out{Vocab::kBos, v.id("the"), v.id("dog"), Vocab::kUnk, v.id("."), Vocab::kEos, v.id("cat")};
  CHECK(v.decode(out) == "The dog <unk>.");
  CHECK(v.tokens_of({Vocab::kBos, v.id("dog")}) == Tokens{"<bos>", "dog"});
}

TEST_CASE("vocab: JSON round trip, and clear errors for a bad file") {
  const Vocab v = Vocab::build({tokenize("L'animal n'a pas traversé la rue."), tokenize("The animal didn't cross.")});
  const nlohmann::json j = v.to_json();
  CHECK(j["format"] == "attnlab-vocab");
  CHECK(j["version"] == 1);
  const Vocab back = Vocab::from_json(nlohmann::json::parse(j.dump()));
  CHECK(back == v);
  CHECK(back.id("traversé") == v.id("traversé"));

  const auto error_of = [](const nlohmann::json& bad) -> std::string {
    try {
      Vocab::from_json(bad);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  nlohmann::json bad = j;
  bad["version"] = 7;
  CHECK(error_of(bad).find("version") != std::string::npos);
  bad = j;
  bad["tokens"][0] = "<unk>";
  CHECK(error_of(bad).find("tokens[0] must be \"<pad>\"") != std::string::npos);
  bad = j;
  bad["tokens"].push_back("la");
  CHECK(error_of(bad).find("\"la\" appears twice") != std::string::npos);
  bad = j;
  bad["tokens"][5] = 3;
  CHECK(error_of(bad).find("tokens[5] is not a string") != std::string::npos);
  bad = j;
  bad["tokens"][6] = "";
  CHECK(error_of(bad).find("tokens[6] is empty") != std::string::npos);
  CHECK(error_of(nlohmann::json::array()).find("JSON object") != std::string::npos);
  CHECK(error_of(nlohmann::json{{"format", "other"}}).find("format") != std::string::npos);
}
