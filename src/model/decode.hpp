#pragma once
// Inference: greedy decoding and beam search with a length penalty, on the key/value cache of
// Transformer::decode_step (each step costs one token's work, not a re-run of the whole prefix).
#include <cstdint>
#include <vector>

#include "model/transformer.hpp"

namespace attnlab::model {

struct Hypothesis {
  std::vector<int> tokens;   // without <bos> and <eos>
  double logprob = 0;        // sum of log-probabilities of tokens and the final <eos>
  // The log-probability of each token as it was chosen, and of the final <eos> when finished: what
  // `translate` reads its confidence from (tasks/confidence.hpp). Sums to `logprob`.
  std::vector<double> token_logprobs;
  double score = 0;          // logprob / length penalty
  bool finished = false;     // ended with <eos> (not cut at max_len)
  // Cross-attention weights at each generated position (including <eos>): [step][layer] = H × S.
  std::vector<std::vector<std::vector<float>>> cross_attention;
};

struct DecodeOptions {
  int beam = 1;               // 1 = greedy
  double length_penalty = 0.6;  // α of ((5 + |Y|) / 6)^α (GNMT; the paper uses 0.6); 0 = none
  // Most tokens to generate before <eos>, which is then the only choice left. 0: tied to the source,
  // 2·|source| + 10 (a translation is rarely even 1.5 times as long), and never past the model's
  // max_len − 1, so a model that repeats a word stops early instead of filling its whole length.
  int max_len = 0;
  // Never write a loop: a token a third time in a row, or a block of two or more tokens twice back to
  // back ("par un pas par un pas"). French never does either ("nous nous" is two, and allowed), so the
  // search loses nothing it should write; false shows the model's own choices.
  bool block_loops = true;
  bool record_attention = false;
};

// The tokens that would close a loop after `tokens` (see DecodeOptions::block_loops).
std::vector<int> loop_closing_tokens(const std::vector<int>& tokens);
// The loop that appending `next` to `tokens` would close: 1 when it is a third in a row, L ≥ 2 for
// the shortest block of L written twice back to back, 0 when none.
std::size_t loop_closed_by(const std::vector<int>& tokens, int next);

// Encoder–decoder: translates `src` (token ids). Returns the best-scoring finished hypothesis the
// search found. A beam (K > 1) keeps going until no live hypothesis can still beat the best finished
// one, and greedy decoding runs too, so a beam never returns a worse score than greedy.
Hypothesis translate(Transformer<float>& model, const std::vector<int>& src, const DecodeOptions& opt);

// Decoder-only: feeds <bos> + prompt and returns the log-probabilities of the next token (size V).
std::vector<double> next_token_logprobs(Transformer<float>& model, const std::vector<int>& prompt);
// Decoder-only: greedy continuation of the prompt, up to max_new tokens or <eos>.
std::vector<int> continue_greedy(Transformer<float>& model, const std::vector<int>& prompt, int max_new);

// How continue_sampled picks each token from the next-token distribution p (over every token but
// <pad>, <bos>, <unk>): p^(1/temperature) renormalised, then only the top_k most likely (0: all),
// then only the most likely ones whose probabilities first add up to top_p (1: all), renormalised,
// then one draw from a splitmix64 stream seeded by `seed`. The same options give the same text on
// every platform.
struct SampleOptions {
  double temperature = 0.8;  // > 0; lower is closer to greedy
  int top_k = 0;
  double top_p = 0.95;       // in (0, 1]
  std::uint64_t seed = 1;
};

// Decoder-only: a sampled continuation of the prompt, up to max_new tokens or <eos>.
std::vector<int> continue_sampled(Transformer<float>& model, const std::vector<int>& prompt, int max_new, const SampleOptions& opt);

// The probabilities SampleOptions leaves to draw from, given log-probabilities `lp` (zero for every
// token that cannot be drawn). Exposed for tests.
std::vector<double> sampling_distribution(const std::vector<double>& lp, const SampleOptions& opt);

// GNMT length penalty ((5 + length) / 6)^alpha.
double length_penalty(int length, double alpha);

// The generation limit `translate` uses for a source of `source_length` tokens (see DecodeOptions::max_len).
int translation_limit(const Transformer<float>& model, int source_length, const DecodeOptions& opt);

}  // namespace attnlab::model
