#pragma once
// Unigram and bigram language models of token ids: the baselines `attnlab eval` sets beside a
// trained language model, on the very same tokens, so a learner sees what attention bought.
//
// Both read the same (context, target) pairs the transformer is scored on (see lm_pairs): every
// target token of every example, <bos> targets excluded (a record's start is known, not predicted).
//
//   unigram  p(w) = (c(w) + 1) / (N + V)                      add-one, so no test token has p = 0
//   bigram   p(w | v) = max(c(v w) − D, 0) / c(v)             absolute discounting, interpolated:
//                       + D · n(v) / c(v) · p_unigram(w)      n(v) = distinct words seen after v;
//                                                              an unseen v falls back to p_unigram
// D (0 < D < 1) is chosen on the validation split from a fixed grid. Both sum to 1 over w.
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/trainer.hpp"

namespace attnlab::model {

// The (previous token, target token) pairs of `data`, in order. A raw window gives
// (tgt[t], tgt[t+1]); a sentence example gives the pairs of <bos> tgt <eos>.
std::vector<std::pair<int, int>> lm_pairs(const std::vector<Example>& data);

class NgramBaseline {
 public:
  // Counts unigrams and bigrams over `train` pairs for a vocabulary of `vocab_size` ids.
  NgramBaseline(const std::vector<std::pair<int, int>>& train, int vocab_size);

  // Mean negative log-likelihood (nats per token) of the targets of `pairs`.
  double unigram_loss(const std::vector<std::pair<int, int>>& pairs) const;
  double bigram_loss(const std::vector<std::pair<int, int>>& pairs, double discount) const;

  // The discount of the grid {0.1, 0.2, …, 0.9} with the lowest bigram loss on `valid`.
  double best_discount(const std::vector<std::pair<int, int>>& valid) const;

  double unigram_prob(int w) const;
  double bigram_prob(int v, int w, double discount) const;

 private:
  int vocab_size_;
  std::uint64_t total_ = 0;
  std::vector<std::uint64_t> uni_;        // target counts
  std::vector<std::uint64_t> ctx_;        // c(v): pairs with context v
  std::vector<std::uint32_t> distinct_;   // n(v)
  std::unordered_map<std::uint64_t, std::uint64_t> bi_;  // (v << 32 | w) → count
};

}  // namespace attnlab::model
