#pragma once
// The token ids every attnlab vocabulary reserves (text/vocab.hpp, text/bpe.hpp) and the model relies
// on (model/transformer.hpp): padding is masked out of attention and the loss, decoding starts at
// <bos> and stops at <eos>. One definition, so the two cannot drift apart.
namespace attnlab::tokens {

inline constexpr int kPad = 0;  // fills batches to a common length
inline constexpr int kUnk = 1;  // a word not in the vocabulary
inline constexpr int kBos = 2;  // start of a target sentence (decoder input)
inline constexpr int kEos = 3;  // end of a sentence

}  // namespace attnlab::tokens
