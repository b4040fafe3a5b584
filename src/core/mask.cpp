#include "core/mask.hpp"

#include "util/error.hpp"

namespace attnlab::core {

Mask causal_mask(std::size_t n, std::size_t m) {
  Mask mask = Mask::from_shape({n, m});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) mask(i, j) = j <= i ? 1 : 0;
  return mask;
}

Mask key_padding_mask(std::size_t n, std::size_t m, std::size_t valid_keys) {
  if (valid_keys > m) {
    throw ShapeError("key_padding_mask: valid_keys = " + std::to_string(valid_keys) +
                     " exceeds the number of keys m = " + std::to_string(m));
  }
  Mask mask = Mask::from_shape({n, m});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) mask(i, j) = j < valid_keys ? 1 : 0;
  return mask;
}

std::vector<Mask> padding_masks(const std::vector<std::size_t>& lengths, std::size_t T) {
  std::vector<Mask> out;
  out.reserve(lengths.size());
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    const std::size_t len = lengths[b];
    if (len > T) {
      throw ShapeError("padding_masks: lengths[" + std::to_string(b) + "] = " + std::to_string(len) +
                       " exceeds the padded length T = " + std::to_string(T));
    }
    Mask mask = Mask::from_shape({T, T});
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j) mask(i, j) = (i < len && j < len) ? 1 : 0;
    out.push_back(std::move(mask));
  }
  return out;
}

Mask combine_masks(const Mask& a, const Mask& b) {
  if (a.shape() != b.shape()) {
    throw ShapeError("combine_masks: masks are " + shape_str(a) + " and " + shape_str(b) +
                     ", expected the same shape");
  }
  Mask out = Mask::from_shape({rows(a), cols(a)});
  for (std::size_t i = 0; i < rows(a); ++i)
    for (std::size_t j = 0; j < cols(a); ++j) out(i, j) = (a(i, j) && b(i, j)) ? 1 : 0;
  return out;
}

std::vector<std::size_t> fully_masked_rows(const Mask& mask) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rows(mask); ++i) {
    bool any = false;
    for (std::size_t j = 0; j < cols(mask) && !any; ++j) any = mask(i, j) != 0;
    if (!any) out.push_back(i);
  }
  return out;
}

}  // namespace attnlab::core
