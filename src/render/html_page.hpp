#pragma once
// Pictures of attention for a browser, a slide or a paper:
//  - explorer_page: one self-contained HTML file (scripts, styles and data inline; no network) built
//    from the JSON document that a command prints with --format json: a head view and a model view
//    for {"attention": [...]} documents (attend, translate, generate), every step's matrices as
//    labelled heatmaps for {"lessons": [...]} documents (lesson, tour). The page's code is
//    render/explorer/explorer.js; docs/explorer.md describes what it shows.
//  - heatmap_svg: one matrix as an SVG heatmap with its row and column labels and a colour scale.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/matrix.hpp"

namespace attnlab::render {

// One attention set in the explorer's JSON form (explorer.js):
//   {"name", "kind": "self"|"causal"|"cross", "description", "row_title", "column_title",
//    "rows", "columns", "layers": [ids], "heads": [ids], "weights": [layer][head][row][column]}
// `at(l, h)` gives the row-major rows × columns block of layer id l, head id h. Weights are rounded to
// 6 decimals, which keeps the page small and is far below what a picture can show.
struct AttentionSetInfo {
  std::string name, kind, description, row_title, column_title;
  std::vector<std::string> rows, columns;
  std::vector<int> layers, heads;
};
nlohmann::json attention_set(const AttentionSetInfo& info, const std::function<const float*(int layer, int head)>& at);

struct PageInfo {
  std::string title;                // the page's heading
  std::string subtitle;             // e.g. the model and what it was trained on
  std::string command;              // the command line that made it, for the footer
  std::vector<std::string> notes;   // things the reader must know (an emulated GPU, <unk> words, ...)
  // Served by `attnlab serve`: the page shows its sentence box and model menu and asks the server's
  // API for what to draw. A file (--html) has the same box, hidden.
  bool live = false;
};

std::string explorer_page(const nlohmann::json& doc, const PageInfo& info);

// `weights`: the values are attention weights, drawn on a fixed 0…1 scale; otherwise the scale spans
// the values (diverging around 0 when they have both signs). Values are printed in the cells when the
// matrix is at most 16 columns wide.
std::string heatmap_svg(const std::string& title, const core::Matrix& m, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels, bool weights);

// Writes a page or picture that the user named with `option` (--html, --svg) atomically
// (io::write_output_file: a regular file only, never an input of the command) and returns one line
// saying what was written, for the command to print (the path shown through shown_path).
std::string write_picture(const std::string& option, const std::string& path, const std::string& content,
                          const std::string& what);

}  // namespace attnlab::render
