// attnlab timeline [--model RUN] [--sentence N] [--format json] [--html FILE] [--no-color]
// Attention while it learns (docs/timeline.md): the snapshots that `attnlab train --snapshots K`
// recorded in a run folder, as curves against the step (the training loss, the alignment error of the
// best cross-attention head, the strongest relation probe of each encoder layer) and the probe
// sentence's translation at each snapshot; --format json gives every snapshot with its attention
// sets in the form of `translate --format json`.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/model_documents.hpp"
#include "cli/pictures.hpp"
#include "cli/validators.hpp"
#include "render/terminal.hpp"
#include "render/text_chart.hpp"
#include "tasks/snapshots.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace attnlab::cli {

struct TimelineOptions {
  std::string model = "runs/translate-small";
  int sentence = 1;
  std::string format = "text";
  bool no_color = false;
  std::string html;  // --html FILE: the explorer page with a step slider
};

namespace {

std::optional<double> number_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return std::nullopt;
    p = &(*p)[k];
  }
  return p->is_number() ? std::optional<double>(p->get<double>()) : std::nullopt;
}

void run_timeline(const TimelineOptions& o) {
  const tasks::Timeline t = tasks::read_timeline(o.model);
  const std::vector<std::string> probes = t.header.value("probes", std::vector<std::string>{});
  if (o.sentence > static_cast<int>(probes.size()))
    throw InputError(fmt::format("--sentence: expected 1 to {} (the timeline's probe sentences), got {}", probes.size(), o.sentence));
  const std::size_t pick = static_cast<std::size_t>(o.sentence - 1);
  auto probe_of = [&](const nlohmann::json& s) -> const nlohmann::json& {
    const nlohmann::json& p = s.at("probes");
    if (!p.is_array() || p.size() != probes.size())
      throw InputError(fmt::format("{}: snapshot {}: \"probes\": expected {} entries, got {}", shown_path(o.model), s["step"].dump(),
                                   probes.size(), p.is_array() ? p.size() : 0));
    return p[pick];
  };

  if (o.format == "json" || !o.html.empty()) {
    nlohmann::json js = nlohmann::json::array();
    for (const auto& s : t.snapshots) {
      const nlohmann::json& p = probe_of(s);
      nlohmann::json translations = nlohmann::json::array();
      for (const auto& q : s["probes"]) translations.push_back(q.at("translation"));
      js.push_back({{"step", s["step"]}, {"loss", s["loss"]}, {"valid", s["valid"]}, {"sentence", p.at("sentence")},
                    {"source_tokens", p.at("source_tokens")}, {"translation", p.at("translation")}, {"tokens", p.at("tokens")},
                    {"attention", p.at("attention")}, {"translations", translations}, {"heads", s.at("heads")},
                    {"summary", s.at("summary")}});
    }
    nlohmann::json j = {{"model", o.model}, {"snapshots_requested", t.header.value("snapshots", 0)}, {"schedule", t.header["steps"]},
                        {"train_steps", t.header.value("train_steps", 0)}, {"probe_source", t.header.value("probe_source", "")},
                        {"probes", probes}, {"sentence", o.sentence}, {"snapshots", js}};
    if (!o.html.empty()) {
      const std::string wrote = write_explorer(o.html, j, "attnlab timeline: " + probes[pick]);
      (o.format == "json" ? std::cerr : std::cout) << wrote << '\n';
    }
    if (o.format == "json") {
      std::cout << json_text(j) << '\n';
      return;
    }
  }

  const render::Terminal term = render::detect_terminal(o.no_color);
  std::cout << render::wrap_lines(fmt::format("{}: {} of {} scheduled snapshots (--snapshots {}, {} training steps); probes: {} ({} sentences)\n\n",
                           shown_path(o.model), t.snapshots.size(), t.header["steps"].size(), t.header.value("snapshots", 0),
                           t.header.value("train_steps", 0), visible_text(t.header.value("probe_source", "")), probes.size()), term.width);
  if (t.snapshots.empty()) {
    std::cout << "No snapshot yet: the run has not reached its first one.\n";
    return;
  }
  std::vector<std::string> labels;
  std::vector<std::optional<double>> loss, align;
  int layers = 0;
  for (const auto& s : t.snapshots) {
    labels.push_back(std::to_string(s["step"].get<std::int64_t>()));
    loss.push_back(number_at(s, {"loss"}));
    const std::optional<double> rate = number_at(s, {"summary", "alignment_error", "rate"});
    align.push_back(rate ? std::optional<double>(100 * *rate) : std::nullopt);
    layers = std::max(layers, static_cast<int>(s["summary"].value("strongest_relation", nlohmann::json::array()).size()));
  }
  render::ChartOptions co;
  co.width = term.width;
  co.color = term.color != render::ColorMode::None;
  auto print = [&](const std::vector<std::string>& lines) {
    for (const auto& l : lines) std::cout << l << '\n';
    std::cout << '\n';
  };
  print(render::text_chart("Training loss (the batch of that step; none at step 0) against the step:", loss, labels, co));
  co.precision = 1;
  print(render::text_chart("Alignment error, % (the best cross-attention head; attnlab heads) against the step:", align, labels, co));
  co.precision = 2;
  for (int l = 0; l < layers; ++l) {
    std::vector<std::optional<double>> mass;
    for (const auto& s : t.snapshots) {
      const auto& sr = s["summary"]["strongest_relation"];
      std::optional<double> m;
      for (const auto& e : sr)
        if (e["layer"].get<int>() == l) m = e["mass"].get<double>();
      mass.push_back(m);
    }
    print(render::text_chart(fmt::format("Strongest relation probe of encoder layer {} (its mass) against the step:", l), mass, labels, co));
  }

  // The numbers behind the curves, then the translations.
  std::cout << render::fit_width(fmt::format("{:>8} {:>8} {:>8} {:>14}  {}", "step", "loss", "valid", "align. error",
                                             "strongest relation per layer (head: mass / chance)"),
                                 term.width)
            << '\n';
  for (const auto& s : t.snapshots) {
    const auto l = number_at(s, {"loss"}), v = number_at(s, {"valid", "loss"});
    const auto& ae = s["summary"]["alignment_error"];
    std::string rel;
    for (const auto& e : s["summary"]["strongest_relation"])
      rel += fmt::format("{}L{} {} h{}: {:.2f} / {:.2f}", rel.empty() ? "" : "; ", e["layer"].get<int>(), e["relation"].get<std::string>(),
                         e["head"].get<int>(), e["mass"].get<double>(), e["chance"].get<double>());
    std::cout << render::fit_width(fmt::format("{:>8} {:>8} {:>8} {:>14}  {}", s["step"].get<std::int64_t>(),
                                               l ? fmt::format("{:.4f}", *l) : "-", v ? fmt::format("{:.4f}", *v) : "-",
                                               ae.is_null() ? std::string("-")
                                                            : fmt::format("{:.1f}% h{}.{}", 100 * ae["rate"].get<double>(),
                                                                          ae["layer"].get<int>(), ae["head"].get<int>()),
                                               rel.empty() ? "-" : rel),
                                   term.width)
              << '\n';
  }
  std::cout << render::wrap_lines(fmt::format("\nThe translation of probe {} of {}, \"{}\", at each snapshot (greedy; --sentence N for another):\n",
                                              o.sentence, probes.size(), visible_text(probes[pick])),
                                  term.width);
  for (const auto& s : t.snapshots) {
    const std::string tr = probe_of(s).at("translation").get<std::string>();
    std::cout << render::fit_width(fmt::format("{:>8}  {}", s["step"].get<std::int64_t>(), visible_text(tr.empty() ? "(nothing)" : tr)), term.width)
              << '\n';
  }
}

}  // namespace

void setup_timeline(CLI::App& app) {
  auto opts = std::make_shared<TimelineOptions>();
  CLI::App* sub = app.add_subcommand("timeline", "How attention formed during a training run: the snapshots of train --snapshots K");
  add_model_option(*sub, opts->model, "Run folder that attnlab train --snapshots wrote");
  sub->add_option("-s,--sentence", opts->sentence, "Which probe sentence's translation and attention to show (1 = the first)")
      ->transform(whole_number(1, 64))
      ->capture_default_str();
  add_format_option(*sub, opts->format);
  add_html_option(*sub, opts->html, "Write a page with the curves and a step slider over the attention of every layer and head");
  sub->add_flag("--no-color", opts->no_color, "Plain text without colour (also when NO_COLOR is set or stdout is not a terminal)");
  sub->callback([opts] { run_timeline(*opts); });
}

}  // namespace attnlab::cli
