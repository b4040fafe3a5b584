#pragma once
// Runs a program in a child process with a wall-clock limit and resource limits, its output (stdout
// and stderr together) going to a file. Used for the compiler, the linker and the graders, so that a
// learner's infinite loop, crash or runaway allocation can never take the CLI down with it.
#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::exercises {

struct ChildLimits {
  double timeout_s = 10.0;              // wall clock; the whole process group is killed after it
  std::size_t memory_mb = 0;            // address-space limit (RLIMIT_AS); 0 = none
  std::size_t rss_limit_mb = 0;         // resident memory, watched from outside (killed above it); 0 = none.
                                        // For programs that cannot run under RLIMIT_AS (AddressSanitizer
                                        // reserves terabytes of address space for its shadow memory).
  std::size_t max_output_mb = 16;       // output file size limit (RLIMIT_FSIZE)
  std::string cwd{};                    // the program's working directory (empty: attnlab's own)
};

struct ChildResult {
  bool started = false;       // false: fork failed (see error)
  int exit_code = -1;         // when it exited normally
  int signal = 0;             // when a signal killed it (other than our timeout kill)
  bool timed_out = false;
  bool memory_exceeded = false;  // killed by us for going over rss_limit_mb
  double seconds = 0.0;
  std::string output;         // at most the first 256 KiB of stdout + stderr
  std::string from_child;     // what it wrote to ChildPipe::out_fd
  std::string error;
};

// Bytes handed to the child on a pipe of their own: `data` is written into a fresh pipe and its write
// end closed before fork(), and the read end becomes file descriptor `fd` in the child (and in no other
// process attnlab starts), so the child reads `data`, then end-of-file. At most PIPE_BUF (4096)
// bytes. `fd` < 3 (the default): no pipe.
struct ChildPipe {
  int fd = -1;
  std::string data;
  // A channel from the child (one end of a pair of Unix sockets): it becomes file descriptor `out_fd`
  // in the child (≥ 3, not fd); what the child writes there comes back in ChildResult::from_child (at
  // most 64 KiB). Unlike a file or a pipe, nothing in the child can read back what was written (a
  // pipe's end can be reopened for reading through /proc/self/fd). −1: none.
  int out_fd = -1;
};

// argv[0] must be a path. `env` entries ("NAME=value") are added to the current environment, or with
// `clean_env` are the whole environment (so that a secret in attnlab's, a token or a key, never
// reaches the program). The child gets stdin from /dev/null, stdout and stderr into output_file, the
// pipes above, and no other file descriptor of attnlab's. The output is read back through attnlab's
// own descriptor, never by name, so replacing the file (by a link to another) changes nothing.
ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const ChildLimits& limits, const std::filesystem::path& output_file,
                      const ChildPipe& pipe = {}, bool clean_env = false);

// "SIGSEGV (segmentation fault: ...)": the signal's name and what it usually means in learner code.
std::string describe_signal(int sig);

}  // namespace attnlab::exercises
