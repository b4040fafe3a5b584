#pragma once
// The options shared by `attnlab lesson` and `attnlab tour`, and the loop that runs lessons.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "lessons/session.hpp"

namespace attnlab::cli {

// Raw option values as CLI11 fills them; to_options() turns them into LessonOptions (an option
// counts as given only when it was on the command line).
struct LessonFlags {
  std::string sentence, target, weights, model, format = "text";
  std::string html;  // --html FILE: every step's matrices as a page (cli/pictures.hpp)
  std::size_t heads = 0, d_model = 0;
  std::uint64_t seed = 42;
  bool no_color = false, full = false, no_pause = false, random = false;
  int precision = 3;
  CLI::Option *sentence_opt = nullptr, *target_opt = nullptr, *heads_opt = nullptr, *d_model_opt = nullptr;
};

void add_lesson_options(CLI::App* sub, LessonFlags& f);
lessons::LessonOptions to_options(const LessonFlags& f);

// Runs the lessons named by `keys` (all when empty) with one Session. Interactive between steps
// when `allow_pause` and the terminal allows it; text or JSON as the options say. With `html`, the
// JSON document goes into that page instead (and to stdout too when the format is json).
void run_lessons(const lessons::LessonOptions& o, const std::vector<std::string>& keys, bool tour, const std::string& html = "");

}  // namespace attnlab::cli
