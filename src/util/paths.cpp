#include "util/paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "util/error.hpp"

namespace attnlab {

namespace fs = std::filesystem;

namespace {

bool looks_right(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p / "data", ec) && fs::is_directory(p / "lessons", ec);
}

}  // namespace

std::string project_root() {
  if (const char* env = std::getenv("ATTNLAB_DATA_DIR"); env && *env) {
    // The user named a folder: a wrong one is bad input (exit 2), never silently replaced.
    if (!looks_right(env)) {
      throw InputError(std::string("ATTNLAB_DATA_DIR=") + env +
                       " does not hold lessons/ and data/ folders; point it at the attnlab source tree or unset it");
    }
    return env;
  }
  std::vector<fs::path> tried;
#ifdef ATTNLAB_SOURCE_ROOT
  tried.emplace_back(ATTNLAB_SOURCE_ROOT);
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    tried.push_back(exe.parent_path());
    tried.push_back(exe.parent_path().parent_path());
    tried.push_back(exe.parent_path().parent_path() / "share" / "attnlab");
  }
  for (const fs::path& p : tried)
    if (looks_right(p)) return p.string();
  std::string where;
  for (const fs::path& p : tried) where += (where.empty() ? "" : ", ") + p.string();
  throw RuntimeError("cannot find the lessons/ and data/ folders (looked in: " + where + "); set ATTNLAB_DATA_DIR to the attnlab source tree");
}

std::string resolve_data_path(const std::string& rel) {
  std::error_code ec;
  if (fs::exists(rel, ec)) return rel;
  if (fs::path(rel).is_absolute()) return rel;
  return (fs::path(project_root()) / rel).string();
}

}  // namespace attnlab
