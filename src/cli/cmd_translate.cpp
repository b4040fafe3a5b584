// attnlab translate "TEXT" [--model DIR] [--beam K] [--show-attention] [--html FILE] [--svg FILE --layer L --head H]
// English → French with a trained encoder–decoder; optionally the cross-attention of every layer
// and head: which source word each generated word looked at.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "cli/model_documents.hpp"
#include "cli/model_view.hpp"
#include "cli/pictures.hpp"
#include "lessons/trained.hpp"
#include "render/html_page.hpp"
#include "model/decode.hpp"
#include "tasks/confidence.hpp"
#include "tasks/task.hpp"
#include "text/tokenizer.hpp"

namespace attnlab::cli {

struct TranslateOptions {
  std::string text;
  std::string model = tasks::kDefaultTranslateModel;
  int beam = 4;
  double length_penalty = 0.6;
  bool show_attention = false;
  bool vectors = false;  // each set's q and k (the neuron view): with --show-attention --format json or --html
  bool allow_loops = false;
  std::string format = "text";
  ViewOptions view;
  std::string backend = "cpu";
  int layer = -1, head = -1;  // --svg: which cross-attention heatmap
  PictureOptions pictures;
};

namespace {

void run_translate(const TranslateOptions& o) {
  tasks::LoadedModel m = tasks::load_model(o.model, open_backend(o.backend));
  if (m.net->config().decoder_only) {
    throw InputError("--model " + o.model + " is a decoder-only language model; translate needs an encoder–decoder (e.g. " +
                     tasks::kDefaultTranslateModel + "); for a language model use `attnlab generate`");
  }
  const model::ModelConfig& c = m.net->config();
  if (o.layer >= c.decoder_layers)
    throw InputError(fmt::format("--layer: {} is out of range; this model has layers 0…{}", o.layer, c.decoder_layers - 1));
  if (o.head >= c.heads) throw InputError(fmt::format("--head: {} is out of range; this model has heads 0…{}", o.head, c.heads - 1));
  if (!o.pictures.svg.empty() && (o.layer < 0 || o.head < 0))
    throw InputError("--svg: draws one heatmap; give --layer L and --head H (the cross-attention of that layer and head)");
  const bool json = o.format == "json";
  if (o.vectors && !((o.show_attention && json) || !o.pictures.html.empty()))
    throw InputError("--vectors: adds each head's query and key vectors to the attention sets of --show-attention --format json "
                     "or of the --html page; give one of them");
  TranslateRequest req;
  req.text = o.text;
  req.beam = o.beam;
  req.length_penalty = o.length_penalty;
  req.allow_loops = o.allow_loops;
  req.record_attention = o.show_attention || json || !o.pictures.svg.empty();
  req.attention_sets = o.show_attention || !o.pictures.html.empty();
  req.cross_attention_json = json;
  req.vectors = o.vectors;
  const TranslateResult tr = translate_document(m, req, nullptr);
  const nlohmann::json& j = tr.doc;
  const model::Hypothesis& h = tr.hypothesis;
  const std::string& translation = tr.translation;
  const std::vector<std::string>& rows = tr.rows;
  const std::vector<std::string>& src_tokens = tr.src_tokens;
  const tasks::Verdict& verdict = tr.verdict;
  const int H = c.heads, S = static_cast<int>(src_tokens.size()), L = c.decoder_layers;
  std::vector<std::string> wrote;  // "attnlab: wrote FILE" lines: after the translation, or on stderr beside JSON
  if (verdict.unsure) {
    const std::size_t width = render::detect_terminal(o.view.no_color).width;
    std::cerr << render::wrap_words(render::visible_controls("attnlab: warning: this translation is likely wrong: " + tasks::reasons_text(verdict)), width, "", "  ") << '\n';
  }
  if (json) std::cout << json_text(j) << '\n';
  if (!o.pictures.html.empty()) {
    std::vector<std::string> notes;
    if (verdict.unsure) notes.push_back("This translation is likely wrong: " + tasks::reasons_text(verdict) + ".");
    for (const auto& t : src_tokens)
      if (t == "<unk>") {
        notes.push_back("Some words are not in the model's vocabulary and were read as <unk>: the model cannot know what they mean.");
        break;
      }
    wrote.push_back(write_explorer(o.pictures.html, j, "attnlab translate: " + o.text + " → " + translation, notes));
  }
  if (!o.pictures.svg.empty()) {
    core::Matrix a = core::Matrix::from_shape({h.cross_attention.size(), static_cast<std::size_t>(S)});
    for (std::size_t t = 0; t < h.cross_attention.size(); ++t)
      for (int s = 0; s < S; ++s) a(t, s) = h.cross_attention[t][o.layer][o.head * S + s];
    wrote.push_back(render::write_picture(
        "--svg", o.pictures.svg,
        render::heatmap_svg(fmt::format("cross-attention, layer {} head {}: \"{}\" → \"{}\"", o.layer, o.head, o.text, translation),
                            a, rows, src_tokens, true),
        "one heatmap"));
  }
  if (json) {
    for (const auto& w : wrote) std::cerr << w << '\n';
    return;
  }
  // Text for a person: wrapped to the terminal at spaces (scripts read --format json).
  const std::size_t width = render::detect_terminal(o.view.no_color).width;
  std::cout << render::wrap_words(translation, width) << '\n';
  for (const auto& w : wrote) std::cout << w << '\n';
  if (!o.show_attention) return;
  for (int l = 0; l < L; ++l)
    for (int hd = 0; hd < H; ++hd) {
      core::Matrix a = core::Matrix::from_shape({h.cross_attention.size(), static_cast<std::size_t>(S)});
      for (std::size_t t = 0; t < h.cross_attention.size(); ++t)
        for (int s = 0; s < S; ++s) a(t, s) = h.cross_attention[t][l][hd * S + s];
      std::cout << '\n';
      print_heatmap(fmt::format("cross-attention, layer {} head {} (rows: French words generated, columns: English source)", l, hd),
                    a, rows, src_tokens, o.view);
    }
}

}  // namespace

void setup_translate(CLI::App& app) {
  auto opts = std::make_shared<TranslateOptions>();
  CLI::App* sub = app.add_subcommand("translate", "Translate English to French with a trained model, optionally showing its cross-attention");
  sub->add_option("text", opts->text, "The English sentence")->required();
  add_model_option(*sub, opts->model);
  sub->add_option("--beam", opts->beam, "Beam size (1 = greedy)")->transform(whole_number(1, 64))->capture_default_str();
  sub->add_option("--length-penalty", opts->length_penalty, "α of the length penalty ((5+|Y|)/6)^α")->transform(real_number(0.0, 5.0))->capture_default_str();
  sub->add_flag("--show-attention", opts->show_attention, "Print the cross-attention heatmap of each layer and head");
  sub->add_flag("--vectors", opts->vectors,
                "With --show-attention --format json, or --html: each head's query and key vectors too, for the page's neuron view");
  sub->add_flag("--allow-loops", opts->allow_loops, "Let decoding write a loop (a token thrice in a row, a phrase twice back to back), which it blocks by default");
  add_backend_option(*sub, opts->backend);
  add_format_option(*sub, opts->format);
  add_view_flags(*sub, opts->view.no_color, opts->view.full);
  add_picture_options(*sub, opts->pictures, "Write one cross-attention heatmap as an SVG file (with --layer and --head)");
  sub->add_option("--layer", opts->layer, "With --svg: the decoder layer")->transform(whole_number(0, 1000));
  sub->add_option("--head", opts->head, "With --svg: the head")->transform(whole_number(0, 1000));
  sub->callback([opts] { run_translate(*opts); });
}

}  // namespace attnlab::cli
