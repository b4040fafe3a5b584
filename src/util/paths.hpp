#pragma once
// Where attnlab finds its shipped files (data/, lessons/), in one place for every command, lesson and
// exercise: the ATTNLAB_DATA_DIR environment variable if set (InputError, exit 2, when it holds no
// data/ and lessons/), else the source tree the binary was built from (baked in at compile time), else
// next to the executable: its folder or one above it, or ../share/attnlab (an installed layout).
// A path the user gives is always used as given.
#include <string>

namespace attnlab {

// The project root that holds data/ and lessons/. Throws RuntimeError listing the places it looked
// when none has them.
std::string project_root();

// Resolves `rel` (e.g. "data/models/translate-small"): an existing path as given (relative to the
// current folder) wins; otherwise project_root()/rel.
std::string resolve_data_path(const std::string& rel);

}  // namespace attnlab
