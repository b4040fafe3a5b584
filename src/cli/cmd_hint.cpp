// attnlab hint [N] [--again] [--workspace DIR]
// Shows the next hint of exercise N (one more each call), from the exercise's hints.md.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "lessons/output.hpp"
#include "render/terminal.hpp"

#include "cli/commands.hpp"
#include "exercises/session.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace attnlab::cli {

struct HintOptions {
  std::optional<std::string> exercise;
  std::string workspace;
  bool again = false;
};

namespace {

void run_hint(const HintOptions& o) {
  exercises::Session s(o.workspace);
  const exercises::ExerciseInfo* ex = s.resolve(o.exercise);
  if (!ex) {
    render::print_wrapped(fmt::format("Every exercise has passed; name one to see its hints: attnlab hint N\n"));
    return;
  }
  const std::vector<std::string> hints = exercises::read_hints(*ex);
  if (hints.empty()) throw RuntimeError(ex->hints().string() + " holds no '## Hint' sections");
  const exercises::ExerciseProgress p = s.progress().get(ex->slug);
  const int total = static_cast<int>(hints.size());
  int shown = std::clamp(p.hints_shown, 0, total);
  if (!o.again || shown == 0) shown = std::min(shown + 1, total);
  if (shown == p.hints_shown && !o.again) {
    render::print_wrapped(fmt::format("That was the last hint ({} of {}) for exercise {}:\n\n{}\n\n", total, total, ex->label(),
               lessons::wrap_prose(hints[total - 1], render::detect_terminal(true).width)));
    render::print_wrapped(fmt::format("Still stuck? 'attnlab solution {} --force' shows the reference solution.\n", ex->slug));
    return;
  }
  render::print_wrapped(fmt::format("Hint {} of {} for exercise {} ({}):\n\n{}\n\n", shown, total, ex->label(), ex->title, lessons::wrap_prose(hints[shown - 1], render::detect_terminal(true).width)));
  if (shown < total) render::print_wrapped(fmt::format("Run 'attnlab hint {}' again for the next hint.\n", ex->slug));
  else render::print_wrapped(fmt::format("That was the last hint. 'attnlab solution {} --force' shows the reference solution.\n", ex->slug));
  std::fflush(stdout);
  // The hint is shown even where it cannot be recorded (a read-only state folder): say so, once.
  try {
    s.progress().update(ex->slug, [&](exercises::ExerciseProgress& q) { q.hints_shown = std::max(q.hints_shown, shown); });
  } catch (const Error& e) {
    std::cerr << "attnlab: warning: the hint was not recorded in your progress: " << visible_text(e.what()) << '\n';
  }
}

}  // namespace

void setup_hint(CLI::App& app) {
  auto opts = std::make_shared<HintOptions>();
  CLI::App* sub = app.add_subcommand("hint", "Show the next hint for an exercise (one more each time)");
  sub->add_option("exercise", opts->exercise, "Exercise number or name (default: the next unfinished one)");
  add_workspace_option(*sub, opts->workspace);
  sub->add_flag("--again", opts->again, "Show the last hint you saw again instead of the next one");
  sub->callback([opts] { run_hint(*opts); });
}

}  // namespace attnlab::cli
