#pragma once
// Where the lessons (lessons/NN-name/lesson.md) and their data (data/) live.
#include <filesystem>

namespace attnlab::lessons {

// The project root that holds both lessons/ and data/, looked up in this order:
//   1. the ATTNLAB_DATA_DIR environment variable (an error if it is set but holds no lessons/);
//   2. the source directory baked in at compile time (ATTNLAB_SOURCE_DIR), so a build tree just works;
//   3. next to the executable: its folder, its parent, or ../share/attnlab (an installed layout).
// Throws RuntimeError listing the places it looked when none has a lessons/ folder.
std::filesystem::path data_root();

}  // namespace attnlab::lessons
