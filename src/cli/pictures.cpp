#include "cli/pictures.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "io/files.hpp"
#include "lessons/trained.hpp"
#include "render/html_page.hpp"
#include "tasks/task.hpp"
#include "util/error.hpp"

namespace attnlab::cli {

namespace {

std::string g_command_line = "attnlab";

}  // namespace

std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CLI::Validator output_file(const std::string& extension) {
  return CLI::Validator(
      [extension](std::string& path) -> std::string {
        namespace fs = std::filesystem;
        std::error_code ec;
        // CLI11 puts "--html: " in front of the message.
        if (path.empty()) return "is empty; give a file name such as attention" + extension;
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty() && !fs::is_directory(parent, ec))
          return "the folder " + parent.string() + " does not exist";
        try {
          io::check_output_path(path, io::OutputKind::User);  // a device, FIFO, folder, hard link: refused now
        } catch (const InputError& e) {
          return e.what();
        }
        return "";
      },
      "FILE");
}

namespace {
}  // namespace

void add_picture_options(CLI::App& sub, PictureOptions& p, const std::string& svg_help) {
  sub.add_option("--html", p.html,
                 "Write an attention explorer page to FILE (one self-contained HTML file: open it in a browser)")
      ->check(output_file(".html"));
  if (!svg_help.empty()) sub.add_option("--svg", p.svg, svg_help)->check(output_file(".svg"));
}

void add_html_option(CLI::App& sub, std::string& html, const std::string& help) {
  sub.add_option("--html", html, help)->check(output_file(".html"));
}

void set_command_line(int argc, char** argv) {
  g_command_line = "attnlab";
  for (int i = 1; i < argc; ++i) g_command_line += " " + shell_word(argv[i]);
}

const std::string& command_line() { return g_command_line; }

std::string model_name(const std::string& dir) {
  std::filesystem::path p = std::filesystem::path(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "models/x/" → x
  if (p.extension() == ".ckpt") p = p.stem() == "model" && p.has_parent_path() ? p.parent_path() : p.parent_path() / p.stem();
  return p.filename().string();
}

nlohmann::json model_json(const tasks::LoadedModel& m) {
  return {{"name", model_name(m.dir)}, {"dir", m.dir}, {"description", lessons::describe_model(m)}};
}

std::string write_explorer(const std::string& path, const nlohmann::json& doc, const std::string& title,
                    const std::vector<std::string>& notes) {
  render::PageInfo info;
  info.title = title;
  if (doc.contains("model") && doc["model"].is_object())
    info.subtitle = fmt::format("Model: {} ({})", doc["model"].value("name", ""), doc["model"].value("description", ""));
  info.command = command_line();
  info.notes = notes;
  std::size_t sets = doc.contains("attention") ? doc["attention"].size() : 0;
  std::string what;
  if (sets) {
    std::size_t maps = 0;
    for (const auto& s : doc["attention"]) maps += s["layers"].size() * s["heads"].size();
    what = fmt::format("attention explorer: {} set{}, {} heatmaps", sets, sets == 1 ? "" : "s", maps);
  } else if (doc.contains("snapshots")) {
    what = fmt::format("training timeline: {} snapshot{} on a step slider", doc["snapshots"].size(), doc["snapshots"].size() == 1 ? "" : "s");
  } else if (doc.contains("lessons")) {
    what = fmt::format("{} lesson{}", doc["lessons"].size(), doc["lessons"].size() == 1 ? "" : "s");
  } else {
    what = "attention explorer";
  }
  return render::write_picture("--html", path, render::explorer_page(doc, info), what + "; open it in a browser");
}

}  // namespace attnlab::cli
