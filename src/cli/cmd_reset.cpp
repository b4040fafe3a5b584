// attnlab reset N [--workspace DIR]
// Saves the learner's file for exercise N as a backup and puts the original stub back.
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "exercises/session.hpp"

namespace attnlab::cli {

struct ResetOptions {
  std::string exercise;
  std::string workspace;
};

namespace {

void run_reset(const ResetOptions& o) {
  exercises::Session s(o.workspace);
  const exercises::ExerciseInfo& ex = s.catalogue().find(o.exercise);
  const auto backup = exercises::reset_learner_file(s.workspace(), ex);
  // Back to "not started"; ever_passed and the hint count are kept.
  s.progress().update(ex.slug, [](exercises::ExerciseProgress& p) { p.status = ""; });
  if (!backup.empty()) fmt::print("Saved your file as {}\n", exercises::pretty_path(backup));
  fmt::print("Restored the stub of exercise {} in {}\n", ex.label(),
             exercises::pretty_path(s.workspace().learner_file(ex)));
  if (s.progress().get(ex.slug).ever_passed)
    fmt::print("You passed it before: that stays on record (attnlab progress says \"passed before\"); only the file starts over.\n");
}

}  // namespace

void setup_reset(CLI::App& app) {
  auto opts = std::make_shared<ResetOptions>();
  CLI::App* sub = app.add_subcommand("reset", "Start an exercise over: back up your file and restore the stub");
  sub->add_option("exercise", opts->exercise, "Exercise number or name")->required();
  add_workspace_option(*sub, opts->workspace);
  sub->footer("Your file is kept beside it as exercise.cpp.bak-YYYYMMDD-HHMMSS.");
  sub->callback([opts] { run_reset(*opts); });
}

}  // namespace attnlab::cli
