// attnlab lessons: the list of lessons with a one-line summary each.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "util/paths.hpp"
#include "lessons/lesson_doc.hpp"
#include "render/terminal.hpp"

namespace attnlab::cli {

namespace {

struct ListOptions {
  bool no_color = false;
  std::string format = "text";
};

void run_list(const ListOptions& o) {
  const std::filesystem::path root = project_root();
  const auto all = lessons::load_lessons(root);
  if (o.format == "json") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : all) {
      nlohmann::json ex = nlohmann::json::array();
      for (const auto& e : d.exercises) ex.push_back(e.slug);
      list.push_back({{"number", d.number}, {"slug", d.slug}, {"title", d.title}, {"summary", d.summary},
                      {"steps", d.steps.size()}, {"exercises", ex}});
    }
    std::cout << nlohmann::json{{"lessons", list}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  const render::Terminal term = render::detect_terminal(o.no_color);
  // The number, name and title on one line; the summary whole below it, wrapped to the terminal.
  for (const auto& d : all) {
    const std::string head = fmt::format("{:>2}  {:<22}", d.number, d.slug);
    const std::size_t room = term.width > render::display_width(head) + 2 ? term.width - render::display_width(head) - 2 : 20;
    if (term.color != render::ColorMode::None) std::cout << "\x1b[1m" << head << "\x1b[0m  " << render::fit_width(d.title, room) << '\n';
    else std::cout << head << "  " << render::fit_width(d.title, room) << '\n';
    std::cout << render::wrap_words(d.summary, term.width, "    ", "    ") << '\n';
  }
  std::cout << '\n'
            << render::wrap_words("Run one with 'attnlab lesson N' (or its name), or all of them with 'attnlab tour'.", term.width)
            << '\n';
}

}  // namespace

void setup_lessons(CLI::App& app) {
  auto opts = std::make_shared<ListOptions>();
  CLI::App* sub = app.add_subcommand("lessons", "List the lessons, one line each");
  sub->add_flag("--no-color", opts->no_color, "Plain text without escape codes");
  add_format_option(*sub, opts->format);
  sub->callback([opts] { run_list(*opts); });
}

}  // namespace attnlab::cli
