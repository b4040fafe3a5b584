#pragma once
// The sandbox `attnlab check` compiles, links and grades a learner's file in: bubblewrap (`bwrap`,
// Debian's package bubblewrap, which scripts/install-deps.sh installs), a well-kept tool that sets up
// Linux namespaces without privileges. The learner's code runs inside the grader, so without it that
// code had the learner's own rights: it could print ~/.ssh/id_rsa into its report, append to ~/.bashrc
// or `#include "../../.ssh/id_rsa"` into a compiler message.
//
// Inside (docs/exercises.md lists the same):
//   - the whole file system read-only (`--ro-bind / /`), with private empty folders over /home, /root,
//     $HOME, /tmp, /var/tmp and /run, so nothing in a home folder, a temporary folder or a socket under
//     /run can be read or reached; HOME=/tmp (the empty one);
//   - the exercise's own folder again, read-only, and this run's build folder, writable: the only
//     place it can write; the kit's files (headers, grader objects, libraries) read-only;
//   - its own PID, IPC, UTS, cgroup, user and network namespaces (no network at all; it cannot signal
//     or see attnlab or any other process); a new session (no TIOCSTI into the terminal);
//     --die-with-parent, so it dies with attnlab's supervision as before.
// Not contained: what every user may read outside the hidden folders (/etc, /usr, /opt, project
// folders outside the home), CPU time and memory (bounded by run_child's limits instead), and the
// kernel's attack surface.
//
// bwrap reports a sandboxed program killed by signal n as exit code 128 + n; run_in_sandbox's callers
// map it back (exit_code_to_signal).
#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::exercises {

namespace fs = std::filesystem;

struct SandboxPaths {
  std::vector<fs::path> read_only;  // shown again inside the hidden folders, read-only
  std::vector<fs::path> writable;   // shown writable (the run's build folder)
  fs::path chdir;                   // the working directory inside (empty: /)
};

struct Sandbox {
  bool available = false;
  std::string program;  // the bwrap it runs, e.g. /usr/bin/bwrap
  std::string why_not;  // when not available: why, in one line

  // The command line that runs argv inside the sandbox (argv itself when not available).
  std::vector<std::string> wrap(const std::vector<std::string>& argv, const SandboxPaths& paths) const;
};

// Found and tried once per process: bwrap on PATH (or ATTNLAB_BWRAP, a path), run once with
// /bin/true inside. ATTNLAB_SANDBOX=0 turns it off (why_not says so).
const Sandbox& sandbox();

// What bwrap's exit code means: 128 + n for a program killed by signal n (1 ≤ n ≤ 64), else 0.
int exit_code_to_signal(int exit_code);

}  // namespace attnlab::exercises
