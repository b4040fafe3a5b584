#include "render/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace attnlab::render {

ProgressBar::ProgressBar(std::int64_t total, std::string label, int log_every_percent)
    : total_(total), label_(std::move(label)), log_every_(log_every_percent), tty_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_draw_(start_ - std::chrono::seconds(1)) {}

std::string ProgressBar::format_duration(double s) {
  if (!(s >= 0) || s > 1e7) return "--";
  const long t = static_cast<long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

void ProgressBar::update(std::int64_t done, const std::string& status, bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (start_done_ < 0) {
    start_done_ = done - 1 < 0 ? 0 : done - 1;  // a resumed run starts part-way: time only what we do
    start_ = now;
  }
  const double frac = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const std::int64_t did = done - start_done_;
  const double eta = did > 0 ? elapsed / static_cast<double>(did) * static_cast<double>(total_ - done) : -1;
  const int percent = static_cast<int>(frac * 100.0);
  if (tty_) {
    if (!force && now - last_draw_ < std::chrono::milliseconds(100) && done != total_) return;
    last_draw_ = now;
    const int width = 24, filled = static_cast<int>(frac * width);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.append(static_cast<std::size_t>(width - filled), '.');
    std::fprintf(stderr, "\r\x1b[2K%s [%s] %3d%% %lld/%lld %s ETA %s", label_.c_str(), bar.c_str(), percent,
                 static_cast<long long>(done), static_cast<long long>(total_), status.c_str(), format_duration(eta).c_str());
    std::fflush(stderr);
    drawn_ = true;
  } else {
    const int bucket = log_every_ > 0 ? percent / log_every_ : percent;
    if (!force && bucket == last_logged_percent_ && done != total_) return;
    last_logged_percent_ = bucket;
    std::fprintf(stderr, "%s %3d%% %lld/%lld %s ETA %s\n", label_.c_str(), percent, static_cast<long long>(done),
                 static_cast<long long>(total_), status.c_str(), format_duration(eta).c_str());
  }
}

void ProgressBar::message(const std::string& line) {
  if (tty_ && drawn_) std::fprintf(stderr, "\r\x1b[2K");
  std::fprintf(stderr, "%s\n", line.c_str());
  drawn_ = false;
}

void ProgressBar::finish(const std::string& status) {
  if (tty_ && drawn_) std::fprintf(stderr, "\r\x1b[2K");
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "%s done in %s %s\n", label_.c_str(), format_duration(elapsed).c_str(), status.c_str());
  drawn_ = false;
}

}  // namespace attnlab::render
