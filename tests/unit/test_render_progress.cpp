// render/progress.hpp: the training progress bar, on a terminal (one redrawn line, at most ten times a
// second) and elsewhere (a plain line every log_every percent: no carriage return, no escape code).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "render/progress.hpp"

namespace render_progress_test {

using attnlab::render::ProgressBar;

// Points stderr at `fd` for one scope (ProgressBar writes there, and looks at it once, when made).
struct StderrTo {
  int saved;
  explicit StderrTo(int fd) : saved(::dup(STDERR_FILENO)) {
    std::fflush(stderr);
    ::dup2(fd, STDERR_FILENO);
  }
  ~StderrTo() {
    std::fflush(stderr);
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
  }
};

// What `work` writes to stderr when stderr is a plain file.
template <class F>
std::string stderr_of(F&& work) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    StderrTo to(::fileno(f));
    work();
  }
  std::string out;
  std::rewind(f);
  char buf[4096];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, got);
  std::fclose(f);
  return out;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST_CASE("progress, not on a terminal: one plain line per 10 %, the last one always, then the total time") {
  const std::string out = stderr_of([] {
    ProgressBar bar(100, "train", 10);
    for (int step = 1; step <= 100; ++step) bar.update(step, "loss 1.00");
    bar.message("valid: accuracy 0.50");
    bar.finish("(final loss 1.00)");
  });
  CHECK(out.find('\r') == std::string::npos);
  CHECK(out.find('\x1b') == std::string::npos);
  const auto lines = lines_of(out);
  REQUIRE(lines.size() == 13);  // 1 %, then 10 %, 20 % … 100 %: 11 lines; the message; the end
  CHECK(lines[0].rfind("train   1% 1/100 loss 1.00 ETA ", 0) == 0);
  CHECK(lines[1].rfind("train  10% 10/100 loss 1.00 ETA ", 0) == 0);
  CHECK(lines[10] == "train 100% 100/100 loss 1.00 ETA 0s");
  CHECK(lines[11] == "valid: accuracy 0.50");
  CHECK(lines[12].rfind("train done in ", 0) == 0);
  CHECK(lines[12].find(" (final loss 1.00)") != std::string::npos);
}

TEST_CASE("progress: force prints at once; a resumed run counts only its own steps; a total of 0 is done") {
  const std::string out = stderr_of([] {
    ProgressBar bar(1000, "resume", 10);
    bar.update(501, "a");
    bar.update(502, "b");        // the same 10 % bucket: nothing
    bar.update(503, "c", true);  // forced
    ProgressBar none(0, "empty", 10);
    none.update(0, "");
  });
  const auto lines = lines_of(out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind("resume  50% 501/1000 a ETA ", 0) == 0);
  CHECK(lines[1].rfind("resume  50% 503/1000 c ETA ", 0) == 0);
  CHECK(lines[2].rfind("empty 100% 0/0  ETA ", 0) == 0);
}

TEST_CASE("progress on a terminal: one line redrawn in place, at most every 100 ms, and the last step always") {
  int master = -1, slave = -1;
  REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
  {
    StderrTo to(slave);
    ProgressBar bar(50, "train", 10);
    for (int step = 1; step <= 50; ++step) bar.update(step, "loss 2.00");  // well within 100 ms
    bar.message("a line above the bar");
    bar.finish("ok");
  }
  ::close(slave);
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) break;
    const ssize_t got = ::read(master, buf, sizeof buf);
    if (got <= 0) break;
    out.append(buf, static_cast<std::size_t>(got));
  }
  ::close(master);
  // Two draws (the first step, the last), each a carriage return and an erase of the line.
  std::size_t draws = 0;
  for (std::size_t at = 0; (at = out.find("\r\x1b[2Ktrain [", at)) != std::string::npos; ++at) ++draws;
  CHECK(draws == 2);
  CHECK(out.find("train [........................]   2% 1/50 loss 2.00 ETA ") != std::string::npos);
  CHECK(out.find("train [########################] 100% 50/50 loss 2.00 ETA 0s") != std::string::npos);
  // The message and the end each clear the bar's line first.
  CHECK(out.find("\r\x1b[2Ka line above the bar") != std::string::npos);
  CHECK(out.find("train done in ") != std::string::npos);
}

TEST_CASE("format_duration: seconds, minutes, hours, and -- for what is not a duration") {
  CHECK(ProgressBar::format_duration(0) == "0s");
  CHECK(ProgressBar::format_duration(59.4) == "59s");
  CHECK(ProgressBar::format_duration(59.6) == "1m00s");
  CHECK(ProgressBar::format_duration(3599) == "59m59s");
  CHECK(ProgressBar::format_duration(3600) == "1h00m");
  CHECK(ProgressBar::format_duration(86400 + 61) == "24h01m");
  CHECK(ProgressBar::format_duration(-1) == "--");
  CHECK(ProgressBar::format_duration(std::numeric_limits<double>::quiet_NaN()) == "--");
  CHECK(ProgressBar::format_duration(1e8) == "--");
}

}  // namespace render_progress_test
