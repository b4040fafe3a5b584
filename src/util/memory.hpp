#pragma once
// How much memory one command may take: what a command that is about to allocate a lot (a trace of
// every attention matrix, an attention sweep over long sequences) checks its estimate against before
// the work, so that it refuses with exit 2 naming the limit instead of running out of memory half-way.
#include <string>

namespace attnlab {

struct MemoryBudget {
  double bytes = 0;   // 0: unknown (the allocation decides)
  std::string what;   // the limit in words, e.g. "80 % of this machine's 15 GiB of memory"
};

// The smaller of 80 % of the machine's memory and what the address-space limit (ulimit -v,
// RLIMIT_AS) leaves above the address space the process already uses.
MemoryBudget memory_budget();

// "1.5 GiB", "640 MiB", "12 KiB": for messages.
std::string human_size(double bytes);

}  // namespace attnlab
