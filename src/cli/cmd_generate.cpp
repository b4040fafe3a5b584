// attnlab generate "TEXT" [--model DIR] [--top K] [--max-new N] [--temperature T --top-k K --top-p P --seed S -n N]
// With the decoder-only language model: the probabilities of the next token, and a sampled (or greedy)
// continuation; --show-attention adds the causal self-attention over the whole text.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "render/terminal.hpp"
#include "cli/validators.hpp"
#include "cli/model_view.hpp"
#include "cli/pictures.hpp"
#include "lessons/trained.hpp"
#include "model/decode.hpp"
#include "tasks/task.hpp"
#include "text/bpe.hpp"

namespace attnlab::cli {

struct GenerateOptions {
  std::string text;
  std::string model = tasks::kDefaultLmModel;
  int top = 10;
  int max_new = 30;
  double temperature = 0.8;  // 0: greedy
  int top_k = 0;
  double top_p = 0.95;
  std::uint64_t seed = 1;
  int samples = 1;
  bool show_attention = false;
  int layer = -1;
  std::string format = "text";
  std::string backend = "cpu";
  ViewOptions view;
  PictureOptions pictures;
};

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// A token as a candidate: its exact text in quotes, so a leading space (a word's start) shows.
// The labels of `more` as they read after `context`: one convention for the prompt, the candidates and
// the continuation, in text and JSON (Vocab::labels_of: a piece that continues the word before it is
// "##tle", a piece that starts a word has no leading space), so where words start is never lost.
std::vector<std::string> labels_after(const text::Vocab& v, const std::vector<int>& context, const std::vector<int>& more) {
  std::vector<text::TokenId> all(context.begin(), context.end());
  all.insert(all.end(), more.begin(), more.end());
  const std::vector<std::string> l = v.labels_of(all);
  return {l.end() - static_cast<std::ptrdiff_t>(more.size()), l.end()};
}

void run_generate(const GenerateOptions& o) {
  tasks::LoadedModel m = tasks::load_model(o.model, open_backend(o.backend));
  if (!m.net->config().decoder_only) {
    throw InputError("--model " + o.model + " is an encoder–decoder; generate needs a decoder-only language model (e.g. " +
                     tasks::kDefaultLmModel + "); to translate use `attnlab translate`");
  }
  if (o.layer >= m.net->config().decoder_layers)
    throw InputError(fmt::format("--layer: {} is out of range; this model has layers 0…{}", o.layer, m.net->config().decoder_layers - 1));
  std::vector<std::string> toks;
  const auto ids = encode_user_text(m.vocab, o.text, static_cast<std::size_t>(m.net->config().max_len - 1), &toks);
  const std::vector<double> lp = model::next_token_logprobs(*m.net, ids);
  std::vector<int> order(lp.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return lp[a] != lp[b] ? lp[a] > lp[b] : a < b; });
  const int k = std::min<int>(o.top, static_cast<int>(order.size()));
  model::SampleOptions so;
  so.temperature = o.temperature;
  so.top_k = o.top_k;
  so.top_p = o.top_p;
  const bool greedy = o.temperature == 0;
  const std::string how = greedy ? "greedy: the most likely token each time"
                                 : fmt::format("sampled: temperature {:g}, top-k {}, top-p {:g}", o.temperature,
                                               o.top_k ? std::to_string(o.top_k) : std::string("off"), o.top_p);
  struct Sample {
    std::uint64_t seed;
    std::vector<int> ids;
    std::string text;
  };
  std::vector<Sample> samples;
  for (int i = 0; i < (greedy ? 1 : o.samples); ++i) {
    Sample s;
    s.seed = o.seed + static_cast<std::uint64_t>(i);
    so.seed = s.seed;
    s.ids = greedy ? model::continue_greedy(*m.net, ids, o.max_new) : model::continue_sampled(*m.net, ids, o.max_new, so);
    std::vector<text::TokenId> all(ids.begin(), ids.end());
    all.insert(all.end(), s.ids.begin(), s.ids.end());
    s.text = m.vocab.decode(all);
    samples.push_back(std::move(s));
  }
  // The causal self-attention over the prompt and the first continuation (every layer and head):
  // each row may only look left.
  std::vector<std::string> labels;
  std::vector<std::vector<float>> att;  // per layer: heads × n × n
  if (o.show_attention || !o.pictures.html.empty()) {
    const Sample& s = samples.front();
    std::vector<int> tgt_in = {model::kBos};
    tgt_in.insert(tgt_in.end(), ids.begin(), ids.end());
    tgt_in.insert(tgt_in.end(), s.ids.begin(), s.ids.end());
    lessons::forward_one(*m.net, {}, tgt_in);
    labels = m.vocab.tokens_of(std::vector<text::TokenId>(tgt_in.begin() + 1, tgt_in.end()));
    labels.insert(labels.begin(), "<bos>");
    for (auto& l : labels) l = render::visible_controls(l);
    for (int l = 0; l < m.net->config().decoder_layers; ++l) att.push_back(m.net->decoder_self_attention(l));
  }
  const std::size_t n = labels.size();
  auto attention_sets = [&] {
    AttentionSetInfo si;
    si.name = "causal self-attention";
    si.kind = "causal";
    si.description = fmt::format("the prompt ({} tokens) and the first continuation; each row is a token gathering from the tokens up to it.",
                                 toks.size());
    si.row_title = "attending (query)";
    si.column_title = "attended to (key)";
    si.rows = labels;
    si.columns = labels;
    for (int l = 0; l < m.net->config().decoder_layers; ++l) si.layers.push_back(l);
    for (int hd = 0; hd < m.net->config().heads; ++hd) si.heads.push_back(hd);
    return nlohmann::json::array(
        {attention_set(si, [&](int l, int hd) { return att[static_cast<std::size_t>(l)].data() + static_cast<std::size_t>(hd) * n * n; })});
  };
  std::string wrote;  // "attnlab: wrote FILE", printed after the text
  if (o.format == "json" || !o.pictures.html.empty()) {
    nlohmann::json next = nlohmann::json::array();
    const std::vector<int> prompt(ids.begin(), ids.end());
    for (int i = 0; i < k; ++i)
      next.push_back({{"token", labels_after(m.vocab, prompt, {order[i]}).front()}, {"text", m.vocab.word(order[i])}, {"id", order[i]},
                      {"probability", std::exp(lp[order[i]])}});
    nlohmann::json js = nlohmann::json::array();
    for (const auto& s : samples) {
      js.push_back({{"seed", greedy ? nlohmann::json() : nlohmann::json(s.seed)},
                    {"continuation", labels_after(m.vocab, std::vector<int>(ids.begin(), ids.end()), std::vector<int>(s.ids.begin(), s.ids.end()))},
                    {"text", s.text}});
    }
    nlohmann::json j = {{"prompt_tokens", toks}, {"next", next}, {"decoding", how}, {"samples", js}, {"model", model_json(m)}};
    if (!samples.empty()) {  // the fields of the first sample at top level, as before
      j["continuation"] = js[0]["continuation"];
      j["text"] = js[0]["text"];
    }
    if (!att.empty()) j["attention"] = attention_sets();
    if (o.format == "json") std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    if (!o.pictures.html.empty()) {
      wrote = write_explorer(o.pictures.html, j, "attnlab generate: " + o.text + " …");
      if (o.format == "json") std::cerr << wrote << '\n';
    }
    if (o.format == "json") return;
  }
  // Every line fits the terminal: long ones wrap at spaces with a hanging indent.
  const std::size_t width = render::detect_terminal(o.view.no_color).width;
  // `first` may start with the line's own indent, which wrap_words keeps as its first-line prefix.
  const auto print_wrapped = [&](const std::string& first, const std::string& text, std::size_t indent) {
    const std::string all = first + text;
    const std::size_t lead = std::min(all.find_first_not_of(' '), all.size());
    std::cout << render::wrap_words(std::string_view(all).substr(lead), width, all.substr(0, lead), std::string(indent, ' ')) << '\n';
  };
  print_wrapped(fmt::format("prompt: {} tokens{}: ", toks.size(), m.vocab.bpe() ? " (byte-level BPE; ## continues a word)" : ""),
                render::visible_controls(join(toks, " | ")), 2);
  print_wrapped("next-token probabilities after ", "\"" + render::visible_controls(o.text) + "\":", 2);
  const std::vector<int> prompt(ids.begin(), ids.end());
  for (int i = 0; i < k; ++i) {
    const double p = std::exp(lp[order[i]]);
    std::cout << fmt::format("  {:>14}  {:6.2f}%  {}\n", render::visible_controls(labels_after(m.vocab, prompt, {order[i]}).front()), 100 * p,
                             std::string(static_cast<std::size_t>(std::lround(p * 40)), '#'));
  }
  print_wrapped("continuation ", fmt::format("({}):", how), 2);
  for (const auto& s : samples)
    print_wrapped(greedy ? "  " : fmt::format("  seed {}: ", s.seed), render::visible_controls(s.text), 4);
  if (!wrote.empty()) std::cout << wrote << '\n';
  if (o.show_attention) {
    // One heatmap per head of the chosen layer (the last by default).
    const int layer = o.layer >= 0 ? o.layer : m.net->config().decoder_layers - 1;
    for (int hd = 0; hd < m.net->config().heads; ++hd) {
      std::cout << '\n';
      print_heatmap(fmt::format("causal self-attention, layer {} head {} (rows attend to columns; right of the diagonal is masked)",
                                layer, hd),
                    to_matrix(att[static_cast<std::size_t>(layer)].data() + static_cast<std::size_t>(hd) * n * n, n, n), labels, labels, o.view);
    }
  }
}

}  // namespace

void setup_generate(CLI::App& app) {
  auto opts = std::make_shared<GenerateOptions>();
  CLI::App* sub = app.add_subcommand("generate", "Next-token probabilities and a continuation from the decoder-only language model");
  sub->add_option("text", opts->text, "The prompt")->required();
  add_model_option(*sub, opts->model);
  sub->add_option("--top", opts->top, "How many next-token candidates to list")->transform(whole_number(1, 1000))->capture_default_str();
  sub->add_option("--max-new", opts->max_new, "Most tokens to generate")->transform(whole_number(0, 1000))->capture_default_str();
  sub->add_option("-t,--temperature", opts->temperature, "Sampling temperature; 0 = greedy (always the most likely token)")
      ->transform(real_number(0.0, 100.0))->capture_default_str();
  sub->add_option("--top-k", opts->top_k, "Sample only from the K most likely tokens (0 = no limit)")->transform(whole_number(0, 1000000))->capture_default_str();
  sub->add_option("--top-p", opts->top_p, "Sample only from the most likely tokens whose probabilities add up to P (nucleus)")
      ->transform(real_number(0.001, 1.0))->capture_default_str();
  add_seed_option(*sub, opts->seed, "Seed of the draws, 0 to 2^64-1 (the same seed gives the same text)");
  sub->add_option("-n,--samples", opts->samples, "How many continuations to sample (seeds SEED, SEED+1, …)")
      ->transform(whole_number(1, 100))->capture_default_str();
  sub->add_flag("--show-attention", opts->show_attention, "Show the causal self-attention over the prompt and continuation");
  sub->add_option("--layer", opts->layer, "With --show-attention: this layer (default: the last)")->transform(whole_number(0, 1000));
  add_backend_option(*sub, opts->backend);
  add_view_flags(*sub, opts->view.no_color, opts->view.full);
  add_format_option(*sub, opts->format);
  add_picture_options(*sub, opts->pictures);
  sub->callback([opts] { run_generate(*opts); });
}

}  // namespace attnlab::cli
