#include "backend/cpu/parallel.hpp"

#include <cblas.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "backend/cpu/profile.hpp"

namespace attnlab::cpu {

namespace {

// True on pool workers and on a caller while it runs its own chunk: a nested parallel_for runs serially.
thread_local bool t_inside = false;

struct Pool {
  std::mutex mu;
  std::condition_variable start, done;
  std::vector<std::thread> workers;
  std::uint64_t generation = 0;  // bumped once per job; a worker runs each job it takes part in once
  const std::function<void(std::size_t, std::size_t)>* fn = nullptr;
  std::vector<std::pair<std::size_t, std::size_t>> chunks;  // chunks[0] is the caller's
  int active = 0;   // workers taking part in the current job (workers 0 … active−1)
  int pending = 0;  // of those, how many have not finished
  std::exception_ptr error;
  bool stop = false;

  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(mu);
      stop = true;
    }
    start.notify_all();
    for (auto& t : workers) t.join();
  }

  void run_worker(int idx) {
    t_inside = true;
    prof::detail::t_worker = true;  // the profiler's totals belong to the main thread
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      start.wait(lk, [&] { return stop || generation != seen; });
      if (stop) return;
      seen = generation;
      if (idx >= active) continue;  // this job needs fewer threads
      const auto [b, e] = chunks[static_cast<std::size_t>(idx) + 1];
      const auto* f = fn;
      lk.unlock();
      std::exception_ptr err;
      try {
        (*f)(b, e);
      } catch (...) {
        err = std::current_exception();
      }
      lk.lock();
      if (err && !error) error = err;
      if (--pending == 0) done.notify_one();
    }
  }
};

Pool& pool() {
  static Pool p;
  return p;
}

std::mutex g_call_mu;  // one job at a time, whichever thread submits it
int g_threads = 0;     // 0: not chosen yet (follow OpenBLAS)

}  // namespace

int threads() {
  if (g_threads <= 0) g_threads = std::clamp(openblas_get_num_threads(), 1, 256);
  return g_threads;
}

void set_threads(int n) { g_threads = std::clamp(n, 1, 256); }

void parallel_for(std::size_t n, std::size_t min_chunk, const std::function<void(std::size_t, std::size_t)>& fn) {
  if (n == 0) return;
  const std::size_t parts = std::min<std::size_t>(static_cast<std::size_t>(threads()), n / std::max<std::size_t>(min_chunk, 1));
  if (t_inside || parts < 2) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call(g_call_mu);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lk(p.mu);
    while (p.workers.size() + 1 < parts) {
      const int idx = static_cast<int>(p.workers.size());
      p.workers.emplace_back([&p, idx] { p.run_worker(idx); });
    }
    p.chunks.resize(parts);
    for (std::size_t i = 0; i < parts; ++i) p.chunks[i] = {n * i / parts, n * (i + 1) / parts};
    p.fn = &fn;
    p.active = static_cast<int>(parts) - 1;
    p.pending = p.active;
    p.error = nullptr;
    ++p.generation;
  }
  p.start.notify_all();
  std::exception_ptr mine;
  t_inside = true;
  try {
    fn(p.chunks[0].first, p.chunks[0].second);
  } catch (...) {
    mine = std::current_exception();
  }
  t_inside = false;
  std::unique_lock<std::mutex> lk(p.mu);
  p.done.wait(lk, [&] { return p.pending == 0; });
  if (mine) std::rethrow_exception(mine);
  if (p.error) std::rethrow_exception(p.error);
}

BlasSerial::BlasSerial() : saved_(openblas_get_num_threads()) {
  if (saved_ != 1) openblas_set_num_threads(1);
}

BlasSerial::~BlasSerial() {
  if (saved_ != 1) openblas_set_num_threads(saved_);
}

}  // namespace attnlab::cpu
