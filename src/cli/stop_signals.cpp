#include "cli/stop_signals.hpp"

#include <csignal>

namespace attnlab::cli {

namespace {
std::atomic<bool> g_stop{false};
struct sigaction g_old_int{}, g_old_term{};
extern "C" void on_stop_signal(int) { g_stop.store(true); }  // lock-free atomic: async-signal-safe
}  // namespace

StopOnSignals::StopOnSignals() {
  g_stop.store(false);
  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopOnSignals::~StopOnSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

bool StopOnSignals::requested() { return g_stop.load(); }
const std::atomic<bool>* StopOnSignals::flag() { return &g_stop; }

}  // namespace attnlab::cli
