// Exercise: causal mask                                  (lesson 06-masking · easy · ~20 min)
//
// Write causal_attention_weights: given the scaled scores Q·Kᵀ/√d_k (n × m, row i = query i, column
// j = key j), return the attention weights (n × m) of a decoder, where query i may attend only to
// keys 0..i (itself and earlier tokens) and never to a later key j > i.
//   * the diagonal stays visible: a token always sees itself;
//   * hidden keys must get weight exactly 0 and each row must still sum to 1;
//   * which keys are hidden depends only on the positions i and j, never on the score values;
//   * the softmax must stay finite for large scores.
// For n ≠ m use the same rule (key j visible iff j ≤ i). Leave scaled_scores unchanged.
//
// Check your work with:   attnlab check causal-mask        (hints: attnlab hint causal-mask)
#include <cmath>
#include <limits>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix causal_attention_weights(const Matrix& scaled_scores) {
  // TODO: copy the scores, hide the keys after each query, softmax each row, return the weights.
  return Matrix();
}

}  // namespace ex
