// attnlab check [N] [--timeout S] [--memory-mb M] [--all] [--workspace DIR]
// Compiles the learner's file for exercise N against its prebuilt grader and runs the grader in a
// child process with limits. Exit code 0 when it passes, 1 when it does not.
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "exercises/session.hpp"

namespace attnlab::cli {

struct CheckOptions {
  std::optional<std::string> exercise;
  std::string workspace;
  double timeout_s = 10.0;
  int memory_mb = 1024;
  bool all = false;
  bool timing = false;
  std::string format = "text";
};

namespace {

// One check as JSON: what a script needs to act on it (the report is the text a learner reads).
nlohmann::json check_json(exercises::Session& s, const exercises::ExerciseInfo& ex, const exercises::Session::Checked& c) {
  const exercises::CheckResult& r = c.result;
  return {{"number", ex.number},
          {"exercise", ex.slug},
          {"file", s.workspace().learner_file(ex).string()},
          {"verdict", exercises::verdict_name(r.verdict)},
          {"passed", r.verdict == exercises::Verdict::Passed},
          {"created_stub", c.created_stub},
          {"report", r.report},
          {"warnings", r.warnings},
          {"seconds", {{"compile", r.compile_s}, {"link", r.link_s}, {"grader", r.run_s}}}};
}

int run_check_json(const CheckOptions& o, exercises::Session& s, const exercises::Kit& kit,
                   const exercises::CheckOptions& copts) {
  nlohmann::json out;
  bool all_passed = true;
  if (o.all) {
    nlohmann::json results = nlohmann::json::array();
    std::size_t passed = 0;
    for (const auto& ex : s.catalogue().all()) {
      const auto c = s.check_and_record(kit, ex, copts);
      passed += c.result.verdict == exercises::Verdict::Passed;
      results.push_back(check_json(s, ex, c));
    }
    all_passed = passed == s.catalogue().all().size();
    out = {{"results", results}, {"passed", passed}, {"total", s.catalogue().all().size()}};
  } else if (const exercises::ExerciseInfo* ex = s.resolve(o.exercise)) {
    const auto c = s.check_and_record(kit, *ex, copts);
    all_passed = c.result.verdict == exercises::Verdict::Passed;
    out = check_json(s, *ex, c);
  } else {
    out = {{"results", nlohmann::json::array()}, {"note", "every exercise has passed"}};
  }
  const auto* next = s.next_unfinished();
  out["next"] = next ? nlohmann::json(next->slug) : nlohmann::json(nullptr);
  std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  return all_passed ? 0 : 1;
}

int run_check_command(const CheckOptions& o) {
  exercises::Session s(o.workspace);
  const exercises::Kit kit = exercises::load_kit();
  const exercises::CheckOptions copts{o.timeout_s, static_cast<std::size_t>(o.memory_mb)};
  if (o.format == "json") return run_check_json(o, s, kit, copts);
  if (o.all) {
    const auto start = std::chrono::steady_clock::now();
    std::size_t passed = 0;
    for (const auto& ex : s.catalogue().all()) {
      passed += s.check_and_report(kit, ex, copts, o.timing) == exercises::Verdict::Passed;
      fmt::print("\n");
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{} of {} exercises pass ({:.1f} s).\n", passed, s.catalogue().all().size(), secs);
    return passed == s.catalogue().all().size() ? 0 : 1;
  }
  const exercises::ExerciseInfo* ex = s.resolve(o.exercise);
  if (!ex) {
    fmt::print("Every exercise has passed. Run 'attnlab check N' to check one again.\n");
    return 0;
  }
  return s.check_and_report(kit, *ex, copts, o.timing) == exercises::Verdict::Passed ? 0 : 1;
}

}  // namespace

void setup_check(CLI::App& app) {
  auto opts = std::make_shared<CheckOptions>();
  CLI::App* sub = app.add_subcommand(
      "check", "Compile your solution of an exercise and grade it (default: the next unfinished one)");
  sub->add_option("exercise", opts->exercise, "Exercise number or name (see 'attnlab exercises')");
  add_workspace_option(*sub, opts->workspace);
  sub->add_option("--timeout", opts->timeout_s, "Seconds the grader may run before it is stopped")
      ->transform(real_number(0.1, 600.0))
      ->capture_default_str();
  sub->add_option("--memory-mb", opts->memory_mb, "Memory your code may use while graded, in MiB (the grader's own libraries and OpenBLAS's buffer get 256 MiB on top)")
      ->transform(whole_number(64, 65536))
      ->capture_default_str();
  sub->add_flag("--all", opts->all, "Check every exercise, one after the other");
  sub->add_flag("--timing", opts->timing, "Print how long compiling, linking and grading took");
  sub->add_option("-f,--format", opts->format, "Output format (json: the verdict, the report and the times)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->get_option("--all")->excludes("exercise");
  sub->footer(
      "Only your exercise.cpp is compiled; the grader was built with attnlab. An endless loop is stopped\n"
      "after --timeout seconds, a crash is reported with the test that was running, and a compile error\n"
      "shows the compiler's messages about your file. Exit code 0 = passed, 1 = not yet.");
  sub->callback([opts] {
    const int rc = run_check_command(*opts);
    if (rc != 0) throw ExitCode{rc};
  });
}

}  // namespace attnlab::cli
