// Grader: attention with an online softmax over key blocks. Reference:
// attnlab::scaled_dot_product_attention; memory is checked by tracking the peak heap use during the call.
#include <doctest/doctest.h>

#include "core/attention.hpp"
#include "exercises/grading/grading.hpp"

namespace ex {  // the learner's function
Matrix attention_online(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t block);
}

namespace {
using namespace attnlab::grading;

ex::Matrix run(const ex::Matrix& q, const ex::Matrix& k, const ex::Matrix& v, std::size_t block) {
  InputGuard guard;
  guard.add("q", q).add("k", k).add("v", v);
  ex::Matrix got = ex::attention_online(q, k, v, block);
  guard.verify("attention_online");
  return got;
}

void check_online(const std::string& what, const ex::Matrix& q, const ex::Matrix& k, const ex::Matrix& v,
                  std::size_t block, bool large = false) {
  const ex::Matrix want = to_ex(attnlab::scaled_dot_product_attention(to_core(q), to_core(k), to_core(v)));
  const ex::Matrix got = run(q, k, v, block);
  if (close(got, want)) return;
  // Right with one block but wrong with several: the running values were not rescaled.
  if (block < k.rows && close(run(q, k, v, k.rows), want)) {
    report_mistake(mistakes::online_no_rescale, what);
    return;
  }
  std::vector<Candidate> wrong;
  if (auto r = attention_variant(q, k, v, {.scale = Scale::None})) wrong.push_back({&mistakes::no_scaling, r->output});
  expect_match(what, got, want, wrong, large ? &mistakes::unstable_softmax : nullptr);
}
}  // namespace

TEST_CASE("one block holding every key") {
  Rng rng(101);
  check_online("attention_online, n = 3, m = 5, block = 5", rng.matrix(3, 4, 1.5f), rng.matrix(5, 4, 1.5f),
               rng.matrix(5, 2), 5);
}

TEST_CASE("several blocks, including a shorter last block") {
  Rng rng(102);
  const ex::Matrix q = rng.matrix(4, 3, 2.0f), k = rng.matrix(7, 3, 2.0f), v = rng.matrix(7, 5);
  check_online("attention_online, n = 4, m = 7, block = 2", q, k, v, 2);
  check_online("attention_online, n = 4, m = 7, block = 3", q, k, v, 3);
  check_online("attention_online, n = 4, m = 7, block = 1", q, k, v, 1);
}

TEST_CASE("the maximum grows from block to block") {
  // Key scores increase along the sequence, so every new block raises each row's running maximum.
  ex::Matrix q = from_rows({{1, 0}, {0.5f, 0.5f}}), k(6, 2), v(6, 2);
  for (std::size_t j = 0; j < 6; ++j) {
    k(j, 0) = float(j), k(j, 1) = float(j) / 2, v(j, 0) = float(j), v(j, 1) = 1.0f - float(j) / 6;
  }
  check_online("attention_online with increasing scores, block = 2", q, k, v, 2);
}

TEST_CASE("one query (n = 1) and large scores") {
  Rng rng(103);
  check_online("attention_online, n = 1, m = 6, block = 4", rng.matrix(1, 4, 1.5f), rng.matrix(6, 4, 1.5f),
               rng.matrix(6, 3), 4);
  check_online("attention_online with scores in the thousands, block = 3", rng.matrix(3, 4, 40.0f),
               rng.matrix(8, 4, 40.0f), rng.matrix(8, 2), 3, true);
}

TEST_CASE("memory: never the full n × m score matrix") {
  // n = 64 queries, m = 512 keys: the full score matrix is 32768 floats (128 KiB). Copies of K or V
  // (4096 floats), one block of scores (64 × 16) and the output are fine; 8192 floats or more on the
  // heap at once (the peak of what was allocated during the call and not yet freed, in any pieces) is not.
  Rng rng(104);
  const std::size_t n = 64, m = 512, d = 8, block = 16;
  const ex::Matrix q = rng.matrix(n, d), k = rng.matrix(m, d), v = rng.matrix(m, d);
  start_allocation_tracking();
  const ex::Matrix got = ex::attention_online(q, k, v, block);
  const std::size_t peak = stop_allocation_tracking();
  if (peak >= n * m * sizeof(float) / 4) {
    report_mistake(mistakes::online_full_matrix, "attention_online, n = 64, m = 512, block = 16 (peak heap use " +
                                                     std::to_string(peak / 1024) + " KiB)");
    return;
  }
  const ex::Matrix want = to_ex(attnlab::scaled_dot_product_attention(to_core(q), to_core(k), to_core(v)));
  expect_match("attention_online, n = 64, m = 512, block = 16", got, want);
}
