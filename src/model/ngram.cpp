#include "model/ngram.hpp"

#include <cmath>
#include <limits>

#include "util/error.hpp"

namespace attnlab::model {

namespace {
constexpr int kPadId = 0, kBosId = 2, kEosId = 3;  // text::Vocab's ids (model/ does not include text/)
std::uint64_t key(int v, int w) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(v)) << 32 | static_cast<std::uint32_t>(w); }
}  // namespace

std::vector<std::pair<int, int>> lm_pairs(const std::vector<Example>& data) {
  std::vector<std::pair<int, int>> out;
  for (const Example& e : data) {
    if (e.raw) {
      for (std::size_t t = 0; t + 1 < e.tgt.size(); ++t)
        if (e.tgt[t + 1] != kBosId && e.tgt[t + 1] != kPadId) out.emplace_back(e.tgt[t], e.tgt[t + 1]);
      continue;
    }
    int prev = kBosId;
    for (int w : e.tgt) {
      out.emplace_back(prev, w);
      prev = w;
    }
    out.emplace_back(prev, kEosId);
  }
  return out;
}

NgramBaseline::NgramBaseline(const std::vector<std::pair<int, int>>& train, int vocab_size)
    : vocab_size_(vocab_size), uni_(static_cast<std::size_t>(vocab_size), 0), ctx_(static_cast<std::size_t>(vocab_size), 0),
      distinct_(static_cast<std::size_t>(vocab_size), 0) {
  for (const auto& [v, w] : train) {
    if (v < 0 || w < 0 || v >= vocab_size || w >= vocab_size) throw RuntimeError("NgramBaseline: a token id is outside the vocabulary");
    ++uni_[static_cast<std::size_t>(w)];
    ++ctx_[static_cast<std::size_t>(v)];
    if (++bi_[key(v, w)] == 1) ++distinct_[static_cast<std::size_t>(v)];
    ++total_;
  }
}

double NgramBaseline::unigram_prob(int w) const {
  return (static_cast<double>(uni_[static_cast<std::size_t>(w)]) + 1.0) / (static_cast<double>(total_) + vocab_size_);
}

double NgramBaseline::bigram_prob(int v, int w, double d) const {
  const double pu = unigram_prob(w);
  const double cv = static_cast<double>(ctx_[static_cast<std::size_t>(v)]);
  if (cv == 0) return pu;
  const auto it = bi_.find(key(v, w));
  const double c = it == bi_.end() ? 0.0 : static_cast<double>(it->second);
  return std::max(c - d, 0.0) / cv + d * static_cast<double>(distinct_[static_cast<std::size_t>(v)]) / cv * pu;
}

double NgramBaseline::unigram_loss(const std::vector<std::pair<int, int>>& pairs) const {
  double s = 0;
  for (const auto& [v, w] : pairs) s -= std::log(unigram_prob(w));
  return pairs.empty() ? 0.0 : s / static_cast<double>(pairs.size());
}

double NgramBaseline::bigram_loss(const std::vector<std::pair<int, int>>& pairs, double d) const {
  double s = 0;
  for (const auto& [v, w] : pairs) s -= std::log(bigram_prob(v, w, d));
  return pairs.empty() ? 0.0 : s / static_cast<double>(pairs.size());
}

double NgramBaseline::best_discount(const std::vector<std::pair<int, int>>& valid) const {
  double best = 0.5, best_loss = std::numeric_limits<double>::infinity();
  for (int k = 1; k <= 9; ++k) {
    const double d = 0.1 * k;
    const double l = bigram_loss(valid, d);
    if (l < best_loss) best_loss = l, best = d;
  }
  return best;
}

}  // namespace attnlab::model
