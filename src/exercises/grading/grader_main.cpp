// The main() of every grader program, with a reporter written for learners.
//
// A grader is: the learner's exercise.o + that exercise's grader.o + this file + attnlab's library.
// Output is plain words, one block per test case:
//     ✓ rows sum to 1
//     ✗ large scores stay finite
//         mistake [unstable-softmax] in ...: ...
// and the last line is a summary. Exit code 0 when every test passes, 1 otherwise.
//
// When ATTNLAB_GRADER_STATUS names a file, the name of each test case is appended to it as it starts,
// so that `attnlab check` can say which test was running if the process crashes or times out.
//
// The exit code alone cannot show that the tests ran: the learner's code runs in this process, and an
// exit(0) in it (a leftover debugging exit, or one in a static constructor, before main) ends the
// process with the code of a pass. So `attnlab check` also hands the grader a random token for the
// run on a pipe, file descriptor ATTNLAB_GRADER_TOKEN_FD, and counts a pass only when, after the last
// test, main() has written to its result socket (ATTNLAB_GRADER_RESULT_FD) the record
//     result <TAB> token <TAB> test cases run <TAB> test cases failed
// with that token and the grader's number of test cases (docs/hardening.md says what this proves).
#define DOCTEST_CONFIG_IMPLEMENT
#define DOCTEST_CONFIG_NO_POSIX_SIGNALS  // let a crash kill the process; the parent reports the signal
#include <algorithm>
#include <cstdio>
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cerrno>
#include <cstdlib>

#include <malloc.h>
#include <cstring>
#include <iostream>
#include <mutex>
#include <new>
#include <string>

#include "exercises/grading/grading.hpp"

// ---- allocation tracking (the online-softmax exercise checks its heap use) ----------------------------
//
// Every operator new (plain, array, aligned, nothrow) goes through allocate(). While tracking, each
// block's address and size go into a fixed table (no allocation of its own), the bytes made and not
// yet freed are summed and their peak kept: the memory test's figure. (It used to keep the single
// largest allocation, which a vector of n rows of m scores, a std::deque or a std::pmr::vector of all
// n × m scores passed: the fifth adversarial pass.) Blocks are exactly the size asked for, so that
// AddressSanitizer still sees a write one byte past the end.

namespace {
std::atomic<bool> g_tracking{false}, g_ever_tracked{false}, g_table_full{false};
std::atomic<std::size_t> g_live{0}, g_peak{0};
// Every operator new's live bytes since the program started (malloc_usable_size, no table): a buffer of
// all the scores made before the memory test's call, at static initialisation or in an earlier test,
// is memory the call uses all the same (the sixth and seventh adversarial passes).
std::atomic<std::size_t> g_all_live{0};

constexpr std::size_t kSlots = std::size_t{1} << 16;
void* const kTombstone = reinterpret_cast<void*>(1);
struct Slot {
  std::atomic<void*> p{nullptr};
  std::size_t size = 0;
};
Slot g_slots[kSlots];

std::size_t slot_of(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull >> 48; }

void remember(void* p, std::size_t n) {
  for (std::size_t i = 0, s = slot_of(p); i < kSlots; ++i, s = (s + 1) & (kSlots - 1)) {
    void* expected = nullptr;
    if (g_slots[s].p.compare_exchange_strong(expected, p)) {
      g_slots[s].size = n;
      return;
    }
  }
  g_table_full = true;  // more live blocks than the table holds: the peak is not known (counts as too much)
}

void forget(void* p) {
  for (std::size_t i = 0, s = slot_of(p); i < kSlots; ++i, s = (s + 1) & (kSlots - 1)) {
    void* at = g_slots[s].p.load();
    if (at == nullptr) return;  // not a block made while tracking
    if (at == p) {
      g_live.fetch_sub(g_slots[s].size);
      g_slots[s].p.store(kTombstone);
      return;
    }
  }
}

void* allocate(std::size_t n, std::size_t align = 0, bool nothrow = false) {
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n ? n : 1);
  } else if (::posix_memalign(&p, align, n ? n : 1) != 0) {
    p = nullptr;
  }
  if (!p) {
    if (nothrow) return nullptr;
    throw std::bad_alloc();
  }
  g_all_live.fetch_add(::malloc_usable_size(p), std::memory_order_relaxed);
  if (g_tracking.load(std::memory_order_relaxed)) {
    remember(p, n);
    const std::size_t now = g_live.fetch_add(n) + n;
    std::size_t prev = g_peak.load(std::memory_order_relaxed);
    while (now > prev && !g_peak.compare_exchange_weak(prev, now)) {
    }
  }
  return p;
}

void release(void* p) noexcept {
  if (!p) return;
  if (g_ever_tracked.load(std::memory_order_relaxed)) forget(p);
  g_all_live.fetch_sub(::malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}
}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0, true); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0, true); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a), true);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a), true);
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }

namespace attnlab::grading {
void start_allocation_tracking() {
  g_live = 0;
  g_peak = 0;
  g_ever_tracked = true;
  g_tracking = true;
}
std::size_t stop_allocation_tracking() {
  g_tracking = false;
  return g_table_full ? SIZE_MAX : g_peak.load();
}
std::size_t heap_live_now() { return g_all_live.load(); }
}  // namespace attnlab::grading

// ---- the run's token and its result record ----------------------------------------------------------

namespace {
constexpr std::size_t kTokenLength = 32;  // hex digits, as attnlab check writes them
char g_token[kTokenLength + 1] = {};      // empty: none was handed over, or it was gone when we looked
bool g_token_wanted = false;              // ATTNLAB_GRADER_TOKEN_FD was set: attnlab check wants a record
bool g_run_finished = false;              // set by the reporter after the last test case
unsigned g_cases_run = 0, g_cases_failed = 0;

// Reads the token and closes its pipe before main() and before every static constructor without a
// priority - those of the learner's file included (101 is the first priority not reserved for the
// implementation). A learner's constructor that looks for it afterwards finds the descriptor closed
// and the variable gone; one that took it first (with a priority of its own) leaves the pipe empty,
// and then the record says "none".
__attribute__((constructor(101))) void take_token() {
  const char* fd_text = std::getenv("ATTNLAB_GRADER_TOKEN_FD");
  if (fd_text == nullptr) return;
  g_token_wanted = true;
  const int fd = std::atoi(fd_text);
  ::unsetenv("ATTNLAB_GRADER_TOKEN_FD");
  if (fd < 3) return;
  char buf[kTokenLength + 1];
  std::size_t got = 0;
  while (got < sizeof buf) {
    const ssize_t n = ::read(fd, buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got != kTokenLength) return;
  for (std::size_t i = 0; i < kTokenLength; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(buf[i]))) return;
  std::memcpy(g_token, buf, kTokenLength);
}

// After the last test case: "result\tTOKEN\tRUN\tFAILED\n" written to the socket that attnlab check
// handed over as ATTNLAB_GRADER_RESULT_FD. A socket, not a file or a pipe: code that runs later in this
// process (a learner's static destructor, a thread) cannot read the token back from it to forge a
// record, and main() ends the process right after writing (_exit: no destructor or atexit handler
// runs). The learner's object may not define write() or _exit() itself (checker.cpp lists its symbols).
void write_result_record() {
  const char* fd_text = std::getenv("ATTNLAB_GRADER_RESULT_FD");
  if (!g_token_wanted || !g_run_finished || fd_text == nullptr) return;
  const int fd = std::atoi(fd_text);
  if (fd < 3) return;
  const std::string line = std::string("result\t") + (g_token[0] ? g_token : "none") + "\t" +
                           std::to_string(g_cases_run) + "\t" + std::to_string(g_cases_failed) + "\n";
  std::memset(g_token, 0, sizeof g_token);
  [[maybe_unused]] ssize_t w = ::write(fd, line.data(), line.size());
  ::close(fd);
}
}  // namespace

// ---- the reporter ---------------------------------------------------------------------------------

namespace {

// Indents every line of `text` by `pad`.
std::string indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

class LearnerReporter : public doctest::IReporter {
 public:
  explicit LearnerReporter(const doctest::ContextOptions& o) : out_(*o.cout) {
    if (const char* path = std::getenv("ATTNLAB_GRADER_STATUS")) {
      status_fd_ = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
  }
  ~LearnerReporter() override {
    if (status_fd_ >= 0) ::close(status_fd_);
  }

  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& s) override {
    const unsigned ran = s.numTestCasesPassingFilters, failed = s.numTestCasesFailed;
    g_run_finished = true;
    g_cases_run = ran;
    g_cases_failed = failed;
    if (failed == 0) {
      out_ << "passed all " << ran << " checks\n";
    } else {
      out_ << "failed " << failed << " of " << ran << " checks\n";
    }
    out_.flush();
  }
  void test_case_start(const doctest::TestCaseData& t) override {
    current_ = t.m_name;
    messages_.clear();
    if (status_fd_ >= 0) {
      const std::string line = std::string("test\t") + t.m_name + "\n";
      [[maybe_unused]] ssize_t w = ::write(status_fd_, line.data(), line.size());
    }
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& s) override {
    const bool ok = s.testCaseSuccess && messages_.empty();
    out_ << (ok ? "✓ " : "✗ ") << current_ << '\n';
    // A message that several failing checks of this case gave is said once, with how many said it.
    std::vector<std::pair<std::string, int>> said;
    for (const auto& m : messages_) {
      auto it = std::find_if(said.begin(), said.end(), [&](const auto& p) { return p.first == m; });
      if (it == said.end()) said.emplace_back(m, 1);
      else ++it->second;
    }
    for (const auto& [m, n] : said)
      out_ << indent(n > 1 ? m + " (" + std::to_string(n) + " checks failed this way)" : m, "    ") << '\n';
    out_.flush();
    messages_.clear();
  }
  void test_case_exception(const doctest::TestCaseException& e) override {
    const std::string what = e.error_string.c_str();
    if (what.find("bad_alloc") != std::string::npos) {
      messages_.push_back("the code ran out of memory (std::bad_alloc): it asked for more than the grader's "
                          "limit (attnlab check --memory-mb, 1024 MiB by default). Is a size computed wrongly, "
                          "or a vector growing inside an endless loop?");
      return;
    }
    messages_.push_back("the code threw an exception: " + what +
                        "\n(the test stopped here; an index outside a matrix or a shape mismatch is the "
                        "usual cause)");
  }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& a) override {
    if (!a.m_failed) return;
    std::string text = std::string("check failed: ") + a.m_expr;
    if (a.m_threw) text += std::string("\nit threw: ") + a.m_exception.c_str();
    else if (a.m_decomp.size()) text += std::string(" (values: ") + a.m_decomp.c_str() + ")";
    messages_.push_back(text);
  }
  void log_message(const doctest::MessageData& m) override {
    if (m.m_severity & doctest::assertType::is_warn) {
      messages_.push_back(std::string("note: ") + m.m_string.c_str());
      return;
    }
    messages_.push_back(m.m_string.c_str());
  }
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  std::ostream& out_;
  int status_fd_ = -1;
  std::string current_;
  std::vector<std::string> messages_;
};

}  // namespace

DOCTEST_REGISTER_REPORTER("learner", 1, LearnerReporter);

int main(int argc, char** argv) {
  doctest::Context ctx;
  ctx.setOption("reporters", "learner");
  ctx.setOption("no-intro", true);
  ctx.setOption("no-version", true);
  ctx.setOption("order-by", "file");
  ctx.applyCommandLine(argc, argv);
  const int rc = ctx.run();
  if (ctx.shouldExit()) return rc;  // --help, --count, ...: no record
  std::fflush(nullptr);
  write_result_record();
  // The end, now: the record is written and nothing the learner's file registered (static
  // destructors, atexit handlers) may run after it.
  ::_exit(rc == 0 ? 0 : 1);
}
