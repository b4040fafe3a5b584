// attnlab progress [--workspace DIR]
// A summary of the learner's progress: how many exercises passed, time left, hints used, what next.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "exercises/session.hpp"

namespace attnlab::cli {

struct ProgressOptions {
  std::string workspace;
  std::string format = "text";
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
  if (o.format == "json") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& ex : all) {
      const auto p = s.progress().get(ex.slug);
      list.push_back({{"number", ex.number}, {"slug", ex.slug}, {"state", exercises::state_name(s.state(ex))},
                      {"checks", p.checks}, {"hints_shown", p.hints_shown}, {"ever_passed", p.ever_passed},
                      {"last_check", p.last_check.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.last_check)}});
    }
    const auto* next = s.next_unfinished();
    std::cout << nlohmann::json{{"workspace", s.workspace().root.string()},
                                {"progress_file", s.progress().file().string()},
                                {"passed", passed},
                                {"failing", failing},
                                {"not_started", all.size() - passed - failing},
                                {"total", all.size()},
                                {"checks", checks},
                                {"hints_shown", hints},
                                {"minutes_left", minutes_left},
                                {"exercises", list},
                                {"next", next ? nlohmann::json(next->slug) : nlohmann::json(nullptr)}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
    return;
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
    const bool before = st != exercises::State::Passed && s.progress().get(ex.slug).ever_passed;
    fmt::print("  {} {:>2} {:<20} {}{}\n", mark, ex.number, ex.slug, exercises::state_name(st), before ? " (passed before)" : "");
  }
  if (const auto* next = s.next_unfinished()) fmt::print("\nNext: attnlab check {}  ({})\n", next->slug, next->title);
  fmt::print("Progress file: {}\n", exercises::pretty_path(s.progress().file()));
}

}  // namespace

void setup_progress(CLI::App& app) {
  auto opts = std::make_shared<ProgressOptions>();
  CLI::App* sub = app.add_subcommand("progress", "Show how far you are through the exercises");
  add_workspace_option(*sub, opts->workspace);
  add_format_option(*sub, opts->format);
  sub->callback([opts] { run_progress(*opts); });
}

}  // namespace attnlab::cli
