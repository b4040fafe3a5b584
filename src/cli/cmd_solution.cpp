// attnlab solution N [--force] [--workspace DIR]
// Prints the reference solution of exercise N, once it has passed (or with --force).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "exercises/session.hpp"
#include "io/files.hpp"
#include "util/error.hpp"

namespace attnlab::cli {

struct SolutionOptions {
  std::string exercise;
  std::string workspace;
  bool force = false;
};

namespace {

void run_solution(const SolutionOptions& o) {
  exercises::Session s(o.workspace);
  const exercises::ExerciseInfo& ex = s.catalogue().find(o.exercise);
  if (!s.progress().get(ex.slug).ever_passed && !o.force) {
    throw InputError("exercise " + ex.label() + " has not passed yet, so its solution stays hidden. Keep going "
                     "('attnlab hint " + ex.slug + "' helps), or add --force to see it now.");
  }
  std::string text;
  try {
    text = io::read_text_file(ex.solution().string(), 1 << 20);
  } catch (const InputError& e) {
    throw RuntimeError(e.what());
  }
  fmt::print("// Reference solution of exercise {}: {} ({})\n\n{}", ex.label(), ex.title,
             exercises::pretty_path(ex.solution()), text);
  std::cout.flush();
}

}  // namespace

void setup_solution(CLI::App& app) {
  auto opts = std::make_shared<SolutionOptions>();
  CLI::App* sub = app.add_subcommand("solution", "Show the reference solution of an exercise you have passed");
  sub->add_option("exercise", opts->exercise, "Exercise number or name")->required();
  add_workspace_option(*sub, opts->workspace);
  sub->add_flag("--force", opts->force, "Show it even though the exercise has not passed yet");
  sub->callback([opts] { run_solution(*opts); });
}

}  // namespace attnlab::cli
