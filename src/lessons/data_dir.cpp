#include "lessons/data_dir.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <system_error>
#include <vector>

#include "util/error.hpp"

namespace attnlab::lessons {

namespace fs = std::filesystem;

namespace {

bool has_lessons(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p / "lessons", ec) && fs::is_directory(p / "data", ec);
}

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

fs::path data_root() {
  if (const char* env = std::getenv("ATTNLAB_DATA_DIR"); env && *env) {
    if (!has_lessons(env)) {
      throw InputError(std::string("ATTNLAB_DATA_DIR=") + env +
                       " does not hold lessons/ and data/ folders; point it at the attnlab source tree or unset it");
    }
    return env;
  }
  std::vector<fs::path> tried;
#ifdef ATTNLAB_SOURCE_DIR
  tried.emplace_back(ATTNLAB_SOURCE_DIR);
#endif
  if (const fs::path exe = executable_dir(); !exe.empty()) {
    tried.push_back(exe);
    tried.push_back(exe.parent_path());
    tried.push_back(exe.parent_path() / "share" / "attnlab");
  }
  for (const fs::path& p : tried)
    if (has_lessons(p)) return p;
  std::string where;
  for (const fs::path& p : tried) where += (where.empty() ? "" : ", ") + p.string();
  throw RuntimeError("cannot find the lessons/ and data/ folders (looked in: " + where +
                     "); set ATTNLAB_DATA_DIR to the attnlab source tree");
}

}  // namespace attnlab::lessons
