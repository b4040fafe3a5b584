// attnlab generate "TEXT" [--model DIR] [--top K] [--max-new N]
// With the decoder-only language model: the probabilities of the next token, and a greedy continuation.
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
#include "model/decode.hpp"
#include "tasks/task.hpp"

namespace attnlab::cli {

struct GenerateOptions {
  std::string text;
  std::string model = tasks::kDefaultLmModel;
  int top = 10;
  int max_new = 20;
  std::string format = "text";
  std::string backend = "cpu";
  bool no_color = false;  // accepted as on every other command; generate's output has no colour
};

namespace {

void run_generate(const GenerateOptions& o) {
  tasks::LoadedModel m = tasks::load_model(o.model, open_backend(o.backend));
  if (!m.net->config().decoder_only) {
    throw InputError("--model " + o.model + " is an encoder–decoder; generate needs a decoder-only language model (e.g. " +
                     tasks::kDefaultLmModel + "); to translate use `attnlab translate`");
  }
  std::vector<std::string> toks;
  const auto ids = encode_user_text(m.vocab, o.text, static_cast<std::size_t>(m.net->config().max_len - 1), &toks);
  const std::vector<double> lp = model::next_token_logprobs(*m.net, ids);
  std::vector<int> order(lp.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return lp[a] > lp[b]; });
  const int k = std::min<int>(o.top, static_cast<int>(order.size()));
  const std::vector<int> cont = model::continue_greedy(*m.net, ids, o.max_new);
  std::vector<std::string> cont_words = m.vocab.tokens_of(std::vector<text::TokenId>(cont.begin(), cont.end()));
  std::vector<std::string> all = toks;
  all.insert(all.end(), cont_words.begin(), cont_words.end());
  if (o.format == "json") {
    nlohmann::json next = nlohmann::json::array();
    for (int i = 0; i < k; ++i) next.push_back({{"token", m.vocab.word(order[i])}, {"probability", std::exp(lp[order[i]])}});
    std::cout << nlohmann::json({{"prompt_tokens", toks}, {"next", next}, {"continuation", cont_words},
                                 {"text", text::detokenize(all)}}).dump(2) << '\n';
    return;
  }
  std::cout << fmt::format("next-token probabilities after \"{}\":\n", visible_controls(o.text));
  for (int i = 0; i < k; ++i) {
    const double p = std::exp(lp[order[i]]);
    std::cout << fmt::format("  {:>12}  {:6.2f}%  {}\n", m.vocab.word(order[i]), 100 * p,
                             std::string(static_cast<std::size_t>(std::lround(p * 40)), '#'));
  }
  std::cout << fmt::format("greedy continuation: {}\n", text::detokenize(all));
}

}  // namespace

void setup_generate(CLI::App& app) {
  auto opts = std::make_shared<GenerateOptions>();
  CLI::App* sub = app.add_subcommand("generate", "Next-token probabilities and a continuation from the decoder-only language model");
  sub->add_option("text", opts->text, "The prompt")->required();
  sub->add_option("-m,--model", opts->model, "Model folder (or .ckpt file)")->capture_default_str();
  sub->add_option("--top", opts->top, "How many next-token candidates to list")->check(whole_number(1, 1000))->capture_default_str();
  sub->add_option("--max-new", opts->max_new, "Most tokens to generate")->check(whole_number(0, 1000))->capture_default_str();
  add_backend_option(*sub, opts->backend);
  sub->add_flag("--no-color", opts->no_color, "Plain text without colour (generate prints none; accepted as elsewhere)");
  sub->add_option("-f,--format", opts->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  sub->callback([opts] { run_generate(*opts); });
}

}  // namespace attnlab::cli
