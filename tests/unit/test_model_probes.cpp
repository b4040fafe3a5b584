// The head probes of `attnlab heads` (model/probes.hpp) on models whose heads are known: a synthetic
// head built to attend to the previous token, an ablated head that contributed nothing, and the
// probes' determinism.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "backend/cpu/cpu_backend.hpp"
#include "model/probes.hpp"
#include "model/trainer.hpp"

using namespace attnlab;
using namespace attnlab::model;

namespace {

ModelConfig small(bool decoder_only) {
  ModelConfig c;
  c.decoder_only = decoder_only;
  c.vocab_size = 40;
  c.d_model = 64;
  c.heads = 4;
  c.d_ff = 64;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.max_len = 20;
  c.dropout = 0.0f;
  c.pre_norm = false;
  return c;
}

Batch sentence(const std::vector<int>& src, const std::vector<int>& tgt_in) {
  Batch b;
  b.B = 1;
  b.src = src;
  b.S = static_cast<int>(src.size());
  if (!src.empty()) b.src_len = {b.S};
  b.tgt_in = tgt_in;
  b.T = static_cast<int>(tgt_in.size());
  b.tgt_out.assign(tgt_in.size(), kPad);
  return b;
}

// Parameters where head `head` of decoder layer 0 has W_V = 0 and b_V[col] = bias(col): every value
// row is b_V, so the head's output is b_V at every position, whatever it attends to.
std::vector<float> constant_value_head(const Transformer<float>& net, std::size_t head, const std::function<float(std::size_t)>& bias) {
  std::vector<float> p = net.params.download();
  const AttnLayout& a = net.layout().dec[0].self_attn;
  const std::size_t C = static_cast<std::size_t>(net.config().d_model), dv = C / static_cast<std::size_t>(net.config().heads);
  for (std::size_t r = 0; r < C; ++r)
    for (std::size_t col = head * dv; col < (head + 1) * dv; ++col) p[a.wv + r * C + col] = 0.0f;
  for (std::size_t col = head * dv; col < (head + 1) * dv; ++col) p[a.bv + col] = bias(col);
  return p;
}

}  // namespace

TEST_CASE("probes: a head built to attend to the previous token scores at least 0.99 on 'previous'") {
  // Post-norm encoder layer 0 reads tok_emb·√C + PE; with the token table zeroed that is PE alone,
  // whose dims (2k, 2k+1) are (sin ω_k p, cos ω_k p). Head 0's W_Q rotates each pair back by one
  // position (by −ω_k) and W_K copies it, so q_i · k_j = s Σ_k cos(ω_k (i − 1 − j)): largest at
  // j = i − 1, and s makes the softmax all but one-hot.
  const ModelConfig c = small(false);
  Transformer<float> net(c, attnlab::backend::cpu_backend<float>());
  net.init_params(5);
  std::vector<float> p = net.params.download();
  const ParamLayout& lay = net.layout();
  std::fill(p.begin() + static_cast<std::ptrdiff_t>(lay.tok_emb),
            p.begin() + static_cast<std::ptrdiff_t>(lay.tok_emb + static_cast<std::size_t>(c.vocab_size * c.d_model)), 0.0f);
  const AttnLayout& a = lay.enc[0].attn;
  const std::size_t C = 64, dk = 16;
  const float s = 100.0f;
  for (std::size_t r = 0; r < C; ++r)
    for (std::size_t col = 0; col < dk; ++col) p[a.wq + r * C + col] = p[a.wk + r * C + col] = 0.0f;
  for (std::size_t col = 0; col < dk; ++col) p[a.bq + col] = p[a.bk + col] = 0.0f;
  for (std::size_t k = 0; k < dk / 2; ++k) {
    const double w = std::pow(10000.0, -2.0 * static_cast<double>(k) / static_cast<double>(C));
    const std::size_t e = 2 * k, o = 2 * k + 1;  // (sin, cos) rows and columns of pair k
    p[a.wq + e * C + e] = s * static_cast<float>(std::cos(w));
    p[a.wq + e * C + o] = s * static_cast<float>(std::sin(w));
    p[a.wq + o * C + e] = -s * static_cast<float>(std::sin(w));
    p[a.wq + o * C + o] = s * static_cast<float>(std::cos(w));
    p[a.wk + e * C + e] = 1.0f;
    p[a.wk + o * C + o] = 1.0f;
  }
  net.params.upload(p);
  std::vector<HeadScores> heads = self_attention_heads(c);
  for (int len : {6, 11, 19}) {
    std::vector<int> src;
    for (int i = 0; i < len; ++i) src.push_back(4 + (i * 7) % 30);
    net.forward(sentence(src, {kBos, 5}), 0.0f, false, nullptr);
    add_last_forward(net, heads);
  }
  const HeadScores& h0 = heads.front();
  REQUIRE(h0.block == HeadBlock::Encoder);
  REQUIRE(h0.head == 0);
  CHECK(h0.sums.previous_n == 5 + 10 + 18);
  CHECK(h0.sums.mean(h0.sums.previous, h0.sums.previous_n) >= 0.99);
  CHECK(h0.sums.mean(h0.sums.self, h0.sums.self_n) < 0.1);  // only row 0, which has no previous token, looks at itself
  // The other heads were left random: none of them is a previous-token head.
  for (std::size_t i = 1; i < 4; ++i) CHECK(heads[i].sums.mean(heads[i].sums.previous, heads[i].sums.previous_n) < 0.9);
}

TEST_CASE("probes: each probe on a hand-made attention matrix, and a causal block has no 'next'") {
  // Rows: token 0 all on itself; rows 1 and 2 split between the previous token and the first.
  const float a[9] = {1, 0, 0, 0.5f, 0.5f, 0, 0.25f, 0.75f, 0};
  ProbeSums s;
  s.add_self_attention(a, 3, true);
  CHECK(s.mean(s.previous, s.previous_n) == doctest::Approx((0.5 + 0.75) / 2));
  CHECK(s.mean(s.first, s.first_n) == doctest::Approx((0.5 + 0.25) / 2));
  CHECK(s.mean(s.self, s.self_n) == doctest::Approx((1 + 0.5 + 0) / 3));
  CHECK(s.next_n == 0);
  ProbeSums e;
  e.add_self_attention(a, 3, false);
  CHECK(e.next_n == 2);
  CHECK(e.mean(e.next, e.next_n) == doctest::Approx(0.0));  // rows 0 and 1 put nothing on the next key
}

TEST_CASE("ablation: removing a head whose output is zero changes nothing; removing a live one changes the output") {
  const ModelConfig c = small(true);
  Transformer<float> net(c, attnlab::backend::cpu_backend<float>());
  net.init_params(9);
  // Head 2 of decoder layer 0 gets W_V = 0 and b_V = 0: its output is zero whatever it attends to.
  const std::vector<float> p = constant_value_head(net, 2, [](std::size_t) { return 0.0f; });
  net.params.upload(p);
  const Batch b = sentence({}, {kBos, 7, 8, 9, 10, 11});
  net.forward(b, 0.0f, false, nullptr);
  const std::vector<float> before = net.logits();
  net.params.upload(ablate_head(net, p, HeadBlock::Decoder, 0, 2));
  net.forward(b, 0.0f, false, nullptr);
  CHECK(net.logits() == before);
  net.params.upload(ablate_head(net, p, HeadBlock::Decoder, 0, 1));
  net.forward(b, 0.0f, false, nullptr);
  CHECK(net.logits() != before);
  CHECK_THROWS(ablate_head(net, p, HeadBlock::Encoder, 0, 0));  // a language model has no encoder
  CHECK_THROWS(ablate_head(net, p, HeadBlock::Decoder, 0, 4));  // heads 0 to 3
}

TEST_CASE("probes: the induction probe is reproducible for a seed") {
  const ModelConfig c = small(true);
  Transformer<float> net(c, attnlab::backend::cpu_backend<float>());
  net.init_params(3);
  std::vector<HeadScores> a = self_attention_heads(c), b = self_attention_heads(c);
  add_induction(net, a, 5, 8, 4, 42);
  add_induction(net, b, 5, 8, 4, 42);
  REQUIRE(a.size() == 4);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].sums.induction_n == 5 * 7);
    CHECK(a[i].sums.induction == b[i].sums.induction);
  }
  CHECK_THROWS(add_induction(net, a, 1, 10, 4, 1));  // 2 × 10 + 1 tokens do not fit max_len 20
}

TEST_CASE("mean ablation: a head whose output is the same at every position is removed without changing anything; zeroing it changes the output") {
  const ModelConfig c = small(true);
  Transformer<float> net(c, attnlab::backend::cpu_backend<float>());
  net.init_params(9);
  // Head 2 gets W_V = 0 and b_V ≠ 0: its output is b_V at every position (its weights sum to 1), a
  // constant that only mean-ablation keeps.
  const std::size_t dv = 16;
  const std::vector<float> p = constant_value_head(net, 2, [](std::size_t col) { return 0.5f + 0.01f * static_cast<float>(col); });
  net.params.upload(p);
  const Batch b = sentence({}, {kBos, 7, 8, 9, 10, 11});
  std::vector<HeadMeans> means = head_means_for(c);
  REQUIRE(means.size() == 1);  // a language model: one decoder self-attention block
  net.forward(b, 0.0f, false, nullptr);
  add_last_forward(net, means);
  CHECK(means[0].rows == 6);
  CHECK(means[0].sum[2 * dv] / 6.0 == doctest::Approx(0.5f + 0.01f * static_cast<float>(2 * dv)).epsilon(1e-5));
  const std::vector<float> before = net.logits();
  net.params.upload(mean_ablate_head(net, p, HeadBlock::Decoder, 0, 2, means));
  net.forward(b, 0.0f, false, nullptr);
  const std::vector<float> after = net.logits();
  REQUIRE(after.size() == before.size());
  for (std::size_t i = 0; i < after.size(); ++i) CHECK(after[i] == doctest::Approx(before[i]).epsilon(1e-4));
  net.params.upload(ablate_head(net, p, HeadBlock::Decoder, 0, 2));
  net.forward(b, 0.0f, false, nullptr);
  CHECK(net.logits() != before);
  // A live head: its per-position output is lost, so the output changes.
  net.params.upload(mean_ablate_head(net, p, HeadBlock::Decoder, 0, 1, means));
  net.forward(b, 0.0f, false, nullptr);
  CHECK(net.logits() != before);
}

TEST_CASE("relation probe: mass on the deciding keys, a uniform row's share, and the top-1 rate") {
  RelationSums r;
  const float row1[4] = {0.1f, 0.6f, 0.2f, 0.1f};
  r.add(row1, 4, {1});  // the largest weight is on the key
  const float row2[4] = {0.5f, 0.1f, 0.3f, 0.1f};
  r.add(row2, 4, {1, 2});  // mass 0.4, but the largest weight is elsewhere
  r.add(row2, 4, {});      // no key: not counted
  CHECK(r.n == 2);
  CHECK(r.mean_mass() == doctest::Approx((0.6 + 0.4) / 2));
  CHECK(r.mean_chance() == doctest::Approx((0.25 + 0.5) / 2));
  CHECK(r.hit_rate() == doctest::Approx(0.5));
}
