#pragma once
// Ctrl-C, SIGTERM and SIGHUP (a closed terminal, a dropped SSH session) as a request to stop at the
// next safe point, for commands that write files (train, corpus): while a StopOnSignals is alive the
// three signals only set a flag, which the command
// checks between units of work, so it can finish or undo the unit in hand and exit 130 instead of
// being killed half-way through a write.
#include <atomic>

namespace attnlab::cli {

class StopOnSignals {
 public:
  StopOnSignals();   // clears the flag and installs the handlers
  ~StopOnSignals();  // restores the handlers that were there before
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  static bool requested();                  // a signal has arrived since construction
  static const std::atomic<bool>* flag();   // the same, for loops that take a stop flag
};

}  // namespace attnlab::cli
