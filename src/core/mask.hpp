#pragma once
// Attention masks.
//
// Shapes: n queries (rows), m keys (columns). A mask entry is 1 where query i may attend to key j and
// 0 where key j is hidden from it. Masks are applied to the *scaled scores, before the softmax*, by
// writing -inf into hidden positions (see apply_mask): exp(-inf) = 0, so hidden keys get exactly zero
// weight and the remaining weights still sum to 1. Writing 0 instead of -inf, or masking the weights
// after the softmax, are the two classic mistakes this ordering avoids.
#include <vector>

#include "core/matrix.hpp"

namespace attnlab::core {

// Causal ("look-ahead") mask of a decoder: query i sees keys 0..i, never a later one.
// The diagonal is always visible (a token may attend to itself), so no row is ever fully masked.
// For n ≠ m the same rule applies to the n × m grid (key j visible iff j ≤ i), like
// torch.triu(ones(n, m), diagonal=1) inverted.
Mask causal_mask(std::size_t n, std::size_t m);
inline Mask causal_mask(std::size_t n) { return causal_mask(n, n); }

// Key-padding mask: the first `valid_keys` keys are real tokens, the rest are padding that no query
// may attend to. Every query row is the same. With valid_keys == 0 every row is fully masked.
Mask key_padding_mask(std::size_t n, std::size_t m, std::size_t valid_keys);

// Self-attention padding masks for a batch of sequences padded to a common length T, built from the
// sequence lengths: for sequence b, entry (i, j) is 1 iff i < lengths[b] and j < lengths[b].
// Rows of padding queries (i ≥ length) are therefore fully masked: their attention weights come out
// as all zeros (see softmax_rows), which keeps padding from leaking into real tokens' results.
// Throws ShapeError if a length exceeds T.
std::vector<Mask> padding_masks(const std::vector<std::size_t>& lengths, std::size_t T);

// Element-wise AND: a position is visible only if both masks allow it (e.g. causal ∧ padding).
Mask combine_masks(const Mask& a, const Mask& b);

// Rows with no visible key at all.
std::vector<std::size_t> fully_masked_rows(const Mask& mask);

}  // namespace attnlab::core
