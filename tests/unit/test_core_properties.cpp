// Properties that must hold on random inputs, and the fast (BLAS) path against the naive reference.
#include <doctest/doctest.h>

#include <numeric>

#include "helpers.hpp"

using namespace attnlab;
using namespace attnlab::test;

namespace {

struct Shape {
  std::size_t n, m, d_model, d_k, d_v, h;
  bool cross, causal, w_o;
};

core::AttentionWeights random_weights(std::mt19937& rng, const Shape& s) {
  core::AttentionWeights w;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.d_model));
  for (std::size_t i = 0; i < s.h; ++i) {
    w.heads.push_back({random_matrix(rng, s.d_model, s.d_k, scale), random_matrix(rng, s.d_model, s.d_k, scale),
                       random_matrix(rng, s.d_model, s.d_v, scale)});
  }
  if (s.w_o) w.w_o = random_matrix(rng, s.h * s.d_v, s.d_model, scale);
  return w;
}

std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (bool cross : {false, true})
    for (bool causal : {false, true})
      for (bool w_o : {false, true}) {
        out.push_back({1, cross ? 3u : 1u, 4, 2, 2, 2, cross, causal, w_o});       // n = 1
        out.push_back({5, cross ? 7u : 5u, 8, 3, 5, 3, cross, causal, w_o});       // d_k ≠ d_v
        out.push_back({17, cross ? 9u : 17u, 32, 8, 8, 4, cross, causal, w_o});    // n > m when cross
        out.push_back({64, cross ? 40u : 64u, 64, 16, 16, 4, cross, causal, w_o});
      }
  return out;
}

}  // namespace

TEST_CASE("softmax rows sum to 1 and lie in [0, 1], also with masks and large scores") {
  std::mt19937 rng(1);
  for (float scale : {0.1f, 1.0f, 30.0f, 300.0f}) {
    for (std::size_t m : {1u, 2u, 7u, 100u}) {
      const core::Matrix s = random_matrix(rng, 6, m, scale);
      const core::Mask mask = core::causal_mask(6, m);  // every row keeps key 0 visible
      for (const core::Matrix& in : {s, core::apply_mask(s, mask)}) {
        const core::Matrix w = core::softmax_rows(in);
        for (std::size_t i = 0; i < core::rows(w); ++i) {
          double sum = 0.0;
          for (std::size_t j = 0; j < m; ++j) {
            CHECK(w(i, j) >= 0.0f);
            CHECK(w(i, j) <= 1.0f);
            sum += w(i, j);
          }
          CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
        }
      }
    }
  }
}

TEST_CASE("causal attention: no weight above the diagonal; later tokens do not change earlier outputs") {
  std::mt19937 rng(2);
  const Shape s{9, 9, 12, 4, 6, 3, false, true, true};
  const core::AttentionWeights w = random_weights(rng, s);
  core::Matrix x = random_matrix(rng, s.n, s.d_model);
  const core::Mask mask = core::causal_mask(s.n);
  core::AttentionTrace t;
  const core::Matrix before = core::self_attention(x, w, &mask, &t);
  for (const core::HeadTrace& h : t.heads)
    for (std::size_t i = 0; i < s.n; ++i)
      for (std::size_t j = i + 1; j < s.n; ++j) CHECK(h.weights(i, j) == 0.0f);
  // Change token 6 (and after): rows 0..5 must be bit-identical, row 6 must change.
  for (std::size_t i = 6; i < s.n; ++i)
    for (std::size_t c = 0; c < s.d_model; ++c) x(i, c) += 1.0f;
  const core::Matrix after = core::self_attention(x, w, &mask);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t c = 0; c < s.d_model; ++c) CHECK(after(i, c) == before(i, c));
  bool changed = false;
  for (std::size_t c = 0; c < s.d_model; ++c) changed = changed || after(6, c) != before(6, c);
  CHECK(changed);
}

TEST_CASE("unmasked self-attention is permutation equivariant") {
  // Permuting the tokens permutes the output rows the same way: attention has no notion of order
  // (that is what positional encodings are for).
  std::mt19937 rng(3);
  const Shape s{7, 7, 8, 4, 4, 2, false, false, true};
  const core::AttentionWeights w = random_weights(rng, s);
  const core::Matrix x = random_matrix(rng, s.n, s.d_model);
  std::vector<std::size_t> perm(s.n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  core::Matrix xp = core::Matrix::from_shape({s.n, s.d_model});
  for (std::size_t i = 0; i < s.n; ++i)
    for (std::size_t c = 0; c < s.d_model; ++c) xp(i, c) = x(perm[i], c);
  const core::Matrix out = core::self_attention(x, w);
  const core::Matrix outp = core::self_attention(xp, w);
  core::Matrix expect = core::Matrix::from_shape({s.n, s.d_model});
  for (std::size_t i = 0; i < s.n; ++i)
    for (std::size_t c = 0; c < s.d_model; ++c) expect(i, c) = out(perm[i], c);
  CHECK(rel_error(outp, expect) < 1e-5);
}

TEST_CASE("multi-head with h = 1 equals single-head attention") {
  std::mt19937 rng(4);
  const Shape s{6, 6, 10, 5, 3, 1, false, false, false};
  const core::AttentionWeights w = random_weights(rng, s);
  const core::Matrix x = random_matrix(rng, s.n, s.d_model);
  const core::Matrix mha = core::self_attention(x, w);
  const core::Matrix q = core::project(x, w.heads[0].w_q), k = core::project(x, w.heads[0].w_k), v = core::project(x, w.heads[0].w_v);
  const core::Matrix single = core::scaled_dot_product_attention(q, k, v);
  CHECK(rel_error(mha, single) == 0.0);
}

TEST_CASE("packed projections split into heads equal per-head projections") {
  std::mt19937 rng(5);
  const std::size_t d_model = 12, h = 3, d_k = 4, d_v = 2, n = 5, m = 8;
  const core::Matrix w_q = random_matrix(rng, d_model, h * d_k), w_k = random_matrix(rng, d_model, h * d_k);
  const core::Matrix w_v = random_matrix(rng, d_model, h * d_v), w_o = random_matrix(rng, h * d_v, d_model);
  const core::Matrix x = random_matrix(rng, n, d_model), mem = random_matrix(rng, m, d_model);
  const core::Mask mask = core::causal_mask(n, m);
  const core::Matrix packed = core::multi_head_attention_packed(x, mem, w_q, w_k, w_v, w_o, h, &mask);
  const core::Matrix per_head = core::multi_head_attention(x, mem, core::unpack_heads(w_q, w_k, w_v, w_o, h), &mask);
  CHECK(rel_error(packed, per_head) < 1e-6);
}

TEST_CASE("the BLAS path equals the naive reference to 1e-5 relative, every intermediate") {
  std::mt19937 rng(6);
  int cases = 0;
  for (const Shape& s : shapes()) {
    CAPTURE(s.n);
    CAPTURE(s.m);
    CAPTURE(s.d_model);
    CAPTURE(s.h);
    CAPTURE(s.cross);
    CAPTURE(s.causal);
    CAPTURE(s.w_o);
    const core::AttentionWeights w = random_weights(rng, s);
    const core::Matrix x = random_matrix(rng, s.n, s.d_model);
    const core::Matrix kv = s.cross ? random_matrix(rng, s.m, s.d_model) : x;
    std::optional<core::Mask> mask;
    if (s.causal) mask = core::causal_mask(s.n, s.m);
    core::AttentionTrace t;
    const core::Matrix out = core::multi_head_attention(x, kv, w, mask ? &*mask : nullptr, &t);

    std::vector<reference::Head> rh;
    for (const core::HeadWeights& hw : w.heads) rh.push_back({to_ref(hw.w_q), to_ref(hw.w_k), to_ref(hw.w_v)});
    const reference::Result r = reference::attention(to_ref(x), to_ref(kv), rh, w.w_o ? to_ref(*w.w_o) : reference::Mat{},
                                                     mask ? to_ref(*mask) : reference::MaskMat{});
    for (std::size_t i = 0; i < s.h; ++i) {
      CHECK(rel_error(t.heads[i].q, r.heads[i].q) < 1e-5);
      CHECK(rel_error(t.heads[i].k, r.heads[i].k) < 1e-5);
      CHECK(rel_error(t.heads[i].v, r.heads[i].v) < 1e-5);
      CHECK(rel_error(t.heads[i].scores, r.heads[i].scores) < 1e-5);
      CHECK(rel_error(t.heads[i].scaled, r.heads[i].scaled) < 1e-5);
      CHECK(rel_error(t.heads[i].weights, r.heads[i].weights) < 1e-5);
      CHECK(rel_error(t.heads[i].context, r.heads[i].context) < 1e-5);
    }
    CHECK(rel_error(t.concat, r.concat) < 1e-5);
    CHECK(rel_error(out, r.output) < 1e-5);
    CHECK(t.fully_masked_rows == r.fully_masked_rows);
    ++cases;
  }
  CHECK(cases == 32);
}

TEST_CASE("explicit random masks, including fully masked rows, match the reference") {
  std::mt19937 rng(7);
  std::bernoulli_distribution keep(0.4);
  for (int trial = 0; trial < 20; ++trial) {
    const Shape s{6, 5, 8, 4, 4, 2, true, false, true};
    const core::AttentionWeights w = random_weights(rng, s);
    const core::Matrix x = random_matrix(rng, s.n, s.d_model), mem = random_matrix(rng, s.m, s.d_model);
    core::Mask mask = core::Mask::from_shape({s.n, s.m});
    for (auto& v : mask) v = keep(rng) ? 1 : 0;
    for (std::size_t j = 0; j < s.m; ++j) mask(trial % s.n, j) = 0;  // at least one fully masked row
    core::AttentionTrace t;
    const core::Matrix out = core::cross_attention(x, mem, w, &mask, &t);
    std::vector<reference::Head> rh;
    for (const core::HeadWeights& hw : w.heads) rh.push_back({to_ref(hw.w_q), to_ref(hw.w_k), to_ref(hw.w_v)});
    const reference::Result r = reference::attention(to_ref(x), to_ref(mem), rh, to_ref(*w.w_o), to_ref(mask));
    CHECK(rel_error(out, r.output) < 1e-5);
    for (std::size_t i = 0; i < s.h; ++i) CHECK(rel_error(t.heads[i].weights, r.heads[i].weights) < 1e-5);
    CHECK(t.fully_masked_rows == r.fully_masked_rows);
    CHECK(!t.fully_masked_rows.empty());
    for (float v : out) CHECK(std::isfinite(v));
  }
}

TEST_CASE("biases (b_Q, b_K, b_V per head, b_O): the BLAS path equals the reference") {
  std::mt19937 rng(8);
  const Shape s{6, 4, 8, 4, 3, 2, true, false, true};
  core::AttentionWeights w = random_weights(rng, s);
  std::vector<reference::Head> rh;
  auto row = [&](const core::Matrix& b) { return to_ref(b)[0]; };
  for (core::HeadWeights& hw : w.heads) {
    hw.b_q = random_matrix(rng, 1, s.d_k);
    hw.b_k = random_matrix(rng, 1, s.d_k);
    hw.b_v = random_matrix(rng, 1, s.d_v);
    rh.push_back({to_ref(hw.w_q), to_ref(hw.w_k), to_ref(hw.w_v), row(*hw.b_q), row(*hw.b_k), row(*hw.b_v)});
  }
  w.b_o = random_matrix(rng, 1, s.d_model);
  const core::Matrix x = random_matrix(rng, s.n, s.d_model), mem = random_matrix(rng, s.m, s.d_model);
  core::AttentionTrace t;
  const core::Matrix out = core::cross_attention(x, mem, w, nullptr, &t);
  const reference::Result r = reference::attention(to_ref(x), to_ref(mem), rh, to_ref(*w.w_o), {}, row(*w.b_o));
  CHECK(rel_error(out, r.output) < 1e-5);
  for (std::size_t i = 0; i < s.h; ++i) CHECK(rel_error(t.heads[i].q, r.heads[i].q) < 1e-5);
  // A bias of the wrong width is a ShapeError, not a crash.
  w.heads[1].b_v = random_matrix(rng, 1, s.d_v + 1);
  CHECK_THROWS_AS(core::cross_attention(x, mem, w), ShapeError);
}
