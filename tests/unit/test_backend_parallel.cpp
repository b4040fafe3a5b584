// backend/cpu/parallel.hpp and the parallel paths of the model: every index is visited once, errors come back
// to the caller, and the model's forward and backward are bit-identical on 1, 2 and 3 threads (each
// parallel loop splits rows, heads or columns, never a sum), so training is reproducible anywhere.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/ops.hpp"
#include "model/transformer.hpp"
#include "backend/cpu/parallel.hpp"

using namespace attnlab;

namespace {

// Restores the thread count a test changed.
struct ThreadsGuard {
  int saved = cpu::threads();
  ~ThreadsGuard() { cpu::set_threads(saved); }
};

}  // namespace

TEST_CASE("parallel_for visits every index exactly once, for any size, chunk and thread count") {
  ThreadsGuard guard;
  for (int threads : {1, 2, 3, 7}) {
    cpu::set_threads(threads);
    for (std::size_t n : {0u, 1u, 2u, 5u, 64u, 1000u, 4097u}) {
      for (std::size_t min_chunk : {1u, 3u, 100u}) {
        std::vector<std::atomic<int>> hits(n);
        cpu::parallel_for(n, min_chunk, [&](std::size_t b, std::size_t e) {
          REQUIRE(b <= e);
          for (std::size_t i = b; i < e; ++i) hits[i]++;
        });
        for (std::size_t i = 0; i < n; ++i) REQUIRE(hits[i].load() == 1);
      }
    }
  }
}

TEST_CASE("parallel_for: an exception in any chunk reaches the caller; nested calls run serially") {
  ThreadsGuard guard;
  cpu::set_threads(3);
  CHECK_THROWS_AS(cpu::parallel_for(300, 1, [](std::size_t b, std::size_t) {
                    if (b > 0) throw std::runtime_error("worker chunk failed");
                  }),
                  std::runtime_error);
  // The pool still works afterwards, and a nested parallel_for does not deadlock.
  std::atomic<int> total{0};
  cpu::parallel_for(6, 1, [&](std::size_t b, std::size_t e) {
    cpu::parallel_for(10, 1, [&](std::size_t b2, std::size_t e2) { total += static_cast<int>((e - b) * (e2 - b2)); });
  });
  CHECK(total.load() == 60);
}

TEST_CASE("the transformer's loss and every gradient are bit-identical on 1, 2 and 3 threads") {
  ThreadsGuard guard;
  for (bool pre_norm : {false, true}) {
    CAPTURE(pre_norm);
    // Large enough that every parallel path runs: N·C ≥ 2·32768 element-wise values, attention work
    // B·H·T·T·d_k above its threshold, loss rows and layer-norm rows in several chunks.
    model::ModelConfig c;
    c.vocab_size = 300;
    c.d_model = 128;
    c.heads = 4;
    c.d_ff = 256;
    c.encoder_layers = 1;
    c.decoder_layers = 1;
    c.max_len = 64;
    c.dropout = 0.1f;
    c.pre_norm = pre_norm;
    model::Batch b;
    b.B = 8;
    b.S = 48;
    b.T = 64;
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> tok(4, c.vocab_size - 1);
    for (int i = 0; i < b.B * b.S; ++i) b.src.push_back(tok(rng));
    for (int i = 0; i < b.B * b.T; ++i) {
      b.tgt_in.push_back(tok(rng));
      b.tgt_out.push_back(i % 9 == 0 ? model::kPad : tok(rng));
    }
    for (int i = 0; i < b.B; ++i) b.src_len.push_back(b.S - 5 * i);

    std::vector<float> loss;
    std::vector<std::vector<float>> grads;
    for (int threads : {1, 2, 3}) {
      cpu::set_threads(threads);
      model::Transformer<float> net(c, attnlab::backend::cpu_backend<float>());
      net.init_params(5);
      std::uint64_t seed = 99;
      loss.push_back(net.forward(b, 0.1f, true, &seed));
      net.backward();
      grads.push_back(net.grads.download());
    }
    CHECK(loss[1] == loss[0]);
    CHECK(loss[2] == loss[0]);
    CHECK(grads[1] == grads[0]);
    CHECK(grads[2] == grads[0]);
  }
}

TEST_CASE("tiled attention on several threads matches the plain path (work split across query and key blocks)") {
  ThreadsGuard guard;
  std::mt19937 rng(4);
  std::normal_distribution<float> d(0.0f, 1.0f);
  const int B = 2, H = 2, hs = 32, C = H * hs, Tq = 300, Tk = 300, bq = 32, bk = 64;
  auto randv = [&](std::size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  const std::size_t n = static_cast<std::size_t>(B) * Tq * C;
  const auto q = randv(n), k = randv(n), v = randv(n), dout = randv(n);
  const std::vector<int> key_len = {Tk, 123};
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    cpu::set_threads(1);
    std::vector<float> out(n), att(static_cast<std::size_t>(B) * H * Tq * Tk);
    cpu::attention_forward<float>(out.data(), att.data(), q.data(), k.data(), v.data(), key_len.data(), causal, B, Tq,
                                    Tk, C, H);
    std::vector<float> dq(n, 0.0f), dk(n, 0.0f), dv(n, 0.0f), scratch(cpu::attention_backward_scratch<float>(Tq, Tk));
    cpu::attention_backward<float>(dq.data(), dk.data(), dv.data(), scratch.data(), dout.data(), att.data(), q.data(),
                                     k.data(), v.data(), B, Tq, Tk, C, H);
    for (int threads : {2, 3}) {
      CAPTURE(threads);
      cpu::set_threads(threads);
      std::vector<float> tout(n, 7.0f), lse(static_cast<std::size_t>(B) * H * Tq);
      std::vector<float> work(cpu::attention_tiled_workspace<float>(bq, bk));
      cpu::attention_forward_tiled<float>(tout.data(), lse.data(), work.data(), q.data(), k.data(), v.data(),
                                            key_len.data(), causal, B, Tq, Tk, C, H, bq, bk);
      std::vector<float> tdq(n, 0.0f), tdk(n, 0.0f), tdv(n, 0.0f);
      std::vector<float> bwork(cpu::attention_tiled_backward_workspace<float>(bq, bk, Tq, hs));
      cpu::attention_backward_tiled<float>(tdq.data(), tdk.data(), tdv.data(), bwork.data(), dout.data(), tout.data(),
                                             lse.data(), q.data(), k.data(), v.data(), key_len.data(), causal, B, Tq,
                                             Tk, C, H, bq, bk);
      auto close = [](const std::vector<float>& a, const std::vector<float>& ref) {
        double diff = 0, mag = 0;
        for (std::size_t i = 0; i < a.size(); ++i) {
          diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - ref[i]));
          mag = std::max(mag, std::fabs(static_cast<double>(ref[i])));
        }
        return diff / mag;
      };
      CHECK(close(tout, out) < 1e-5);
      CHECK(close(tdq, dq) < 1e-5);
      CHECK(close(tdk, dk) < 1e-5);
      CHECK(close(tdv, dv) < 1e-5);
      // And the tiled path bit-identical to itself on one thread: no sum depends on the thread count
      // (dQ is gathered in fixed groups of key blocks, not per thread).
      cpu::set_threads(1);
      std::vector<float> out1(n, 7.0f), lse1(lse.size());
      std::vector<float> work1(cpu::attention_tiled_workspace<float>(bq, bk));
      cpu::attention_forward_tiled<float>(out1.data(), lse1.data(), work1.data(), q.data(), k.data(), v.data(),
                                          key_len.data(), causal, B, Tq, Tk, C, H, bq, bk);
      std::vector<float> dq1(n, 0.0f), dk1(n, 0.0f), dv1(n, 0.0f);
      std::vector<float> bwork1(cpu::attention_tiled_backward_workspace<float>(bq, bk, Tq, hs));
      cpu::attention_backward_tiled<float>(dq1.data(), dk1.data(), dv1.data(), bwork1.data(), dout.data(), out1.data(),
                                           lse1.data(), q.data(), k.data(), v.data(), key_len.data(), causal, B, Tq,
                                           Tk, C, H, bq, bk);
      CHECK(out1 == tout);
      CHECK(lse1 == lse);
      CHECK(dq1 == tdq);
      CHECK(dk1 == tdk);
      CHECK(dv1 == tdv);
      cpu::set_threads(threads);
      // The plain path itself on several threads: bit-identical to one thread.
      std::vector<float> pout(n), patt(att.size());
      cpu::attention_forward<float>(pout.data(), patt.data(), q.data(), k.data(), v.data(), key_len.data(), causal, B,
                                      Tq, Tk, C, H);
      CHECK(pout == out);
      CHECK(patt == att);
    }
  }
}
