// Exercise: sinusoidal positional encoding        (lesson 01-words-to-vectors · easy · ~15 min)
//
// Attention by itself does not know word order, so the Transformer adds a position signal to each
// token's embedding. Write positional_encoding, the n_positions × d_model matrix of
// "Attention Is All You Need" (section 3.5):
//
//     PE(pos, 2i)     = sin(pos / 10000^(2i / d_model))
//     PE(pos, 2i + 1) = cos(pos / 10000^(2i / d_model))
//
// Row pos is position pos (0, 1, 2, ...). Column 2i holds a sine and the next column 2i + 1 the cosine
// of the SAME angle. If d_model is odd, the last column is a sine with no cosine partner.
//
// Check your work with:   attnlab check positional-encoding        (hints: attnlab hint positional-encoding)
#include <cmath>

#include "attnlab/exercise.hpp"

namespace ex {

Matrix positional_encoding(std::size_t n_positions, std::size_t d_model) {
  // TODO: fill an n_positions × d_model matrix with the sines and cosines above.
  return Matrix();
}

}  // namespace ex
