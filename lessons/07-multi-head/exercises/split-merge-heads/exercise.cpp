// Exercise: split into heads and merge them back        (lesson 07-multi-head · easy · ~15 min)
//
// Multi-head attention projects x once with a wide W_Q (d_model × h·d_k) and then gives each head its
// own block of columns. Write both directions:
//
//   split_heads(x, h):   x is n × (h·d). Return h matrices of n × d, where head i holds the
//                        contiguous columns [i·d, (i+1)·d) of x. (h divides x.cols.)
//   merge_heads(heads):  the inverse. All heads are n × d; return the n × (h·d) concatenation
//                        [head_0 | head_1 | ... | head_{h-1}], head 0's columns first.
//
// merge_heads(split_heads(x, h)) must give back x. Leave the inputs unchanged.
//
// Check your work with:   attnlab check split-merge-heads        (hints: attnlab hint split-merge-heads)
#include <vector>

#include "attnlab/exercise.hpp"

namespace ex {

std::vector<Matrix> split_heads(const Matrix& x, std::size_t h) {
  // TODO: d = x.cols / h; head i gets column i * d + t of x as its column t.
  return {};
}

Matrix merge_heads(const std::vector<Matrix>& heads) {
  // TODO: the inverse of split_heads.
  return Matrix();
}

}  // namespace ex
