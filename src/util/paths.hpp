#pragma once
// Where attnlab finds its shipped files (data/, lessons/): the ATTNLAB_DATA_DIR environment variable
// if set, else the source tree the binary was built from (baked in at compile time), else the folder
// above the executable. A path the user gives is always used as given.
#include <string>

namespace attnlab {

// The project root that holds data/ and lessons/. Throws RuntimeError when none can be found.
std::string project_root();

// Resolves `rel` (e.g. "data/models/translate-small"): an existing path as given (relative to the
// current folder) wins; otherwise project_root()/rel.
std::string resolve_data_path(const std::string& rel);

}  // namespace attnlab
