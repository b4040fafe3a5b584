#include "exercises/catalogue.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

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
  Catalogue cat;
  for (const auto& lesson : fs::directory_iterator(lessons_dir)) {
    const fs::path ex_root = lesson.path() / "exercises";
    if (!fs::is_directory(ex_root, ec)) continue;
    for (const auto& dir : fs::directory_iterator(ex_root)) {
      const fs::path meta = dir.path() / "exercise.json";
      if (!fs::is_regular_file(meta, ec)) continue;
      ExerciseInfo e;
      e.slug = dir.path().filename().string();
      e.lesson = lesson.path().filename().string();
      e.dir = dir.path();
      try {
        const auto j = parse_json_bounded(read_text_file(meta.string(), 1 << 16));
        e.title = j.at("title").get<std::string>();
        e.difficulty = j.at("difficulty").get<std::string>();
        e.minutes = j.at("minutes").get<int>();
        e.order = j.value("order", 0);
        e.function = j.at("function").get<std::string>();
        e.summary = j.value("summary", "");
      } catch (const nlohmann::json::exception& err) {
        throw RuntimeError(meta.string() + ": not a valid exercise description (" + err.what() + ")");
      } catch (const InputError& err) {
        throw RuntimeError(err.what());
      }
      cat.items_.push_back(std::move(e));
    }
  }
  std::sort(cat.items_.begin(), cat.items_.end(), [](const ExerciseInfo& a, const ExerciseInfo& b) {
    return std::tie(a.lesson, a.order, a.slug) < std::tie(b.lesson, b.order, b.slug);
  });
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
    text = read_text_file(ex.hints().string(), 1 << 20);
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
