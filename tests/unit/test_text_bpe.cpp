// The byte-level BPE tokenizer: pre-tokenization, training by hand-worked example, round trips on any
// bytes, determinism, and its JSON form.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_text.hpp"
#include "text/bpe.hpp"
#include "util/error.hpp"

using namespace attnlab;
using namespace attnlab::text;
using Strings = std::vector<std::string>;
using namespace std::string_literals;

namespace {

// The classic example (Sennrich et al. 2016), as piece counts.
const PieceCounts kLowNewest{{"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}};

TokenId byte_id(char c) { return Bpe::kFirstByte + static_cast<unsigned char>(c); }

// English-like lines with a few thousand distinct pieces, enough for a few hundred merges.
std::vector<std::string> sample_lines() {
  const Strings words{"the", "cat", "sat", "on", "mat", "unbelievable", "believe", "able", "Apple", "apple",
                      "pie", "is", "delicious", "journey", "starts", "with", "one", "step", "didn't", "it's",
                      "running", "runner", "ran", "quickly", "quick", "slowly", "slow", "tired", "street"};
  std::mt19937 rng(7);
  std::vector<std::string> lines;
  for (int i = 0; i < 400; ++i) {
    std::string line;
    const int n = 3 + static_cast<int>(rng() % 10);
    for (int k = 0; k < n; ++k) line += (k ? " " : "") + words[rng() % words.size()];
    line += rng() % 2 ? "." : "!";
    lines.push_back(line);
  }
  return lines;
}

std::string random_bytes(std::mt19937& rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xFF);
  return s;
}

std::string error_of(const nlohmann::json& j) {
  try {
    Bpe::from_json(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("pretokenize: a leading space stays with its word, case is kept, punctuation and contractions split") {
  CHECK(pretokenize("Hello world") == Strings{"Hello", " world"});
  CHECK(pretokenize("Apple's pie, I can't  stop.") ==
        Strings{"Apple", "'s", " pie", ",", " I", " can", "'t", " ", " stop", "."});
  CHECK(pretokenize("\n\nThe end\n") == Strings{"\n\n", "The", " end", "\n"});
  CHECK(pretokenize("a 42 ... 3.5") == Strings{"a", " 42", " ...", " 3", ".", "5"});
  CHECK(pretokenize("It'S 'sand'") == Strings{"It", "'S", " '", "sand", "'"});
  // Accented letters are letters; typographic punctuation and emoji are not.
  CHECK(pretokenize("naïve café… “Ωmega”") == Strings{"naïve", " café", "…", " “", "Ωmega", "”"});
  CHECK(pretokenize("hi 👋🏽!") == Strings{"hi", " 👋🏽!"});
  CHECK(pretokenize("a\u00a0b") == Strings{"a", "\u00a0", "b"});
  // A byte that is not UTF-8 is "other" and never merged into a word.
  CHECK(pretokenize("ab\xff" "cd") == Strings{"ab", "\xff", "cd"});
  CHECK(pretokenize("").empty());
}

TEST_CASE("pretokenize: pieces are at most 64 bytes, cut at a code point boundary, and always add up to the text") {
  const std::string long_word(1000, 'x');
  for (const auto& p : pretokenize(long_word)) CHECK(p.size() <= Bpe::kMaxPieceBytes);
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "é";  // 2 bytes each
  const Strings parts = pretokenize(" " + accents);
  REQUIRE(parts.size() == 4);
  CHECK(parts[0].size() == 63);  // the space and 31 é: a 32nd would not fit
  for (const auto& p : parts) CHECK(display_bytes(p).find("\\x") == std::string::npos);

  std::mt19937 rng(1);
  for (int t = 0; t < 300; ++t) {
    const std::string s = random_bytes(rng, rng() % 300);
    std::string joined;
    for (const auto& p : pretokenize(s)) {
      CHECK(!p.empty());
      CHECK(p.size() <= Bpe::kMaxPieceBytes);
      joined += p;
    }
    CHECK(joined == s);
  }
}

TEST_CASE("train: the hand-worked example (low, lower, newest, widest), ties to the smaller left id") {
  // Pair counts at the start: e-s 9, s-t 9, w-e 8, l-o 7, o-w 7, n-e 6, e-w 6, ...
  //  1. e+s (9; ties with s+t, and 'e' < 's')     newest → n e w es t,  widest → w i d es t
  //  2. es+t (9)                                   → n e w est, w i d est
  //  3. l+o (7; ties with o+w, 'l' < 'o')          low → lo w, lower → lo w e r
  //  4. lo+w (7)                                   → low, low e r
  //  5. e+w (6; ties with n+e and w+est: 'e' is the smallest left id)  newest → n ew est
  //  6. n+ew (6; ties with ew+est: 'n' < the id of "ew")               newest → new est
  //  7. new+est (6)
  //  8. d+est (3; ties with w+i, i+d)              widest → w i dest
  //  9. i+dest (3; ties with w+i)                  → w idest
  // 10. w+idest (3)
  // 11. e+r (2; ties with low+e)                   lower → low er
  // 12. low+er (2)                                 then no pair is left.
  const Bpe bpe = Bpe::train(kLowNewest, 1000);
  const TokenId m = Bpe::kFirstMerge;
  const std::vector<std::pair<TokenId, TokenId>> expected{
      {byte_id('e'), byte_id('s')}, {m + 0, byte_id('t')},       {byte_id('l'), byte_id('o')},
      {m + 2, byte_id('w')},        {byte_id('e'), byte_id('w')}, {byte_id('n'), m + 4},
      {m + 5, m + 1},               {byte_id('d'), m + 1},        {byte_id('i'), m + 7},
      {byte_id('w'), m + 8},        {byte_id('e'), byte_id('r')}, {m + 3, m + 10}};
  CHECK(bpe.merges() == expected);
  CHECK(bpe.size() == 272);
  CHECK(bpe.bytes_of(m + 6) == "newest");
  CHECK(bpe.bytes_of(m + 11) == "lower");

  // The target size stops training early: one merge only, and it is the tie's winner e+s, not s+t.
  const Bpe one = Bpe::train(kLowNewest, 261);
  CHECK(one.size() == 261);
  CHECK(one.bytes_of(m) == "es");
  // Pairs seen fewer than min_pair_count times are not merged: merges 11 and 12 were seen twice.
  CHECK(Bpe::train(kLowNewest, 1000, 3).size() == 270);
  CHECK_THROWS_AS(Bpe::train(kLowNewest, 259), InputError);
  CHECK_THROWS_AS(Bpe::train(kLowNewest, Bpe::kMaxVocabSize + 1), InputError);
}

TEST_CASE("encode: merges apply in rank order, and the pieces show it") {
  const Bpe bpe = Bpe::train(kLowNewest, 1000);
  // l o w e s t: rank 0 (e+s), rank 1 (es+t), rank 2 (l+o), rank 3 (lo+w) → low | est
  CHECK(bpe.pieces("lowest") == Strings{"low", "est"});
  // n e w e r: e+w (rank 4) before n+ew (5) before e+r (10) → new | er
  CHECK(bpe.pieces("newer") == Strings{"new", "er"});
  // w i d e r: no merge for i+d or w+i, e+r applies → w | i | d | er
  CHECK(bpe.pieces("wider") == Strings{"w", "i", "d", "er"});
  // A leading space is its own byte here: no merge was learned with it.
  CHECK(bpe.show_pieces("lowest newer") == "low|est| |new|er");
  CHECK(bpe.show_pieces("widest", " · ") == "widest");
  CHECK(bpe.encode("newest") == std::vector<TokenId>{Bpe::kFirstMerge + 6});
}

TEST_CASE("round trip: any bytes encode without special tokens and decode back byte for byte") {
  const Bpe bpe = Bpe::train_on_texts(sample_lines(), 400);
  REQUIRE(bpe.size() > 300);
  const auto check = [&](const std::string& s) {
    const std::vector<TokenId> ids = bpe.encode(s);
    for (TokenId id : ids) {
      CHECK(id >= Bpe::kFirstByte);
      CHECK(static_cast<std::size_t>(id) < bpe.size());
    }
    CHECK(bpe.decode(ids) == s);
    std::string joined;
    for (const auto& p : bpe.pieces(s)) joined += p;
    CHECK(joined == s);
  };
  std::mt19937 rng(2024);
  for (int t = 0; t < 500; ++t) check(random_bytes(rng, rng() % 200));
  for (const std::string& s :
       {""s, " "s, "  \t\n\r "s, "The cat sat on the mat."s, "Unbelievable! It's delicious, isn't it?"s,
        "APPLE apple Apple"s, "naïve café — “quoted” …"s, "日本語のテキスト"s, "👨‍👩‍👧‍👦 family 🇫🇷"s,
        "\xff\xfe\x00" "abc\x00"s, "\xc0\xaf overlong, \xed\xa0\x80 surrogate, \xf4\x90\x80\x80 too big"s,
        "\x1b[31mred\x1b[0m \x7f \u0085"s, std::string(5000, 'a'), std::string(300, ' ') + "x"s,
        "<unk> <eos> <pad> are plain text here"s, "'''' ''s 'S"s})
    check(s);
  // Typed special-token names are text, not special ids.
  for (TokenId id : bpe.encode("<eos>")) CHECK(id >= Bpe::kFirstByte);
}

TEST_CASE("train: deterministic, whatever the order the counts were built in") {
  const auto lines = sample_lines();
  const Bpe a = Bpe::train_on_texts(lines, 350);
  const Bpe b = Bpe::train_on_texts(lines, 350);
  CHECK(a == b);
  CHECK(a.to_json().dump() == b.to_json().dump());
  PieceCounts forward, backward;
  for (const auto& l : lines) count_pieces(l, forward);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) count_pieces(*it, backward);
  backward.rehash(backward.bucket_count() * 4);  // a different iteration order
  CHECK(Bpe::train(backward, 350) == a);
  CHECK(Bpe::train(forward, 350) == a);
  // Frequent words become single tokens, with their leading space.
  CHECK(a.pieces(" the").size() == 1);
  CHECK(a.pieces(" unbelievable").size() <= 2);
}

TEST_CASE("decode: stops at <eos>, skips <pad> and <bos>, shows <unk>, refuses ids out of range") {
  const Bpe bpe;
  CHECK(bpe.size() == 260);
  const TokenId h = byte_id('h'), i = byte_id('i');
  CHECK(bpe.decode({Vocab::kBos, h, Vocab::kPad, i, Vocab::kEos, h}) == "hi");
  CHECK(bpe.decode({h, Vocab::kUnk}) == "h<unk>");
  CHECK_THROWS_AS(bpe.decode({260}), InputError);
  CHECK_THROWS_AS(bpe.bytes_of(-1), InputError);
  CHECK(bpe.token_text(Vocab::kEos) == "<eos>");
  CHECK(bpe.token_text(byte_id('\n')) == "\\n");
  CHECK(bpe.token_text(Bpe::kFirstByte + 0xE2) == "\\xe2");
}

TEST_CASE("display_bytes: valid UTF-8 is kept, controls and stray bytes are escaped, the result is valid UTF-8") {
  CHECK(display_bytes("café 👋") == "café 👋");
  CHECK(display_bytes("a\\b") == "a\\\\b");
  CHECK(display_bytes("\x1b[0m\t\n\r\x7f") == "\\x1b[0m\\t\\n\\r\\x7f");
  CHECK(display_bytes("\u0085") == "\\u0085");
  CHECK(display_bytes("\xe2\x80") == "\\xe2\\x80");  // the start of "…" without its last byte
  std::mt19937 rng(3);
  for (int t = 0; t < 200; ++t) {
    const std::string shown = display_bytes(random_bytes(rng, 50));
    CHECK_NOTHROW((void)nlohmann::json(shown).dump());  // nlohmann refuses invalid UTF-8
  }
}

TEST_CASE("JSON: round trip, copies, and clear errors for a bad file") {
  const Bpe bpe = Bpe::train_on_texts(sample_lines(), 320);
  const nlohmann::json j = bpe.to_json();
  CHECK(j["format"] == "attnlab-bpe");
  CHECK(j["version"] == 1);
  CHECK(j["specials"] == nlohmann::json{"<pad>", "<unk>", "<bos>", "<eos>"});
  CHECK(j["merges"].size() == bpe.size() - 260);
  const Bpe back = Bpe::from_json(io::parse_json_text(j.dump(), "bpe.json"));
  CHECK(back == bpe);
  const std::string text = "The quick runner didn't stop: unbelievable!";
  CHECK(back.encode(text) == bpe.encode(text));
  Bpe copy = bpe;
  CHECK(copy.encode(text) == bpe.encode(text));
  copy = Bpe();
  CHECK(copy.size() == 260);

  // Tokens that are not valid UTF-8 are stored escaped, and read back.
  const Bpe bytes = Bpe::train({{"\xe2\x80\xa6\xe2\x80", 5}}, 270);
  CHECK(bytes.to_json()["merges"][0][2] == "\\xe2\\x80");
  CHECK(Bpe::from_json(io::parse_json_text(bytes.to_json().dump(), "bpe.json")) == bytes);

  const nlohmann::json small = Bpe::train(kLowNewest, 1000).to_json();
  nlohmann::json bad = small;
  CHECK(error_of(nlohmann::json::array()).find("expected a JSON object") != std::string::npos);
  bad["format"] = "attnlab-vocab";
  CHECK(error_of(bad).find("\"format\" must be \"attnlab-bpe\" (found \"attnlab-vocab\")") != std::string::npos);
  bad = small;
  bad["version"] = 2;
  CHECK(error_of(bad).find("unsupported \"version\" 2") != std::string::npos);
  bad = small;
  bad.erase("version");
  CHECK(error_of(bad).find("\"version\" (missing)") != std::string::npos);
  bad = small;
  bad["specials"][1] = "<unknown>";
  CHECK(error_of(bad).find("specials[1] must be \"<unk>\" (found \"<unknown>\")") != std::string::npos);
  bad = small;
  bad["specials"] = "none";
  CHECK(error_of(bad).find("\"specials\" must be") != std::string::npos);
  bad = small;
  bad["merges"] = nlohmann::json::object();
  CHECK(error_of(bad).find("\"merges\" must be an array") != std::string::npos);
  bad = small;
  bad["merges"][3] = {263, 119};
  CHECK(error_of(bad).find("merges[3] must be [left id, right id, text] (found an array of 2)") != std::string::npos);
  bad = small;
  bad["merges"][0][0] = 2;  // <bos> cannot be merged
  CHECK(error_of(bad).find("merges[0][0] must be a token id from 4 to 259") != std::string::npos);
  CHECK(error_of(bad).find("found 2)") != std::string::npos);
  bad = small;
  bad["merges"][1][1] = 261;  // its own id: not made yet
  CHECK(error_of(bad).find("merges[1][1] must be a token id from 4 to 260") != std::string::npos);
  bad = small;
  bad["merges"][1][1] = "t";
  CHECK(error_of(bad).find("merges[1][1] must be a token id") != std::string::npos);
  bad = small;
  bad["merges"][0][2] = "st";
  CHECK(error_of(bad).find("merges[0][2] must be the merged text \"es\" (found \"st\")") != std::string::npos);
  bad = small;
  bad["merges"][1] = small["merges"][0];
  CHECK(error_of(bad).find("merges[1] repeats the merge [105, 119]") != std::string::npos);
  CHECK(error_of(small) == "(no error)");
}
