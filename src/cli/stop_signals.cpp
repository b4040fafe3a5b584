#include "cli/stop_signals.hpp"

#include <csignal>

namespace attnlab::cli {

namespace {
std::atomic<bool> g_stop{false};
// SIGHUP too: a closed terminal or a dropped SSH session is a request to stop like SIGTERM, and train
// saves its checkpoint instead of losing every step since the last one (round three's item 4).
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3]{};
extern "C" void on_stop_signal(int) { g_stop.store(true); }  // lock-free atomic: async-signal-safe
}  // namespace

StopOnSignals::StopOnSignals() {
  g_stop.store(false);
  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) {
    sigaction(kStopSignals[i], nullptr, &g_old[i]);
    // Started under nohup (SIGHUP ignored): a hangup is meant not to stop the run, so it stays ignored.
    if (kStopSignals[i] == SIGHUP && g_old[i].sa_handler == SIG_IGN) continue;
    sigaction(kStopSignals[i], &sa, nullptr);
  }
}

StopOnSignals::~StopOnSignals() {
  for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &g_old[i], nullptr);
}

bool StopOnSignals::requested() { return g_stop.load(); }
const std::atomic<bool>* StopOnSignals::flag() { return &g_stop; }

}  // namespace attnlab::cli
