#pragma once
// What every exercise command needs: the catalogue, the learner's workspace and the progress store,
// plus the shared "check one exercise and record the result" step of `check` and `watch`.
#include <functional>
#include <optional>
#include <string>

#include "exercises/catalogue.hpp"
#include "exercises/checker.hpp"
#include "exercises/state.hpp"
#include "exercises/workspace.hpp"

namespace attnlab::exercises {

enum class State { NotStarted, Failing, Passed };
const char* state_name(State s);  // "not started", "failing", "passed"
const char* verdict_name(Verdict v);  // "passed", "failed", "compile_error", "link_error", "timed_out", "crashed"

class Session {
 public:
  // Opens the catalogue, the workspace (see open_workspace) and the progress file.
  explicit Session(const std::string& workspace_option);

  const Catalogue& catalogue() const { return catalogue_; }
  const Workspace& workspace() const { return workspace_; }
  ProgressStore& progress() { return progress_; }

  State state(const ExerciseInfo& ex) const;
  // The first exercise that has not passed, or nullptr when all have.
  const ExerciseInfo* next_unfinished() const;
  // `key` given: that exercise (InputError if unknown). Otherwise the next unfinished, or nullptr.
  const ExerciseInfo* resolve(const std::optional<std::string>& key) const;

  // Checks one exercise (copying its stub into the workspace first if needed), records the result
  // in the progress file, and prints the report. `watching`: the advice says "save" rather than
  // "run attnlab check". Returns the verdict.
  Verdict check_and_report(const Kit& kit, const ExerciseInfo& ex, const CheckOptions& opts, bool show_timing,
                           bool watching = false);

  // The same check and record without printing anything: for `check --format json`.
  struct Checked {
    CheckResult result;
    bool created_stub = false;  // the stub was copied into the workspace first
    bool was_passed = false;    // it had passed before this check
  };
  // `before_run` (if any) is called once the learner file exists and before compiling, with whether
  // the stub was copied just now.
  Checked check_and_record(const Kit& kit, const ExerciseInfo& ex, const CheckOptions& opts,
                           const std::function<void(bool created_stub)>& before_run = {});

 private:
  Catalogue catalogue_;
  Workspace workspace_;
  ProgressStore progress_;
};

}  // namespace attnlab::exercises
