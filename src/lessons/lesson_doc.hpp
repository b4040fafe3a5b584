#pragma once
// Lesson files: lessons/NN-name/lesson.md, Markdown split into steps.
//
//   # Title                          the lesson's title (first line that starts with "# ")
//   First paragraph.                 the one-line summary shown by `attnlab lessons` (and the intro)
//   More intro prose ...
//   ## Step title                    each "## " heading starts a step (one screen in interactive mode)
//   Prose ...
//   <!-- show: scores -->            a directive: the C++ side computes "scores" and prints it here
//   <!-- trained -->                 what follows (to the next "## " or mode comment) is shown only
//   <!-- random -->                  with a trained model, or only with seeded random weights;
//   <!-- both -->                    back to prose for both (the default at every "## ")
//   <!-- trained norm=pre-norm -->   trained only, and only when the model's fact `norm` is
//                                    "pre-norm" (any fact of lesson_facts, e.g. model=translate-wide)
//   {{d_ff}}                         in prose: a fact of the model that runs (LessonContext's
//                                    facts: layer counts, widths, the norm arrangement, its name),
//                                    so no hand-written sentence states a number about a model
//
// Any other single-line HTML comment is an author's note and is not shown. Fenced code blocks (```)
// are kept verbatim, so a "## " inside one is not a heading.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::lessons {

struct Block {
  enum class Kind { Text, Show };
  enum class Mode { Both, Trained, Random };  // which weights the block is meant for
  Kind kind = Kind::Text;
  std::string text;  // the prose (Text) or the computation's name (Show)
  int line = 0;      // 1-based line in lesson.md, for error messages
  Mode mode = Mode::Both;
  // "key=value": shown only when the model's fact `key` is `value` (empty: no condition).
  std::string condition;
  bool shown_with(bool trained) const { return mode == Mode::Both || (mode == Mode::Trained) == trained; }
};

struct Step {
  std::string title;
  std::vector<Block> blocks;
};

struct LessonDoc {
  int number = 0;          // NN from the folder name
  std::string slug;        // "name" from the folder name (e.g. "scores-and-scaling")
  std::filesystem::path file;
  std::string title;
  std::string summary;     // first paragraph after the title, joined into one line
  std::vector<Block> intro;
  std::vector<Step> steps;
  // The graded exercises of this lesson, in the order of lessons/exercises.json (their titles from
  // lessons/NN-name/exercises/SLUG/exercise.json): the lesson ends by pointing at them.
  struct Exercise {
    std::string slug, title, difficulty;
    int minutes = 0;
  };
  std::vector<Exercise> exercises;
};

// Parses lesson text; `source` names the file in errors. Throws RuntimeError when there is no
// "# " title or no "## " step.
LessonDoc parse_lesson_markdown(std::string_view text, const std::string& source);

// Every lessons/NN-name/lesson.md under root, parsed and sorted by number.
std::vector<LessonDoc> load_lessons(const std::filesystem::path& root);

// Finds a lesson by number ("3", "03"), slug ("scores-and-scaling"), folder name ("03-scores-and-scaling")
// or a unique slug prefix. Throws InputError listing the lessons when nothing matches.
const LessonDoc& find_lesson(const std::vector<LessonDoc>& all, std::string_view key);

}  // namespace attnlab::lessons
