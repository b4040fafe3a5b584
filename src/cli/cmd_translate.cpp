// attnlab translate "TEXT" [--model DIR] [--beam K] [--show-attention]
// English → French with a trained encoder–decoder; optionally the cross-attention of every layer
// and head: which source word each generated word looked at.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "cli/model_view.hpp"
#include "model/decode.hpp"
#include "tasks/task.hpp"

namespace attnlab::cli {

struct TranslateOptions {
  std::string text;
  std::string model = tasks::kDefaultTranslateModel;
  int beam = 4;
  double length_penalty = 0.6;
  bool show_attention = false;
  std::string format = "text";
  ViewOptions view;
  std::string backend = "cpu";
};

namespace {

void run_translate(const TranslateOptions& o) {
  tasks::LoadedModel m = tasks::load_model(o.model, open_backend(o.backend));
  if (m.net->config().decoder_only) {
    throw InputError("--model " + o.model + " is a decoder-only language model; translate needs an encoder–decoder (e.g. " +
                     tasks::kDefaultTranslateModel + "); for a language model use `attnlab generate`");
  }
  std::vector<std::string> src_tokens;
  const auto src = encode_user_text(m.vocab, o.text, static_cast<std::size_t>(m.net->config().max_len), &src_tokens);
  model::DecodeOptions d;
  d.beam = o.beam;
  d.length_penalty = o.length_penalty;
  d.record_attention = o.show_attention || o.format == "json";
  const model::Hypothesis h = model::translate(*m.net, src, d);
  std::vector<std::string> out_tokens = m.vocab.tokens_of(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
  const std::string translation = text::detokenize(out_tokens);
  const int H = m.net->config().heads, S = static_cast<int>(src.size()), L = m.net->config().decoder_layers;
  std::vector<std::string> rows = out_tokens;
  rows.push_back("<eos>");
  if (o.format == "json") {
    nlohmann::json j = {{"source", o.text}, {"source_tokens", src_tokens}, {"translation", translation},
                        {"tokens", out_tokens}, {"logprob", h.logprob}, {"score", h.score}, {"finished", h.finished},
                        {"beam", o.beam}};
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
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  std::cout << translation << '\n';
  if (!h.finished) std::cerr << "attnlab: warning: the translation reached the length limit without <eos>\n";
  if (!o.show_attention) return;
  for (int l = 0; l < L; ++l)
    for (int hd = 0; hd < H; ++hd) {
      Matrix a = Matrix::from_shape({h.cross_attention.size(), static_cast<std::size_t>(S)});
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
  sub->add_option("--beam", opts->beam, "Beam size (1 = greedy)")->check(whole_number(1, 64))->capture_default_str();
  sub->add_option("--length-penalty", opts->length_penalty, "α of the length penalty ((5+|Y|)/6)^α")->check(real_number(0.0, 5.0))->capture_default_str();
  sub->add_flag("--show-attention", opts->show_attention, "Print the cross-attention heatmap of each layer and head");
  add_backend_option(*sub, opts->backend);
  sub->add_option("-f,--format", opts->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  sub->add_flag("--no-color", opts->view.no_color, "Plain text without colour");
  sub->add_flag("--full", opts->view.full, "Never abbreviate wide matrices");
  sub->callback([opts] { run_translate(*opts); });
}

}  // namespace attnlab::cli
