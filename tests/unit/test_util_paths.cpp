// util/paths.hpp: the one finder of attnlab's data/ and lessons/ folders (ATTNLAB_DATA_DIR, else the
// source tree the binary was built from, else beside the binary), and resolve_data_path.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "util/error.hpp"
#include "util/paths.hpp"

namespace util_paths_test {

namespace fs = std::filesystem;

// Sets an environment variable for one scope, and puts back what was there.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> before;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* old = std::getenv(name.c_str())) before = old;
    if (value) ::setenv(name.c_str(), value, 1);
    else ::unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    if (before) ::setenv(name.c_str(), before->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

struct TempRoot {
  fs::path path;
  TempRoot() {
    std::string tmpl = (fs::temp_directory_path() / "attnlab-paths-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempRoot() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

bool holds_data_and_lessons(const fs::path& p) { return fs::is_directory(p / "data") && fs::is_directory(p / "lessons"); }


TEST_CASE("project_root: without ATTNLAB_DATA_DIR, the source tree this was built from") {
  ScopedEnv env("ATTNLAB_DATA_DIR", nullptr);
  const std::string root = attnlab::project_root();
  CHECK(holds_data_and_lessons(root));
  CHECK(fs::equivalent(root, ATTNLAB_SOURCE_DIR));
  ScopedEnv empty("ATTNLAB_DATA_DIR", "");  // set but empty counts as unset
  CHECK(attnlab::project_root() == root);
}

TEST_CASE("project_root: ATTNLAB_DATA_DIR wins when it holds data/ and lessons/, and is bad input when not") {
  TempRoot t;
  fs::create_directories(t.path / "data");
  {
    ScopedEnv env("ATTNLAB_DATA_DIR", t.path.c_str());
    // lessons/ missing: exit 2 (InputError), naming the variable and what it lacks; never silently replaced.
    try {
      (void)attnlab::project_root();
      FAIL("no error for a folder without lessons/");
    } catch (const attnlab::InputError& e) {
      CHECK(std::string(e.what()) == "ATTNLAB_DATA_DIR=" + t.path.string() +
                                         " does not hold lessons/ and data/ folders; point it at the attnlab source tree or unset it");
    }
    fs::create_directories(t.path / "lessons");
    CHECK(attnlab::project_root() == t.path.string());
  }
}

TEST_CASE("resolve_data_path: an existing path as given, an absolute one as given, else under the project root") {
  TempRoot t;
  fs::create_directories(t.path / "data" / "models" / "mine");
  fs::create_directories(t.path / "lessons");
  ScopedEnv env("ATTNLAB_DATA_DIR", t.path.c_str());
  const fs::path before = fs::current_path();
  fs::create_directories(t.path / "work" / "data" / "models");
  fs::current_path(t.path / "work");
  // Relative and not here: the project root's.
  CHECK(attnlab::resolve_data_path("data/models/mine") == (t.path / "data/models/mine").string());
  // Relative and here (the current folder's own data/models): used as given.
  CHECK(attnlab::resolve_data_path("data/models") == "data/models");
  // Absolute: as given, even when it does not exist.
  CHECK(attnlab::resolve_data_path("/no/such/model") == "/no/such/model");
  fs::current_path(before);
}

}  // namespace util_paths_test
