// attnlab lesson N|NAME: one lesson, step by step.
#include <memory>

#include "cli/commands.hpp"
#include "cli/lesson_options.hpp"

namespace attnlab::cli {

namespace {
struct LessonCommand {
  std::string which;
  LessonFlags flags;
};
}  // namespace

void setup_lesson(CLI::App& app) {
  auto cmd = std::make_shared<LessonCommand>();
  CLI::App* sub = app.add_subcommand(
      "lesson", "Run one lesson step by step (Enter: next step, q: quit; runs straight through when not on a terminal)");
  sub->add_option("lesson", cmd->which, "Lesson number (1-10) or name, e.g. 3 or scores-and-scaling")->required();
  add_lesson_options(sub, cmd->flags);
  sub->footer("Examples:\n  attnlab lesson 3\n  attnlab lesson 3 --random\n  attnlab lesson 5 --sentence \"I love you\" --no-pause\n"
              "  attnlab lesson cross-attention --sentence \"The boy trains the puppy.\" --target \"Le garçon entraîne le chiot.\"\n"
              "  attnlab lesson 7 --heads 4 --d-model 16 --format json\n  attnlab lesson 9 --html lesson9.html");
  sub->callback([cmd] { run_lessons(to_options(cmd->flags), {cmd->which}, false, cmd->flags.html); });
}

}  // namespace attnlab::cli
