// Writes explorer pages that no shipped model can produce, for tests/browser/explorer.test.mjs:
//   explorer_fixture OUT_DIR
//   big.html   40 tokens, 6 layers × 8 heads, seeded random rows that sum to 1 (the size the explorer
//              must stay usable at), in the same JSON form the commands print (render::attention_set);
//   odd.html   tokens that try to break out of the page ("</script>", quotes, an ampersand, invalid
//              UTF-8) and a fully masked all-zero row.
#include <cmath>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "render/html_page.hpp"

using attnlab::render::attention_set;
using attnlab::render::AttentionSetInfo;

namespace {

nlohmann::json random_set(std::size_t n, int layers, int heads, std::uint32_t seed) {
  AttentionSetInfo si{"encoder self-attention", "self", "a synthetic set: seeded random rows.", "attending", "attended to", {}, {}, {}, {}};
  for (std::size_t i = 0; i < n; ++i) si.rows.push_back("tok" + std::to_string(i));
  si.columns = si.rows;
  for (int l = 0; l < layers; ++l) si.layers.push_back(l);
  for (int h = 0; h < heads; ++h) si.heads.push_back(h);
  std::mt19937 rng(seed);
  std::vector<std::vector<float>> blocks;
  for (int b = 0; b < layers * heads; ++b) {
    std::vector<float> w(n * n);
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0;
      // peaked rows, like trained attention: exp of a scaled normal
      std::normal_distribution<double> nd(0.0, 2.0);
      for (std::size_t j = 0; j < n; ++j) sum += (w[i * n + j] = static_cast<float>(std::exp(nd(rng))));
      for (std::size_t j = 0; j < n; ++j) w[i * n + j] = static_cast<float>(w[i * n + j] / sum);
    }
    blocks.push_back(std::move(w));
  }
  return attention_set(si, [&](int l, int h) { return blocks[static_cast<std::size_t>(l * heads + h)].data(); });
}

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: explorer_fixture OUT_DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  attnlab::render::PageInfo info{"explorer fixture: 40 tokens, 6 layers, 8 heads", "synthetic weights", "explorer_fixture", {}};
  write(dir + "/big.html", attnlab::render::explorer_page({{"attention", nlohmann::json::array({random_set(40, 6, 8, 7)})}}, info));

  AttentionSetInfo si{"cross-attention", "cross", "tokens that try to break the page", "attending", "attended to", {}, {}, {0}, {0, 1}};
  si.rows = {"</script><script>window.broken=1</script>", "\"quoted\" & <b>bold</b>", "bad\xff" "utf8"};
  si.columns = {"a", "</style>", "c"};
  const std::vector<float> w0 = {0.5f, 0.25f, 0.25f, 0, 0, 0, 1, 0, 0};  // row 1 fully masked: all zero
  const std::vector<float> w1 = {0, 1, 0, 0, 0, 0, 0.2f, 0.3f, 0.5f};
  info.title = "explorer fixture: </script> & friends";
  write(dir + "/odd.html", attnlab::render::explorer_page(
                               {{"attention", nlohmann::json::array({attention_set(si, [&](int, int h) { return h ? w1.data() : w0.data(); })})}},
                               info));
  std::cout << "explorer_fixture: wrote big.html and odd.html in " << dir << '\n';
  return 0;
}
