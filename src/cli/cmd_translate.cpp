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
  const std::size_t max_len = static_cast<std::size_t>(m.net->config().max_len);
  std::vector<std::string> src_tokens;
  auto src = encode_user_text(m.vocab, o.text, max_len, &src_tokens);
  // The generated corpus ends every sentence with . ! or ?; a model trained only on it has never read a
  // sentence without, and "I love you" sent as is came back as "Je t'aime aime aime …". Such a model
  // reads the sentence with a full stop added, and says so.
  std::string read_as = o.text;
  const auto last = o.text.find_last_not_of(" \t\r\n");
  if (!m.run.english && last != std::string::npos && std::string(".!?").find(o.text[last]) == std::string::npos &&
      (m.vocab.bpe() || m.vocab.id(".") != text::Vocab::kUnk)) {
    text::EncodedSentence with_stop = text::encode_sentence(m.vocab, o.text.substr(0, last + 1) + ".", max_len + 1, "TEXT");
    if (with_stop.ids.size() <= max_len) {
      src.assign(with_stop.ids.begin(), with_stop.ids.end());
      src_tokens = std::move(with_stop.labels);
      read_as = o.text.substr(0, last + 1) + ".";
      const std::string shown = render::fit_width(render::visible_controls(read_as), 80);  // one line, cut at a character
      std::cerr << "attnlab: note: the model learned only sentences that end with . ! or ?; it reads \"" << shown << "\"\n";
    }
  }
  model::DecodeOptions d;
  d.beam = o.beam;
  d.length_penalty = o.length_penalty;
  d.block_loops = !o.allow_loops;
  d.record_attention = o.show_attention || o.format == "json" || !o.pictures.svg.empty();
  const model::ModelConfig& c = m.net->config();
  if (o.layer >= c.decoder_layers)
    throw InputError(fmt::format("--layer: {} is out of range; this model has layers 0…{}", o.layer, c.decoder_layers - 1));
  if (o.head >= c.heads) throw InputError(fmt::format("--head: {} is out of range; this model has heads 0…{}", o.head, c.heads - 1));
  if (!o.pictures.svg.empty() && (o.layer < 0 || o.head < 0))
    throw InputError("--svg: draws one heatmap; give --layer L and --head H (the cross-attention of that layer and head)");
  const model::Hypothesis h = model::translate(*m.net, src, d);
  std::vector<std::string> out_tokens = m.vocab.tokens_of(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
  const std::string translation = m.vocab.decode(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
  const int H = c.heads, S = static_cast<int>(src.size()), L = c.decoder_layers;
  std::vector<std::string> rows = out_tokens;
  rows.push_back("<eos>");
  const bool json = o.format == "json";
  // Is it likely wrong? Unseen words, the model's own calibrated confidence, a loop, the length limit
  // (tasks/confidence.hpp): one verdict, in the JSON and as one warning line.
  std::string calibration_note;
  const std::optional<tasks::Calibration> calibration = tasks::load_calibration(m, &calibration_note);
  const tasks::Verdict verdict = tasks::judge_translation(m, o.text, static_cast<int>(src.size()), h, d, calibration);
  const std::vector<std::string>& unseen = verdict.inputs.unseen_words;
  const bool cut = verdict.inputs.length_limit > 0;
  const std::string& loop_phrase = verdict.inputs.loop;
  std::vector<std::string> wrote;  // "attnlab: wrote FILE" lines: after the translation, or on stderr beside JSON

  // Every attention of the translation: the model re-reads the source and its own output (teacher
  // forcing, no dropout), which gives the attention the decoder used at each step of decoding.
  nlohmann::json sets = nlohmann::json::array();
  if (o.show_attention || !o.pictures.html.empty()) {
    std::vector<int> tgt_in = {model::kBos};
    tgt_in.insert(tgt_in.end(), h.tokens.begin(), h.tokens.end());
    lessons::forward_one(*m.net, src, tgt_in);
    std::vector<std::string> written = {"<bos>"};
    written.insert(written.end(), out_tokens.begin(), out_tokens.end());
    std::vector<std::vector<float>> enc, dec, cross;
    for (int l = 0; l < c.encoder_layers; ++l) enc.push_back(m.net->encoder_attention(l));
    for (int l = 0; l < L; ++l) dec.push_back(m.net->decoder_self_attention(l)), cross.push_back(m.net->decoder_cross_attention(l));
    auto ids = [](int n) {
      std::vector<int> v(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
      return v;
    };
    const std::size_t T = rows.size();
    AttentionSetInfo e{"encoder self-attention", "self", "each English word gathering from every word of the sentence.",
                       "attending (English)", "attended to (English)", src_tokens, src_tokens, ids(c.encoder_layers), ids(H)};
    sets.push_back(attention_set(e, [&](int l, int hd) { return enc[static_cast<std::size_t>(l)].data() + static_cast<std::size_t>(hd) * src.size() * src.size(); }));
    AttentionSetInfo ds{"decoder self-attention", "causal",
                        "each row is the step that writes that French word, gathering from the words already written (<bos> first).",
                        "word being written", "already written", rows, written, ids(L), ids(H)};
    sets.push_back(attention_set(ds, [&](int l, int hd) { return dec[static_cast<std::size_t>(l)].data() + static_cast<std::size_t>(hd) * T * T; }));
    AttentionSetInfo cr{"cross-attention", "cross", "each row is the step that writes that French word, gathering from the English source.",
                        "French word being written", "English source", rows, src_tokens, ids(L), ids(H)};
    sets.push_back(attention_set(cr, [&](int l, int hd) { return cross[static_cast<std::size_t>(l)].data() + static_cast<std::size_t>(hd) * T * src.size(); }));
  }
  nlohmann::json j = {{"source", o.text}, {"source_tokens", src_tokens}, {"translation", translation},
                      {"tokens", out_tokens}, {"logprob", h.logprob}, {"score", h.score}, {"finished", h.finished},
                      {"beam", o.beam}, {"loops_blocked", !o.allow_loops}, {"model", model_json(m)}};
  if (read_as != o.text) j["read_as"] = read_as;  // the sentence with the full stop the model needs
  if (!m.known_source_words.empty()) j["unseen_words"] = unseen;
  j["reached_length_limit"] = cut;
  j["loop"] = loop_phrase.empty() ? nlohmann::json(nullptr) : nlohmann::json(loop_phrase);
  j["unsure"] = verdict.unsure;
  j["unsure_why"] = verdict.why_json();
  j["confidence"] = {{"min_token_prob", verdict.confidence.min_token_prob},
                     {"mean_logprob", verdict.confidence.mean_logprob},
                     {"calibrated", verdict.calibrated}};
  if (!calibration_note.empty()) j["confidence"]["not_calibrated_because"] = calibration_note;
  if (calibration) j["confidence"]["floors"] = {{"min_token_prob", calibration->min_token_prob}, {"mean_logprob", calibration->mean_logprob},
                                                {"quantile", calibration->quantile}};
  if (json) {
    nlohmann::json layers = nlohmann::json::array();
    for (int l = 0; l < L; ++l) {
      nlohmann::json heads = nlohmann::json::array();
      for (int hd = 0; hd < H; ++hd) {
        nlohmann::json mat = nlohmann::json::array();
        for (const auto& step : h.cross_attention)
          mat.push_back(std::vector<float>(step[l].begin() + hd * S, step[l].begin() + (hd + 1) * S));
        heads.push_back(mat);
      }
      layers.push_back(heads);
    }
    j["cross_attention"] = {{"rows", rows}, {"columns", src_tokens}, {"layers", layers}};
  }
  if (!sets.empty()) j["attention"] = sets;
  if (verdict.unsure) {
    const std::size_t width = render::detect_terminal(o.view.no_color).width;
    std::cerr << render::wrap_words(render::visible_controls("attnlab: warning: this translation is likely wrong: " + tasks::reasons_text(verdict)), width, "", "  ") << '\n';
  }
  if (json) std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
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
  sub->add_option("-m,--model", opts->model, "Model folder (or .ckpt file)")->capture_default_str();
  sub->add_option("--beam", opts->beam, "Beam size (1 = greedy)")->transform(whole_number(1, 64))->capture_default_str();
  sub->add_option("--length-penalty", opts->length_penalty, "α of the length penalty ((5+|Y|)/6)^α")->transform(real_number(0.0, 5.0))->capture_default_str();
  sub->add_flag("--show-attention", opts->show_attention, "Print the cross-attention heatmap of each layer and head");
  sub->add_flag("--allow-loops", opts->allow_loops, "Let decoding write a loop (a token thrice in a row, a phrase twice back to back), which it blocks by default");
  add_backend_option(*sub, opts->backend);
  sub->add_option("-f,--format", opts->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  sub->add_flag("--no-color", opts->view.no_color, "Plain text without colour");
  sub->add_flag("--full", opts->view.full, "Never abbreviate wide matrices");
  add_picture_options(*sub, opts->pictures, "Write one cross-attention heatmap as an SVG file (with --layer and --head)");
  sub->add_option("--layer", opts->layer, "With --svg: the decoder layer")->transform(whole_number(0, 1000));
  sub->add_option("--head", opts->head, "With --svg: the head")->transform(whole_number(0, 1000));
  sub->callback([opts] { run_translate(*opts); });
}

}  // namespace attnlab::cli
