// Beam search against two oracles: exhaustive search over every hypothesis of a tiny model, and
// greedy decoding (a wider search must never return a worse-scoring translation than greedy).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>

#include "backend/cpu/cpu_backend.hpp"
#include "model/decode.hpp"
#include "tasks/task.hpp"
#include "text/tokenizer.hpp"
#include "text/vocab.hpp"

using namespace attnlab;
using namespace attnlab::model;

namespace {

ModelConfig tiny_model(int vocab, int max_len) {
  ModelConfig c;
  c.vocab_size = vocab;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.max_len = max_len;
  c.dropout = 0.0f;
  return c;
}

// log P(tokens, <eos> | src) by teacher forcing, one decode step per token (the oracle's scorer:
// independent of the beam's bookkeeping, it only uses decode_step).
double sequence_logprob(Transformer<float>& m, const std::vector<int>& src, const std::vector<int>& tokens) {
  m.start_decoding(src, 1);
  const int V = m.config().vocab_size;
  double lp = 0;
  std::vector<int> feed{kBos};
  for (std::size_t i = 0; i <= tokens.size(); ++i) {
    const auto& z = m.decode_step(feed);
    const int want = i < tokens.size() ? tokens[i] : kEos;
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int v = 0; v < V; ++v) mx = std::max(mx, static_cast<double>(z[v]));
    for (int v = 0; v < V; ++v) sum += std::exp(z[v] - mx);
    lp += z[want] - mx - std::log(sum);
    if (i < tokens.size()) feed = {tokens[i]};
  }
  return lp;
}

struct Best {
  std::vector<int> tokens;
  double score = -std::numeric_limits<double>::infinity();
};

// Every hypothesis the decoder may produce: tokens other than <pad>/<bos>/<eos>, at most max_new of
// them, then <eos>.
Best exhaustive(Transformer<float>& m, const std::vector<int>& src, int max_new, double alpha) {
  Best best;
  std::vector<int> allowed;
  for (int v = 0; v < m.config().vocab_size; ++v)
    if (v != kPad && v != kBos && v != kEos) allowed.push_back(v);
  std::vector<int> cur;
  std::function<void()> walk = [&] {
    const double s = sequence_logprob(m, src, cur) / length_penalty(static_cast<int>(cur.size()) + 1, alpha);
    if (s > best.score) best = {cur, s};
    if (static_cast<int>(cur.size()) == max_new) return;
    for (int v : allowed) {
      cur.push_back(v);
      walk();
      cur.pop_back();
    }
  };
  walk();
  return best;
}

}  // namespace

TEST_CASE("beam search with a beam as wide as the hypothesis space finds the exhaustive optimum") {
  // Vocabulary of 7 (4 specials + 3 words) and max_len 4: 3 generated tokens at most before <eos>,
  // 4 choices each (3 words and <unk>) → 85 hypotheses; a beam of 128 can hold them all.
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    for (double alpha : {0.0, 0.6, 1.5}) {
      CAPTURE(seed);
      CAPTURE(alpha);
      Transformer<float> m(tiny_model(7, 4), attnlab::backend::cpu_backend<float>());
      m.init_params(seed);
      const std::vector<int> src{4, 5, 6};
      const Best oracle = exhaustive(m, src, 3, alpha);
      const Hypothesis h = translate(m, src, {.beam = 128, .length_penalty = alpha, .block_loops = false});
      CHECK(h.finished);
      CHECK(h.tokens == oracle.tokens);
      // The beam scores K rows in one batch, the oracle one row at a time: float rounding differs.
      CHECK(h.score == doctest::Approx(oracle.score).epsilon(1e-5));
      // The reported log-probability is the sequence's own.
      CHECK(h.logprob == doctest::Approx(sequence_logprob(m, src, h.tokens)).epsilon(1e-6));
      // Narrower beams: never worse than greedy, never better than the optimum.
      const Hypothesis g = translate(m, src, {.beam = 1, .length_penalty = alpha, .block_loops = false});
      for (int k = 2; k <= 8; ++k) {
        CAPTURE(k);
        const Hypothesis b = translate(m, src, {.beam = k, .length_penalty = alpha, .block_loops = false});
        CHECK(b.score >= g.score - 1e-5 * std::fabs(g.score));
        CHECK(b.score <= oracle.score + 1e-5 * std::fabs(oracle.score));
      }
    }
  }
}

TEST_CASE("loops: the tokens that would close one, and no translation that writes one") {
  using V = std::vector<int>;
  CHECK(loop_closing_tokens({}).empty());
  CHECK(loop_closing_tokens({5}).empty());
  CHECK(loop_closing_tokens({5, 5}) == V{5});                 // a third 5 in a row
  CHECK(loop_closing_tokens({4, 5}).empty());                 // "nous nous" (two) is French
  CHECK(loop_closing_tokens({7, 8, 9, 7, 8}) == V{9});        // 7 8 9 7 8 [9]
  CHECK(loop_closing_tokens({8, 7, 8}) == V{7});              // 8 7 8 [7] repeats "8 7"
  CHECK(loop_closing_tokens({1, 2, 3, 4, 1, 2, 3}) == V{4});
  CHECK(loop_closing_tokens({1, 2, 3, 4, 2, 3}) == V{4});     // 2 3 4 2 3 [4]
  CHECK(loop_closing_tokens({1, 2, 3, 4, 5, 2, 3}).empty());  // "2 3" again, but not back to back
  // The same rule asked of one next token, with the length of the loop it closes.
  CHECK(loop_closed_by({5, 5}, 5) == 1);
  CHECK(loop_closed_by({4, 5}, 5) == 0);
  CHECK(loop_closed_by({7, 8, 9, 7, 8}, 9) == 3);
  CHECK(loop_closed_by({7, 8, 9, 7, 8}, 7) == 0);
  CHECK(loop_closed_by({8, 7, 8}, 7) == 2);
  CHECK(loop_closed_by({1, 2, 3, 4, 5, 2, 3}, 4) == 0);
  // Random tiny models loop readily; with block_loops (the default) no translation holds a loop.
  int looped_without = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    Transformer<float> m(tiny_model(7, 24), attnlab::backend::cpu_backend<float>());
    m.init_params(seed);
    for (int k : {1, 4}) {
      const auto has_loop = [](const std::vector<int>& y) {
        for (std::size_t n = 0; n < y.size(); ++n) {
          const std::vector<int> prefix(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(n));
          const auto c = loop_closing_tokens(prefix);
          if (std::find(c.begin(), c.end(), y[n]) != c.end()) return true;
        }
        return false;
      };
      CHECK_FALSE(has_loop(translate(m, {4, 5, 6}, {.beam = k}).tokens));
      looped_without += has_loop(translate(m, {4, 5, 6}, {.beam = k, .block_loops = false}).tokens);
    }
  }
  CHECK(looped_without > 0);  // the check above is not vacuous
}

TEST_CASE("the shipped translation model: beam search never scores below greedy on the test split") {
  const std::string dir = std::string(ATTNLAB_SOURCE_DIR) + "/data/models/translate-small";
  if (!std::ifstream(dir + "/model.ckpt").good()) {
    ATTNLAB_SKIP(dir << "/model.ckpt is not in the source tree");
  }
  tasks::LoadedModel lm = tasks::load_model(dir, attnlab::backend::cpu_backend<float>());
  tasks::RunConfig run = lm.run;
  const tasks::TaskData data = tasks::build_task_data(run, &lm.vocab);
  REQUIRE(!data.test.empty());
  // The sentence of lessons 1–4 where the old beam returned "Le vieux chat." (score −2.39) over the
  // greedy "Le chat voit le petit chien." (−1.63): it stopped as soon as K short hypotheses ended.
  {
    std::vector<std::string> unknown;
    std::vector<int> src;
    for (auto id : lm.vocab.encode_tokens(text::tokenize("The cat sees the small dog."), &unknown)) src.push_back(static_cast<int>(id));
    REQUIRE(unknown.empty());
    const Hypothesis g = translate(*lm.net, src, {.beam = 1, .length_penalty = 0.6, .block_loops = false});
    for (int k = 2; k <= 8; ++k) {
      CAPTURE(k);
      CHECK(translate(*lm.net, src, {.beam = k, .length_penalty = 0.6, .block_loops = false}).score >= g.score - 1e-5 * std::fabs(g.score));
    }
  }
  const std::size_t n = std::min<std::size_t>(data.test.size(), 150);
  int worse = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Hypothesis g = translate(*lm.net, data.test[i].src, {.beam = 1, .length_penalty = 0.6, .block_loops = false});
    const Hypothesis b = translate(*lm.net, data.test[i].src, {.beam = 4, .length_penalty = 0.6, .block_loops = false});
    // Beam rows are scored in one batch of 4, greedy's alone: the same sequence may differ in its
    // last float bits, which is not "worse".
    worse += b.score < g.score - 1e-5 * std::fabs(g.score);
    // The log-probability the search reports is the sequence's own (scored alone, one beam).
    CHECK(b.logprob == doctest::Approx(sequence_logprob(*lm.net, data.test[i].src, b.tokens)).epsilon(1e-4));
  }
  INFO(worse << " of " << n << " test sentences decoded worse by beam 4 than by greedy");
  CHECK(worse == 0);
}

TEST_CASE("decoding stops at 2·|source| + 10 tokens (and never past the model's max_len), finished or not") {
  Transformer<float> m(tiny_model(40, 64), attnlab::backend::cpu_backend<float>());
  CHECK(translation_limit(m, 2, DecodeOptions{}) == 14);
  CHECK(translation_limit(m, 40, DecodeOptions{}) == 63);  // the model's max_len − 1
  DecodeOptions five;
  five.max_len = 5;
  CHECK(translation_limit(m, 2, five) == 5);
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    m.init_params(seed);
    for (int beam : {1, 3}) {
      DecodeOptions o;
      o.beam = beam;
      CHECK(translate(m, {5, 6}, o).tokens.size() <= 14);
    }
  }
}
