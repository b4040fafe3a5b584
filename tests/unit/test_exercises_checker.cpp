// The pure helpers of `attnlab check` (exercises/checker_parts.hpp and the two in checker.hpp), tested
// directly on the text they read: compiler, linker and nm output, the grader's status file, result
// channel and AddressSanitizer report. tests/exercises/test_exercise_cli.cpp checks the same paths end
// to end through real compiles; these pin each helper's exact words and edge cases.
#include <doctest/doctest.h>

#include <csignal>
#include <string>
#include <vector>

#include "exercises/checker.hpp"
#include "exercises/checker_parts.hpp"
#include "exercises/child_process.hpp"

using namespace attnlab::exercises;

namespace {

// n numbered lines, "line 1\n" ... "line n\n".
std::string numbered(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

}  // namespace

TEST_CASE("trim_compiler_output keeps the learner's diagnostics with their excerpts, and library errors") {
  const std::string out =
      "/usr/include/c++/12/bits/stl_algo.h:1: note: deep inside\n"
      "  1 | noise excerpt\n"
      "/ws/exercise.cpp:3:5: error: 'x' was not declared\n"
      "    3 |   x = 1;\n"
      "      |   ^\n"
      "/usr/include/c++/12/bits/predefined_ops.h:45: error: no match for 'operator<'\n"
      "/usr/include/x.h:9: note: candidate\n";
  CHECK(trim_compiler_output(out, "/ws/exercise.cpp") ==
        "/ws/exercise.cpp:3:5: error: 'x' was not declared\n"
        "    3 |   x = 1;\n"
        "      |   ^\n"
        "/usr/include/c++/12/bits/predefined_ops.h:45: error: no match for 'operator<'\n");
}

TEST_CASE("trim_compiler_output: no line about the learner's file shows the raw start; long output is cut") {
  CHECK(trim_compiler_output("ld: something\nsecond\nthird\n", "/ws/exercise.cpp", 2) == "ld: something\nsecond\n");
  std::string many;
  for (int i = 0; i < 5; ++i) many += "/ws/e.cpp:" + std::to_string(i) + ": warning: w\n";
  CHECK(trim_compiler_output(many, "/ws/e.cpp", 3) ==
        "/ws/e.cpp:0: warning: w\n/ws/e.cpp:1: warning: w\n/ws/e.cpp:2: warning: w\n"
        "... (2 more lines; fix the first error first)\n");
}

TEST_CASE("last_test_started is the last 'test<TAB>' line of the status file") {
  CHECK(last_test_started("") == "");
  CHECK(last_test_started("start\n") == "");
  CHECK(last_test_started("test\tfirst\ntest\tsecond case\nother\n") == "second case");
  CHECK(last_test_started("xtest\tno\ntest\tyes") == "yes");
}

TEST_CASE("find_result_record: this run's token, a taken token, a foreign or a leaked one") {
  const std::string tok = "0123abcd";
  SUBCASE("none at all") {
    CHECK(find_result_record("", tok).kind == ResultRecord::Kind::Missing);
    CHECK(find_result_record("hello\nworld\n", tok).kind == ResultRecord::Kind::Missing);
  }
  SUBCASE("found, with its counts") {
    const ResultRecord r = find_result_record("noise\nresult\t0123abcd\t7\t2\n", tok);
    CHECK(r.kind == ResultRecord::Kind::Found);
    CHECK(r.run == 7);
    CHECK(r.failed == 2);
  }
  SUBCASE("a forged record before the real one does not hide it") {
    const ResultRecord r = find_result_record("result\tfffff\t9\t0\nresult\t0123abcd\t7\t0\n", tok);
    CHECK(r.kind == ResultRecord::Kind::Found);
    CHECK(r.run == 7);
  }
  SUBCASE("the token was taken before the grader read it") {
    CHECK(find_result_record("result\tnone\t3\t0\n", tok).kind == ResultRecord::Kind::TokenTaken);
    CHECK(find_result_record("result\tforged\t3\t0\nresult\tnone\t3\t0\n", tok).kind == ResultRecord::Kind::TokenTaken);
  }
  SUBCASE("another token, or a record that cannot be read") {
    CHECK(find_result_record("result\tforged\t3\t0\n", tok).kind == ResultRecord::Kind::Foreign);
    CHECK(find_result_record("result\t0123abcd\tmany\t0\n", tok).kind == ResultRecord::Kind::Foreign);
  }
  SUBCASE("the token twice: it leaked, so neither counts") {
    CHECK(find_result_record("result\t0123abcd\t7\t0\nresult\t0123abcd\t7\t0\n", tok).kind ==
          ResultRecord::Kind::Foreign);
  }
}

TEST_CASE("shorten keeps head and tail lines and cuts very long lines") {
  CHECK(shorten("") == "");
  CHECK(shorten("a\nb") == "a\nb\n");
  CHECK(shorten(numbered(4), 2, 2) == numbered(4));
  CHECK(shorten(numbered(5), 2, 2) == "line 1\nline 2\n... (1 lines left out) ...\nline 4\nline 5\n");
  CHECK(shorten(numbered(6), 2, 2) == "line 1\nline 2\n... (2 lines left out) ...\nline 5\nline 6\n");
  CHECK(shorten(std::string(401, 'x')) == std::string(400, 'x') + " ...\n");
  CHECK(shorten(std::string(400, 'x')) == std::string(400, 'x') + "\n");
}

TEST_CASE("allowed_learner_symbol: namespace ex always; the standard library only when weak") {
  CHECK(allowed_learner_symbol("_ZN2ex7softmaxERSt6vectorIfSaIfEE", 'T'));
  CHECK(allowed_learner_symbol("_ZNK2ex6Matrix5indexEmm", 'W'));
  CHECK(allowed_learner_symbol("_ZGVZN2ex3fooEvE5cache", 'u'));
  CHECK(allowed_learner_symbol("_ZNSt6vectorIfSaIfEE17_M_realloc_insertEv", 'W'));
  CHECK(allowed_learner_symbol("DW.ref.__gxx_personality_v0", 'V'));
  CHECK_FALSE(allowed_learner_symbol("_ZNSt6vectorIfSaIfEE17_M_realloc_insertEv", 'T'));  // strong: would replace it
  CHECK_FALSE(allowed_learner_symbol("write", 'T'));
  CHECK_FALSE(allowed_learner_symbol("write", 'W'));
  CHECK_FALSE(allowed_learner_symbol("_ZN7doctest6detail3fooEv", 'W'));
  CHECK_FALSE(allowed_learner_symbol("_ZN7attnlab4blasEv", 'T'));
  CHECK_FALSE(allowed_learner_symbol("_ZN3exx3fooEv", 'T'));  // not namespace ex, only a prefix of its name
}

TEST_CASE("describe_link_failure names the missing exercise function, a double definition, or quotes the linker") {
  ExerciseInfo ex;
  ex.function = "void ex::softmax_rows(ex::Matrix& m)";
  CHECK(describe_link_failure("a.o: in function `main':\nundefined reference to `ex::softmax_rows(ex::Matrix&)'\n", ex) ==
        "The grader looks for ex::softmax_rows(ex::Matrix&) in your file and cannot find it. Keep the function's name, the\n"
        "namespace ex and the parameter types exactly as in the stub:\n    void ex::softmax_rows(ex::Matrix& m)\n");
  CHECK(describe_link_failure("undefined reference to `cblas_sgemm'\n", ex) ==
        "The program cannot be linked: undefined reference to cblas_sgemm.\n");
  CHECK(describe_link_failure("multiple definition of `attnlab::softmax(float*)'; first defined here\n", ex) ==
        "The program cannot be linked: attnlab::softmax(float*) is defined twice. A helper with the same\n"
        "name as one of attnlab's functions? Put your helpers in an unnamed namespace (namespace { ... }).\n");
  CHECK(describe_link_failure("collect2: error: ld returned 1 exit status\n", ex) ==
        "The program cannot be linked. The linker says:\ncollect2: error: ld returned 1 exit status\n");
}

namespace {

// The shape of an AddressSanitizer report, as the grader prints it (addresses shortened).
const std::string kAsanReport =
    "[doctest] test output\n"
    "=================================================================\n"
    "==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602 at pc 0x55 bp 0x7f sp 0x7f\n"
    "WRITE of size 4 at 0x602 thread T0\n"
    "    #0 0x55a1 in ex::softmax_rows(ex::Matrix&) /ws/exercise.cpp:13\n"
    "    #1 0x55b2 in run_case /build/grader.cpp:40\n"
    "0x602 is located 0 bytes to the right of 36-byte region [0x600,0x624)\n"
    "==4242==ABORTING\n";

}  // namespace

TEST_CASE("describe_sanitizer_report turns ASan's report into one sentence") {
  CHECK(describe_sanitizer_report(kAsanReport, "/ws/exercise.cpp") ==
        "wrote out of bounds at exercise.cpp:13 in ex::softmax_rows (a 4-byte write just past the end of a "
        "36-byte block: heap-buffer-overflow)");
  CHECK(describe_sanitizer_report("no report here\n", "/ws/exercise.cpp") == "");
  CHECK(describe_sanitizer_report("==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x1\n"
                                  "READ of size 8 at 0x1 thread T0\n",
                                  "/ws/exercise.cpp") == "read memory after it was freed (heap-use-after-free)");
}

TEST_CASE("sanitizer_frame: the learner's frame first, else the first frame, unless learner_only") {
  CHECK(sanitizer_frame(kAsanReport, "/ws/exercise.cpp", true) == " at exercise.cpp:13 in ex::softmax_rows");
  CHECK(sanitizer_frame(kAsanReport, "/other/file.cpp", false) == " at exercise.cpp:13 in ex::softmax_rows");
  CHECK(sanitizer_frame(kAsanReport, "/other/file.cpp", true) == "");
  CHECK(sanitizer_frame("    #0 0x1 in a() /x/a.cpp:1\n    #1 0x2 in b() /ws/e.cpp:7\n", "/ws/e.cpp", false) ==
        " at e.cpp:7 in b");
}

TEST_CASE("strip_sanitizer_output drops ASan's report and its ==PID== notes, keeps the grader's lines") {
  CHECK(strip_sanitizer_output(kAsanReport) == "[doctest] test output\n");
  CHECK(strip_sanitizer_output("a\n==77==WARNING: soft rss limit exhausted\nAddressSanitizer:DEADLYSIGNAL\nb\n") ==
        "a\nb\n");
}

TEST_CASE("read_defined_symbols: all, strong and foreign definitions, and lines that are not symbols") {
  const DefinedSymbols s = read_defined_symbols(
      "_ZN2ex7softmaxEv T 0000 0010\n"
      "_ZNSt6vectorIfSaIfEE9push_backEv W 0000 0020\n"
      "write T 0000 0030\n"
      "garbage\n");
  CHECK(s.all == std::set<std::string>{"_ZN2ex7softmaxEv", "_ZNSt6vectorIfSaIfEE9push_backEv", "write"});
  CHECK(s.strong == std::set<std::string>{"_ZN2ex7softmaxEv", "write"});
  CHECK(s.foreign == std::vector<std::string>{"write", "(a line nm printed that is not a symbol: garbage)"});
}

TEST_CASE("foreign_uses: the grader's own code, allocations around operator new, threads") {
  CHECK(foreign_uses("_Znwm U\nmemcpy U\n").empty());
  CHECK(foreign_uses("malloc@GLIBC_2.2.5 U\n__mmap U\n_ZN7doctest6detail3fooEv U\npthread_create U\n") ==
        std::vector<std::string>{
            "(it allocates with malloc@GLIBC_2.2.5: use std::vector or new, which the grader measures)",
            "(it allocates with __mmap: use std::vector or new, which the grader measures)",
            "(it uses the grader's own code: _ZN7doctest6detail3fooEv)",
            "(it starts threads with pthread_create (std::thread does): the exercises are single-threaded)"});
}

TEST_CASE("big_static_arrays: writable statics over 16 KiB, not constants") {
  CHECK(big_static_arrays("_ZL7scratch b 0000 4000\n_ZL5table r 0000 80000\n").empty());  // 16 KiB: fine; read-only
  CHECK(big_static_arrays("_ZL7scratch b 0000 80000\n") ==
        std::vector<std::string>{"(a static array of 512 KiB, _ZL7scratch: keep working memory in std::vector, "
                                 "which the grader measures)"});
}

TEST_CASE("describe_foreign_symbols lists the first five distinct notes") {
  const std::string tail =
      ".\nDefine helpers inside namespace ex, in an unnamed namespace, or make them static (a definition\n"
      "of a library or grader function, write or exit, would replace it in the grader too); use only the\n"
      "standard library and attnlab/exercise.hpp (not the grader's doctest or attnlab code), and\n"
      "allocate with std::vector or new. The check cannot run with it.\n";
  CHECK(describe_foreign_symbols({"write", "write", "exit"}) ==
        "Your file defines or uses what an exercise may not: write, exit" + tail);
  CHECK(describe_foreign_symbols({"a", "b", "c", "d", "e", "f"}) ==
        "Your file defines or uses what an exercise may not: a, b, c, d, e, ..." + tail);
}

TEST_CASE("learner_renames renames all but what the grader needs, and the grader's own unless strong") {
  DefinedSymbols s;
  s.all = {"_ZN2ex7softmaxEv", "_ZN2ex6helperEv", "_ZNSt6vectorIfE3fooEv", "_ZNSt6vectorIfE3barEv"};
  s.strong = {"_ZN2ex7softmaxEv", "_ZN2ex6helperEv", "_ZNSt6vectorIfE3barEv"};
  CHECK(learner_renames(s, {"_ZN2ex7softmaxEv"}, {"_ZNSt6vectorIfE3fooEv", "_ZNSt6vectorIfE3barEv"}) ==
        "_ZN2ex6helperEv __attnlab_learner__ZN2ex6helperEv\n"
        "_ZNSt6vectorIfE3barEv __attnlab_learner__ZNSt6vectorIfE3barEv\n");
}

TEST_CASE("judge_grader_run: only the grader's record with this run's token passes") {
  CheckOptions opts;
  GraderRun g;
  g.token = "t0k";
  g.result.started = true;
  g.result.exit_code = 0;
  g.result.output = "[doctest] 3 passed\n";
  CheckResult res;

  SUBCASE("every test ran and passed") {
    g.result.from_child = "result\tt0k\t3\t0\n";
    judge_grader_run(g, "/ws/exercise.cpp", 3, opts, res);
    CHECK(res.verdict == Verdict::Passed);
    CHECK(res.report == "[doctest] 3 passed\n");
  }
  SUBCASE("fewer tests than the grader has") {
    g.result.from_child = "result\tt0k\t2\t0\n";
    judge_grader_run(g, "/ws/exercise.cpp", 3, opts, res);
    CHECK(res.verdict == Verdict::Failed);
    CHECK(res.report == "[doctest] 3 passed\n\nthe grader ran 2 of its 3 tests, so this cannot count as a pass "
                        "(is the grader out of date? rebuild attnlab).\n");
  }
  SUBCASE("exit 0 without a record, in a test") {
    g.test = "rows sum to one";
    judge_grader_run(g, "/ws/exercise.cpp", 3, opts, res);
    CHECK(res.verdict == Verdict::Failed);
    CHECK(res.report == "[doctest] 3 passed\n\nyour code ended the program (exit code 0) while running the test "
                        "'rows sum to one', before the checks finished.\nIs there a leftover exit() call (or _exit, "
                        "quick_exit)? A check passes only when every test has run.\n");
  }
  SUBCASE("timed out, with the test it was in") {
    g.result.timed_out = true;
    g.test = "big input";
    opts.timeout_s = 2.5;
    judge_grader_run(g, "/ws/exercise.cpp", 3, opts, res);
    CHECK(res.verdict == Verdict::TimedOut);
    CHECK(res.report == "[doctest] 3 passed\n\ntimed out after 2.5 s while running the test 'big input'.\n"
                        "Look for a loop that never ends: a condition that stays true, a counter that is never\n"
                        "incremented, or an unsigned index counting down past 0.\n");
  }
  SUBCASE("killed by a signal") {
    g.result.signal = SIGSEGV;
    judge_grader_run(g, "/ws/exercise.cpp", 3, opts, res);
    CHECK(res.verdict == Verdict::Crashed);
    CHECK(res.report == "[doctest] 3 passed\n\ncrashed:\n" + describe_signal(SIGSEGV) + ".\n");
  }
  SUBCASE("an AddressSanitizer report names the learner's line, and its own text is left out") {
    g.sanitized = true;
    g.test = "t";
    g.result.output = kAsanReport;
    g.result.exit_code = 1;
    judge_grader_run(g, "/ws/exercise.cpp", 3, opts, res);
    CHECK(res.verdict == Verdict::Crashed);
    CHECK(res.report ==
          "[doctest] test output\n\nwrote out of bounds at exercise.cpp:13 in ex::softmax_rows (a 4-byte write just past "
          "the end of a 36-byte block: heap-buffer-overflow) while running the test 't'.\nCheck the loop bounds and the "
          "index arithmetic on that line: an n-element buffer has\nindices 0 … n-1, and element (i, j) of a rows × cols "
          "matrix is data[i * cols + j].\n");
  }
}
