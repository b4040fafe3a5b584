// Small cases whose expected numbers are worked out by hand in the comments.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "helpers.hpp"
#include "io/problem.hpp"
#include "util/error.hpp"

using namespace attnlab;
using attnlab::test::make;

namespace {
void check_close(const core::Matrix& got, const core::Matrix& want, double tol = 1e-6) {
  REQUIRE(got.shape() == want.shape());
  for (std::size_t i = 0; i < core::rows(want); ++i)
    for (std::size_t j = 0; j < core::cols(want); ++j) {
      INFO("at (" << i << ", " << j << ")");
      CHECK(got(i, j) == doctest::Approx(want(i, j)).epsilon(tol));
    }
}
const float kInf = std::numeric_limits<float>::infinity();
}  // namespace

TEST_CASE("identity projections: two orthogonal tokens") {
  // x = [[1,0],[0,1]], W_Q = W_K = W_V = I₂, so Q = K = V = x.
  // scores = x·xᵀ = I₂; scaled = I₂ / √2, i.e. 0.70710678 on the diagonal.
  // Row 0 softmax: e^0.70710678 = 2.02811498, so w00 = 2.02811498 / (2.02811498 + 1) = 0.66976155,
  // w01 = 1 / 3.02811498 = 0.33023845. Row 1 is the mirror image.
  // context row 0 = 0.66976155·[1,0] + 0.33023845·[0,1] = [0.66976155, 0.33023845].
  const core::Matrix x = make({{1, 0}, {0, 1}});
  const core::Matrix I = make({{1, 0}, {0, 1}});
  core::AttentionWeights w{{{I, I, I}}, std::nullopt};
  core::AttentionTrace t;
  const core::Matrix out = core::self_attention(x, w, nullptr, &t);
  check_close(t.heads[0].scores, make({{1, 0}, {0, 1}}));
  check_close(t.heads[0].scaled, make({{0.70710678f, 0}, {0, 0.70710678f}}));
  check_close(t.heads[0].weights, make({{0.66976155f, 0.33023845f}, {0.33023845f, 0.66976155f}}));
  check_close(out, make({{0.66976155f, 0.33023845f}, {0.33023845f, 0.66976155f}}));
  CHECK(t.fully_masked_rows.empty());
}

TEST_CASE("causal mask with equal scores gives uniform weights over the visible prefix") {
  // W_Q = 0 makes every score 0, so each row's weights are uniform over the keys it may see:
  // row 0 sees {0}: [1, 0, 0]; row 1 sees {0,1}: [1/2, 1/2, 0]; row 2 sees all: [1/3, 1/3, 1/3].
  // With V = x·I = [[3,0],[0,3],[3,3]]: context = [3,0], [1.5,1.5], [2,2].
  const core::Matrix x = make({{3, 0}, {0, 3}, {3, 3}});
  const core::Matrix zero = make({{0, 0}, {0, 0}});
  const core::Matrix I = make({{1, 0}, {0, 1}});
  core::AttentionWeights w{{{zero, I, I}}, std::nullopt};
  const core::Mask mask = core::causal_mask(3);
  core::AttentionTrace t;
  const core::Matrix out = core::self_attention(x, w, &mask, &t);
  const float third = 1.0f / 3.0f;
  check_close(t.heads[0].weights, make({{1, 0, 0}, {0.5f, 0.5f, 0}, {third, third, third}}));
  check_close(out, make({{3, 0}, {1.5f, 1.5f}, {2, 2}}));
  // The masked scores hold -inf exactly above the diagonal and the scaled score (0) elsewhere.
  CHECK(t.heads[0].masked(0, 1) == -kInf);
  CHECK(t.heads[0].masked(1, 2) == -kInf);
  CHECK(t.heads[0].masked(2, 2) == 0.0f);
}

TEST_CASE("the causal mask never hides the diagonal and never shows a later token") {
  // causal(3) = [[1,0,0],[1,1,0],[1,1,1]]; for n ≠ m the same rule j ≤ i.
  const core::Mask m = core::causal_mask(3);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) CHECK(m(i, j) == (j <= i ? 1 : 0));
  const core::Mask r = core::causal_mask(2, 4);
  CHECK(r(0, 0) == 1);
  CHECK(r(0, 1) == 0);
  CHECK(r(1, 1) == 1);
  CHECK(r(1, 2) == 0);
  CHECK(core::fully_masked_rows(core::causal_mask(5)).empty());
}

TEST_CASE("a fully masked row yields all-zero weights, is reported, and never NaN") {
  // Row 1 of the scores is all -inf: no key is visible. Weights row 1 = [0, 0], flagged.
  // Row 0: scores [1, 1] → softmax [0.5, 0.5].
  const core::Matrix s = make({{1, 1}, {-kInf, -kInf}});
  std::vector<std::size_t> empty;
  const core::Matrix w = core::softmax_rows(s, &empty);
  check_close(w, make({{0.5f, 0.5f}, {0, 0}}));
  REQUIRE(empty.size() == 1);
  CHECK(empty[0] == 1);

  // Through the whole head: a padding mask with no valid key at all.
  const core::Matrix x = make({{1, 2}, {3, 4}});
  const core::Matrix I = make({{1, 0}, {0, 1}});
  core::AttentionWeights aw{{{I, I, I}}, std::nullopt};
  const core::Mask none_visible = core::key_padding_mask(2, 2, 0);
  core::AttentionTrace t;
  const core::Matrix out = core::self_attention(x, aw, &none_visible, &t);
  check_close(out, make({{0, 0}, {0, 0}}));
  CHECK(t.fully_masked_rows == std::vector<std::size_t>{0, 1});
}

TEST_CASE("stable softmax: scores around 1000 do not overflow") {
  // exp(1000) overflows float32, but exp(s − max) = exp([0, 0, −1000]) = [1, 1, 0] → [0.5, 0.5, 0].
  const core::Matrix w = core::softmax_rows(make({{1000, 1000, 0}, {-1000, -1001, -1000}}));
  // Row 1: exp([0, −1, 0]) = [1, 0.36787944, 1], sum 2.36787944 → [0.42231882, 0.15536240, 0.42231882].
  check_close(w, make({{0.5f, 0.5f, 0}, {0.42231882f, 0.15536240f, 0.42231882f}}));
}

TEST_CASE("softmax rejects scores that already overflowed") {
  CHECK_THROWS_AS(core::softmax_rows(make({{kInf, 0}})), NumericError);
  CHECK_THROWS_AS(core::softmax_rows(make({{std::nanf(""), 0}})), NumericError);
}

TEST_CASE("cross-attention: one decoder query over two memory tokens") {
  // x = [[1,0]] (n = 1), memory = [[1,0],[0,1]] (m = 2), all W = I₂.
  // Q = [1,0]; K = V = memory. scores = Q·Kᵀ = [1, 0] (1 × 2, i.e. n × m).
  // scaled = [0.70710678, 0] → weights [0.66976155, 0.33023845] → context = weights·V = same.
  const core::Matrix x = make({{1, 0}});
  const core::Matrix mem = make({{1, 0}, {0, 1}});
  const core::Matrix I = make({{1, 0}, {0, 1}});
  core::AttentionWeights w{{{I, I, I}}, std::nullopt};
  core::AttentionTrace t;
  const core::Matrix out = core::cross_attention(x, mem, w, nullptr, &t);
  CHECK(core::rows(t.heads[0].weights) == 1);
  CHECK(core::cols(t.heads[0].weights) == 2);
  check_close(t.heads[0].scores, make({{1, 0}}));
  check_close(t.heads[0].weights, make({{0.66976155f, 0.33023845f}}));
  check_close(out, make({{0.66976155f, 0.33023845f}}));
}

TEST_CASE("split heads takes contiguous column blocks; merge puts them back in order") {
  // [[1,2,3,4],[5,6,7,8]] with h = 2 → head 0 = [[1,2],[5,6]], head 1 = [[3,4],[7,8]]
  // (interleaving would wrongly give [[1,3],[5,7]]).
  const core::Matrix x = make({{1, 2, 3, 4}, {5, 6, 7, 8}});
  const auto heads = core::split_heads(x, 2);
  REQUIRE(heads.size() == 2);
  check_close(heads[0], make({{1, 2}, {5, 6}}));
  check_close(heads[1], make({{3, 4}, {7, 8}}));
  check_close(core::merge_heads(heads), x);
  CHECK_THROWS_AS(core::split_heads(x, 3), ShapeError);
}

TEST_CASE("output projection") {
  // concat [[1, 2]] · W_O [[1, 1], [0, 1]] = [[1·1 + 2·0, 1·1 + 2·1]] = [[1, 3]].
  check_close(core::output_projection(make({{1, 2}}), make({{1, 1}, {0, 1}})), make({{1, 3}}));
}

TEST_CASE("shipped example: one token, two heads, d_model 4, d_k 2") {
  // x = [1,0,1,0] picks rows 0 and 2 of every weight matrix and adds them.
  // Head 0: Q = [1,0]+[1,0] = [2,0]; K = [1,0]+[0,1] = [1,1]; V = [1,2]+[3,0] = [4,2].
  //   One token: the single weight is 1 whatever the score (2 / √2), so context = V = [4,2].
  // Head 1: Q = [0.5,-0.5]+[0.5,0.5] = [1,0]; K = [1,1]+[-1,1] = [0,2]; V = [0,1]+[1,1] = [1,2].
  //   Score 1·0 + 0·2 = 0; context = [1,2].
  // concat = [4,2,1,2]; output = 4·[1,0,0,1] + 2·[0,1,0,0] + 1·[0,0,1,0] + 2·[0,0,-1,1] = [4,2,-1,6].
  const io::Problem p = io::load_problem(std::string(ATTNLAB_SOURCE_DIR) + "/data/examples/one_token_two_heads.json");
  core::AttentionTrace t;
  const core::Matrix out = core::self_attention(p.x, p.weights, nullptr, &t);
  check_close(t.heads[0].q, make({{2, 0}}));
  check_close(t.heads[0].k, make({{1, 1}}));
  check_close(t.heads[0].scaled, make({{1.41421356f}}));
  check_close(t.heads[1].k, make({{0, 2}}));
  check_close(t.concat, make({{4, 2, 1, 2}}));
  check_close(out, make({{4, 2, -1, 6}}));
}

TEST_CASE("padding masks from sequence lengths") {
  // Lengths {3, 1} padded to T = 3. Sequence 0 sees everything. Sequence 1: only (0,0) is visible;
  // query rows 1 and 2 are padding and fully masked.
  const auto masks = core::padding_masks({3, 1}, 3);
  REQUIRE(masks.size() == 2);
  CHECK(core::fully_masked_rows(masks[0]).empty());
  CHECK(masks[1](0, 0) == 1);
  CHECK(masks[1](0, 1) == 0);
  CHECK(core::fully_masked_rows(masks[1]) == std::vector<std::size_t>{1, 2});
  CHECK_THROWS_AS(core::padding_masks({4}, 3), ShapeError);
  // Causal ∧ padding: length 2 of T = 3.
  const core::Mask both = core::combine_masks(core::causal_mask(3), core::padding_masks({2}, 3)[0]);
  CHECK(both(1, 0) == 1);
  CHECK(both(1, 1) == 1);
  CHECK(both(0, 1) == 0);
  CHECK(both(2, 0) == 0);
}

TEST_CASE("library functions reject mismatched shapes with ShapeError") {
  const core::Matrix x = make({{1, 2, 3}});
  CHECK_THROWS_AS(core::project(x, make({{1, 0}, {0, 1}})), ShapeError);
  CHECK_THROWS_AS(core::attention_scores(make({{1, 2}}), make({{1, 2, 3}})), ShapeError);
  CHECK_THROWS_AS(core::apply_mask(make({{1, 2}}), core::causal_mask(2)), ShapeError);
  CHECK_THROWS_AS(core::weighted_sum(make({{0.5f, 0.5f}}), make({{1, 2}})), ShapeError);
  CHECK_THROWS_AS(core::merge_heads({make({{1}}), make({{1, 2}})}), ShapeError);
}

TEST_CASE("shipped example: four-token causal problem, row 'effort'") {
  // x0 = [0.5, 0, 0.5, 0], x1 = [0, 1, 0, 1]; W_Q = W_K = [[1,0],[0,1],[1,0],[0,1]] adds columns 0+2 and 1+3:
  // q0 = k0 = [1, 0], q1 = k1 = [0, 2]. Row 1 (effort) may see keys 0 and 1 only:
  // scores = [q1·k0, q1·k1] = [0, 4]; scaled = [0, 4/√2 = 2.8284271]; softmax: e^2.8284271 = 16.918828,
  // so weights = [1, 16.918828] / 17.918828 = [0.0558073, 0.9441927], and 0 for keys 2 and 3.
  const io::Problem p = io::load_problem(std::string(ATTNLAB_SOURCE_DIR) + "/data/examples/causal_four_tokens.json");
  REQUIRE(p.mask_kind == io::MaskKind::Causal);
  core::AttentionTrace t;
  core::self_attention(p.x, p.weights, &*p.mask, &t);
  CHECK(t.heads[0].scores(1, 1) == doctest::Approx(4.0));
  CHECK(t.heads[0].weights(1, 0) == doctest::Approx(0.0558073).epsilon(1e-5));
  CHECK(t.heads[0].weights(1, 1) == doctest::Approx(0.9441927).epsilon(1e-5));
  CHECK(t.heads[0].weights(1, 2) == 0.0f);
  CHECK(t.heads[0].weights(1, 3) == 0.0f);
}
