#pragma once
// The test oracle: multi-head attention written the obvious way, with triple loops in double
// precision and nothing shared with core/ (no BLAS, no split/merge helpers, no xtensor in the maths).
// It is slow on purpose; it exists to be easy to read and hard to get wrong, so that the fast path
// can be checked against it. Shapes as in core/attention.hpp.
#include <cstdint>
#include <vector>

namespace attnlab::reference {

using Mat = std::vector<std::vector<double>>;                  // rows of doubles
using MaskMat = std::vector<std::vector<std::uint8_t>>;        // 1 = may attend

struct Head {
  Mat w_q, w_k, w_v;                        // d_model × d_k, d_model × d_k, d_model × d_v
  std::vector<double> b_q = {}, b_k = {}, b_v = {};  // optional biases (empty = none)
};

struct HeadResult {
  Mat q, k, v, scores, scaled, weights, context;
};

struct Result {
  std::vector<HeadResult> heads;
  Mat concat;  // n × h·d_v
  Mat output;  // n × d_model, or the concat when w_o is empty
  std::vector<std::size_t> fully_masked_rows;
};

// x: n × d_model, kv: m × d_model, mask: empty for none, else n × m; w_o: empty for none;
// b_o: the output bias (empty for none).
Result attention(const Mat& x, const Mat& kv, const std::vector<Head>& heads, const Mat& w_o,
                 const MaskMat& mask, const std::vector<double>& b_o = {});

// Plain helpers, also used by tests to build expectations.
Mat matmul(const Mat& a, const Mat& b);
Mat transpose(const Mat& a);

}  // namespace attnlab::reference
