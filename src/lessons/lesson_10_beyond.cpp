// Lesson 10, beyond: what a trained model's heads learned, measured on its test split: position
// probes (previous/self/next/first), relations between words (subject, coreference, agreement,
// sense), and how much translation suffers when one head is removed. With random weights, the
// position probes on the lesson sentence's random heads, for comparison.
#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>

#include <unistd.h>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "lessons/shows.hpp"
#include "model/decode.hpp"
#include "model/probes.hpp"
#include "render/progress.hpp"
#include "tasks/head_relations.hpp"
#include "tasks/task.hpp"

namespace attnlab::lessons {

namespace {

// Lesson 10 with random weights: the probes on the lesson sentence's random heads, for comparison.
void show_head_probes_random(LessonContext& c) {
  const core::AttentionTrace& t = c.self_trace();
  const std::size_t n = c.src.tokens.size();
  core::Matrix m = core::Matrix::from_shape({t.heads.size(), 4});
  std::vector<std::string> rows;
  for (std::size_t h = 0; h < t.heads.size(); ++h) {
    model::ProbeSums s;
    s.add_self_attention(t.heads[h].weights.data(), n, false);
    rows.push_back(fmt::format("head {}", h));
    m(h, 0) = static_cast<float>(s.mean(s.previous, s.previous_n));
    m(h, 1) = static_cast<float>(s.mean(s.self, s.self_n));
    m(h, 2) = static_cast<float>(s.mean(s.next, s.next_n));
    m(h, 3) = static_cast<float>(s.mean(s.first, s.first_n));
  }
  MatrixItem it = item("head_probes", "the probes on this sentence's random heads", m, rows, {"previous", "self", "next", "first"});
  it.precision = 2;
  c.out.matrix(it);
  c.out.line(fmt::format("With {} tokens, a head that spreads evenly puts 1/{} = {:.2f} on each key.", n, n, 1.0 / double(n)));
  c.out.line("");
}

// The translation model's test split (regenerated from the config its checkpoint records), once.
// Lesson 10 measures the model on its test split, which takes tens of seconds on two cores: on a
// terminal (stderr a TTY, text output) a progress bar says so and is cleared when the step is done;
// in a pipe or a log nothing extra is printed.
std::optional<render::ProgressBar> progress(LessonContext& c, std::size_t total, const std::string& label) {
  if (c.session.options().format != "text" || ::isatty(STDERR_FILENO) != 1) return std::nullopt;
  std::optional<render::ProgressBar> bar;
  bar.emplace(static_cast<std::int64_t>(total), label);
  bar->update(0, "");
  return bar;
}

const tasks::TaskData& test_split(LessonContext& c) {
  static std::unique_ptr<tasks::TaskData> data;
  if (!data) {
    tasks::RunConfig run = c.model->m.run;
    data = std::make_unique<tasks::TaskData>(tasks::build_task_data(run, &c.model->vocab(), tasks::Splits::TestOnly));
  }
  return *data;
}

constexpr std::size_t kProbeSentences = 200;

void show_head_probes_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const tasks::TaskData& d = test_split(c);
  const std::size_t n = std::min(kProbeSentences, d.test.size());
  std::vector<model::HeadScores> heads = model::self_attention_heads(net.config());
  auto bar = progress(c, n, "probing the heads");
  model::add_examples(net, d.test, n, heads, [&](std::size_t i) {
    if (bar) bar->update(static_cast<std::int64_t>(i + 1), "sentences");
  });
  if (bar) bar->finish("");
  core::Matrix m = core::Matrix::from_shape({heads.size(), 4});
  std::vector<std::string> rows;
  std::size_t named = 0;
  for (std::size_t r = 0; r < heads.size(); ++r) {
    const auto& s = heads[r].sums;
    rows.push_back(fmt::format("{}.{}.{}", model::block_name(heads[r].block), heads[r].layer, heads[r].head));
    m(r, 0) = static_cast<float>(s.mean(s.previous, s.previous_n));
    m(r, 1) = static_cast<float>(s.mean(s.self, s.self_n));
    m(r, 2) = static_cast<float>(s.mean(s.next, s.next_n));
    m(r, 3) = static_cast<float>(s.mean(s.first, s.first_n));
    named += *std::max_element(m.data() + r * 4, m.data() + (r + 1) * 4) >= 0.5f;
  }
  MatrixItem it = item("head_probes", fmt::format("mean attention on each key, {} test sentences (next: 0 in the causal decoder)", n), m,
                       rows, {"previous", "self", "next", "first"});
  it.precision = 2;
  c.out.matrix(it);
  c.out.line(fmt::format("{} of {} heads put half or more of their attention on one of these keys.", named, heads.size()));
  c.out.value("heads_with_a_role", named);
  c.out.line("");
}

// The relation probes of every encoder head on the first kProbeSentences test sentences, once: the
// relations step shows them and the ablation step removes the head they single out.
const tasks::Relations& relations(LessonContext& c) {
  static std::unique_ptr<tasks::Relations> rel;
  if (!rel) {
    model::Transformer<float>& net = c.model->net();
    const tasks::TaskData& d = test_split(c);
    const std::size_t n = std::min(kProbeSentences, d.test.size());
    std::vector<model::HeadScores> unused = model::self_attention_heads(net.config());
    rel = std::make_unique<tasks::Relations>();
    auto bar = progress(c, n, "measuring the relations");
    model::add_examples(net, d.test, n, unused, [&](std::size_t i) {
      if (i < d.test_pairs.size()) tasks::add_relations(net, c.model->vocab(), d.test_pairs[i], d.test[i], *rel);
      if (bar) bar->update(static_cast<std::int64_t>(i + 1), "sentences");
    });
    if (bar) bar->finish("");
  }
  return *rel;
}

// The encoder head (layer-major index) that puts the most attention from an adjective on its noun:
// the head the ablation step removes, because agreement is what gives "it" its gender.
std::size_t strongest_agreement_head(LessonContext& c) {
  const tasks::Relations& rel = relations(c);
  const auto it = rel.enc.find("agreement");
  std::size_t best = 0;
  if (it == rel.enc.end()) return best;
  for (std::size_t r = 1; r < it->second.size(); ++r)
    if (it->second[r].mean_mass() > it->second[best].mean_mass()) best = r;
  return best;
}

void show_head_relations_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const std::size_t n = std::min(kProbeSentences, test_split(c).test.size());
  const tasks::Relations& rel = relations(c);
  const std::vector<std::pair<std::string, std::string>> cols = {
      {"subject", "verb→subj"}, {"coref", "it→noun"}, {"agreement", "adj→noun"}, {"sense", "sense→ctx"}};
  const std::size_t heads = static_cast<std::size_t>(net.config().encoder_layers * net.config().heads);
  core::Matrix m = core::Matrix::from_shape({heads + 1, cols.size()});
  std::vector<std::string> rows, labels;
  for (const auto& col : cols) labels.push_back(col.second);
  for (std::size_t r = 0; r < heads; ++r) rows.push_back(fmt::format("enc.{}.{}", r / static_cast<std::size_t>(net.config().heads),
                                                                    r % static_cast<std::size_t>(net.config().heads)));
  rows.push_back("uniform");
  double best_coref = 0;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const auto it = rel.enc.find(cols[k].first);
    if (it == rel.enc.end()) continue;
    for (std::size_t r = 0; r < heads; ++r) m(r, k) = static_cast<float>(it->second[r].mean_mass());
    m(heads, k) = static_cast<float>(it->second[0].mean_chance());
    if (cols[k].first == "coref")
      for (std::size_t r = 0; r < heads; ++r) best_coref = std::max(best_coref, it->second[r].mean_mass());
  }
  // The same head the ablation step removes.
  const std::size_t agreement_head = strongest_agreement_head(c);
  const std::string best_agreement = rows[agreement_head];
  const double best_agreement_mass = rel.enc.count("agreement") ? rel.enc.at("agreement")[agreement_head].mean_mass() : 0.0;
  MatrixItem it = item("head_relations",
                       fmt::format("mass on the word it depends on, {} test sentences; last row: uniform", n), m,
                       rows, labels);
  it.precision = 2;
  c.out.matrix(it);
  const double coref_chance = rel.enc.count("coref") ? rel.enc.at("coref")[0].mean_chance() : 0.0;
  c.out.line(fmt::format("From \"it\", the most any encoder head gives its noun is {:.2f}, against {:.2f} for a uniform row.", best_coref,
                         coref_chance));
  c.out.line(fmt::format("The strongest adjective → noun head is {} ({:.2f} of its attention).", best_agreement, best_agreement_mass));
  c.out.value("coref_best_mass", best_coref);
  c.out.value("coref_chance", coref_chance);
  c.out.value("agreement_best_head", best_agreement);
  c.out.line("");
}

void show_head_ablation_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const auto& cfg = net.config();
  const tasks::TaskData& d = test_split(c);
  const std::size_t n = std::min(kProbeSentences, d.test.size());
  const text::Vocab& vocab = c.model->vocab();
  const std::size_t runs = 1 + (cfg.decoder_only ? 0 : 1 + static_cast<std::size_t>(cfg.heads));
  auto bar = progress(c, runs * n, "translating without each head");
  std::size_t done = 0;
  auto score = [&] {
    std::size_t exact = 0, coref = 0, coref_n = 0;
    const int il = vocab.id("il"), elle = vocab.id("elle");
    for (std::size_t i = 0; i < n; ++i) {
      if (bar) bar->update(static_cast<std::int64_t>(++done), "translations");
      const model::Hypothesis h = model::translate(net, d.test[i].src, model::DecodeOptions{});
      exact += h.tokens == d.test[i].tgt;
      if (d.test_pairs[i].category != "coref") continue;
      ++coref_n;
      auto pronouns = [&](const std::vector<int>& v) {
        std::vector<int> out;
        for (int t : v)
          if (t == il || t == elle) out.push_back(t);
        return out;
      };
      coref += pronouns(h.tokens) == pronouns(d.test[i].tgt);
    }
    return std::pair<double, double>{double(exact) / double(n), coref_n ? double(coref) / double(coref_n) : 0.0};
  };
  const std::vector<float> params = net.params.download();
  std::vector<std::pair<std::string, std::pair<double, double>>> rows{{"none", score()}};
  std::vector<std::tuple<model::HeadBlock, int, int>> which;
  if (!cfg.decoder_only) {
    const auto agreement_head = static_cast<int>(strongest_agreement_head(c));
    which.emplace_back(model::HeadBlock::Encoder, agreement_head / cfg.heads, agreement_head % cfg.heads);
    for (int h = 0; h < cfg.heads; ++h) which.emplace_back(model::HeadBlock::Cross, cfg.decoder_layers - 1, h);
  }
  for (const auto& [block, layer, head] : which) {
    net.params.upload(model::ablate_head(net, params, block, layer, head));
    rows.emplace_back(fmt::format("{}.{}.{}", model::block_name(block), layer, head), score());
  }
  net.params.upload(params);
  if (bar) bar->finish("");
  core::Matrix m = core::Matrix::from_shape({rows.size(), 2});
  std::vector<std::string> labels;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    labels.push_back(r == 0 ? std::string("all heads") : "no " + rows[r].first);
    m(r, 0) = static_cast<float>(100 * rows[r].second.first);
    m(r, 1) = static_cast<float>(100 * rows[r].second.second);
  }
  MatrixItem it = item("head_ablation", fmt::format("greedy translation of {} test sentences: exact match and il/elle, in %", n), m,
                       labels, {"exact", "il/elle"});
  it.precision = 1;
  c.out.matrix(it);
  std::size_t worst = 1;
  for (std::size_t r = 1; r < rows.size(); ++r)
    if (rows[r].second.first < rows[worst].second.first) worst = r;
  if (rows.size() > 1)
    c.out.line(fmt::format("Without {}: {:.1f} % of the sentences exactly right, against {:.1f} % with every head.",
                           rows[worst].first, 100 * rows[worst].second.first, 100 * rows[0].second.first));
  c.out.value("exact_match_all_heads", rows[0].second.first);
  c.out.value("exact_match_worst_ablation", rows.size() > 1 ? rows[worst].second.first : rows[0].second.first);
  c.out.line("");
}

}  // namespace

void register_lesson_10(ShowMap& r) {
  // Lesson 10 measures a trained model; with random weights, the same probes on the lesson
  // sentence's random heads, for comparison.
  r["head-probes"] = {show_head_probes_random, show_head_probes_trained};
  // With random weights there are no learned heads, relations, alignments or senses to read; the
  // steps' text says so.
  r["head-relations"] = {nullptr, show_head_relations_trained};
  r["head-ablation"] = {nullptr, show_head_ablation_trained};
}

}  // namespace attnlab::lessons
