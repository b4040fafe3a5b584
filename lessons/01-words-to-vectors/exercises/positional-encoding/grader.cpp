// Grader: sinusoidal positional encoding. Reference: the paper's formula, computed here in double.
#include <doctest/doctest.h>

#include <cmath>

#include "exercises/grading/grading.hpp"

namespace ex {
Matrix positional_encoding(std::size_t n_positions, std::size_t d_model);  // the learner's function
}

namespace {
using namespace attnlab::grading;

enum class Layout { Interleaved, Halves, Swapped, ExponentI, ExponentOdd };

ex::Matrix pe_variant(std::size_t n, std::size_t d, Layout layout) {
  ex::Matrix pe(n, d);
  for (std::size_t pos = 0; pos < n; ++pos)
    for (std::size_t col = 0; col < d; ++col) {
      const std::size_t pair = col / 2;  // i
      const bool even = col % 2 == 0;
      double expo = double(2 * pair) / double(d);
      if (layout == Layout::ExponentI) expo = double(pair) / double(d);
      if (layout == Layout::ExponentOdd) expo = double(col) / double(d);
      double value = 0;
      if (layout == Layout::Halves) {
        const std::size_t half = (d + 1) / 2;  // sines first, then cosines
        const std::size_t k = col < half ? col : col - half;
        const double a = double(pos) / std::pow(10000.0, double(2 * k) / double(d));
        value = col < half ? std::sin(a) : std::cos(a);
      } else {
        const double a = double(pos) / std::pow(10000.0, expo);
        value = (even != (layout == Layout::Swapped)) ? std::sin(a) : std::cos(a);
      }
      pe(pos, col) = static_cast<float>(value);
    }
  return pe;
}

void check_pe(std::size_t n, std::size_t d) {
  const std::string what = "positional_encoding(" + std::to_string(n) + ", " + std::to_string(d) + ")";
  const ex::Matrix got = ex::positional_encoding(n, d);
  expect_match(what, got, pe_variant(n, d, Layout::Interleaved),
               {{&mistakes::pe_concatenated_halves, pe_variant(n, d, Layout::Halves)},
                {&mistakes::pe_sin_cos_swapped, pe_variant(n, d, Layout::Swapped)},
                {&mistakes::pe_exponent, pe_variant(n, d, Layout::ExponentI)},
                {&mistakes::pe_exponent, pe_variant(n, d, Layout::ExponentOdd)}},
               nullptr, 2e-5);
}
}  // namespace

TEST_CASE("row 0 is sin 0 = 0 and cos 0 = 1, alternating") { check_pe(1, 6); }

TEST_CASE("four positions, d_model = 4") { check_pe(4, 4); }

TEST_CASE("fifty positions, d_model = 16 (slow and fast frequencies)") { check_pe(50, 16); }

TEST_CASE("odd d_model: the last column is a sine") { check_pe(5, 7); }
