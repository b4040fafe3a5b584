#include "exercises/child_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <array>
#include <map>
#include <thread>

extern char** environ;

namespace attnlab::exercises {

namespace {
// The resident memory of a process in MiB (0 when it cannot be read, e.g. it has just exited).
std::size_t resident_mb(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/statm", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t got = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (got <= 0) return 0;
  buf[got] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  return static_cast<std::size_t>(resident * static_cast<unsigned long long>(::sysconf(_SC_PAGESIZE)) >> 20);
}
// The resident memory of a process and all its descendants in MiB: the grader runs as a grandchild
// when it is sandboxed (bwrap, then its namespace's init, then the grader). Children are read from
// /proc/PID/task/TID/children; a process that ends meanwhile simply counts 0.
std::size_t tree_resident_mb(pid_t pid, int depth = 0) {
  std::size_t total = resident_mb(pid);
  if (depth > 16) return total;
  char dir_path[64];
  std::snprintf(dir_path, sizeof dir_path, "/proc/%d/task", static_cast<int>(pid));
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(dir_path, ec)) {
    std::ifstream children(task.path() / "children");
    long child = 0;
    while (children >> child) total += tree_resident_mb(static_cast<pid_t>(child), depth + 1);
  }
  return total;
}

// ---- supervision: no child outlives attnlab, its time limit or Ctrl-C --------------------------
//
// A child runs in a process group of its own (so its whole group can be killed at once, and the
// terminal's Ctrl-C reaches attnlab alone). That alone would let it outlive attnlab: so
//   - Ctrl-C, SIGTERM and SIGHUP while a child runs kill the child's group at once (in the handler),
//     then the waiting loop reaps it, removes its orphans (below), and attnlab ends by the signal;
//   - the child dies with attnlab (PR_SET_PDEATHSIG), however attnlab ends, kill -9 included;
//   - attnlab is a child subreaper (PR_SET_CHILD_SUBREAPER): a descendant that leaves the group
//     (setsid()) and whose parent exits is re-parented to attnlab instead of init, and after every
//     child run attnlab kills and reaps whatever was re-parented to it;
//   - RLIMIT_CPU (inherited across fork) ends any descendant that spins past the time limit even if
//     every supervisor above it is gone.
// What is not contained without a sandbox: a descendant that sleeps while attnlab itself is killed.

std::atomic<pid_t> g_child{0};  // the running child's pid (= its process group), 0 when none
std::atomic<int> g_signal{0};   // the signal that asked attnlab to stop while a child ran

extern "C" void on_stop_while_child_runs(int sig) {
  g_signal.store(sig);
  const pid_t pid = g_child.load();
  if (pid > 0) {  // kill() is async-signal-safe
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
}

class ForwardStopSignals {
 public:
  ForwardStopSignals() {
    struct sigaction sa{};
    sa.sa_handler = on_stop_while_child_runs;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~ForwardStopSignals() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  ForwardStopSignals(const ForwardStopSignals&) = delete;
  ForwardStopSignals& operator=(const ForwardStopSignals&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// The processes whose parent is this one (from /proc/PID/stat: "pid (comm) state ppid ...").
std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  const pid_t self = ::getpid();
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[512];
    const ssize_t got = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (got <= 0) continue;
    buf[got] = '\0';
    const char* close_paren = std::strrchr(buf, ')');  // comm may hold spaces and parentheses
    char state = 0;
    long ppid = 0;
    if (close_paren && std::sscanf(close_paren + 1, " %c %ld", &state, &ppid) == 2 && ppid == self)
      out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

// Kills and reaps every process re-parented to attnlab (the subreaper) after a child run: what the
// child left behind outside its process group. Bounded, in case something keeps forking.
void remove_orphans() {
  for (int round = 0; round < 200; ++round) {
    const std::vector<pid_t> left = own_children();
    if (left.empty()) return;
    for (const pid_t p : left) {
      ::kill(-p, SIGKILL);
      ::kill(p, SIGKILL);
    }
    for (const pid_t p : left) {
      int st = 0;
      while (::waitpid(p, &st, 0) < 0 && errno == EINTR) {
      }
    }
  }
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const ChildLimits& limits, const std::filesystem::path& output_file, const ChildPipe& pipe,
                      bool clean_env) {
  ChildResult r;
  // The output file, opened here: the child writes to this descriptor and attnlab reads it back from
  // it, whatever the name comes to point to meanwhile (learner code can replace it by a symbolic
  // link to a secret, which a read by name would print).
  const int out_fd = ::open(output_file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (out_fd < 0) {
    r.error = "cannot create " + output_file.string() + ": " + std::strerror(errno);
    return r;
  }
  struct FdCloser {
    int fd;
    ~FdCloser() {
      if (fd >= 0) ::close(fd);
    }
  } out_closer{out_fd};
  // The channel from the child is a connected pair of Unix sockets, not a pipe: a pipe's write end can
  // be opened again for reading through /proc/self/fd/N, which would let other code in the child read
  // back what was written (the second adversarial pass, Q3); a socket cannot be opened that way, and
  // what the child sends on its end can only be received on attnlab's.
  int from_child[2] = {-1, -1};
  if (pipe.out_fd >= 3 && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, from_child) != 0) {
    r.error = std::string("cannot make a socket pair: ") + std::strerror(errno);
    return r;
  }
  FdCloser from_read{from_child[0]};
  // The pipe is filled and its write end closed before fork(): the child cannot block on it, and the
  // parent has nothing to feed while it waits. O_CLOEXEC keeps it out of every other child.
  int pipe_read = -1;
  if (pipe.fd >= 3) {
    if (pipe.data.size() > PIPE_BUF) {
      r.error = "internal error: too much data for the child's pipe";
      return r;
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      r.error = std::string("cannot create a pipe: ") + std::strerror(errno);
      return r;
    }
    const ssize_t put = ::write(fds[1], pipe.data.data(), pipe.data.size());
    ::close(fds[1]);
    if (put != static_cast<ssize_t>(pipe.data.size())) {
      ::close(fds[0]);
      r.error = "cannot write to the child's pipe";
      return r;
    }
    pipe_read = fds[0];
  }
  // Everything the child needs is prepared before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> env_s;
  for (char** e = environ; *e && !clean_env; ++e) {
    const std::string kv = *e;
    bool overridden = false;
    for (const auto& o : env) overridden = overridden || kv.substr(0, kv.find('=')) == o.substr(0, o.find('='));
    if (!overridden) env_s.push_back(kv);
  }
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp, args;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  const rlim_t mem = static_cast<rlim_t>(limits.memory_mb) << 20;
  const rlim_t fsize = static_cast<rlim_t>(limits.max_output_mb) << 20;

  // Once per process: orphans of a child come back to attnlab, not init (see above).
  static const bool subreaper = ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  (void)subreaper;
  // CPU seconds add up over threads: the wall-clock limit times the cores, so a multi-threaded run
  // inside its time limit never meets this one first.
  const rlim_t cpu_s = static_cast<rlim_t>(limits.timeout_s * std::max(1u, std::thread::hardware_concurrency())) + 2;
  const pid_t parent = ::getpid();
  const ForwardStopSignals forward;
  g_signal.store(0);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (pipe_read >= 0) ::close(pipe_read);
    if (from_child[1] >= 0) ::close(from_child[1]);
    r.error = std::string("cannot start a process: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group, so a timeout kills everything it started
    // Die with attnlab; if attnlab is already gone (it died before this line), stop now.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    // The handlers are attnlab's, not the program's: back to the defaults before exec (exec resets
    // caught signals anyway; this covers the time until then).
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    ::signal(SIGXFSZ, SIG_DFL);  // attnlab ignores it; an ignored signal would stay ignored across exec
    // Its own folder, not the caller's: without the sandbox, learner code writing or removing a
    // relative "run.log" did it in the folder attnlab was started from (found by the test suite, which
    // left a link in the source tree).
    if (!limits.cwd.empty() && ::chdir(limits.cwd.c_str()) != 0) ::_exit(126);
    struct rlimit cpu{cpu_s, cpu_s + 1};
    ::setrlimit(RLIMIT_CPU, &cpu);
    if (mem) {
      struct rlimit rl{mem, mem};
      ::setrlimit(RLIMIT_AS, &rl);
    } else if (limits.rss_limit_mb) {
      // Watched from outside instead: lift an inherited soft address-space limit (ulimit -v) as far as
      // the hard limit allows, since AddressSanitizer cannot start under one.
      struct rlimit rl{};
      if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_AS, &rl);
      }
    }
    struct rlimit fl{fsize, fsize};
    ::setrlimit(RLIMIT_FSIZE, &fl);
    struct rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out_fd, 1);
    ::dup2(out_fd, 2);
    if (pipe_read >= 0) {
      if (pipe_read == pipe.fd) ::fcntl(pipe_read, F_SETFD, 0);  // dup2 onto itself keeps O_CLOEXEC
      else if (::dup2(pipe_read, pipe.fd) < 0) ::_exit(126);      // the copy is without O_CLOEXEC
    }
    if (from_child[1] >= 0) {
      if (from_child[1] == pipe.out_fd) ::fcntl(from_child[1], F_SETFD, 0);
      else if (::dup2(from_child[1], pipe.out_fd) < 0) ::_exit(126);
    }
    // No other descriptor reaches the program: not attnlab's own, and none that attnlab inherited from
    // its caller (a shell's `exec 7>file`, an IDE's), which would let the program write outside its
    // sandbox. Everything above fd 2 but the pipes is closed (the O_CLOEXEC ones close at exec anyway).
    for (int fd = 3; fd < 1024; ++fd)
      if (fd != pipe.fd && fd != pipe.out_fd) ::close(fd);
    ::close_range(1024, ~0U, 0);
    ::execve(args[0], args.data(), envp.data());
    const char msg[] = "attnlab: cannot run the program (execve failed)\n";
    [[maybe_unused]] ssize_t w = ::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  g_child.store(pid);
  if (from_child[1] >= 0) {
    ::close(from_child[1]);
    ::fcntl(from_child[0], F_SETFL, O_NONBLOCK);
    ::shutdown(from_child[0], SHUT_WR);  // nothing goes to the child this way
  }
  // Drains the pipe from the child (so a child that writes much never blocks on it), keeping 64 KiB.
  auto drain = [&] {
    if (from_child[0] < 0) return;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(from_child[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      if (r.from_child.size() < (64u << 10)) r.from_child.append(buf, static_cast<std::size_t>(n));
    }
  };
  if (g_signal.load()) on_stop_while_child_runs(g_signal.load());  // a signal between fork and here
  if (pipe_read >= 0) ::close(pipe_read);
  r.started = true;
  int status = 0;
  const auto deadline = start + std::chrono::duration<double>(limits.timeout_s);
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      r.error = std::string("lost track of the child process: ") + std::strerror(errno);
      break;
    }
    const bool over_time = std::chrono::steady_clock::now() >= deadline;
    const bool over_memory = limits.rss_limit_mb && tree_resident_mb(pid) > limits.rss_limit_mb;
    if (over_time || over_memory) {
      r.timed_out = over_time;
      r.memory_exceeded = !over_time;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    drain();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  drain();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.timed_out && !r.memory_exceeded) {
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  }
  ::kill(-pid, SIGKILL);  // anything it left running in its group
  g_child.store(0);
  remove_orphans();       // and anything that left the group
  if (const int sig = g_signal.load()) {
    // Ctrl-C (or SIGTERM, SIGHUP) while the child ran: it and everything it started are gone; now
    // end attnlab by the same signal, as if no handler had been there.
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
  }
  r.output.resize(256 * 1024);
  std::size_t got = 0;
  while (got < r.output.size()) {
    const ssize_t n = ::pread(out_fd, r.output.data() + got, r.output.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  r.output.resize(got);
  return r;
}

std::string describe_signal(int sig) {
  static const std::map<int, std::string> known = {
      {SIGSEGV, "SIGSEGV, a segmentation fault: the code read or wrote memory it does not own, usually an "
                "index past the end of a std::vector or raw array, or a reference to a destroyed object"},
      {SIGABRT, "SIGABRT, an abort: often a failed bounds check on a std::vector (the message above says "
                "which), an exception thrown where none may escape, or memory corruption"},
      {SIGFPE, "SIGFPE, an arithmetic error: an integer division or modulo by zero"},
      {SIGBUS, "SIGBUS, a bus error: a badly aligned or unmapped memory access"},
      {SIGILL, "SIGILL, an illegal instruction: often a function that returns a value but has no return "
               "statement on some path (read the compiler warnings)"},
      {SIGXFSZ, "SIGXFSZ: the program printed far too much output (is a print inside an endless loop?)"},
      {SIGKILL, "SIGKILL: the process was killed from outside (out of memory?)"},
      {SIGXCPU, "SIGXCPU: the program used more CPU time than its time limit allows (an endless loop?)"},
  };
  const auto it = known.find(sig);
  if (it != known.end()) return it->second;
  const char* name = ::strsignal(sig);
  return std::string("signal ") + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

}  // namespace attnlab::exercises
