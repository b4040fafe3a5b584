#include "exercises/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
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
}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const ChildLimits& limits, const std::filesystem::path& output_file, const ChildPipe& pipe) {
  ChildResult r;
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
  for (char** e = environ; *e; ++e) {
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
  const std::string out_path = output_file.string();
  const rlim_t mem = static_cast<rlim_t>(limits.memory_mb) << 20;
  const rlim_t fsize = static_cast<rlim_t>(limits.max_output_mb) << 20;

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (pipe_read >= 0) ::close(pipe_read);
    r.error = std::string("cannot start a process: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group, so a timeout kills everything it started
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
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    if (in > 2) ::close(in);  // (they used to leak into the program as fds 3 and 4)
    if (out > 2) ::close(out);
    if (pipe_read >= 0) {
      if (pipe_read == pipe.fd) ::fcntl(pipe_read, F_SETFD, 0);  // dup2 onto itself keeps O_CLOEXEC
      else if (::dup2(pipe_read, pipe.fd) < 0) ::_exit(126);      // the copy is without O_CLOEXEC
    }
    ::execve(args[0], args.data(), envp.data());
    const char msg[] = "attnlab: cannot run the program (execve failed)\n";
    [[maybe_unused]] ssize_t w = ::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
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
    const bool over_memory = limits.rss_limit_mb && resident_mb(pid) > limits.rss_limit_mb;
    if (over_time || over_memory) {
      r.timed_out = over_time;
      r.memory_exceeded = !over_time;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.timed_out && !r.memory_exceeded) {
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    ::kill(-pid, SIGKILL);  // anything it left running in its group
  }
  std::ifstream in(output_file, std::ios::binary);
  r.output.resize(256 * 1024);
  in.read(r.output.data(), static_cast<std::streamsize>(r.output.size()));
  r.output.resize(static_cast<std::size_t>(in.gcount()));
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
  };
  const auto it = known.find(sig);
  if (it != known.end()) return it->second;
  const char* name = ::strsignal(sig);
  return std::string("signal ") + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

}  // namespace attnlab::exercises
