// attnlab exercises [--workspace DIR]
// Lists the exercises with their lesson, difficulty, time estimate and the learner's state.
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "exercises/session.hpp"

namespace attnlab::cli {

struct ExercisesOptions {
  std::string workspace;
};

namespace {

void run_exercises(const ExercisesOptions& o) {
  exercises::Session s(o.workspace);
  fmt::print("Exercises (your files live in {})\n\n", exercises::pretty_path(s.workspace().root));
  fmt::print("  {:>2}  {:<20} {:<22} {:<10} {:>8}  {}\n", "#", "exercise", "lesson", "difficulty", "time", "state");
  for (const auto& ex : s.catalogue().all()) {
    fmt::print("  {:>2}  {:<20} {:<22} {:<10} {:>4} min  {}\n", ex.number, ex.slug, ex.lesson, ex.difficulty,
               ex.minutes, exercises::state_name(s.state(ex)));
  }
  if (const auto* next = s.next_unfinished()) {
    fmt::print("\nNext: {} — {}\n  attnlab check {}   (creates {} on first use)\n", next->slug, next->title,
               next->slug, exercises::pretty_path(s.workspace().learner_file(*next)));
  } else {
    fmt::print("\nEvery exercise has passed.\n");
  }
}

}  // namespace

void setup_exercises(CLI::App& app) {
  auto opts = std::make_shared<ExercisesOptions>();
  CLI::App* sub = app.add_subcommand("exercises", "List the graded exercises with their difficulty and your state");
  add_workspace_option(*sub, opts->workspace);
  sub->footer("States: not started, failing (the last check failed), passed. See docs/exercises.md.");
  sub->callback([opts] { run_exercises(*opts); });
}

}  // namespace attnlab::cli
