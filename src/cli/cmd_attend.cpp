// attnlab attend "TEXT" [--model DIR] [--layer L] [--head H] [--focus WORD] [--html FILE] [--svg FILE]
// The self-attention a trained model puts on a sentence: the encoder's for a translation model,
// the (causal) decoder's for a language model. E.g. what "it" attends to in the coreference pair.
#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "cli/model_documents.hpp"
#include "cli/model_view.hpp"
#include "cli/pictures.hpp"
#include "corpus/tables.hpp"
#include "render/html_page.hpp"
#include "lessons/trained.hpp"
#include "model/transformer.hpp"
#include "tasks/task.hpp"

namespace attnlab::cli {

struct AttendOptions {
  std::string text;
  std::string model = tasks::kDefaultTranslateModel;
  int layer = -1;  // −1: all
  int head = -1;
  std::string focus;  // one token's row across every layer and head
  bool vectors = false;  // each head's q and k in the JSON and the page (the neuron view)
  std::string format = "text";
  ViewOptions view;
  std::string backend = "cpu";
  PictureOptions pictures;
};

namespace {

// The columns of the sentence's nouns (any token that is a noun of the lexicon, data/lexicon, in the
// singular or the plural): a table too wide for the terminal keeps them, beside the focus word, since
// they are what a learner compares ("it" → animal or street).
std::vector<std::size_t> noun_columns(const std::vector<std::string>& toks) {
  std::vector<std::size_t> out;
  try {
    const corpus::LexiconTables& lex = corpus::lexicon_tables();
    for (std::size_t j = 0; j < toks.size(); ++j) {
      std::string w;
      for (char ch : toks[j]) w += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (w.rfind("##", 0) == 0) continue;
      for (const auto& nn : lex.nouns)
        if (nn.en == w || nn.en_plural == w) {
          out.push_back(j);
          break;
        }
    }
  } catch (const std::exception&) {
    // Without the lexicon (a data folder without it) the tables keep only the focus word.
  }
  return out;
}

void run_attend(const AttendOptions& o) {
  tasks::LoadedModel m = tasks::load_model(o.model, open_backend(o.backend));
  const model::ModelConfig& c = m.net->config();
  const int layers = c.decoder_only ? c.decoder_layers : c.encoder_layers;
  if (o.layer >= layers) throw InputError(fmt::format("--layer: {} is out of range; this model has layers 0…{}", o.layer, layers - 1));
  if (o.head >= c.heads) throw InputError(fmt::format("--head: {} is out of range; this model has heads 0…{}", o.head, c.heads - 1));
  if (!o.pictures.svg.empty() && o.focus.empty() && (o.layer < 0 || o.head < 0))
    throw InputError("--svg: draws one heatmap; give --layer L and --head H (or --focus WORD for one token's row in every head)");
  if (o.vectors && o.format != "json" && o.pictures.html.empty())
    throw InputError("--vectors: adds each head's query and key vectors to --format json or to the --html page; give one of them");
  const AttendComputation a = compute_attend(m, o.text, "TEXT", o.layer, o.head, nullptr, o.vectors);
  const std::vector<std::string>& toks = a.tokens;
  const std::size_t n = toks.size();
  const std::vector<int>& layer_ids = a.layer_ids;
  const std::vector<int>& head_ids = a.head_ids;
  auto block = [&](int l, int hd) { return a.block(l, hd); };

  std::size_t focus_row = n;
  if (!o.focus.empty()) {
    auto fold = [](std::string s) {
      if (s.rfind("##", 0) == 0) s.erase(0, 2);
      for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return s;
    };
    for (std::size_t i = 0; i < n && focus_row == n; ++i)
      if (fold(toks[i]) == fold(o.focus)) focus_row = i;
    if (focus_row == n) {
      std::string list;
      for (std::size_t i = c.decoder_only ? 1 : 0; i < n; ++i) list += (list.empty() ? "" : ", ") + ("\"" + toks[i] + "\"");
      throw InputError(fmt::format("--focus: \"{}\" is not one of the sentence's tokens ({})", render::visible_controls(o.focus), list));
    }
  }
  const bool json = o.format == "json";
  std::ostream& note = json ? std::cerr : std::cout;
  std::vector<std::string> page_notes;  // what the page's reader must know
  if (std::find(toks.begin(), toks.end(), "<unk>") != toks.end())
    page_notes.push_back("Some words are not in the model's vocabulary and were read as <unk>: the model cannot know what they mean.");

  if (!o.focus.empty()) {
    // The row of one token in every layer and head: what that token gathers from, side by side.
    const std::size_t row = focus_row;
    std::vector<std::string> row_labels;
    std::vector<float> vals;
    nlohmann::json jr = nlohmann::json::array();
    for (int l : layer_ids)
      for (int hd : head_ids) {
        const float* r = block(l, hd) + row * n;
        row_labels.push_back(fmt::format("L{} H{}", l, hd));
        vals.insert(vals.end(), r, r + n);
        jr.push_back({{"layer", l}, {"head", hd}, {"weights", std::vector<float>(r, r + n)}});
      }
    const std::string title = fmt::format("what \"{}\" (position {}) attends to, in each layer (L) and head (H){}", toks[row], row,
                                          c.decoder_only ? "; tokens after it are masked" : "");
    nlohmann::json j = attend_document(m, a, false);
    j["focus"] = {{"token", toks[row]}, {"position", row}, {"rows", jr}};
    if (json) std::cout << json_text(j) << '\n';
    if (!o.pictures.html.empty()) note << write_explorer(o.pictures.html, j, "attnlab attend: " + o.text, page_notes) << '\n';
    if (!o.pictures.svg.empty())
      note << render::write_picture("--svg", o.pictures.svg, render::heatmap_svg(title, to_matrix(vals.data(), row_labels.size(), n), row_labels, toks, true),
                                    "one heatmap") << '\n';
    if (json || !o.pictures.html.empty() || !o.pictures.svg.empty()) return;
    std::vector<std::size_t> keep{row};
    for (std::size_t col : noun_columns(toks))
      if (col != row) keep.push_back(col);
    print_heatmap(title, to_matrix(vals.data(), row_labels.size(), n), row_labels, toks, o.view, keep);
    return;
  }
  if (json || !o.pictures.html.empty()) {
    const nlohmann::json j = attend_document(m, a, true);
    if (json) std::cout << json_text(j) << '\n';
    if (!o.pictures.html.empty()) note << write_explorer(o.pictures.html, j, "attnlab attend: " + o.text, page_notes) << '\n';
  }
  const std::string kind = c.decoder_only ? "decoder (causal)" : "encoder";
  if (!o.pictures.svg.empty()) {
    note << render::write_picture("--svg", o.pictures.svg,
                                  render::heatmap_svg(fmt::format("{} self-attention, layer {} head {}", kind, o.layer, o.head),
                                                      to_matrix(block(o.layer, o.head), n, n), toks, toks, true),
                                  "one heatmap") << '\n';
  }
  if (json || !o.pictures.html.empty() || !o.pictures.svg.empty()) return;
  const std::vector<std::size_t> nouns = noun_columns(toks);
  for (int l : layer_ids)
    for (int hd : head_ids) {
      print_heatmap(fmt::format("{} self-attention, layer {} head {} (rows attend to columns{})", kind, l, hd,
                                c.decoder_only ? "; right of the diagonal is masked: exactly 0" : ""),
                    to_matrix(block(l, hd), n, n), toks, toks, o.view, nouns);
      std::cout << '\n';
    }
}

}  // namespace

void setup_attend(CLI::App& app) {
  auto opts = std::make_shared<AttendOptions>();
  CLI::App* sub = app.add_subcommand("attend", "Show a trained model's self-attention on a sentence");
  sub->add_option("text", opts->text, "The sentence")->required();
  add_model_option(*sub, opts->model);
  sub->add_option("--layer", opts->layer, "Only this layer (default: all)")->transform(whole_number(0, 1000));
  sub->add_option("--head", opts->head, "Only this head (default: all)")->transform(whole_number(0, 1000));
  sub->add_option("--focus", opts->focus, "One token's row in every layer and head (e.g. --focus it)");
  sub->add_flag("--vectors", opts->vectors,
                "With --format json or --html: each head's query and key vectors too (\"vectors\"), for the page's neuron view");
  add_backend_option(*sub, opts->backend);
  add_format_option(*sub, opts->format);
  add_view_flags(*sub, opts->view.no_color, opts->view.full);
  add_picture_options(*sub, opts->pictures,
                      "Write one heatmap as an SVG file (needs --layer and --head, or --focus WORD for that token's row in every head)");
  sub->callback([opts] { run_attend(*opts); });
}

}  // namespace attnlab::cli
