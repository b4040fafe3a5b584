#pragma once
// The pure helpers of `attnlab check` (checker.cpp): functions of text alone (the grader's output and
// status, nm's symbol names, the linker's messages), no files or processes. They are declared here,
// outside checker.cpp, so that tests/unit/test_exercises_checker.cpp can test each one directly with exact
// inputs and outputs, not only through a whole compile-link-run check.
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "exercises/catalogue.hpp"
#include "exercises/checker.hpp"
#include "exercises/child_process.hpp"

namespace attnlab::exercises {

// The name of the last test the grader started, from its status file (lines "test\tNAME"); "" when
// none started.
std::string last_test_started(const std::string& status);

// The grader's result record (grader_main.cpp): "result\tTOKEN\tRUN\tFAILED", written to its result
// socket after its last test case. Lines without this run's token were not written by this run's grader.
struct ResultRecord {
  enum class Kind { Missing, Found, TokenTaken, Foreign } kind = Kind::Missing;
  std::size_t run = 0, failed = 0;
};

// Reads the result channel (lines other than "result\t..." are ignored): Found, with run and failed,
// when a record carries `token`; else TokenTaken when one says "none" (the grader found its token
// gone); else Foreign when a record carries another token or cannot be read; Missing when there is no
// record. A token found twice has leaked: Foreign.
ResultRecord find_result_record(const std::string& channel, const std::string& token);

// Keeps the first `head` and the last `tail` lines of a long grader output (a learner's debug prints
// can be huge), with a line saying how many were left out between; lines over 400 characters are cut.
std::string shorten(const std::string& text, std::size_t head = 80, std::size_t tail = 20);

// Whether the learner's object may define the global symbol `name` of nm type `type` (checker.cpp says
// why the list is what it is).
bool allowed_learner_symbol(const std::string& name, char type);

// What a failed link means for the learner: a function of `ex` not found, a name defined twice, or the
// linker's own words.
std::string describe_link_failure(const std::string& output, const ExerciseInfo& ex);

// The grader output without AddressSanitizer's own text (its report, its ==PID== notes).
std::string strip_sanitizer_output(const std::string& output);

// " at FILE:LINE in FUNCTION" for the first stack frame of an AddressSanitizer report that is in
// `learner_file`, else (unless learner_only) the first with a source line; "" when there is none.
std::string sanitizer_frame(const std::string& report, const std::string& learner_file, bool learner_only);

// What the learner's object defines (nm -P -g --defined-only): every global symbol, the strong ones
// among them (types T, D, B, R, C), and a note for each that an exercise may not define (and for each
// line that is not a symbol).
struct DefinedSymbols {
  std::set<std::string> all, strong;
  std::vector<std::string> foreign;
};
DefinedSymbols read_defined_symbols(const std::string& nm_output);

// A note for each symbol the learner's object uses (nm -P -u) that an exercise may not: the grader's
// own code (doctest, attnlab), an allocation that bypasses operator new, a thread.
std::vector<std::string> foreign_uses(const std::string& nm_output);

// A note for each writable static array over 16 KiB (nm -P -S --defined-only): memory the grader's
// heap measure cannot see.
std::vector<std::string> big_static_arrays(const std::string& nm_output);

// The learner's report for an object with such notes: the first five distinct ones, and what to do.
std::string describe_foreign_symbols(const std::vector<std::string>& foreign);

// objcopy's --redefine-syms file: "NAME __attnlab_learner_NAME" for each symbol the learner's object
// defines, but those the grader calls (`needed`) and those the grader defines itself (`graders_own`),
// unless the learner's definition is strong.
std::string learner_renames(const DefinedSymbols& symbols, const std::set<std::string>& needed,
                            const std::set<std::string>& graders_own);

// One grader run, as the judge sees it.
struct GraderRun {
  ChildResult result;            // its exit, output and what it wrote to the result channel
  std::string token;             // the token it was handed (its record must carry it)
  std::string test;              // the last test it started ("" when none did)
  bool sanitized = false;        // the learner's file was built with AddressSanitizer
  std::size_t rss_limit_mb = 0;  // the resident-memory limit it ran under (sanitized only)
};

// The verdict and the learner's report (res.verdict, res.report) from a grader run: a memory error, an
// abort, too much memory, a timeout, a signal, or the result record's word, which alone can make a
// pass. `expected_cases` is the grader's number of test cases (0: unknown).
void judge_grader_run(const GraderRun& g, const std::string& learner_file, std::size_t expected_cases,
                      const CheckOptions& opts, CheckResult& res);

}  // namespace attnlab::exercises
