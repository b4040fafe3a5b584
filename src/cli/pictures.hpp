#pragma once
// --html FILE and --svg FILE, shared by the commands that show attention (attend, translate, generate,
// lesson, tour): the explorer page is made from exactly the JSON document the command prints with
// --format json (render/html_page.hpp), so the two never disagree.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include "render/html_page.hpp"

namespace attnlab::tasks {
struct LoadedModel;
}

namespace attnlab::cli {

using render::attention_set;
using render::AttentionSetInfo;

struct PictureOptions {
  std::string html;  // --html FILE: the explorer page
  std::string svg;   // --svg FILE: one heatmap
};

// Adds --html (and --svg when `svg_help` is not empty) to a subcommand; the files are checked to be
// writable places (an existing folder, not a folder itself) before anything runs.
void add_picture_options(CLI::App& sub, PictureOptions& p, const std::string& svg_help = "");
void add_html_option(CLI::App& sub, std::string& html, const std::string& help);

// The command line attnlab was started with, shell-quoted (for the page's footer).
void set_command_line(int argc, char** argv);
const std::string& command_line();

// {"dir", "description"} of a loaded model, for the JSON documents and the page's subtitle.
nlohmann::json model_json(const tasks::LoadedModel& m);

// Writes the explorer page for `doc` to `path` (atomically) and returns one line saying so, for stdout
// (stderr when stdout carries JSON).
std::string write_explorer(const std::string& path, const nlohmann::json& doc, const std::string& title,
                    const std::vector<std::string>& notes = {});

}  // namespace attnlab::cli
