// attnlab heads [--model DIR] [--sentences N] [--ablate BLOCK.L.H | --sweep] [--format json]
// What each attention head does, measured on the model's own test split (docs/heads.md): positional
// probes for every self-attention head, the induction probe for a language model, and what the
// model loses when one head's output is removed (ablation: the test of whether it is relied on).
#include <algorithm>
#include <chrono>
#include <map>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "model/decode.hpp"
#include "model/probes.hpp"
#include "render/progress.hpp"
#include "tasks/head_relations.hpp"
#include "tasks/task.hpp"
#include "text/bpe.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace attnlab::cli {

struct HeadsOptions {
  std::string model = tasks::kDefaultTranslateModel;
  std::size_t sentences = 200;
  std::string ablate;
  bool sweep = false;
  std::string ablate_with = "zero";  // or "mean": the head's output held at its mean over the examples
  std::string format = "text";
  std::string backend = "cpu";
};

namespace {

struct Ablation {
  model::HeadBlock block = model::HeadBlock::Encoder;
  int layer = 0, head = 0;
  std::string name() const { return fmt::format("{}.{}.{}", model::block_name(block), layer, head); }
};

Ablation parse_ablation(const std::string& spec, bool decoder_only) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  if (parts.size() == 2 && decoder_only) parts.insert(parts.begin(), "dec");
  auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
      throw InputError("--ablate " + spec + ": expected BLOCK.LAYER.HEAD such as enc.0.3, dec.1.2 or cross.1.0 (LAYER.HEAD for a language model)");
    return std::stoi(s);
  };
  if (parts.size() != 3)
    throw InputError("--ablate " + spec + ": expected BLOCK.LAYER.HEAD such as enc.0.3, dec.1.2 or cross.1.0 (LAYER.HEAD for a language model)");
  Ablation a;
  if (parts[0] == "enc") a.block = model::HeadBlock::Encoder;
  else if (parts[0] == "dec") a.block = model::HeadBlock::Decoder;
  else if (parts[0] == "cross") a.block = model::HeadBlock::Cross;
  else throw InputError("--ablate " + spec + ": the block must be enc, dec or cross, got \"" + parts[0] + "\"");
  a.layer = number(parts[1]);
  a.head = number(parts[2]);
  return a;
}

// What the model does on the first n test examples: a language model's loss and perplexity per token;
// a translation model's greedy exact match and its context-dependent words (il/elle, word sense).
nlohmann::json score(model::Transformer<float>& net, const tasks::TaskData& d, const text::Vocab& vocab, std::size_t n, bool lm) {
  n = std::min(n, d.test.size());
  if (lm) {
    const std::vector<model::Example> part(d.test.begin(), d.test.begin() + static_cast<std::ptrdiff_t>(n));
    const model::EvalResult r = model::evaluate(net, part, 32);
    return {{"loss", r.loss}, {"perplexity", std::exp(r.loss)}, {"next_token_accuracy", r.token_accuracy}};
  }
  std::size_t exact = 0, coref = 0, coref_n = 0, sense = 0, sense_n = 0;
  model::DecodeOptions o;
  for (std::size_t i = 0; i < n; ++i) {
    const model::Hypothesis h = model::translate(net, d.test[i].src, o);
    const std::vector<int>& ref = d.test[i].tgt;
    exact += h.tokens == ref;
    const corpus::Example& ex = d.test_pairs[i];
    if (ex.focus_fr.empty() || (ex.category != "coref" && ex.category != "sense")) continue;
    const bool ok = tasks::focus_word_right(vocab, ex, ref, h.tokens);
    if (ex.category == "coref") coref += ok, ++coref_n;
    else sense += ok, ++sense_n;
  }
  auto frac = [](std::size_t a, std::size_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; };
  return {{"exact_match", frac(exact, n)}, {"il_elle", frac(coref, coref_n)}, {"word_sense", frac(sense, sense_n)}, {"sentences", n}};
}

std::string score_text(const nlohmann::json& s, bool lm) {
  if (lm) return fmt::format("perplexity {:.2f}, next-token accuracy {:.1f} %", s["perplexity"].get<double>(), 100 * s["next_token_accuracy"].get<double>());
  return fmt::format("exact match {:.1f} %, il/elle {:.1f} %, word sense {:.1f} %", 100 * s["exact_match"].get<double>(),
                     100 * s["il_elle"].get<double>(), 100 * s["word_sense"].get<double>());
}

void run_heads(const HeadsOptions& o) {
  tasks::LoadedModel m = tasks::load_model(o.model, open_backend(o.backend));
  if (m.run.raw.is_null()) throw InputError(o.model + ": the checkpoint does not record its corpus settings (meta.run_config); cannot rebuild its test split");
  const model::ModelConfig& c = m.net->config();
  const bool lm = c.decoder_only;
  std::optional<Ablation> one;
  if (!o.ablate.empty()) one = parse_ablation(o.ablate, lm);
  // The heads to remove, checked before any work: a bad one is exit 2 at once.
  std::vector<model::HeadScores> heads = model::self_attention_heads(c);
  std::vector<Ablation> ablations;
  if (one) ablations.push_back(*one);
  if (o.sweep) {
    for (const auto& h : heads) ablations.push_back({h.block, h.layer, h.head});
    if (!lm)
      for (int l = 0; l < c.decoder_layers; ++l)
        for (int h = 0; h < c.heads; ++h) ablations.push_back({model::HeadBlock::Cross, l, h});
  }
  if (!ablations.empty()) {
    const std::vector<float> zeros(m.net->params.size(), 0.0f);
    for (const auto& a : ablations) (void)model::ablate_head(*m.net, zeros, a.block, a.layer, a.head);
  }

  tasks::RunConfig run = m.run;
  const tasks::TaskData d = tasks::build_task_data(run, &m.vocab, tasks::Splits::TestOnly);
  if (d.test.empty()) throw InputError(o.model + ": its test split is empty; nothing to measure");
  const std::size_t n = std::min(o.sentences, d.test.size());
  const auto t0 = std::chrono::steady_clock::now();

  // 1. Positional probes on n test examples (teacher forced, one at a time).
  const bool mean = o.ablate_with == "mean" && !ablations.empty();
  std::vector<model::HeadMeans> means = model::head_means_for(c);
  tasks::Relations rel;
  render::ProgressBar bar(static_cast<std::int64_t>(n), "probes");
  model::add_examples(*m.net, d.test, n, heads, [&](std::size_t i) {
    if (mean) model::add_last_forward(*m.net, means);
    if (!lm && i < d.test_pairs.size()) tasks::add_relations(*m.net, m.vocab, d.test_pairs[i], d.test[i], rel);
    bar.update(static_cast<std::int64_t>(i + 1), "");
  });
  bar.finish("");
  if (lm) {
    const int first_id = m.vocab.bpe() ? text::Bpe::kFirstMerge : 4;  // whole-word pieces, not single bytes
    const int length = std::min(20, (c.max_len - 1) / 2);
    model::add_induction(*m.net, heads, 50, length, first_id, 1);
  }

  nlohmann::json jh = nlohmann::json::array();
  for (const auto& h : heads) {
    const auto& s = h.sums;
    nlohmann::json e = {{"block", model::block_name(h.block)}, {"layer", h.layer}, {"head", h.head},
                        {"previous", s.mean(s.previous, s.previous_n)}, {"self", s.mean(s.self, s.self_n)},
                        {"first", s.mean(s.first, s.first_n)}};
    if (h.block != model::HeadBlock::Decoder) e["next"] = s.mean(s.next, s.next_n);
    if (lm) e["induction"] = s.mean(s.induction, s.induction_n);
    // A role is named only when one probe takes at least half of the head's attention.
    std::string role = "mixed";
    double best = 0.5;
    for (const char* k : {"previous", "self", "next", "first", "induction"})
      if (e.contains(k) && e[k].get<double>() >= best) best = e[k].get<double>(), role = k;
    e["role"] = role;
    jh.push_back(e);
  }

  // 2. Ablation: the model as it is, then without one head (or each head in turn).
  nlohmann::json base, ja = nlohmann::json::array();
  if (!ablations.empty()) {
    const std::vector<float> params = m.net->params.download();
    render::ProgressBar abar(static_cast<std::int64_t>(ablations.size() + 1), "ablation");
    base = score(*m.net, d, m.vocab, n, lm);
    abar.update(1, "");
    for (std::size_t i = 0; i < ablations.size(); ++i) {
      const Ablation& a = ablations[i];
      m.net->params.upload(mean ? model::mean_ablate_head(*m.net, params, a.block, a.layer, a.head, means)
                                : model::ablate_head(*m.net, params, a.block, a.layer, a.head));
      ja.push_back({{"head", ablations[i].name()}, {"scores", score(*m.net, d, m.vocab, n, lm)}});
      abar.update(static_cast<std::int64_t>(i + 2), ablations[i].name());
    }
    m.net->params.upload(params);
    abar.finish("");
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The relation probes as JSON: one entry per encoder head with each relation's mass, chance and
  // top-1 rate, and one per cross-attention head with its focus-word alignment.
  const nlohmann::json measures = tasks::relations_json(rel, c);
  const nlohmann::json& jr = measures["relations"];
  const nlohmann::json& jalign = measures["alignment"];

  if (o.format == "json") {
    nlohmann::json j = {{"model", m.dir}, {"examples", n}, {"heads", jh}, {"seconds", secs}};
    if (!jr.empty()) j["relations"] = jr;
    if (!jalign.empty()) j["alignment"] = jalign;
    if (!ablations.empty()) j["ablation"] = {{"mode", o.ablate_with}, {"baseline", base}, {"without", ja}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  std::cout << fmt::format("{}: {} heads measured on {} test {} ({:.1f} s). Mean attention on each key (docs/heads.md):\n",
                           shown_path(m.dir), heads.size(), n, lm && run.english ? "windows" : "sentences", secs);
  std::cout << fmt::format("  {:<12} {:>8} {:>6} {:>6} {:>6}{}  role\n", "head", "previous", "self", "next", "first", lm ? "  induction" : "");
  for (const auto& e : jh) {
    std::cout << fmt::format("  {:<12} {:>8.2f} {:>6.2f} {:>6} {:>6.2f}{}  {}\n",
                             fmt::format("{}.{}.{}", e["block"].get<std::string>(), e["layer"].get<int>(), e["head"].get<int>()),
                             e["previous"].get<double>(), e["self"].get<double>(),
                             e.contains("next") ? fmt::format("{:.2f}", e["next"].get<double>()) : std::string("—"),
                             e["first"].get<double>(),
                             lm ? fmt::format("  {:>9.2f}", e["induction"].get<double>()) : std::string(), e["role"].get<std::string>());
  }
  std::cout << "  (role: the probe that takes at least half of a head's attention; mixed when none does)\n";
  if (!jr.empty()) {
    // Where the corpus knows the answer: mass on the deciding words, a uniform row's mass beside it.
    std::cout << "\nRelations (encoder): attention from a word to the word(s) the corpus says it depends on, mean\n"
                 "mass (a uniform row's mass in brackets; docs/heads.md):\n";
    std::cout << fmt::format("  {:<9}{:>14}{:>14}{:>14}{:>14}{:>14}\n", "head", "verb → subj.", "it → noun", "pred. → noun",
                             "adj. → noun", "sense → ctx.");
    for (const auto& e : jr) {
      auto cell = [&](const char* k) {
        return e.contains(k) ? fmt::format("{:.2f} ({:.2f})", e[k]["mass"].get<double>(), e[k]["chance"].get<double>()) : std::string("—");
      };
      std::cout << fmt::format("  {:<9}{:>14}{:>14}{:>14}{:>14}{:>14}\n", fmt::format("enc.{}.{}", e["layer"].get<int>(), e["head"].get<int>()),
                               cell("subject"), cell("coref"), cell("predicate"), cell("agreement"), cell("sense"));
    }
  }
  if (!jalign.empty()) {
    std::cout << "\nAlignment (cross-attention): the row writing the French focus word (il/elle, banque/rive, an agreeing\n"
                 "adjective) against the English word it translates:\n";
    std::cout << fmt::format("  {:<12} {:>6} {:>22}\n", "head", "mass", "alignment error rate");
    for (const auto& e : jalign)
      std::cout << fmt::format("  {:<12} {:>6.2f} {:>21.1f}%\n", fmt::format("cross.{}.{}", e["layer"].get<int>(), e["head"].get<int>()),
                               e["mass"].get<double>(), 100 * e["alignment_error_rate"].get<double>());
    std::cout << fmt::format("  ({} rows; the error rate counts rows whose largest weight is elsewhere)\n", rel.align.front().n);
  }
  if (!ablations.empty()) {
    std::cout << fmt::format("\nAblation ({}) on the same {} examples: the model as it is: {}\n",
                             o.ablate_with == "mean" ? "each head's output replaced by its mean over these examples" : "each head's output set to zero",
                             n, score_text(base, lm));
    for (const auto& a : ja) std::cout << fmt::format("  without {:<12} {}\n", a["head"].get<std::string>(), score_text(a["scores"], lm));
  }
}

}  // namespace

void setup_heads(CLI::App& app) {
  auto opts = std::make_shared<HeadsOptions>();
  CLI::App* sub = app.add_subcommand("heads", "What each attention head does: probes on the test split, and ablation");
  add_model_option(*sub, opts->model);
  sub->add_option("-n,--sentences", opts->sentences, "Test sentences (or windows) to measure on")->transform(whole_number(1, 100000))->capture_default_str();
  sub->add_option("--ablate", opts->ablate, "Remove one head's output, e.g. enc.0.3, dec.1.2, cross.1.0 (LAYER.HEAD for a language model), and compare")
      ->check([](const std::string& v) {
        return v.empty() ? std::string("expected BLOCK.LAYER.HEAD such as enc.0.3, got an empty value") : std::string();
      });
  sub->add_flag("--sweep", opts->sweep, "Remove each head in turn and compare (slow: one evaluation per head)");
  sub->add_option("--ablate-with", opts->ablate_with,
                  "How a head is removed: zero (its output set to 0) or mean (held at its mean over the same examples, "
                  "which keeps its average contribution)")
      ->check(CLI::IsMember({"zero", "mean"}))
      ->capture_default_str();
  add_backend_option(*sub, opts->backend);
  add_format_option(*sub, opts->format);
  sub->callback([opts] { run_heads(*opts); });
}

}  // namespace attnlab::cli
