// attnlab watch [N] [--poll] [--interval S] [--workspace DIR]
// Checks an exercise, then re-checks it every time its file is saved. Uses inotify; falls back to
// polling the file's modification time when inotify is unavailable or its events do not arrive
// (network and some container filesystems), and says so.
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "render/terminal.hpp"

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "exercises/session.hpp"
#include "util/shown.hpp"

namespace attnlab::cli {

struct WatchOptions {
  std::optional<std::string> exercise;
  std::string workspace;
  bool poll = false;
  double interval_s = 1.0;
  double timeout_s = 10.0;
  int memory_mb = 1024;
  int max_checks = 0;  // 0 = until interrupted (tests pass a small number)
};

namespace {

struct Stamp {
  long long sec = -1, nsec = 0, size = -1, inode = -1;
  bool operator==(const Stamp&) const = default;
};

Stamp stamp_of(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {static_cast<long long>(st.st_mtim.tv_sec), static_cast<long long>(st.st_mtim.tv_nsec),
          static_cast<long long>(st.st_size), static_cast<long long>(st.st_ino)};
}

// Waits until `file` (in `folder`) changes. Starts with inotify unless told to poll, and switches to
// polling (saying so) when inotify cannot be used or its events do not arrive.
class FileWatcher {
 public:
  FileWatcher(bool force_poll, double interval_s) : interval_ms_(static_cast<int>(interval_s * 1000)) {
    if (force_poll) {
      render::print_wrapped(fmt::format("Polling for changes every {:g} s (--poll).\n", interval_s));
      return;
    }
    fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd_ < 0) {
      render::print_wrapped(fmt::format("File events (inotify) are not available here ({}); polling every {:g} s instead.\n",
                 std::strerror(errno), interval_s));
    }
  }
  ~FileWatcher() {
    if (fd_ >= 0) ::close(fd_);
  }

  void watch(const std::string& folder, const std::string& file) {
    file_ = file;
    name_ = file.substr(file.rfind('/') + 1);
    last_ = stamp_of(file);
    if (fd_ < 0) return;
    if (wd_ >= 0) ::inotify_rm_watch(fd_, wd_);
    wd_ = ::inotify_add_watch(fd_, folder.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO);
    if (wd_ < 0) {
      render::print_wrapped(fmt::format("Cannot watch {} for file events ({}); polling every {:g} s instead.\n", shown_path(folder), std::strerror(errno),
                 interval_ms_ / 1000.0));
      ::close(fd_);
      fd_ = -1;
    }
  }

  void wait_for_change() {
    for (;;) {
      if (fd_ >= 0 && wait_event(interval_ms_)) {
        settle();
        return;
      }
      if (fd_ < 0) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms_));
      const Stamp now = stamp_of(file_);
      if (now == last_) continue;
      if (fd_ >= 0 && !wait_event(300)) {
        // The file changed but no event came: inotify does not see this filesystem's writes.
        render::print_wrapped(fmt::format("File events do not arrive for {} (a network or container filesystem?); polling every "
                   "{:g} s instead.\n", shown_path(file_), interval_ms_ / 1000.0));
        ::close(fd_);
        fd_ = -1;
      }
      settle();
      return;
    }
  }

 private:
  // True when an event for our file arrived within timeout_ms.
  bool wait_event(int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      struct pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno != EINTR) return false;
      if (ready <= 0) continue;
      alignas(struct inotify_event) char buf[4096];
      const ssize_t got = ::read(fd_, buf, sizeof buf);
      bool ours = false;
      for (ssize_t off = 0; off < got;) {
        const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
        if (ev->len && name_ == ev->name) ours = true;
        off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
      }
      if (ours) return true;
    }
  }

  // Editors often write a file in several steps: wait a moment and take the final state.
  void settle() {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    if (fd_ >= 0) {
      alignas(struct inotify_event) char buf[4096];
      while (::read(fd_, buf, sizeof buf) > 0) {
      }
    }
    last_ = stamp_of(file_);
  }

  int fd_ = -1, wd_ = -1, interval_ms_;
  std::string file_, name_;
  Stamp last_;
};

void run_watch(const WatchOptions& o) {
  exercises::Session s(o.workspace);
  const exercises::Kit kit = exercises::load_kit();
  const exercises::CheckOptions copts{o.timeout_s, static_cast<std::size_t>(o.memory_mb)};
  const exercises::ExerciseInfo* ex = s.resolve(o.exercise);
  if (!ex) {
    render::print_wrapped(fmt::format("Every exercise has passed; name one to watch it: attnlab watch N\n"));
    return;
  }
  FileWatcher watcher(o.poll, o.interval_s);
  int checks = 0;
  for (;;) {
    exercises::ensure_learner_file(s.workspace(), *ex);
    const auto file = s.workspace().learner_file(*ex);
    watcher.watch(file.parent_path().string(), file.string());
    const auto verdict = s.check_and_report(kit, *ex, copts, false, true);
    if (o.max_checks > 0 && ++checks >= o.max_checks) return;
    if (verdict == exercises::Verdict::Passed && !o.exercise) {
      const exercises::ExerciseInfo* next = s.next_unfinished();
      if (!next) return;
      render::print_wrapped(fmt::format("\nMoving on to exercise {}: {}\n", next->label(), next->title));
      ex = next;
      continue;
    }
    render::print_wrapped(fmt::format("\nWatching {} — save it to check again (Ctrl-C to stop).\n", exercises::pretty_path(file)));
    std::cout.flush();
    watcher.wait_for_change();
    render::print_wrapped(fmt::format("\n"));
  }
}

}  // namespace

void setup_watch(CLI::App& app) {
  auto opts = std::make_shared<WatchOptions>();
  CLI::App* sub = app.add_subcommand("watch", "Check an exercise again every time you save it");
  sub->add_option("exercise", opts->exercise,
                  "Exercise number or name (default: the next unfinished one, moving on after each pass)");
  add_workspace_option(*sub, opts->workspace);
  sub->add_flag("--poll", opts->poll, "Poll the file's modification time instead of using file events");
  sub->add_option("--interval", opts->interval_s, "Seconds between polls")->transform(real_number(0.05, 60.0))->capture_default_str();
  sub->add_option("--timeout", opts->timeout_s, "Seconds the grader may run")->transform(real_number(0.1, 600.0))->capture_default_str();
  sub->add_option("--memory-mb", opts->memory_mb, "Memory your code may use while graded, in MiB (the grader's own libraries and OpenBLAS's buffer get 256 MiB on top)")->transform(whole_number(64, 65536))->capture_default_str();
  sub->add_option("--max-checks", opts->max_checks, "Stop after this many checks (0 = until Ctrl-C)")->transform(whole_number(0, 1000000000));
  sub->callback([opts] { run_watch(*opts); });
}

}  // namespace attnlab::cli
