#include "cli/lesson_options.hpp"

#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/pictures.hpp"
#include "cli/validators.hpp"
#include "lessons/output.hpp"
#include "lessons/session.hpp"
#include "render/terminal.hpp"
#include "tasks/task.hpp"

namespace attnlab::cli {

void add_lesson_options(CLI::App* sub, LessonFlags& f) {
  f.sentence_opt = sub->add_option("-s,--sentence", f.sentence,
                                   "Sentence to run on (at most 32 tokens; words and punctuation count). Default: the lesson's own");
  f.target_opt = sub->add_option("-t,--target", f.target, "Decoder-side sentence for cross-attention (lessons 8 and 9)");
  add_model_option(*sub, f.model,
                   std::string("Trained model folder (or .ckpt file) to use. Default: ") + tasks::kDefaultTranslateModel + " when it exists");
  sub->add_flag("--random", f.random, "Seeded random weights instead of the trained model (as before training)");
  f.heads_opt = sub->add_option("--heads", f.heads,
                                "Number of attention heads h (1 to 64; must divide --d-model). Implies random weights. Default: 2")
                    ->transform(whole_number(1, static_cast<long long>(lessons::kMaxHeads)));
  f.d_model_opt = sub->add_option("--d-model", f.d_model, "Model width d_model (2 to 512). Implies random weights. Default: 8")
                      ->transform(whole_number(2, static_cast<long long>(lessons::kMaxDModel)));
  add_seed_option(*sub, f.seed, "Seed of the random embeddings and weights (0 to 2^64-1)");
  sub->add_option("--weights", f.weights,
                  "Attention weights from a JSON file in the schema of 'attnlab attention --input' (its heads and w_o are "
                  "used for every attention block; its x only fixes d_model). Implies random weights elsewhere")
      ->check(CLI::ExistingFile);
  add_format_option(*sub, f.format, "text, or json: every intermediate of every step as one JSON document");
  add_view_flags(*sub, f.no_color, f.full);
  sub->add_flag("--no-pause", f.no_pause, "Run straight through instead of waiting for Enter after each step");
  add_html_option(*sub, f.html, "Write every step of the lesson(s), each matrix a heatmap beside the step's text, to FILE "
                               "(one self-contained HTML page: open it in a browser)");
  sub->add_option("--precision", f.precision, "Digits after the decimal point")->transform(whole_number(0, 8))->capture_default_str();
}

lessons::LessonOptions to_options(const LessonFlags& f) {
  lessons::LessonOptions o;
  if (f.sentence_opt->count()) o.sentence = f.sentence;
  if (f.target_opt->count()) o.target = f.target;
  if (f.heads_opt->count()) o.heads = f.heads;
  if (f.d_model_opt->count()) o.d_model = f.d_model;
  o.seed = f.seed;
  o.weights_file = f.weights;
  o.random = f.random;
  o.model_dir = f.model;
  o.format = f.format;
  o.no_color = f.no_color;
  o.full = f.full;
  o.no_pause = f.no_pause;
  o.precision = f.precision;
  return o;
}

void run_lessons(const lessons::LessonOptions& options, const std::vector<std::string>& keys, bool tour, const std::string& html) {
  lessons::LessonOptions o = options;
  if (!html.empty()) o.no_pause = true;
  lessons::Session session(o, tour);
  std::vector<const lessons::LessonDoc*> docs;
  if (keys.empty()) {
    for (const auto& d : session.lessons()) docs.push_back(&d);
  } else {
    for (const auto& k : keys) docs.push_back(&lessons::find_lesson(session.lessons(), k));
  }
  std::unique_ptr<lessons::Output> out;
  lessons::RenderSettings rs;
  rs.term = render::detect_terminal(o.no_color);
  rs.full = o.full;
  rs.precision = o.precision;
  std::ostringstream page_json;
  if (!html.empty()) out = std::make_unique<lessons::JsonOutput>(page_json);
  else if (o.format == "json") out = std::make_unique<lessons::JsonOutput>(std::cout);
  else out = std::make_unique<lessons::TextOutput>(std::cout, rs);

  const bool pause = !tour && lessons::interactive(o);
  const bool color = rs.term.color != render::ColorMode::None;
  std::function<bool()> pause_fn;
  if (pause) pause_fn = [color] { return lessons::pause_for_key(color); };
  for (const lessons::LessonDoc* d : docs)
    if (!session.run(*d, *out, pause_fn)) break;
  out->finish();
  if (!html.empty()) {
    const nlohmann::json doc = nlohmann::json::parse(page_json.str());
    if (o.format == "json") std::cout << page_json.str();
    std::string title = "attnlab " + std::string(tour ? "tour" : "lesson");
    if (doc.contains("lessons") && doc["lessons"].size() == 1) title += ": " + doc["lessons"][0].value("title", "");
    (o.format == "json" ? std::cerr : std::cout) << write_explorer(html, doc, title) << '\n';
  }
  std::cout.flush();
}

}  // namespace attnlab::cli
