// Training end to end on a small synthetic task, resume bit-exactness, and decoding.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "backend/cpu/cpu_backend.hpp"
#include "model/decode.hpp"
#include "model/trainer.hpp"
#include "util/error.hpp"

using namespace attnlab::model;

namespace {

// Reverse a sequence of 2–6 symbols drawn from ids 4…11: attention must learn an anti-diagonal.
std::vector<Example> reverse_task(int n, std::uint64_t seed) {
  std::vector<Example> out;
  std::uint64_t s = seed;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>(s >> 33);
  };
  for (int i = 0; i < n; ++i) {
    Example e;
    const int len = 2 + next() % 5;
    for (int t = 0; t < len; ++t) e.src.push_back(4 + next() % 8);
    e.tgt.assign(e.src.rbegin(), e.src.rend());
    out.push_back(e);
  }
  return out;
}

std::vector<std::string> vocab12() {
  std::vector<std::string> v{"<pad>", "<unk>", "<bos>", "<eos>"};
  for (const char* s : {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"}) v.emplace_back(s);
  return v;
}

ModelConfig small_model() {
  ModelConfig c;
  c.vocab_size = 12;
  c.d_model = 32;
  c.heads = 4;
  c.d_ff = 64;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_len = 12;
  c.dropout = 0.0f;
  return c;
}

}  // namespace

TEST_CASE("a small encoder–decoder learns to reverse sequences; greedy and beam decoding agree") {
  // 1000 steps at lr_scale 0.3: with 600 steps at 1.0 the result depended on rounding (test accuracy
  // 75–99 % over seeds 1–8, and a change in the loss's last float bits moved seed 1 from 95 to 88);
  // with these settings seeds 1–20 all reached 94–100 %.
  TrainConfig t;
  t.steps = 1000;
  t.batch_size = 32;
  t.warmup = 100;
  t.lr_scale = 0.3;
  t.label_smoothing = 0.0f;
  t.eval_every = 0;
  Trainer trainer(small_model(), t, vocab12(), attnlab::backend::cpu_backend<float>());
  const auto train = reverse_task(2000, 1), test = reverse_task(100, 2);
  double first = -1, last = 0;
  trainer.run(train, {}, 0, [&](const StepInfo& s) {
    if (first < 0) first = s.loss;
    last = s.loss;
  }, nullptr, nullptr);
  INFO("loss " << first << " -> " << last);
  CHECK(last < first / 10);
  int exact_greedy = 0, exact_beam = 0;
  for (const Example& e : test) {
    exact_greedy += translate(trainer.model(), e.src, {1, 0.6, 0, false}).tokens == e.tgt;
    exact_beam += translate(trainer.model(), e.src, {4, 0.6, 0, false}).tokens == e.tgt;
  }
  INFO("greedy " << exact_greedy << "/100, beam " << exact_beam << "/100");
  CHECK(exact_greedy >= 90);
  CHECK(exact_beam >= 90);
}

TEST_CASE("resuming from a checkpoint continues bit-exactly") {
  ModelConfig m = small_model();
  m.dropout = 0.1f;  // the dropout stream must be restored too
  TrainConfig t;
  t.steps = 30;
  t.batch_size = 7;  // does not divide the data: the epoch boundary falls inside a batch
  t.warmup = 10;
  t.eval_every = 0;
  const auto data = reverse_task(50, 3);
  Trainer straight(m, t, vocab12(), attnlab::backend::cpu_backend<float>());
  straight.run(data, {}, 0, nullptr, nullptr, nullptr);

  const std::string path = (std::filesystem::temp_directory_path() / "attnlab-resume-test.ckpt").string();
  Trainer first(m, t, vocab12(), attnlab::backend::cpu_backend<float>());
  first.run(data, {}, 13, nullptr, nullptr, nullptr);
  first.save(path, {});
  Trainer second(m, t, vocab12(), attnlab::backend::cpu_backend<float>());
  second.restore(path);
  CHECK(second.step() == 13);
  second.run(data, {}, 0, nullptr, nullptr, nullptr);
  CHECK(second.model().params.download() == straight.model().params.download());
  CHECK(second.loss_history() == straight.loss_history());
  std::filesystem::remove(path);
}

TEST_CASE("epoch order is a deterministic permutation") {
  const auto a = epoch_order(10, 5, 0), b = epoch_order(10, 5, 0), c = epoch_order(10, 5, 1);
  CHECK(a == b);
  CHECK(a != c);
  std::vector<std::size_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < 10; ++i) CHECK(sorted[i] == i);
}

TEST_CASE("a step whose loss is not finite updates nothing, and training stops naming the step") {
  // train_step reads the loss only after the backward is queued (model/trainer.hpp), so the check
  // that keeps a diverged step from reaching the weights is the one before AdamW.
  ModelConfig m = small_model();
  TrainConfig t;
  t.steps = 5;
  t.batch_size = 4;
  t.eval_every = 0;
  const auto data = reverse_task(8, 4);
  Trainer trainer(m, t, vocab12(), attnlab::backend::cpu_backend<float>());
  Transformer<float>& net = trainer.model();
  std::vector<float> p = net.params.download();
  for (int c = 0; c < m.d_model; ++c) p[net.layout().dec_norm.b + static_cast<std::size_t>(c)] = std::nanf("");
  net.params.upload(p);

  attnlab::backend::Ops<float>& be = net.backend();
  attnlab::backend::Buffer<float> mom(be), var(be);
  mom.assign_zero(net.params.size());
  var.assign_zero(net.params.size());
  std::uint64_t rng = 1;
  const auto r = train_step(net, make_batch(data, {0, 1, 2, 3}, false), 0.1f, &rng, 1.0, mom.data(),
                            var.data(), nullptr, adam_hyper(AdamConfig{}, 1, 1e-3));
  CHECK_FALSE(r.updated());
  CHECK_FALSE(std::isfinite(r.loss));
  // Bit for bit (NaN compares unequal to itself), and the moments still zero.
  const std::vector<float> after = net.params.download();
  CHECK(std::memcmp(after.data(), p.data(), p.size() * sizeof(float)) == 0);
  CHECK(mom.download() == std::vector<float>(p.size(), 0.0f));
  CHECK(var.download() == std::vector<float>(p.size(), 0.0f));

  try {
    trainer.run(data, {}, 0, nullptr, nullptr, nullptr);
    FAIL("the run did not stop");
  } catch (const attnlab::NumericError& e) {
    CHECK(std::string(e.what()).find("training diverged at step 1 (loss is not finite)") != std::string::npos);
  }
  CHECK(trainer.step() == 0);
  const std::vector<float> kept = net.params.download();
  CHECK(std::memcmp(kept.data(), p.data(), p.size() * sizeof(float)) == 0);
}
