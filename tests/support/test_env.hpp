#pragma once
// What every test program of attnlab gets first (CMake passes it with -include, see
// attnlab_test_program in tests/CMakeLists.txt), so no test file names it:
//
//   ATTNLAB_SOURCE_DIR  the source tree the tests were configured from, as a const char*;
//   ATTNLAB_BIN         the attnlab binary of this build, as a const char*;
//   ATTNLAB_SKIP(why)   in a doctest TEST_CASE: this case cannot run here, for the reason streamed in
//                       `why` (doctest's << syntax). Outside CI it prints "skipped: WHY" and returns
//                       from the test case, and the program then exits with 77, ctest's
//                       SKIP_RETURN_CODE, if nothing failed: ctest reports it as skipped, never as
//                       passed. Under CI=true it fails instead, because in CI everything a test needs
//                       is there (the shipped models are in git, CI runs as root on Linux).
//
// The two paths are functions, not string macros: an absolute path compiled into every test file
// would make each object depend on where the clone lives, and a compiler cache shared by two clones
// (a developer's and CI's) would miss on all of them. Only test_paths.cpp, generated per build
// folder, holds them.
#include <sstream>
#include <string>

const char* attnlab_test_source_dir() noexcept;  // tests/support/test_paths.cpp.in
const char* attnlab_test_binary() noexcept;

#define ATTNLAB_SOURCE_DIR (::attnlab_test_source_dir())
#define ATTNLAB_BIN (::attnlab_test_binary())

namespace attnlab_test {

// True when the environment says this is CI (CI=true, as .ci/run and most CI services set it).
bool in_ci() noexcept;
// Records a skip (tests/support/skip.cpp); the program's exit code becomes 77 if nothing fails.
void note_skip(const std::string& why);

}  // namespace attnlab_test

#define ATTNLAB_SKIP(why) ATTNLAB_SKIP_IMPL_(why, ::attnlab_test::in_ci())
// ATTNLAB_SKIP_EVEN_IN_CI(why): the same, but a skip under CI=true too, for what a CI machine may
// lack by its own configuration and not by a fault of the project (the kernel's transparent-huge-page
// mode "never", say). It is still reported as skipped, never as passed.
#define ATTNLAB_SKIP_EVEN_IN_CI(why) ATTNLAB_SKIP_IMPL_(why, false)

#define ATTNLAB_SKIP_IMPL_(why, fail_instead)                                                          \
  do {                                                                                                 \
    std::ostringstream attnlab_skip_why_;                                                              \
    attnlab_skip_why_ << why;                                                                          \
    if (fail_instead) FAIL("CI=true, so this must run here, but it would be skipped: " << attnlab_skip_why_.str()); \
    ::attnlab_test::note_skip(attnlab_skip_why_.str());                                                \
    MESSAGE("skipped: " << attnlab_skip_why_.str());                                                   \
    return;                                                                                            \
  } while (false)
