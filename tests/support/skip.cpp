// ATTNLAB_SKIP's other half (test_env.hpp): the skips of this run, and the exit code 77 that makes
// ctest report the program as skipped (SKIP_RETURN_CODE 77) when it skipped something and nothing
// failed. Linked into every doctest test program (tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab_test {
namespace {

std::mutex& skips_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::string>& skips() {
  static std::vector<std::string> s;
  return s;
}

// LeakSanitizer checks at exit in a handler that would not run after _exit: run it first where the
// program has it (a sanitized build).
extern "C" void __lsan_do_leak_check() __attribute__((weak));

void exit_skipped() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  if (__lsan_do_leak_check) __lsan_do_leak_check();
  ::_exit(77);
}

// At the end of the run: with a skip and no failure, say so, and make the exit code 77 once doctest's
// own summary has been printed (by an atexit handler: main returns doctest's result after the
// reporters have run, and that result is 0 here).
struct SkipListener : doctest::IReporter {
  explicit SkipListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    std::lock_guard<std::mutex> lock(skips_mutex());
    if (skips().empty() || stats.numTestCasesFailed > 0 || stats.numAssertsFailed > 0) return;
    std::cout << "\nskipped " << skips().size() << (skips().size() == 1 ? " test case" : " test cases")
              << " (exit code 77, which ctest reports as skipped):\n";
    for (const auto& why : skips()) std::cout << "  skipped: " << why << "\n";
    std::cout.flush();
    std::atexit(exit_skipped);
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

bool in_ci() noexcept {
  const char* ci = std::getenv("CI");
  return ci && (std::string_view(ci) == "true" || std::string_view(ci) == "1");
}

void note_skip(const std::string& why) {
  std::lock_guard<std::mutex> lock(skips_mutex());
  skips().push_back(why);
}

}  // namespace attnlab_test

DOCTEST_REGISTER_LISTENER("attnlab_skips", 1, attnlab_test::SkipListener);
