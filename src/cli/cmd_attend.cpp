// attnlab attend "TEXT" [--model DIR] [--layer L] [--head H]
// The self-attention a trained model puts on a sentence: the encoder's for a translation model,
// the (causal) decoder's for a language model. E.g. what "it" attends to in the coreference pair.
#include <cctype>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "cli/model_view.hpp"
#include "model/transformer.hpp"
#include "tasks/task.hpp"

namespace attnlab::cli {

struct AttendOptions {
  std::string text;
  std::string model = tasks::kDefaultTranslateModel;
  int layer = -1;  // −1: all
  int head = -1;
  std::string focus;  // one token's row across every layer and head
  std::string format = "text";
  ViewOptions view;
  std::string backend = "cpu";
};

namespace {

void run_attend(const AttendOptions& o) {
  tasks::LoadedModel m = tasks::load_model(o.model, open_backend(o.backend));
  const model::ModelConfig& c = m.net->config();
  const int layers = c.decoder_only ? c.decoder_layers : c.encoder_layers;
  if (o.layer >= layers) throw InputError(fmt::format("--layer: {} is out of range; this model has layers 0…{}", o.layer, layers - 1));
  if (o.head >= c.heads) throw InputError(fmt::format("--head: {} is out of range; this model has heads 0…{}", o.head, c.heads - 1));
  std::vector<std::string> toks;
  const auto ids = encode_user_text(m.vocab, o.text, static_cast<std::size_t>(c.max_len - 1), &toks);
  model::Batch b;
  b.B = 1;
  if (c.decoder_only) {
    // The language model reads <bos> + text; report the rows of the text's own tokens.
    b.T = static_cast<int>(ids.size()) + 1;
    b.tgt_in = {model::kBos};
    b.tgt_in.insert(b.tgt_in.end(), ids.begin(), ids.end());
    b.tgt_out.assign(b.tgt_in.size(), model::kPad);
    toks.insert(toks.begin(), "<bos>");
  } else {
    b.S = static_cast<int>(ids.size());
    b.src = ids;
    b.src_len = {b.S};
    b.T = 1;
    b.tgt_in = {model::kBos};
    b.tgt_out = {model::kPad};
  }
  m.net->forward(b, 0.0f, false, nullptr);
  const std::size_t n = toks.size();
  for (auto& t : toks) t = visible_controls(t);
  if (!o.focus.empty()) {
    // The row of one token in every layer and head: what that token gathers from, side by side.
    auto fold = [](std::string s) {
      if (s.rfind("##", 0) == 0) s.erase(0, 2);
      for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return s;
    };
    std::size_t row = n;
    for (std::size_t i = 0; i < n && row == n; ++i)
      if (fold(toks[i]) == fold(o.focus)) row = i;
    if (row == n) {
      std::string list;
      for (std::size_t i = c.decoder_only ? 1 : 0; i < n; ++i) list += (list.empty() ? "" : ", ") + ("\"" + toks[i] + "\"");
      throw InputError(fmt::format("--focus: \"{}\" is not one of the sentence's tokens ({})", visible_controls(o.focus), list));
    }
    std::vector<std::string> row_labels;
    std::vector<float> vals;
    nlohmann::json jr = nlohmann::json::array();
    for (int l = 0; l < layers; ++l) {
      if (o.layer >= 0 && l != o.layer) continue;
      const auto& att = c.decoder_only ? m.net->decoder_self_attention(l) : m.net->encoder_attention(l);
      for (int hd = 0; hd < c.heads; ++hd) {
        if (o.head >= 0 && hd != o.head) continue;
        const float* r = att.data() + static_cast<std::size_t>(hd) * n * n + row * n;
        row_labels.push_back(fmt::format("L{} H{}", l, hd));
        vals.insert(vals.end(), r, r + n);
        jr.push_back({{"layer", l}, {"head", hd}, {"weights", std::vector<float>(r, r + n)}});
      }
    }
    if (o.format == "json") {
      std::cout << nlohmann::json({{"tokens", toks}, {"focus", {{"token", toks[row]}, {"position", row}, {"rows", jr}}}}).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      return;
    }
    print_heatmap(fmt::format("what \"{}\" (position {}) attends to, in each layer (L) and head (H){}", toks[row], row,
                              c.decoder_only ? "; tokens after it are masked" : ""),
                  to_matrix(vals.data(), row_labels.size(), n), row_labels, toks, o.view, {row});
    return;
  }
  nlohmann::json jl = nlohmann::json::array();
  for (int l = 0; l < layers; ++l) {
    if (o.layer >= 0 && l != o.layer) continue;
    const auto& att = c.decoder_only ? m.net->decoder_self_attention(l) : m.net->encoder_attention(l);
    nlohmann::json jh = nlohmann::json::array();
    for (int hd = 0; hd < c.heads; ++hd) {
      if (o.head >= 0 && hd != o.head) continue;
      const Matrix a = to_matrix(att.data() + static_cast<std::size_t>(hd) * n * n, n, n);
      if (o.format == "json") {
        nlohmann::json rows = nlohmann::json::array();
        for (std::size_t i = 0; i < n; ++i) rows.push_back(std::vector<float>(a.data() + i * n, a.data() + (i + 1) * n));
        jh.push_back({{"layer", l}, {"head", hd}, {"weights", rows}});
      } else {
        print_heatmap(fmt::format("{} self-attention, layer {} head {} (rows attend to columns{})",
                                  c.decoder_only ? "decoder (causal)" : "encoder", l, hd,
                                  c.decoder_only ? "; right of the diagonal is masked: exactly 0" : ""),
                      a, toks, toks, o.view);
        std::cout << '\n';
      }
    }
    if (o.format == "json") jl.push_back(jh);
  }
  if (o.format == "json") std::cout << nlohmann::json({{"tokens", toks}, {"layers", jl}}).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace

void setup_attend(CLI::App& app) {
  auto opts = std::make_shared<AttendOptions>();
  CLI::App* sub = app.add_subcommand("attend", "Show a trained model's self-attention on a sentence");
  sub->add_option("text", opts->text, "The sentence")->required();
  sub->add_option("-m,--model", opts->model, "Model folder (or .ckpt file)")->capture_default_str();
  sub->add_option("--layer", opts->layer, "Only this layer (default: all)")->check(whole_number(0, 1000));
  sub->add_option("--head", opts->head, "Only this head (default: all)")->check(whole_number(0, 1000));
  sub->add_option("--focus", opts->focus, "One token's row in every layer and head (e.g. --focus it)");
  add_backend_option(*sub, opts->backend);
  sub->add_option("-f,--format", opts->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  sub->add_flag("--no-color", opts->view.no_color, "Plain text without colour");
  sub->add_flag("--full", opts->view.full, "Never abbreviate wide matrices");
  sub->callback([opts] { run_attend(*opts); });
}

}  // namespace attnlab::cli
