#pragma once
// The exercise catalogue: the exercises lessons/exercises.json lists (io/exercise_inventory.hpp), in
// its order, numbered 1, 2, ...; commands accept the number or the slug ("attnlab check 2",
// "attnlab check softmax").
//
// An exercise folder, lessons/NN-name/exercises/SLUG/, holds exercise.cpp (the stub the learner starts
// from), solution.cpp, hints.md, grader.cpp (compiled with the project) and exercise.json (title, the
// function's signature, a summary).
#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::exercises {

namespace fs = std::filesystem;

struct ExerciseInfo {
  std::size_t number = 0;  // 1-based position in the catalogue
  std::string slug;        // folder name, e.g. "softmax"
  std::string lesson;      // lesson folder, e.g. "04-softmax"
  fs::path dir;            // lessons/04-softmax/exercises/softmax
  std::string title, difficulty, function, summary, topic;
  int minutes = 0;

  fs::path stub() const { return dir / "exercise.cpp"; }
  fs::path solution() const { return dir / "solution.cpp"; }
  fs::path hints() const { return dir / "hints.md"; }
  std::string label() const;  // "2 (softmax)"
};

class Catalogue {
 public:
  // Reads every exercise.json under lessons_dir. Throws RuntimeError when the folder or a file in it
  // is unreadable or malformed (that is a problem of the installation, not of the learner's input).
  static Catalogue load(const fs::path& lessons_dir);

  const std::vector<ExerciseInfo>& all() const { return items_; }
  // By number ("3") or slug ("causal-mask"). Throws InputError listing the valid choices.
  const ExerciseInfo& find(const std::string& key) const;

 private:
  std::vector<ExerciseInfo> items_;
};

// project_root()/lessons (util/paths.hpp: ATTNLAB_DATA_DIR, else the source tree, else beside the binary).
fs::path default_lessons_dir();

// The hints of hints.md: the text under each "## Hint N" heading, in order.
std::vector<std::string> read_hints(const ExerciseInfo& ex);

}  // namespace attnlab::exercises
