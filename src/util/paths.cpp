#include "util/paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "util/error.hpp"

namespace attnlab {

namespace fs = std::filesystem;

std::string project_root() {
  auto looks_right = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p / "data", ec) && fs::is_directory(p / "lessons", ec);
  };
  if (const char* env = std::getenv("ATTNLAB_DATA_DIR"); env && *env) {
    if (!looks_right(env)) {
      throw RuntimeError(std::string("ATTNLAB_DATA_DIR=") + env + " does not hold data/ and lessons/; unset it or point it at the attnlab folder");
    }
    return env;
  }
#ifdef ATTNLAB_SOURCE_ROOT
  if (looks_right(ATTNLAB_SOURCE_ROOT)) return ATTNLAB_SOURCE_ROOT;
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path p = exe.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
      if (looks_right(p)) return p.string();
  }
  throw RuntimeError("cannot find attnlab's data/ and lessons/ folders; set ATTNLAB_DATA_DIR to the attnlab folder");
}

std::string resolve_data_path(const std::string& rel) {
  std::error_code ec;
  if (fs::exists(rel, ec)) return rel;
  if (fs::path(rel).is_absolute()) return rel;
  return (fs::path(project_root()) / rel).string();
}

}  // namespace attnlab
