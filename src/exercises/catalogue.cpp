#include "exercises/catalogue.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "io/exercise_inventory.hpp"
#include "io/files.hpp"
#include "io/json_text.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace attnlab::exercises {

std::string ExerciseInfo::label() const { return std::to_string(number) + " (" + slug + ")"; }

fs::path default_lessons_dir() { return fs::path(project_root()) / "lessons"; }

Catalogue Catalogue::load(const fs::path& lessons_dir) {
  std::error_code ec;
  if (!fs::is_directory(lessons_dir, ec)) {
    throw RuntimeError("no lessons folder at " + lessons_dir.string() +
                       " (set ATTNLAB_DATA_DIR to an attnlab checkout, the folder that holds lessons/ and data/)");
  }
  // The order and the facts a reader sees at a glance come from the inventory (lessons/exercises.json);
  // the rest from each exercise's folder. An exercise folder the inventory does not list is an error,
  // so the list cannot silently fall behind the folders.
  Catalogue cat;
  std::set<std::string> listed;
  for (const io::InventoryEntry& x : io::read_exercise_inventory(lessons_dir)) {
    ExerciseInfo e;
    e.slug = x.slug;
    e.lesson = x.lesson;
    e.difficulty = x.difficulty;
    e.minutes = x.minutes;
    e.topic = x.topic;
    e.dir = lessons_dir / x.lesson / "exercises" / x.slug;
    const fs::path meta = e.dir / "exercise.json";
    if (!fs::is_regular_file(meta, ec))
      throw RuntimeError((lessons_dir / "exercises.json").string() + ": lists " + x.slug + " in " + x.lesson + ", but " +
                         meta.string() + " does not exist");
    try {
      const auto j = io::parse_json_bounded(io::read_text_file(meta.string(), 1 << 16));
      e.title = j.at("title").get<std::string>();
      e.function = j.at("function").get<std::string>();
      e.summary = j.value("summary", "");
    } catch (const nlohmann::json::exception& err) {
      throw RuntimeError(meta.string() + ": not a valid exercise description (" + err.what() + ")");
    } catch (const InputError& err) {
      throw RuntimeError(err.what());
    }
    listed.insert(x.lesson + "/" + x.slug);
    cat.items_.push_back(std::move(e));
  }
  for (const auto& lesson : fs::directory_iterator(lessons_dir, ec)) {
    for (const auto& dir : fs::directory_iterator(lesson.path() / "exercises", ec)) {
      const std::string key = lesson.path().filename().string() + "/" + dir.path().filename().string();
      if (fs::is_regular_file(dir.path() / "exercise.json") && !listed.count(key))
        throw RuntimeError(dir.path().string() + " holds an exercise that " + (lessons_dir / "exercises.json").string() +
                           " does not list; add it there");
    }
    ec.clear();
  }
  for (std::size_t i = 0; i < cat.items_.size(); ++i) cat.items_[i].number = i + 1;
  return cat;
}

const ExerciseInfo& Catalogue::find(const std::string& key) const {
  for (const auto& e : items_) {
    if (e.slug == key || std::to_string(e.number) == key) return e;
  }
  std::string choices;
  for (const auto& e : items_) choices += (choices.empty() ? "" : ", ") + e.label();
  throw InputError("no exercise '" + key + "'; choose a number or a name: " + choices +
                   " (see 'attnlab exercises')");
}

std::vector<std::string> read_hints(const ExerciseInfo& ex) {
  std::string text;
  try {
    text = io::read_text_file(ex.hints().string(), 1 << 20);
  } catch (const InputError& err) {
    throw RuntimeError(err.what());
  }
  std::vector<std::string> hints;
  std::istringstream in(text);
  std::string line, current;
  bool inside = false;
  auto flush = [&] {
    if (!inside) return;
    while (!current.empty() && (current.back() == '\n' || current.back() == ' ')) current.pop_back();
    while (!current.empty() && current.front() == '\n') current.erase(current.begin());
    hints.push_back(current);
    current.clear();
  };
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      flush();
      inside = true;
      continue;
    }
    if (inside) current += line + "\n";
  }
  flush();
  return hints;
}

}  // namespace attnlab::exercises
