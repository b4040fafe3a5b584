// Whole tiny models' gradients by finite differences, in double precision (the ops are templates;
// float's 7 digits would only allow loose tolerances), and the values of a few ops against their
// formulas. Every op's own backward is checked by central differences in the op table
// (tests/backend/test_backend_ops.cpp), which also holds every backend to the CPU's results.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <functional>
#include <random>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/ops.hpp"
#include "backend/positional.hpp"
#include "core/attention.hpp"
#include "model/transformer.hpp"

using namespace attnlab::model;
using namespace attnlab::cpu;

namespace {

std::vector<double> randn(std::mt19937& rng, std::size_t n, double sd = 1.0) {
  std::normal_distribution<double> d(0.0, sd);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Checks d(loss)/d(x[i]) for every i against central differences; loss() must read x.
void check_grad(const char* what, std::vector<double>& x, const std::vector<double>& analytic,
                const std::function<double()>& loss, double tol = 1e-6) {
  REQUIRE(x.size() == analytic.size());
  const double h = 1e-5;
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = loss();
    x[i] = keep - h;
    const double down = loss();
    x[i] = keep;
    const double numeric = (up - down) / (2 * h);
    const double err = std::fabs(numeric - analytic[i]) / std::max(1.0, std::fabs(numeric) + std::fabs(analytic[i]));
    worst = std::isnan(err) ? err : std::max(worst, err);  // a NaN stays (std::max alone would drop it)
  }
  INFO(std::string(what) << ": worst relative error " << worst);
  CHECK(worst < tol);
}

}  // namespace

TEST_CASE("layer norm forward: zero mean, unit variance, eps inside the square root") {
  const std::vector<double> x{1, 2, 3, 4}, g{1, 1, 1, 1}, b{0, 0, 0, 0};
  std::vector<double> out(4), mean(1), rstd(1);
  layernorm_forward<double>(out.data(), mean.data(), rstd.data(), x.data(), g.data(), b.data(), 1, 4, 1e-5);
  // mean 2.5, biased variance 1.25: out = (x − 2.5) / √(1.25 + 1e-5)
  CHECK(mean[0] == doctest::Approx(2.5));
  CHECK(out[0] == doctest::Approx(-1.5 / std::sqrt(1.25 + 1e-5)).epsilon(1e-12));
}

TEST_CASE("cross-entropy with label smoothing: the value against its formula; softmax_from_lse") {
  std::mt19937 rng(14);
  const int N = 4, V = 5;
  auto z = randn(rng, N * V, 2.0);
  const std::vector<int> targets{1, 0, 4, 2};  // row 1 is padding (ignore index 0)
  std::vector<double> lse(N);
  int count = 0;
  auto loss = [&] { return cross_entropy_forward<double>(lse.data(), z.data(), targets.data(), N, V, 0.1, 0, &count); };
  const double l = loss();
  CHECK(count == 3);
  // Direct check of row 0: (1 − ε)·(−log p_t) + ε/V · Σ_c (−log p_c), averaged over 3 rows.
  double expect = 0;
  for (int r : {0, 2, 3}) {
    double mx = -1e300, s = 0;
    for (int c = 0; c < V; ++c) mx = std::max(mx, z[r * V + c]);
    for (int c = 0; c < V; ++c) s += std::exp(z[r * V + c] - mx);
    double sum_neg_logp = 0;
    for (int c = 0; c < V; ++c) sum_neg_logp += -(z[r * V + c] - mx - std::log(s));
    expect += 0.9 * -(z[r * V + targets[r]] - mx - std::log(s)) + 0.1 / V * sum_neg_logp;
  }
  CHECK(l == doctest::Approx(expect / 3).epsilon(1e-12));
  // lse is each row's log Σ exp, so softmax_from_lse gives rows summing to 1 with the right ratios.
  std::vector<double> p(z.size());
  softmax_from_lse<double>(p.data(), z.data(), lse.data(), N, V);
  for (int r = 0; r < N; ++r) {
    double s = 0;
    for (int c = 0; c < V; ++c) s += p[static_cast<std::size_t>(r * V + c)];
    CHECK(s == doctest::Approx(1.0).epsilon(1e-14));
    CHECK(p[static_cast<std::size_t>(r * V)] / p[static_cast<std::size_t>(r * V + 1)] ==
          doctest::Approx(std::exp(z[static_cast<std::size_t>(r * V)] - z[static_cast<std::size_t>(r * V + 1)])).epsilon(1e-12));
  }
}

TEST_CASE("positional encoding is interleaved sin/cos") {
  const auto pe = attnlab::backend::positional_encoding<double>(3, 4);
  // pos 2, i = 1 (columns 2 and 3): angle = 2 / 10000^(2/4) = 0.02
  CHECK(pe[2 * 4 + 2] == doctest::Approx(std::sin(0.02)));
  CHECK(pe[2 * 4 + 3] == doctest::Approx(std::cos(0.02)));
  CHECK(pe[1 * 4 + 0] == doctest::Approx(std::sin(1.0)));
}

namespace {

Batch tiny_batch(bool decoder_only) {
  // Two sequences of different lengths, padded: exercises padding masks and ignored targets.
  Batch b;
  b.B = 2;
  b.T = 4;
  b.tgt_in = {kBos, 5, 6, 7, kBos, 8, kPad, kPad};
  b.tgt_out = {5, 6, 7, kEos, 8, kEos, kPad, kPad};
  if (!decoder_only) {
    b.S = 3;
    b.src = {4, 9, 5, 6, 7, kPad};
    b.src_len = {3, 2};
  }
  return b;
}

// The model of the decoding, probability and replay tests: 12 tokens, d_model 8, 2 heads, 2 + 2 layers.
ModelConfig small_config() {
  ModelConfig c;
  c.vocab_size = 12;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 16;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_len = 10;
  return c;
}

void check_model(ModelConfig cfg, const char* what) {
  Transformer<double> m(cfg, attnlab::backend::cpu_backend<double>());
  m.init_params(7);
  // Non-trivial norm gains/biases so their gradients are exercised too.
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> u(-0.2, 0.2);
  std::vector<double> params = m.params.download();
  for (const auto& t : m.layout().tensors)
    if (t.shape.size() == 1)
      for (std::size_t i = 0; i < t.size(); ++i) params[t.offset + i] += u(rng);
  const Batch b = tiny_batch(cfg.decoder_only);
  const std::uint64_t seed = 1234;
  auto loss = [&] {
    m.params.upload(params);  // check_grad perturbs the host copy
    std::uint64_t s = seed;   // identical dropout masks in every evaluation
    return m.forward(b, 0.1, true, &s);
  };
  loss();
  // NaN in every gradient first: backward() must write each one (it zeroes nothing but the untied
  // embedding tables), so a tensor it skips, or an op that adds where it should store, fails below.
  m.grads.upload(std::vector<double>(m.grads.size(), std::numeric_limits<double>::quiet_NaN()));
  m.backward();
  const std::vector<double> analytic = m.grads.download();
  INFO(what);
  check_grad(what, params, analytic, loss, 1e-6);
}

}  // namespace

TEST_CASE("whole tiny models: every parameter's gradient by finite differences") {
  ModelConfig c;
  c.vocab_size = 10;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 12;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_len = 8;
  c.dropout = 0.2f;
  check_model(c, "encoder–decoder, post-norm, tied, dropout");
  c.pre_norm = true;
  c.tie_embeddings = false;
  check_model(c, "encoder–decoder, pre-norm, untied, dropout");
  c.decoder_only = true;
  check_model(c, "decoder-only, pre-norm, untied");
  c.pre_norm = false;
  c.tie_embeddings = true;
  c.dropout = 0.0f;
  check_model(c, "decoder-only, post-norm, tied");
}

TEST_CASE("incremental decoding with the key/value cache equals the full forward pass") {
  for (bool decoder_only : {false, true}) {
    ModelConfig c = small_config();
    c.decoder_only = decoder_only;
    c.pre_norm = decoder_only;
    Transformer<double> m(c, attnlab::backend::cpu_backend<double>());
    m.init_params(3);
    Batch b;
    b.B = 1;
    b.T = 5;
    b.tgt_in = {kBos, 5, 9, 4, 11};
    b.tgt_out = {5, 9, 4, 11, kEos};
    if (!decoder_only) {
      b.S = 4;
      b.src = {6, 7, 8, 10};
      b.src_len = {4};
    }
    m.forward(b, 0.0, false, nullptr);
    const std::vector<double> full = m.logits();
    m.start_decoding(b.src, 2);  // two identical hypotheses, to exercise the batching
    for (int t = 0; t < b.T; ++t) {
      const auto& step = m.decode_step({b.tgt_in[t], b.tgt_in[t]});
      for (int h = 0; h < 2; ++h)
        for (int v = 0; v < c.vocab_size; ++v) CHECK(step[h * c.vocab_size + v] == doctest::Approx(full[t * c.vocab_size + v]).epsilon(1e-10));
    }
  }
}

TEST_CASE("the model's probabilities are the softmax of its logits, also after backward") {
  // The forward keeps only each row's log-sum-exp; probabilities() rebuilds the rows from it.
  const ModelConfig c = small_config();
  Transformer<float> m(c, attnlab::backend::cpu_backend<float>());
  m.init_params(5);
  const Batch b = tiny_batch(false);
  m.forward(b, 0.1f, false, nullptr);
  auto check = [&] {
    const std::vector<float> p = m.probabilities();
    const std::vector<float> z = m.logits();
    REQUIRE(p.size() == z.size());
    const std::size_t V = static_cast<std::size_t>(c.vocab_size);
    for (std::size_t r = 0; r < z.size() / V; ++r) {
      double mx = -1e300, sum = 0;
      for (std::size_t v = 0; v < V; ++v) mx = std::max(mx, static_cast<double>(z[r * V + v]));
      for (std::size_t v = 0; v < V; ++v) sum += std::exp(static_cast<double>(z[r * V + v]) - mx);
      for (std::size_t v = 0; v < V; ++v)
        CHECK(p[r * V + v] == doctest::Approx(std::exp(static_cast<double>(z[r * V + v]) - mx) / sum).epsilon(1e-5));
    }
  };
  check();
  m.backward();  // the logits' gradient has its own buffer: logits and probabilities stay valid
  check();
}

TEST_CASE("a trained model's attention replays exactly through the attention core") {
  // The lessons show a model's attention with the core's functions; they must give the same numbers.
  for (bool pre : {false, true}) {
    ModelConfig c = small_config();
    c.pre_norm = pre;
    Transformer<float> m(c, attnlab::backend::cpu_backend<float>());
    m.init_params(4);
    Batch b = tiny_batch(false);
    m.forward(b, 0.0f, false, nullptr);
    using Block = Transformer<float>::Block;
    for (Block blk : {Block::EncoderSelf, Block::DecoderSelf, Block::DecoderCross}) {
      const auto v = m.attention_view(blk, 1);
      const std::vector<float> params = m.params.download();
      const int C = c.d_model, dk = C / c.heads;
      for (int bi = 0; bi < v.B; ++bi) {
        // Sequence bi of the batch, without its padding.
        const int nq = blk == Block::EncoderSelf ? b.src_len[bi] : (bi == 0 ? 4 : 2);
        const int nk = blk == Block::DecoderSelf ? nq : b.src_len[bi];
        attnlab::core::Matrix x = attnlab::core::Matrix::from_shape({std::size_t(nq), std::size_t(C)});
        attnlab::core::Matrix kv = attnlab::core::Matrix::from_shape({std::size_t(nk), std::size_t(C)});
        for (int i = 0; i < nq; ++i)
          for (int j = 0; j < C; ++j) x(i, j) = v.query_input[(std::size_t(bi) * v.Tq + i) * C + j];
        for (int i = 0; i < nk; ++i)
          for (int j = 0; j < C; ++j) kv(i, j) = v.kv_input[(std::size_t(bi) * v.Tk + i) * C + j];
        auto block = [&](std::size_t off, int col0, int ncols, int nrows) {
          attnlab::core::Matrix w = attnlab::core::Matrix::from_shape({std::size_t(nrows), std::size_t(ncols)});
          for (int i = 0; i < nrows; ++i)
            for (int j = 0; j < ncols; ++j) w(i, j) = params[off + std::size_t(i) * C + col0 + j];
          return w;
        };
        auto bias = [&](std::size_t off, int col0, int ncols) {
          attnlab::core::Matrix w = attnlab::core::Matrix::from_shape({1, std::size_t(ncols)});
          for (int j = 0; j < ncols; ++j) w(0, j) = params[off + col0 + j];
          return w;
        };
        attnlab::core::AttentionWeights aw;
        for (int h = 0; h < c.heads; ++h) {
          attnlab::core::HeadWeights hw{block(v.params.wq, h * dk, dk, C), block(v.params.wk, h * dk, dk, C), block(v.params.wv, h * dk, dk, C)};
          hw.b_q = bias(v.params.bq, h * dk, dk);
          hw.b_k = bias(v.params.bk, h * dk, dk);
          hw.b_v = bias(v.params.bv, h * dk, dk);
          aw.heads.push_back(hw);
        }
        aw.w_o = block(v.params.wo, 0, C, C);
        aw.b_o = bias(v.params.bo, 0, C);
        std::optional<attnlab::core::Mask> mask;
        if (blk == Block::DecoderSelf) mask = attnlab::core::causal_mask(nq);
        attnlab::core::AttentionTrace t;
        const attnlab::core::Matrix out = attnlab::core::multi_head_attention(x, kv, aw, mask ? &*mask : nullptr, &t);
        for (int i = 0; i < nq; ++i) {
          for (int j = 0; j < C; ++j) CHECK(out(i, j) == doctest::Approx(v.output[(std::size_t(bi) * v.Tq + i) * C + j]).epsilon(1e-5));
          for (int h = 0; h < c.heads; ++h)
            for (int k = 0; k < nk; ++k)
              CHECK(t.heads[h].weights(i, k) ==
                    doctest::Approx(v.weights[((std::size_t(bi) * c.heads + h) * v.Tq + i) * v.Tk + k]).epsilon(1e-5));
        }
      }
    }
  }
}
