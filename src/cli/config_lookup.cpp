#include "cli/config_lookup.hpp"

#include <filesystem>
#include <set>

#include "util/error.hpp"
#include "util/paths.hpp"

namespace attnlab::cli {

namespace fs = std::filesystem;

std::string config_names() {
  std::set<std::string> names;
  std::error_code ec;
  const fs::path dir = fs::path(project_root()) / "data" / "configs";
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") names.insert(e.path().stem().string());
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "(none found)" : s;
}

std::string find_config(const std::string& value) {
  if (value.empty()) throw InputError("--config: expected a config name (e.g. translate-small) or a file, got an empty value");
  std::error_code ec;
  const bool path_like = value.find('/') != std::string::npos || value.ends_with(".json");
  // A bare name is a file in the working folder only when it is a file: `train --config NAME` run
  // beside a folder of that name (the run's own, `--out NAME`) means the config NAME, not the folder.
  if (path_like || (fs::exists(value, ec) && !fs::is_directory(value, ec))) return value;
  std::string named;
  try {
    named = resolve_data_path("data/configs/" + value + ".json");
  } catch (const RuntimeError&) {
  }
  if (!named.empty() && fs::is_regular_file(named, ec)) return named;
  std::string known;
  try {
    known = config_names();
  } catch (const Error&) {
    known = "(the data folder was not found)";
  }
  if (fs::is_directory(value, ec))
    throw InputError("--config " + value + ": is a folder, expected a config file, and there is no data/configs/" + value +
                     ".json; known configs: " + known);
  throw InputError("--config " + value + ": no such file and no data/configs/" + value + ".json; known configs: " + known);
}

}  // namespace attnlab::cli
