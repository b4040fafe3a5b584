// Coverage of the commonest English word forms: the word scanner on hand-made sentences, the list
// reader's errors, and the count on a hand-made corpus. tests/cli/coverage_oracle.py checks the
// command's figures on a generated corpus against an independent count in Python.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "corpus/coverage.hpp"
#include "util/error.hpp"

using namespace attnlab;

TEST_CASE("english_word_forms: lower case, apostrophes and hyphens inside words, everything else separates") {
  using V = std::vector<std::string>;
  CHECK(corpus::english_word_forms("The animal didn't cross the street.") == V{"the", "animal", "didn't", "cross", "the", "street"});
  CHECK(corpus::english_word_forms("I'm here -- a well-known 'place', 1961!") == V{"i'm", "here", "a", "well-known", "place"});
  CHECK(corpus::english_word_forms("dogs' tails") == V{"dogs", "tails"});
  CHECK(corpus::english_word_forms("").empty());
}

TEST_CASE("coverage counts the listed words that occur, and lists the rest in the list's order") {
  std::vector<corpus::Example> ex(2);
  ex[0].en = "The cat didn't sleep.";
  ex[1].en = "And the dog ran.";
  const corpus::Coverage c = corpus::coverage(ex, {"the", "and", "of", "didn't", "cat", "to", "ran"});
  CHECK(c.words == 7);
  CHECK(c.covered == 5);
  CHECK(c.missing == std::vector<std::string>{"of", "to"});
  CHECK(c.share() == doctest::Approx(5.0 / 7));
}

TEST_CASE("read_word_list: the shipped list, and malformed lists named by line") {
  const auto words = corpus::read_word_list(ATTNLAB_SOURCE_DIR + std::string("/") + corpus::kCoverageList);
  REQUIRE(words.size() == 1000);
  CHECK(words[0] == "the");
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("attnlab-coverage-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.tsv") << "# comment\nrank\tword\tcount\n1\tthe\t10\n2 of 5\n";
  CHECK_THROWS_WITH_AS(corpus::read_word_list((dir / "a.tsv").string()), doctest::Contains("a.tsv:4: expected rank, word and count"), InputError);
  std::ofstream(dir / "b.tsv") << "1\tthe\t10\n";
  CHECK_THROWS_WITH_AS(corpus::read_word_list((dir / "b.tsv").string()), doctest::Contains("b.tsv:1: expected the header"), InputError);
  std::ofstream(dir / "c.tsv") << "rank\tword\tcount\n";
  CHECK_THROWS_WITH_AS(corpus::read_word_list((dir / "c.tsv").string()), doctest::Contains("expected at least 1 word"), InputError);
  fs::remove_all(dir);
}
