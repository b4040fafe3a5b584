#pragma once
// A progress bar for long work (training). On a terminal it redraws one line on stderr at most ten
// times a second; elsewhere (a pipe, a CI log) it prints a plain line every `log_every` percent, so
// logs stay readable and carry no carriage returns or escape codes.
#include <chrono>
#include <cstdint>
#include <string>

namespace attnlab::render {

class ProgressBar {
 public:
  ProgressBar(std::int64_t total, std::string label, int log_every_percent = 10);
  // `done` units of `total` finished; `status` is shown after the bar (e.g. "loss 1.23").
  void update(std::int64_t done, const std::string& status, bool force = false);
  // Prints a line above the bar (e.g. a validation result) without breaking it.
  void message(const std::string& line);
  void finish(const std::string& status);

  static std::string format_duration(double seconds);

 private:
  std::int64_t total_;
  std::string label_;
  int log_every_;
  bool tty_;
  int last_logged_percent_ = -1;
  std::int64_t start_done_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

}  // namespace attnlab::render
