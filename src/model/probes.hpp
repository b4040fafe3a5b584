#pragma once
// What attention heads do, measured: probes over a model's attention weights, and the ablation of one
// head. Used by `attnlab heads` (docs/heads.md defines each probe with its formula).
//
// Shape legend: T query positions, S key positions, H heads, L layers.
//
// A probe is the mean attention mass a head puts on one key per query row, over every row where that
// key exists, of every sentence:
//   previous  A[i][i−1]   (rows i ≥ 1)
//   self      A[i][i]
//   next      A[i][i+1]   (rows i ≤ T−2; not for a causal block, where it is 0 by the mask)
//   first     A[i][0]     (rows i ≥ 1; the first token, or <bos> in a decoder)
//   induction A[p][q+1]   on a sequence of distinct random tokens repeated twice: for a query p in
//                         the second copy, q is where the same token stood in the first copy, so q+1
//                         holds the token that came next last time (Olsson et al. 2022)
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/trainer.hpp"  // Example, make_batch
#include "model/transformer.hpp"

namespace attnlab::model {

// Which attention block of a model: encoder self-attention, decoder self-attention (causal), or
// decoder cross-attention.
enum class HeadBlock { Encoder, Decoder, Cross };
std::string block_name(HeadBlock b);  // "enc", "dec", "cross"

// Running sums of the positional probes for one head.
struct ProbeSums {
  double previous = 0, self = 0, next = 0, first = 0;
  std::size_t previous_n = 0, self_n = 0, next_n = 0, first_n = 0;
  double induction = 0;
  std::size_t induction_n = 0;
  void add_self_attention(const float* a, std::size_t t, bool causal);  // a: T × T, row-major
  double mean(double sum, std::size_t n) const { return n ? sum / static_cast<double>(n) : 0.0; }
};

struct HeadScores {
  HeadBlock block;
  int layer = 0, head = 0;
  ProbeSums sums;
};

// Adds the positional probes of every self-attention head (encoder and decoder) of the model's last
// forward pass of one sentence (batch of 1). `scores` holds one entry per (block, layer, head) of
// the self-attention blocks, as made by self_attention_heads().
std::vector<HeadScores> self_attention_heads(const ModelConfig& c);
void add_last_forward(const Transformer<float>& net, std::vector<HeadScores>& scores);

// Runs the first n of `data` through the model one at a time (teacher forced) and adds each forward's
// probes to `scores`; `after_each(i)` (optional) is called after example i, e.g. for a progress bar.
void add_examples(Transformer<float>& net, const std::vector<Example>& data, std::size_t n, std::vector<HeadScores>& scores,
                  const std::function<void(std::size_t)>& after_each = {});

// The induction probe of a decoder-only model on `sequences` random sequences of `length` distinct
// tokens drawn from ids [first_id, vocab_size), each fed as <bos> r r. Adds to the decoder heads'
// sums. Deterministic for a seed.
void add_induction(Transformer<float>& net, std::vector<HeadScores>& scores, int sequences, int length, int first_id,
                   std::uint64_t seed);

// ---- relation probes: does a head look where the grammar says it should? ----------------------------
// For one query row and a set of key positions that the corpus generator says decide that row's
// translation (the noun "it" refers to, the noun an adjective agrees with, the words that settle a
// word's sense; the English source word a French word translates, for cross-attention):
//   mass   Σ A[row][k] over the keys k           (chance: |keys| / S, a uniform row's mass)
//   hits   rows whose largest weight falls on one of the keys (1 − hits/n: an alignment error rate)
struct RelationSums {
  double mass = 0, chance = 0;
  std::size_t hits = 0, n = 0;
  void add(const float* row, std::size_t S, const std::vector<std::size_t>& keys);  // row: S weights
  double mean_mass() const { return n ? mass / static_cast<double>(n) : 0.0; }
  double mean_chance() const { return n ? chance / static_cast<double>(n) : 0.0; }
  double hit_rate() const { return n ? static_cast<double>(hits) / static_cast<double>(n) : 0.0; }
};

// Sums of the heads' outputs (the d_v-wide slices of the concatenation before W_O) over every query
// position of the forwards added, per attention block: what mean-ablation replaces a head's output by.
struct HeadMeans {
  HeadBlock block;
  int layer = 0;
  std::vector<double> sum;  // C (all heads side by side)
  std::size_t rows = 0;
};
std::vector<HeadMeans> head_means_for(const ModelConfig& c);  // every attention block, zeroed
void add_last_forward(const Transformer<float>& net, std::vector<HeadMeans>& means);

// Parameters with one head's contribution removed: the rows of that block's W_O that read the head's
// slice of the concatenated heads are set to 0, which is exactly the model with that head's output
// replaced by zeros (its bias b_O stays, as it belongs to no head).
std::vector<float> ablate_head(const Transformer<float>& net, const std::vector<float>& params, HeadBlock block, int layer,
                               int head);
// Parameters with one head's output held at its mean (`means`, from head_means_for/add_last_forward)
// instead of zero: the head's rows of W_O are zeroed and mean_h · those rows added to b_O, which is
// exactly concat · W_O + b_O with the head's slice replaced by its mean. Unlike zeroing, this keeps
// what the head contributes on average and removes only what it contributes per token.
std::vector<float> mean_ablate_head(const Transformer<float>& net, const std::vector<float>& params, HeadBlock block, int layer,
                                    int head, const std::vector<HeadMeans>& means);

}  // namespace attnlab::model
