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
  std::map<std::string, std::vector<std::string>> graders;  // slug → object files
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

// Keeps only the compiler diagnostics that concern `learner_file` (with their source excerpts), at
// most max_lines lines; the rest (notes deep inside system headers) only hides the point.
std::string trim_compiler_output(const std::string& text, const std::string& learner_file,
                                 std::size_t max_lines = 40);

}  // namespace attnlab::exercises
