#include "exercises/workspace.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "io/files.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace attnlab::exercises {

namespace {
// $VAR when set to an absolute path (the XDG spec ignores relative ones), else $HOME/fallback.
fs::path xdg_dir(const char* var, const char* fallback) {
  if (const char* v = std::getenv(var); v && *v == '/') return v;
  const char* home = std::getenv("HOME");
  if (!home || !*home) {
    throw InputError(std::string("neither $") + var + " nor $HOME is set; set one, or pass --workspace DIR");
  }
  return fs::path(home) / fallback;
}

std::string read_all(const fs::path& p) { return io::read_text_file(p.string(), 4 << 20); }
}  // namespace

Workspace open_workspace(const std::string& option) {
  std::error_code ec;
  if (!option.empty()) {
    const fs::path root = fs::absolute(option, ec);
    if (!fs::is_directory(root, ec)) {
      throw InputError("workspace " + option + " does not exist or is not a folder; create it first (mkdir -p " +
                       option + ") or leave out --workspace to use " +
                       pretty_path(xdg_dir("XDG_DATA_HOME", ".local/share") / "attnlab" / "exercises"));
    }
    return {root};
  }
  const fs::path root = xdg_dir("XDG_DATA_HOME", ".local/share") / "attnlab" / "exercises";
  fs::create_directories(root, ec);
  if (ec) throw RuntimeError("cannot create the workspace " + root.string() + " (" + ec.message() + ")");
  return {root};
}

bool ensure_learner_file(const Workspace& ws, const ExerciseInfo& ex) {
  const fs::path target = ws.learner_file(ex);
  std::error_code ec;
  if (fs::exists(target, ec)) return false;
  fs::create_directories(target.parent_path(), ec);
  if (ec) throw RuntimeError("cannot create " + target.parent_path().string() + " (" + ec.message() + ")");
  io::write_file_atomic(target.string(), read_all(ex.stub()));
  return true;
}

bool untouched(const Workspace& ws, const ExerciseInfo& ex) {
  const fs::path mine = ws.learner_file(ex);
  std::error_code ec;
  if (!fs::exists(mine, ec)) return true;
  try {
    return read_all(mine) == read_all(ex.stub());
  } catch (const Error&) {
    return false;
  }
}

fs::path reset_learner_file(const Workspace& ws, const ExerciseInfo& ex) {
  const fs::path mine = ws.learner_file(ex);
  std::error_code ec;
  fs::path backup;
  if (fs::exists(mine, ec)) {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    backup = mine;
    backup += std::string(".bak-") + stamp;
    for (int i = 2; fs::exists(backup, ec); ++i) {  // two resets within one second
      backup = mine;
      backup += std::string(".bak-") + stamp + "-" + std::to_string(i);
    }
    io::write_file_atomic(backup.string(), read_all(mine));
  }
  fs::create_directories(mine.parent_path(), ec);
  io::write_file_atomic(mine.string(), read_all(ex.stub()));
  return backup;
}

fs::path default_state_file() { return xdg_dir("XDG_STATE_HOME", ".local/state") / "attnlab" / "progress.json"; }

fs::path state_file_for(const Workspace& ws) {
  std::error_code ec;
  const fs::path default_root = xdg_dir("XDG_DATA_HOME", ".local/share") / "attnlab" / "exercises";
  if (fs::equivalent(ws.root, default_root, ec)) return default_state_file();
  fs::path key = fs::weakly_canonical(ws.root, ec);
  if (ec) key = ws.root.lexically_normal();
  // FNV-1a of the folder's canonical path: one file per workspace, named without its path's slashes.
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : key.string()) h = (h ^ c) * 0x100000001b3ull;
  char name[40];
  std::snprintf(name, sizeof name, "%016llx.json", static_cast<unsigned long long>(h));
  return xdg_dir("XDG_STATE_HOME", ".local/state") / "attnlab" / "workspaces" / name;
}

std::string pretty_path(const fs::path& p) {
  const char* home = std::getenv("HOME");
  const std::string s = p.string();
  if (home && *home) {
    const std::string h = std::string(home) + "/";
    if (s.rfind(h, 0) == 0) return shown_path("~/" + s.substr(h.size()));
  }
  return shown_path(s);
}

}  // namespace attnlab::exercises
