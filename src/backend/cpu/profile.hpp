#pragma once
// Where the time goes: optional, cheap wall-clock accounting of the model's operations.
//
// An op opens a `prof::Scope` naming its category; while profiling is off (the default) that costs one
// predictable branch. While on, time is charged *exclusively*: a scope's time excludes the scopes
// nested inside it, so attention_forward (category Softmax) does not also count the matrix products
// it calls (category Matmul), and the categories add up to the wall time between reset() and
// totals(). Time spent outside every scope (allocations, zeroing, bookkeeping) is charged to Other.
// Counted on the main thread only: OpenBLAS's threads never call back into these scopes, and attnlab's
// own pool workers (backend/cpu/parallel.hpp) skip them.
#include <array>
#include <chrono>
#include <cstdint>

namespace attnlab::cpu::prof {

enum class Op : int { Matmul = 0, Softmax, LayerNorm, Loss, Elementwise, Optimizer, Other, Count };
inline constexpr int kOps = static_cast<int>(Op::Count);
const char* name(Op op);

struct Totals {
  std::array<double, kOps> seconds{};
  std::array<std::int64_t, kOps> calls{};
};

namespace detail {
using Clock = std::chrono::steady_clock;
struct State {
  bool enabled = false;
  int depth = 0;
  std::array<Op, 32> stack{};
  Clock::time_point last{};
  Totals totals;
};
inline State g_state;  // one per program (an inline variable: no call, no guard)
// Set on backend/cpu/parallel.hpp's pool workers: their scopes are not counted (the main thread's clock already
// charges the wall time of a parallel region to the scope that opened it).
inline thread_local bool t_worker = false;
inline State& state() { return g_state; }
// Charges the time since the last event to the innermost open scope (Other when none).
inline void charge(State& s, Clock::time_point now) {
  const Op top = s.depth > 0 ? s.stack[static_cast<std::size_t>(s.depth - 1)] : Op::Other;
  s.totals.seconds[static_cast<std::size_t>(top)] += std::chrono::duration<double>(now - s.last).count();
  s.last = now;
}
}  // namespace detail

// Turns accounting on and clears the totals (the clock starts now).
void start();
// Stops accounting; returns the totals since start().
Totals stop();
inline bool enabled() { return detail::state().enabled; }

class Scope {
 public:
  explicit Scope(Op op) {
    detail::State& s = detail::state();
    if (!s.enabled || detail::t_worker || s.depth >= static_cast<int>(s.stack.size())) return;
    detail::charge(s, detail::Clock::now());
    s.stack[static_cast<std::size_t>(s.depth++)] = op;
    ++s.totals.calls[static_cast<std::size_t>(op)];
    active_ = true;
  }
  ~Scope() {
    if (!active_) return;
    detail::State& s = detail::state();
    detail::charge(s, detail::Clock::now());
    --s.depth;
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  bool active_ = false;
};

}  // namespace attnlab::cpu::prof
