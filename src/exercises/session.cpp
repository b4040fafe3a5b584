#include "exercises/session.hpp"

#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "render/terminal.hpp"

namespace attnlab::exercises {

const char* state_name(State s) {
  switch (s) {
    case State::Passed: return "passed";
    case State::Failing: return "failing";
    case State::NotStarted: break;
  }
  return "not started";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Passed: return "passed";
    case Verdict::Failed: return "failed";
    case Verdict::CompileError: return "compile_error";
    case Verdict::LinkError: return "link_error";
    case Verdict::TimedOut: return "timed_out";
    case Verdict::Crashed: return "crashed";
  }
  return "failed";
}

Session::Checked Session::check_and_record(const Kit& kit, const ExerciseInfo& ex, const CheckOptions& opts,
                                           const std::function<void(bool)>& before_run) {
  Checked c;
  c.created_stub = ensure_learner_file(workspace_, ex);
  if (before_run) before_run(c.created_stub);
  c.result = run_check(kit, ex, workspace_, opts);
  progress_.update(ex.slug, [&](ExerciseProgress& p) {
    c.was_passed = p.ever_passed;
    p.checks += 1;
    p.last_check = utc_now();
    p.status = c.result.verdict == Verdict::Passed ? "passed" : "failing";
    if (c.result.verdict == Verdict::Passed) p.ever_passed = true;
  });
  return c;
}

Session::Session(const std::string& workspace_option)
    : catalogue_(Catalogue::load(default_lessons_dir())),
      workspace_(open_workspace(workspace_option)),
      progress_(state_file_for(workspace_), workspace_.root.string()) {}

State Session::state(const ExerciseInfo& ex) const {
  const ExerciseProgress p = progress_.get(ex.slug);
  if (p.status == "passed") return State::Passed;
  if (untouched(workspace_, ex)) return State::NotStarted;
  return p.status == "failing" ? State::Failing : State::NotStarted;
}

const ExerciseInfo* Session::next_unfinished() const {
  for (const auto& ex : catalogue_.all())
    if (state(ex) != State::Passed) return &ex;
  return nullptr;
}

const ExerciseInfo* Session::resolve(const std::optional<std::string>& key) const {
  if (key) return &catalogue_.find(*key);
  return next_unfinished();
}

Verdict Session::check_and_report(const Kit& kit, const ExerciseInfo& ex, const CheckOptions& opts, bool show_timing,
                                  bool watching) {
  const Checked c = check_and_record(kit, ex, opts, [&](bool created) {
    if (created)
      fmt::print("{}", render::wrap_lines(fmt::format("Created {} from the stub: edit it, then check again.\n",
                                                      pretty_path(workspace_.learner_file(ex))),
                                          render::detect_terminal(true).width));
    fmt::print("{}", render::wrap_lines(fmt::format("── exercise {}: {} ──\nfile: {}\n", ex.label(), ex.title,
                                                    render::visible_controls(pretty_path(workspace_.learner_file(ex)))),
                                        render::detect_terminal(true).width));
    std::cout.flush();
  });
  const CheckResult& r = c.result;
  const bool was_passed = c.was_passed;

  // What the grader and the compiler printed is the learner code's (and its file's) text: control
  // characters are shown, never sent to the terminal (an ESC ]0;… retitles it, ESC [2J clears it).
  if (!r.warnings.empty() && r.verdict != Verdict::CompileError) {
    fmt::print("The compiler warns:\n{}\n", render::visible_controls(r.warnings, /*keep_newlines=*/true));
  }
  // The grader's report, each line wrapped to the terminal at spaces (a terminal would cut words in
  // two), a continuation indented like the message it continues.
  // The compiler's own diagnostics (a compile or link error) are printed as it wrote them: its source
  // lines and carets must stay aligned.
  const std::size_t width = render::detect_terminal(true).width;
  const bool compiler_text = r.verdict == Verdict::CompileError || r.verdict == Verdict::LinkError;
  const std::string report = render::visible_controls(r.report, /*keep_newlines=*/true);
  fmt::print("{}", compiler_text ? report : render::wrap_lines(report, width));
  if (!r.report.empty() && r.report.back() != '\n') fmt::print("\n");
  const auto say = [&](const std::string& text) { fmt::print("{}", render::wrap_lines(text, width)); };
  switch (r.verdict) {
    case Verdict::Passed: {
      say(fmt::format("\nPASSED: exercise {} is done.{}\n", ex.label(),
                      was_passed ? "" : " Compare with the reference: attnlab solution " + ex.slug));
      const ExerciseInfo* next = next_unfinished();
      if (next) say(fmt::format("Next: attnlab check {}  ({})\n", next->slug, next->title));
      else say("Every exercise has passed. Well done.\n");
      break;
    }
    case Verdict::Failed:
    case Verdict::TimedOut:
    case Verdict::Crashed:
      say(fmt::format("\nNOT YET: fix the first problem above and save{}.\n"
                      "Stuck? attnlab hint {} shows the next hint.\n",
                      watching ? "; it is checked again automatically" : ", then run attnlab check " + ex.slug + " again",
                      ex.slug));
      break;
    case Verdict::CompileError:
    case Verdict::LinkError:
      say(fmt::format("\nNOT YET: the file must compile before the grader can run{}.\n",
                      watching ? "; save it to check again" : ""));
      break;
  }
  if (show_timing) {
    fmt::print("(compile {:.2f} s, link {:.2f} s, grader {:.2f} s)\n", r.compile_s, r.link_s, r.run_s);
  }
  std::cout.flush();
  return r.verdict;
}

}  // namespace attnlab::exercises
