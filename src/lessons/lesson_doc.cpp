#include "lessons/lesson_doc.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "io/exercise_inventory.hpp"
#include "io/files.hpp"
#include "io/json_text.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

namespace fs = std::filesystem;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Appends a prose line to the last Text block, or opens a new one.
void add_text(std::vector<Block>& blocks, std::string_view line, int lineno, Block::Mode mode, const std::string& condition) {
  if (blocks.empty() || blocks.back().kind != Block::Kind::Text || blocks.back().mode != mode ||
      blocks.back().condition != condition) {
    if (trim(line).empty()) return;  // no leading blank lines in a block
    blocks.push_back({Block::Kind::Text, std::string(), lineno, mode, condition});
  }
  blocks.back().text += std::string(line) + "\n";
}

void trim_trailing_blank(std::vector<Block>& blocks) {
  for (Block& b : blocks)
    if (b.kind == Block::Kind::Text)
      while (b.text.size() >= 2 && b.text[b.text.size() - 1] == '\n' && b.text[b.text.size() - 2] == '\n')
        b.text.pop_back();
  std::erase_if(blocks, [](const Block& b) { return b.kind == Block::Kind::Text && trim(b.text).empty(); });
}

}  // namespace

LessonDoc parse_lesson_markdown(std::string_view text, const std::string& source) {
  LessonDoc doc;
  bool in_fence = false;
  Block::Mode mode = Block::Mode::Both;
  std::string condition;
  int lineno = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    ++lineno;
    std::vector<Block>& blocks = doc.steps.empty() ? doc.intro : doc.steps.back().blocks;
    const std::string_view t = trim(line);
    if (starts_with(t, "```")) in_fence = !in_fence;
    if (!in_fence && starts_with(line, "# ") && doc.title.empty()) {
      doc.title = std::string(trim(line.substr(2)));
    } else if (!in_fence && starts_with(line, "## ")) {
      doc.steps.push_back({std::string(trim(line.substr(3))), {}});
      mode = Block::Mode::Both;
      condition.clear();
    } else if (!in_fence && starts_with(t, "<!--") && t.size() >= 7 && t.substr(t.size() - 3) == "-->") {
      const std::string_view inner = trim(t.substr(4, t.size() - 7));
      if (starts_with(inner, "show:")) {
        const std::string name(trim(inner.substr(5)));
        if (name.empty()) throw RuntimeError(source + ":" + std::to_string(lineno) + ": empty show directive");
        blocks.push_back({Block::Kind::Show, name, lineno, mode, condition});
      } else if (inner == "trained") {
        mode = Block::Mode::Trained;
        condition.clear();
      } else if (starts_with(inner, "trained ")) {
        // <!-- trained key=value -->: prose for the models whose fact `key` has that value.
        const std::string_view cond = trim(inner.substr(8));
        const std::size_t eq = cond.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == cond.size() || cond.find(' ') != std::string_view::npos)
          throw RuntimeError(source + ":" + std::to_string(lineno) + ": a condition reads <!-- trained key=value -->, not '" +
                             std::string(inner) + "'");
        mode = Block::Mode::Trained;
        condition = std::string(cond);
      } else if (inner == "random") {
        mode = Block::Mode::Random;
        condition.clear();
      } else if (inner == "both") {
        mode = Block::Mode::Both;
        condition.clear();
      }
      // any other comment is a note for authors
    } else {
      add_text(blocks, line, lineno, mode, condition);
    }
    if (end == text.size()) break;
  }
  if (doc.title.empty()) throw RuntimeError(source + ": no '# ' title line");
  if (doc.steps.empty()) throw RuntimeError(source + ": no '## ' step");
  trim_trailing_blank(doc.intro);
  for (Step& s : doc.steps) trim_trailing_blank(s.blocks);
  // Summary: the first paragraph of the intro, on one line.
  if (!doc.intro.empty() && doc.intro.front().kind == Block::Kind::Text) {
    std::string_view first = doc.intro.front().text;
    first = first.substr(0, first.find("\n\n"));
    for (char c : trim(first)) doc.summary += c == '\n' ? ' ' : c;
  }
  return doc;
}

std::vector<LessonDoc> load_lessons(const fs::path& root) {
  std::vector<LessonDoc> out;
  std::error_code ec;
  // Without an inventory the lessons still run; they just point at no exercise.
  std::vector<io::InventoryEntry> inventory;
  try {
    inventory = io::read_exercise_inventory(root / "lessons");
  } catch (const std::exception&) {
  }
  // A path that cannot even be looked at (a symbolic link loop, ELOOP) is bad input naming the path,
  // exit 2: the throwing forms of is_directory and exists made it "internal error", exit 1.
  auto unreadable = [&](const fs::path& p, const std::error_code& why) {
    return InputError(p.string() + ": cannot be read (" + why.message() + "); check the lessons in " + root.string());
  };
  for (const auto& entry : fs::directory_iterator(root / "lessons", ec)) {
    std::error_code kind_ec;
    const bool folder = entry.is_directory(kind_ec);
    if (kind_ec) throw unreadable(entry.path(), kind_ec);
    if (!folder) continue;
    const std::string name = entry.path().filename().string();
    int number = 0;
    const auto [p, err] = std::from_chars(name.data(), name.data() + name.size(), number);
    if (err != std::errc() || p == name.data() || *p != '-') continue;  // not an NN-name folder
    const fs::path file = entry.path() / "lesson.md";
    std::error_code file_ec;
    const bool there = fs::exists(file, file_ec);
    if (file_ec) throw unreadable(file, file_ec);
    if (!there) continue;
    LessonDoc doc = parse_lesson_markdown(io::read_text_file(file.string(), 1u << 20), file.string());
    doc.number = number;
    doc.slug = name.substr(static_cast<std::size_t>(p - name.data()) + 1);
    doc.file = file;
    // The lesson's exercises, in the inventory's order (lessons/exercises.json), with the title from
    // each exercise.json; the exercise catalogue (src/exercises) validates the rest.
    for (const io::InventoryEntry& x : inventory) {
      if (x.lesson != name) continue;
      const fs::path meta = entry.path() / "exercises" / x.slug / "exercise.json";
      std::string title;
      try {
        title = io::parse_json_bounded(io::read_text_file(meta.string(), 1u << 20)).value("title", std::string());
      } catch (const std::exception&) {
        // A broken exercise.json is reported by the exercise commands; the lesson itself still runs.
      }
      doc.exercises.push_back({x.slug, title, x.difficulty, x.minutes});
    }
    out.push_back(std::move(doc));
  }
  if (ec) throw RuntimeError("cannot read " + (root / "lessons").string() + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const LessonDoc& a, const LessonDoc& b) { return a.number < b.number; });
  return out;
}

const LessonDoc& find_lesson(const std::vector<LessonDoc>& all, std::string_view key_in) {
  std::string key;
  for (char c : trim(key_in)) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int number = -1;
  if (!key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
      key.size() <= 3) {
    number = std::stoi(key);
  }
  const LessonDoc* prefix_match = nullptr;
  int prefix_matches = 0;
  for (const LessonDoc& d : all) {
    const std::string folder = fmt::format("{:02}-{}", d.number, d.slug);
    if (d.number == number || key == d.slug || key == folder) return d;
    if (!key.empty() && starts_with(d.slug, key)) {
      prefix_match = &d;
      ++prefix_matches;
    }
  }
  if (prefix_matches == 1) return *prefix_match;
  std::string names;
  for (const LessonDoc& d : all) names += (names.empty() ? "" : ", ") + std::to_string(d.number) + " (" + d.slug + ")";
  throw InputError("unknown lesson '" + std::string(key_in) + "'" +
                   (prefix_matches > 1 ? " (more than one lesson starts with it)" : "") +
                   "; the lessons are: " + names + ". Run 'attnlab lessons' for the list.");
}

}  // namespace attnlab::lessons
