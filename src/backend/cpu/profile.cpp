#include "backend/cpu/profile.hpp"

namespace attnlab::cpu::prof {

const char* name(Op op) {
  switch (op) {
    case Op::Matmul: return "matmul (sgemm)";
    case Op::Softmax: return "attention softmax";
    case Op::LayerNorm: return "layer norm";
    case Op::Loss: return "output softmax + loss";
    case Op::Elementwise: return "embedding, dropout, ReLU, residual";
    case Op::Optimizer: return "optimizer (clip + Adam)";
    case Op::Other: return "other (allocation, zeroing, glue)";
    case Op::Count: break;
  }
  return "?";
}

void start() {
  detail::State& s = detail::state();
  s.totals = Totals{};
  s.depth = 0;
  s.enabled = true;
  s.last = detail::Clock::now();
}

Totals stop() {
  detail::State& s = detail::state();
  if (s.enabled) detail::charge(s, detail::Clock::now());
  s.enabled = false;
  s.depth = 0;
  return s.totals;
}

}  // namespace attnlab::cpu::prof
