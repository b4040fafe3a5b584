// attnlab tour: every lesson in order on one sentence, without pausing.
#include <memory>

#include "cli/commands.hpp"
#include "cli/lesson_options.hpp"

namespace attnlab::cli {

void setup_tour(CLI::App& app) {
  auto flags = std::make_shared<LessonFlags>();
  CLI::App* sub = app.add_subcommand("tour", "Run every lesson in order on one sentence, straight through");
  add_lesson_options(sub, *flags);
  sub->footer("Example: attnlab tour --sentence \"The boy trains the puppy.\" | less -R");
  sub->callback([flags] {
    lessons::LessonOptions o = to_options(*flags);
    o.no_pause = true;
    run_lessons(o, {}, true, flags->html);
  });
}

}  // namespace attnlab::cli
