// Trains the byte-level BPE on the English corpus and measures it: how long training takes, how many
// tokens a word of held-out text costs, and how many held-out words are a single token.
// Not part of the CMake build (it needs the prepared corpus); built by hand, see docs/english-corpus.md:
//   bash scripts/english-corpus.sh
//   g++ -std=c++20 -O2 -I src bench/bpe_english.cpp src/text/bpe.cpp src/io/json_text.cpp -lfmt -o /tmp/bpe_english
//   /tmp/bpe_english data/english 8000 [OUT.json]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/bpe.hpp"

using namespace attnlab::text;

namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "bpe_english: cannot read %s (run scripts/english-corpus.sh first)\n", path.c_str());
    std::exit(1);
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A word piece: letters only, with or without its leading space (as pretokenize cuts it).
bool is_word_piece(const std::string& p) {
  std::size_t i = p.size() > 1 && p[0] == ' ' ? 1 : 0;
  if (i >= p.size()) return false;
  for (; i < p.size(); ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80)) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "data/english";
  const std::size_t vocab_size = argc > 2 ? std::stoul(argv[2]) : 8000;
  const auto train = read_lines(dir + "/train.txt");
  const auto valid = read_lines(dir + "/valid.txt");

  std::size_t train_words = 0;
  for (const auto& l : train) {
    std::istringstream ws(l);
    for (std::string w; ws >> w;) ++train_words;
  }
  auto t0 = std::chrono::steady_clock::now();
  PieceCounts counts;
  for (const auto& l : train) count_pieces(l, counts);
  const double count_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const Bpe bpe = Bpe::train(counts, vocab_size);
  const double train_s = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  std::size_t tokens = 0, words = 0, word_pieces = 0, single = 0;
  for (const auto& l : valid) {
    tokens += bpe.encode(l).size();
    std::istringstream ws(l);
    for (std::string w; ws >> w;) ++words;
    for (const auto& p : pretokenize(l)) {
      if (!is_word_piece(p)) continue;
      ++word_pieces;
      if (bpe.encode(p).size() == 1) ++single;
    }
  }
  const double encode_s = seconds_since(t0);

  std::printf("train.txt: %zu lines, %zu words, %zu distinct pieces\n", train.size(), train_words, counts.size());
  std::printf("vocabulary: %zu tokens (%zu merges)\n", bpe.size(), bpe.merges().size());
  std::printf("time: %.2f s counting pieces, %.2f s training (one core)\n", count_s, train_s);
  std::printf("valid.txt: %zu lines, %zu words, %zu tokens: %.3f tokens per word\n", valid.size(), words, tokens,
              static_cast<double>(tokens) / static_cast<double>(words));
  std::printf("valid.txt: %.1f%% of %zu word pieces (letters, with their leading space) are one token\n",
              100.0 * static_cast<double>(single) / static_cast<double>(word_pieces), word_pieces);
  std::printf("valid.txt: encoded in %.2f s\n", encode_s);
  for (const char* s : {"unbelievable", "Apple pie is delicious.", "Your journey starts with one step",
                        "The cat that I adopted sleeps.", "Every effort moves you", "naïve café 👋"})
    std::printf("  %-36s %s\n", s, bpe.show_pieces(s).c_str());
  if (argc > 3) {
    std::ofstream(argv[3]) << bpe.to_json().dump() << "\n";
    std::printf("wrote %s\n", argv[3]);
  }
  return 0;
}
