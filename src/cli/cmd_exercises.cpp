// attnlab exercises [--workspace DIR]
// Lists the exercises with their lesson, difficulty, time estimate and the learner's state.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "exercises/session.hpp"

namespace attnlab::cli {

struct ExercisesOptions {
  std::string workspace;
  std::string format = "text";
};

namespace {

void run_exercises(const ExercisesOptions& o) {
  exercises::Session s(o.workspace);
  if (o.format == "json") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& ex : s.catalogue().all())
      list.push_back({{"number", ex.number}, {"slug", ex.slug}, {"title", ex.title}, {"lesson", ex.lesson},
                      {"difficulty", ex.difficulty}, {"minutes", ex.minutes}, {"function", ex.function},
                      {"state", exercises::state_name(s.state(ex))},
                      {"ever_passed", s.progress().get(ex.slug).ever_passed},
                      {"file", s.workspace().learner_file(ex).string()}});
    const auto* next = s.next_unfinished();
    std::cout << nlohmann::json{{"workspace", s.workspace().root.string()},
                                {"exercises", list},
                                {"next", next ? nlohmann::json(next->slug) : nlohmann::json(nullptr)}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
    return;
  }
  fmt::print("Exercises (your files live in {})\n\n", exercises::pretty_path(s.workspace().root));
  fmt::print("  {:>2}  {:<20} {:<22} {:<10} {:>8}  {}\n", "#", "exercise", "lesson", "difficulty", "time", "state");
  for (const auto& ex : s.catalogue().all()) {
    const exercises::State st = s.state(ex);
    // An exercise started over after a pass keeps that pass on record, and says so.
    const bool before = st != exercises::State::Passed && s.progress().get(ex.slug).ever_passed;
    fmt::print("  {:>2}  {:<20} {:<22} {:<10} {:>4} min  {}{}\n", ex.number, ex.slug, ex.lesson, ex.difficulty,
               ex.minutes, exercises::state_name(st), before ? " (passed before)" : "");
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
  add_format_option(*sub, opts->format);
  sub->footer("States: not started, failing (the last check failed), passed. See docs/exercises.md.");
  sub->callback([opts] { run_exercises(*opts); });
}

}  // namespace attnlab::cli
