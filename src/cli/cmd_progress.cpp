// attnlab progress [--workspace DIR]
// A summary of the learner's progress: how many exercises passed, time left, hints used, what next.
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "exercises/session.hpp"

namespace attnlab::cli {

struct ProgressOptions {
  std::string workspace;
};

namespace {

void run_progress(const ProgressOptions& o) {
  exercises::Session s(o.workspace);
  const auto& all = s.catalogue().all();
  std::size_t passed = 0, failing = 0;
  int minutes_left = 0, hints = 0, checks = 0;
  for (const auto& ex : all) {
    const auto st = s.state(ex);
    const auto p = s.progress().get(ex.slug);
    passed += st == exercises::State::Passed;
    failing += st == exercises::State::Failing;
    if (st != exercises::State::Passed) minutes_left += ex.minutes;
    hints += p.hints_shown;
    checks += p.checks;
  }
  const std::size_t width = 30, filled = all.empty() ? 0 : passed * width / all.size();
  fmt::print("Progress: [{}{}] {} of {} exercises passed\n", std::string(filled, '#'), std::string(width - filled, '.'),
             passed, all.size());
  fmt::print("  failing: {}, not started: {}, checks run: {}, hints used: {}\n", failing, all.size() - passed - failing,
             checks, hints);
  fmt::print("  estimated time left: about {} min\n\n", minutes_left);
  for (const auto& ex : all) {
    const auto st = s.state(ex);
    const char* mark = st == exercises::State::Passed ? "✓" : st == exercises::State::Failing ? "✗" : "·";
    fmt::print("  {} {:>2} {:<20} {}\n", mark, ex.number, ex.slug, exercises::state_name(st));
  }
  if (const auto* next = s.next_unfinished()) fmt::print("\nNext: attnlab check {}  ({})\n", next->slug, next->title);
  fmt::print("Progress file: {}\n", exercises::pretty_path(s.progress().file()));
}

}  // namespace

void setup_progress(CLI::App& app) {
  auto opts = std::make_shared<ProgressOptions>();
  CLI::App* sub = app.add_subcommand("progress", "Show how far you are through the exercises");
  add_workspace_option(*sub, opts->workspace);
  sub->callback([opts] { run_progress(*opts); });
}

}  // namespace attnlab::cli
