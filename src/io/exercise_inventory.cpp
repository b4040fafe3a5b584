#include "io/exercise_inventory.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "io/json_text.hpp"
#include "util/error.hpp"

namespace attnlab::io {

std::vector<InventoryEntry> read_exercise_inventory(const std::filesystem::path& lessons_dir) {
  const std::string file = (lessons_dir / "exercises.json").string();
  nlohmann::json j;
  try {
    j = parse_json_text(read_text_file(file, 1u << 20), file);
  } catch (const InputError& e) {  // a broken installation, not the learner's input
    throw RuntimeError(e.what());
  }
  if (!j.is_object() || !j.contains("exercises") || !j["exercises"].is_array())
    throw RuntimeError(file + ": expected an object with an \"exercises\" array");
  std::vector<InventoryEntry> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < j["exercises"].size(); ++i) {
    const nlohmann::json& e = j["exercises"][i];
    const std::string where = file + ": exercises[" + std::to_string(i) + "]";
    auto text = [&](const char* key, bool required) {
      if (!e.is_object() || (required && !e.contains(key))) throw RuntimeError(where + "." + key + ": missing");
      if (!e.contains(key)) return std::string();
      if (!e[key].is_string() || (required && e[key].get<std::string>().empty()))
        throw RuntimeError(where + "." + key + ": expected a non-empty string");
      return e[key].get<std::string>();
    };
    InventoryEntry x;
    x.slug = text("slug", true);
    x.lesson = text("lesson", true);
    x.difficulty = text("difficulty", true);
    x.topic = text("topic", false);
    if (x.difficulty != "easy" && x.difficulty != "medium" && x.difficulty != "hard")
      throw RuntimeError(where + ".difficulty: expected easy, medium or hard, got \"" + x.difficulty + "\"");
    if (!e.contains("minutes") || !e["minutes"].is_number_integer() || e["minutes"].get<int>() <= 0)
      throw RuntimeError(where + ".minutes: expected a whole number of minutes above 0");
    x.minutes = e["minutes"].get<int>();
    if (!seen.insert(x.slug).second) throw RuntimeError(where + ".slug: \"" + x.slug + "\" is listed twice");
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace attnlab::io
