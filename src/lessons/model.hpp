#pragma once
// The untrained model the lessons run on: seeded random embeddings and weights, and the sinusoidal
// positional encoding. Everything here is deterministic in (seed, names): the same --seed gives the
// same numbers on every machine, because the generator (splitmix64) and the normal sampler
// (Box–Muller) are written out here rather than taken from the standard library, whose
// distributions differ between implementations.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/attention.hpp"
#include "lessons/text.hpp"

namespace attnlab::lessons {

class Rng {
 public:
  // A stream named `name` under `seed`: different names give independent-looking streams.
  Rng(std::uint64_t seed, std::string_view name);
  std::uint64_t next();
  double uniform();  // in (0, 1)
  float normal(float stddev);

 private:
  std::uint64_t state_;
  bool have_spare_ = false;
  double spare_ = 0.0;
};

// rows × cols entries drawn from N(0, stddev²).
core::Matrix random_matrix(Rng& rng, std::size_t rows, std::size_t cols, float stddev);

// The embedding-table row of `word`: d_model entries from N(0, 1/d_model), drawn from a stream named
// after the word, so a word has the same vector in every sentence and no table needs to be stored.
// "<pad>" is the zero vector.
std::vector<float> embedding_row(std::string_view word, std::size_t d_model, std::uint64_t seed);

// n × d_model: the rows of the tokens (E, before the √d_model scaling).
core::Matrix embed(const std::vector<std::string>& tokens, std::size_t d_model, std::uint64_t seed);

// The sinusoidal positional encoding of the paper, interleaved:
//   PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
// n × d_model, computed in double and rounded to float.
core::Matrix positional_encoding(std::size_t n, std::size_t d_model);

// The model input: X = E·√d_model + PE (the paper multiplies embeddings by √d_model).
core::Matrix model_input(const core::Matrix& embeddings, const core::Matrix& pe);

// h heads with d_k = d_v = d_model / h. W_Q, W_K, W_V entries from N(0, 1/d_model), so the
// projections of unit-variance inputs have unit variance; W_O entries from N(0, 1/d_model).
// `name` separates the blocks of one model (e.g. "encoder.self", "decoder.cross").
// Throws InputError when h does not divide d_model.
core::AttentionWeights random_attention_weights(std::size_t d_model, std::size_t h, std::uint64_t seed,
                                          std::string_view name);

}  // namespace attnlab::lessons
