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

// A file the user names for output (--html, --svg, --json-out), checked when the options are parsed so
// that a mistake costs nothing (a long tour never runs only to fail at the end): not empty, in a folder
// that exists, and a place io::check_output_path accepts (a new or a regular file, or a link to one;
// no folder, device, FIFO, socket or hard link). Whether it is an input of the command is checked when
// the file is written.
CLI::Validator output_file(const std::string& extension);

// Adds --html (and --svg when `svg_help` is not empty) to a subcommand, checked by output_file.
void add_picture_options(CLI::App& sub, PictureOptions& p, const std::string& svg_help = "");
void add_html_option(CLI::App& sub, std::string& html, const std::string& help);

// The command line attnlab was started with, shell-quoted (for the page's footer).
void set_command_line(int argc, char** argv);
const std::string& command_line();

// A model's name: the folder's name (translate-wide for …/data/models/translate-wide), or a .ckpt
// file's name without .ckpt (model.ckpt: its folder's). How a page and `attnlab serve` name a model, so
// that a shared page does not show the local path it was loaded from.
std::string model_name(const std::string& dir);

// {"name", "dir", "description"} of a loaded model, for the JSON documents; the page's subtitle shows
// the name and the description.
nlohmann::json model_json(const tasks::LoadedModel& m);

// Writes the explorer page for `doc` to `path` (atomically) and returns one line saying so, for stdout
// (stderr when stdout carries JSON).
std::string write_explorer(const std::string& path, const nlohmann::json& doc, const std::string& title,
                    const std::vector<std::string>& notes = {});

}  // namespace attnlab::cli
