// Exercise: padding mask                                 (lesson 06-masking · medium · ~20 min)
//
// Sentences in a batch have different lengths, so the short ones are padded to a common length T.
// Write padded_attention_weights: `scaled_scores` is the T × T matrix Q·Kᵀ/√d_k of one padded sentence
// whose first `length` tokens are real (0 ≤ length ≤ T) and the rest are padding. Return the T × T
// attention weights where
//   * a real query i (< length) attends only to real keys j (< length): padding keys get weight 0 and
//     each real row still sums to 1;
//   * a padding query (i ≥ length) attends to nothing: its whole row is 0 (not NaN);
//   * which positions are hidden depends only on i, j and length, never on the score values (the
//     scores at padding positions are often 0, but a real score can be 0 too).
// Leave scaled_scores unchanged.
//
// Check your work with:   attnlab check padding-mask        (hints: attnlab hint padding-mask)
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix padded_attention_weights(const Matrix& scaled_scores, std::size_t length) {
  // TODO: hide key j from query i unless both i < length and j < length, then softmax each row.
  return Matrix();
}

}  // namespace ex
