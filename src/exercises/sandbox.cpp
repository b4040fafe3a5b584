#include "exercises/sandbox.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "exercises/child_process.hpp"

namespace attnlab::exercises {
namespace {

std::string find_bwrap() {
  if (const char* p = std::getenv("ATTNLAB_BWRAP"); p && *p) return p;
  if (const char* path = std::getenv("PATH"); path && *path) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (dir.empty()) continue;
      const fs::path candidate = fs::path(dir) / "bwrap";
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return ::access("/usr/bin/bwrap", X_OK) == 0 ? "/usr/bin/bwrap" : "";
}

fs::path canonical_or_same(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p : c;
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool inside(const fs::path& p, const fs::path& folder) {
  auto a = p.begin();
  for (auto b = folder.begin(); b != folder.end(); ++b, ++a)
    if (a == p.end() || *a != *b) return false;
  return true;
}

// The folders hidden behind empty private ones: every home folder, the temporary folders and /run.
std::vector<fs::path> hidden_folders() {
  std::vector<fs::path> out;
  for (const char* f : {"/home", "/root", "/tmp", "/var/tmp", "/run"})
    if (is_dir(f)) out.emplace_back(f);
  if (const char* home = std::getenv("HOME"); home && *home) {
    const fs::path h = canonical_or_same(home);
    bool covered = h == "/" || !is_dir(h);
    for (const auto& f : out) covered = covered || inside(h, f);
    // A home folder at the root of a system folder (HOME=/usr, say) cannot be hidden without the system.
    if (!covered && std::distance(h.begin(), h.end()) > 2) out.push_back(h);
  }
  return out;
}

Sandbox probe() {
  Sandbox s;
  if (const char* off = std::getenv("ATTNLAB_SANDBOX"); off && std::string(off) == "0") {
    s.why_not = "ATTNLAB_SANDBOX=0 turns it off";
    return s;
  }
  s.program = find_bwrap();
  if (s.program.empty()) {
    s.why_not = "bubblewrap (bwrap) is not installed; install it with: sudo apt-get install bubblewrap";
    return s;
  }
  // Try it once, as it will be used.
  s.available = true;
  std::string tmpl = (fs::temp_directory_path() / "attnlab-sandbox-probe-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    s.available = false;
    s.why_not = "cannot make a temporary file to try bubblewrap with";
    return s;
  }
  ::close(fd);
  const ChildResult r = run_child(s.wrap({"/bin/true"}, {}), {"LC_ALL=C"}, {.timeout_s = 10.0}, tmpl);
  std::error_code ec;
  fs::remove(tmpl, ec);
  if (!r.started || r.timed_out || r.exit_code != 0) {
    s.available = false;
    std::string said = r.output.substr(0, r.output.find('\n'));
    if (said.empty()) said = r.started ? "exit code " + std::to_string(r.exit_code) : r.error;
    s.why_not = s.program + " cannot start here (" + said + "; are user namespaces disabled?)";
  }
  return s;
}

}  // namespace

std::vector<std::string> Sandbox::wrap(const std::vector<std::string>& argv, const SandboxPaths& paths) const {
  if (!available) return argv;
  // Only the system's own folders are shown (read-only), not the whole of /: a Unix socket or a FIFO
  // anywhere else (a database's socket in /var/lib, a project folder, /opt) could otherwise be
  // connected to or written through, since neither needs a writable file system (the sixth
  // adversarial pass reached a listener at /opt/….sock and wrote into a FIFO there).
  // --cap-drop ALL: run by root, bubblewrap otherwise keeps every capability inside, and learner code
  // remounted /usr writable and wrote to the host (the seventh adversarial pass).
  std::vector<std::string> w{program, "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"};
  for (const char* sys : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}) {
    std::error_code ec;
    const fs::path p(sys);
    if (fs::is_symlink(p, ec)) {  // merged /usr: /bin → usr/bin stays a link
      const fs::path to = fs::read_symlink(p, ec);
      if (!ec) w.insert(w.end(), {"--symlink", to.string(), sys});
    } else if (fs::is_directory(p, ec)) {
      w.insert(w.end(), {"--ro-bind", sys, sys});
    }
  }
  w.insert(w.end(), {"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"});
  // The fresh /proc still reaches the host kernel's settings: uid 0 inside is the host's root when
  // attnlab runs as root, and writing /proc/sys needs no capability, only the file's permission
  // (the eighth adversarial pass changed kernel.printk_ratelimit; kernel.core_pattern would have run
  // code as root on the host). Read-only, like a container runtime does.
  for (const char* p : {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}) {
    std::error_code ec;
    if (fs::exists(p, ec)) w.insert(w.end(), {"--ro-bind", p, p});
  }
  for (const auto& f : hidden_folders())
    if (f.string().rfind("/usr", 0) == 0 || f.string().rfind("/etc", 0) == 0) w.insert(w.end(), {"--tmpfs", f.string()});
  for (const auto& p : paths.read_only) {
    const fs::path c = canonical_or_same(p);
    std::error_code ec;
    if (fs::exists(c, ec)) w.insert(w.end(), {"--ro-bind", c.string(), c.string()});
  }
  for (const auto& p : paths.writable) {
    const fs::path c = canonical_or_same(p);
    w.insert(w.end(), {"--bind", c.string(), c.string()});
  }
  w.insert(w.end(), {"--setenv", "HOME", "/tmp"});
  if (!paths.chdir.empty()) w.insert(w.end(), {"--chdir", canonical_or_same(paths.chdir).string()});
  w.push_back("--");
  w.insert(w.end(), argv.begin(), argv.end());
  return w;
}

const Sandbox& sandbox() {
  static const Sandbox s = probe();
  return s;
}

int exit_code_to_signal(int exit_code) { return exit_code > 128 && exit_code <= 128 + 64 ? exit_code - 128 : 0; }

}  // namespace attnlab::exercises
