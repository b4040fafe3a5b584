#pragma once
// lessons/exercises.json: the one ordered list of the graded exercises (which lesson folder each lives
// in, its difficulty and expected time). `attnlab exercises` numbers them in this order, each lesson
// ends by pointing at its own, and docs/exercises.md's table is generated from it
// (tests/exercises/exercise_table.py). An exercise's folder, lessons/LESSON/exercises/SLUG/, holds the
// rest (exercise.json: title, the function's signature, a summary).
#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::io {

struct InventoryEntry {
  std::string slug;        // "softmax": its folder name, and what `attnlab check` accepts
  std::string lesson;      // "04-softmax": the lesson folder it lives in
  std::string difficulty;  // easy, medium or hard
  int minutes = 0;         // about how long it takes
  std::string topic;       // a few words beside the name in docs/exercises.md ("" when none)
};

// Reads LESSONS_DIR/exercises.json. Throws RuntimeError (an installation problem, exit 1) naming the
// file and the field when it is missing or malformed, or lists a slug twice.
std::vector<InventoryEntry> read_exercise_inventory(const std::filesystem::path& lessons_dir);

}  // namespace attnlab::io
