#pragma once
// `attnlab check`: compile the learner's exercise.cpp, link it with that exercise's prebuilt grader,
// and run the grader in a child process with a time and memory limit.
//
// The kit (exercise-kit/kit.json in the build folder, written by CMake) says which compiler and flags
// to use and where the grader objects and libraries are, so a check compiles exactly one small file.
#include <map>
#include <string>
#include <vector>

#include "exercises/catalogue.hpp"
#include "exercises/workspace.hpp"

namespace attnlab::exercises {

struct Kit {
  std::string compiler;
  std::vector<std::string> compile_flags, support_objects, libraries;
  // Added when compiling and linking the learner's file, when the compiler can build and run
  // AddressSanitizer programs (probed by CMake): -fsanitize=address, so that a write out of bounds
  // is reported where it happens instead of silently corrupting memory. Empty otherwise.
  std::vector<std::string> sanitizer_flags;
  std::map<std::string, std::vector<std::string>> graders;  // slug → object files
  // slug → its grader's number of test cases (the TEST_CASE lines of grader.cpp, counted by CMake): a
  // pass needs the grader's result record to say that this many ran. Older kits lack it.
  std::map<std::string, std::size_t> grader_cases;
  fs::path file;
};

// ATTNLAB_EXERCISE_KIT from the environment, else the build folder's kit. Throws RuntimeError with
// what to do when it is missing (the project was not built).
Kit load_kit();

enum class Verdict { Passed, Failed, CompileError, LinkError, TimedOut, Crashed };

struct CheckOptions {
  double timeout_s = 10.0;
  std::size_t memory_mb = 1024;
};

struct CheckResult {
  Verdict verdict = Verdict::Failed;
  std::string report;    // what the learner reads: grader output, trimmed compiler messages, ...
  std::string warnings;  // compiler warnings about the learner's file (when it compiled)
  double compile_s = 0, link_s = 0, run_s = 0;
};

CheckResult run_check(const Kit& kit, const ExerciseInfo& ex, const Workspace& ws, const CheckOptions& opts);

// Turns an AddressSanitizer report in a grader's output into one sentence for the learner, e.g.
// "wrote out of bounds at exercise.cpp:13 in ex::softmax_rows (a 4-byte write just past the end of a
// 36-byte block: heap-buffer-overflow)". Returns "" when the output holds no such report.
std::string describe_sanitizer_report(const std::string& output, const std::string& learner_file);

// Keeps only the compiler diagnostics that concern `learner_file` (with their source excerpts), at
// most max_lines lines; the rest (notes deep inside system headers) only hides the point.
std::string trim_compiler_output(const std::string& text, const std::string& learner_file,
                                 std::size_t max_lines = 40);

}  // namespace attnlab::exercises
