// Computations of lessons 6, 8 and 9 that need a whole trained model rather than one attention
// block: the language model's causal self-attention, the translation model's cross-attention on a
// teacher-forced sentence pair, a post-norm layer with learned LayerNorm gains, next-token
// probabilities and the coreference pair. Attention shown as a computation is replayed through the
// core (lessons/trained.hpp) and checked against the model's own numbers; whole-model results
// (translations, probabilities, deeper layers' weights) are read from the model.
#include <algorithm>
#include <cmath>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "core/attention.hpp"
#include "core/mask.hpp"
#include "lessons/model.hpp"
#include "lessons/shows.hpp"
#include "lessons/trained.hpp"
#include "lessons/transformer.hpp"
#include "model/decode.hpp"
#include "model/probes.hpp"
#include "tasks/head_relations.hpp"
#include "tasks/task.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

namespace {

using ModelBlock = model::Transformer<float>::Block;

std::vector<int> with_bos(const std::vector<int>& ids) {
  std::vector<int> v{model::kBos};
  v.insert(v.end(), ids.begin(), ids.end());
  return v;
}

std::vector<int> with_eos(const std::vector<int>& ids) {
  std::vector<int> v = ids;
  v.push_back(model::kEos);
  return v;
}

std::vector<std::string> prefixed(const char* first, const std::vector<std::string>& tokens) {
  std::vector<std::string> v{first};
  v.insert(v.end(), tokens.begin(), tokens.end());
  return v;
}

std::size_t argmax_row(const core::Matrix& m, std::size_t i) {
  std::size_t best = 0;
  for (std::size_t j = 1; j < core::cols(m); ++j)
    if (m(i, j) > m(i, best)) best = j;
  return best;
}

core::Matrix mean_of(const std::vector<core::Matrix>& ms) {
  core::Matrix avg = core::Matrix(ms[0].shape(), 0.0f);
  for (const core::Matrix& m : ms) avg += m / static_cast<float>(ms.size());
  return avg;
}

std::vector<core::Matrix> head_weights(const core::AttentionTrace& t) {
  std::vector<core::Matrix> out;
  for (const core::HeadTrace& h : t.heads) out.push_back(h.weights);
  return out;
}

// The model's greedy translation of `src`, as tokens (without <eos>).
std::vector<int> own_translation(model::Transformer<float>& net, const std::vector<int>& src) {
  model::DecodeOptions o;
  return model::translate(net, src, o).tokens;
}

std::string joined(const std::vector<std::string>& tokens) {
  std::string s;
  for (const auto& t : tokens) s += (s.empty() ? "" : " ") + t;
  return s;
}

}  // namespace

// ---- lesson 6 ---------------------------------------------------------------------------

bool show_causal_trained(LessonContext& c) {
  const TrainedModel* lm = c.session.language_model();
  if (!lm) return false;
  std::vector<std::string> sentences = c.text.causal.size() == 2 ? c.text.causal : std::vector<std::string>{c.text.sentence, c.text.second};
  if (c.session.options().sentence) sentences[0] = *c.session.options().sentence;
  bool first = true;
  for (const std::string& text : sentences) {
    TokenizedSentence s = encode(text, lm->vocab(), "causal sentence");
    c.session.warn_unknown(s.unknown, "causal sentence", "the vocabulary of " + lm->label);
    // The language model reads <bos> + the sentence; the attention input of layer 0 is LN1 of the
    // embeddings (pre-norm), which is what attention_view's query input holds.
    const std::vector<int> ids = with_bos(s.int_ids());
    forward_one(lm->net(), {}, ids);
    const std::size_t n = ids.size();
    const Replay r = replay_attention(lm->net(), ModelBlock::DecoderSelf, 0, n, n);
    const core::HeadTrace& t = r.trace.heads[0];
    const std::vector<std::string> tk = prefixed("<bos>", s.tokens);
    c.out.line(fmt::format("\"{}\" as the language model reads it: <bos> {}", s.text, joined(s.tokens)));
    c.out.line("");
    if (first) {
      const core::Mask mask = core::causal_mask(n);
      c.out.matrix(mask_item("causal_mask", "causal mask (1 = may attend: key j ≤ query i)", mask, tk, tk));
      MatrixItem m = item("masked", "masked = scaled scores (layer 0, head 0) with −inf above the diagonal", t.masked, tk, tk);
      m.masked = true;
      c.out.matrix(m);
    }
    c.out.matrix(weights_item(first ? "weights" : "weights_second", "weights under the causal mask (layer 0, head 0)", t.weights, tk, tk));
    std::vector<MatrixItem> heads;
    for (std::size_t h = 1; h < r.trace.heads.size(); ++h)
      heads.push_back(weights_item(fmt::format("{}weights_head_{}", first ? "" : "second_", h), fmt::format("head {}", h),
                                   r.trace.heads[h].weights, tk, tk));
    c.out.side_by_side(heads);
    c.out.line(fmt::format("Check: the core's replay equals the model's own layer 0 self-attention ({}).", agreement(r.max_difference)));
    c.out.value(first ? "max_difference_from_model" : "max_difference_from_model_second", r.max_difference);
    c.out.line("");
    first = false;
  }
  return true;
}

// ---- lesson 5: one row in every head ------------------------------------------------------

void show_focus_row_all_heads_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const auto& cfg = net.config();
  const auto& tk = c.src.tokens;
  const std::size_t f = focus_index(tk, c.text.focus), m = tk.size(), H = static_cast<std::size_t>(cfg.heads);
  forward_one(net, c.src.int_ids(), {model::kBos});
  std::vector<std::string> rows;
  core::Matrix all = core::Matrix::from_shape({static_cast<std::size_t>(cfg.encoder_layers) * H, m});
  float lo = 1.0f, hi = 0.0f;
  for (int l = 0; l < cfg.encoder_layers; ++l) {
    const std::vector<float>& att = net.encoder_attention(l);
    for (std::size_t k = 0; k < H; ++k) {
      const std::size_t r = static_cast<std::size_t>(l) * H + k;
      rows.push_back(fmt::format("L{} h{}", l, k));
      for (std::size_t j = 0; j < m; ++j) all(r, j) = att[(k * m + f) * m + j];
      lo = std::min(lo, all(r, f));
      hi = std::max(hi, all(r, f));
    }
  }
  MatrixItem it = weights_item("focus_row_all_heads", fmt::format("the row of \"{}\" in every encoder layer (L) and head (h)", tk[f]),
                               all, rows, tk);
  it.focus_cols = {tk[f]};
  c.out.matrix(it);
  c.out.line(fmt::format("What \"{}\" gives itself ranges from {:.0f} % to {:.0f} % across the {} heads.", tk[f], 100 * lo, 100 * hi,
                         rows.size()));
  c.out.value("focus_self_weight_range", std::vector<double>{lo, hi});
  c.out.line("");
}

// ---- lesson 10: what heads learn ----------------------------------------------------------

namespace {

// The translation model's test split (regenerated from the config its checkpoint records), once.
const tasks::TaskData& test_split(LessonContext& c) {
  static std::unique_ptr<tasks::TaskData> data;
  if (!data) {
    tasks::RunConfig run = c.model->m.run;
    data = std::make_unique<tasks::TaskData>(tasks::build_task_data(run, &c.model->vocab(), tasks::Splits::TestOnly));
  }
  return *data;
}

constexpr std::size_t kProbeSentences = 200;

}  // namespace

void show_head_probes_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const tasks::TaskData& d = test_split(c);
  const std::size_t n = std::min(kProbeSentences, d.test.size());
  std::vector<model::HeadScores> heads = model::self_attention_heads(net.config());
  model::add_examples(net, d.test, n, heads);
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

void show_head_relations_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const tasks::TaskData& d = test_split(c);
  const std::size_t n = std::min(kProbeSentences, d.test.size());
  std::vector<model::HeadScores> unused = model::self_attention_heads(net.config());
  tasks::Relations rel;
  model::add_examples(net, d.test, n, unused, [&](std::size_t i) {
    if (i < d.test_pairs.size()) tasks::add_relations(net, d.test_pairs[i], d.test[i], rel);
  });
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
  std::string best_agreement;
  double best_agreement_mass = 0;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const auto it = rel.enc.find(cols[k].first);
    if (it == rel.enc.end()) continue;
    for (std::size_t r = 0; r < heads; ++r) m(r, k) = static_cast<float>(it->second[r].mean_mass());
    m(heads, k) = static_cast<float>(it->second[0].mean_chance());
    for (std::size_t r = 0; r < heads; ++r) {
      const double mass = it->second[r].mean_mass();
      if (cols[k].first == "coref") best_coref = std::max(best_coref, mass);
      if (cols[k].first == "agreement" && mass > best_agreement_mass) best_agreement_mass = mass, best_agreement = rows[r];
    }
  }
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
  auto score = [&] {
    std::size_t exact = 0, coref = 0, coref_n = 0;
    const int il = vocab.id("il"), elle = vocab.id("elle");
    for (std::size_t i = 0; i < n; ++i) {
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
    which.emplace_back(model::HeadBlock::Encoder, cfg.encoder_layers - 1, std::min(2, cfg.heads - 1));
    for (int h = 0; h < cfg.heads; ++h) which.emplace_back(model::HeadBlock::Cross, cfg.decoder_layers - 1, h);
  }
  for (const auto& [block, layer, head] : which) {
    net.params.upload(model::ablate_head(net, params, block, layer, head));
    rows.emplace_back(fmt::format("{}.{}.{}", model::block_name(block), layer, head), score());
  }
  net.params.upload(params);
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

// ---- lesson 9: word sense ---------------------------------------------------------------

void show_word_sense_trained(LessonContext& c) {
  const std::vector<std::string>& texts = c.text.word_sense;
  if (texts.size() < 2) throw RuntimeError("data/sentences/lessons.json: lesson 9 needs a \"word_sense\" list of at least two sentences");
  model::Transformer<float>& net = c.model->net();
  const text::Vocab& vocab = c.model->vocab();
  const auto& cfg = net.config();
  const std::size_t C = static_cast<std::size_t>(cfg.d_model), H = static_cast<std::size_t>(cfg.heads);
  const std::string& word = c.text.word_sense_focus;
  // For each sentence: the ambiguous word's row at the encoder input (word + position) and at its
  // output, the translation, and the word's attention row in encoder layer 0 (mean of the heads).
  std::vector<std::vector<float>> in_rows, out_rows;
  std::vector<std::string> labels;
  for (std::size_t s = 0; s < texts.size(); ++s) {
    const TokenizedSentence t = c.encode(texts[s], "word-sense sentence");
    const std::size_t f = focus_index(t.tokens, word);
    if (t.tokens[f] != word) throw RuntimeError("word-sense sentence \"" + texts[s] + "\" does not contain \"" + word + "\"");
    const std::vector<int> src = t.int_ids();
    const std::size_t m = src.size();
    const std::vector<int> own = own_translation(net, src);
    forward_one(net, src, with_bos(own), with_eos(own));
    const std::vector<float> emb = net.encoder_embedding(), mem = net.memory();
    in_rows.emplace_back(emb.begin() + static_cast<std::ptrdiff_t>(f * C), emb.begin() + static_cast<std::ptrdiff_t>((f + 1) * C));
    out_rows.emplace_back(mem.begin() + static_cast<std::ptrdiff_t>(f * C), mem.begin() + static_cast<std::ptrdiff_t>((f + 1) * C));
    const std::vector<float>& att = net.encoder_attention(cfg.encoder_layers - 1);
    core::Matrix row = core::Matrix::from_shape({1, m});
    row.fill(0.0f);
    for (std::size_t k = 0; k < H; ++k)
      for (std::size_t j = 0; j < m; ++j) row(0, j) += att[(k * m + f) * m + j] / static_cast<float>(H);
    const std::string translation = vocab.decode(own);
    c.out.line(fmt::format("{}. \"{}\" → \"{}\"", s + 1, t.text, translation));
    MatrixItem it = weights_item(fmt::format("word_sense_row_{}", s),
                                 fmt::format("what \"{}\" attends to in the last encoder layer (mean of the heads)", word), row,
                                 {word}, t.tokens);
    it.focus_cols = {word};
    c.out.matrix(it);
    c.out.value(fmt::format("translation_{}", s), translation);
    labels.push_back(fmt::format("{} {}", s + 1, s < c.text.word_sense_labels.size() ? c.text.word_sense_labels[s] : word));
  }
  auto cosine = [](const std::vector<float>& a, const std::vector<float>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
    return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
  };
  const std::size_t n = texts.size();
  core::Matrix before = core::Matrix::from_shape({n, n}), after = core::Matrix::from_shape({n, n});
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      before(a, b) = static_cast<float>(cosine(in_rows[a], in_rows[b]));
      after(a, b) = static_cast<float>(cosine(out_rows[a], out_rows[b]));
    }
  MatrixItem bi = item("word_sense_similarity_input", fmt::format("cosine similarity of \"{}\" at the encoder input (word + position)", word),
                       before, labels, labels);
  bi.precision = 3;
  MatrixItem ai = item("word_sense_similarity_output", fmt::format("… and at the encoder output, after {} layers of attention", cfg.encoder_layers),
                       after, labels, labels);
  ai.precision = 3;
  c.out.matrix(bi);
  c.out.matrix(ai);
  // Pairs of the same sense (by the labels in lessons.json) against pairs of different senses.
  const auto& senses = c.text.word_sense_labels;
  if (senses.size() == n) {
    double in_same = 0, out_same = 0, in_diff = 0, out_diff = 0;
    int same = 0, diff = 0;
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b) {
        if (senses[a] == senses[b]) in_same += before(a, b), out_same += after(a, b), ++same;
        else in_diff += before(a, b), out_diff += after(a, b), ++diff;
      }
    if (same && diff) {
      in_same /= same, out_same /= same, in_diff /= diff, out_diff /= diff;
      c.out.line(fmt::format("Mean similarity, same sense: {:.3f} at the input, {:.3f} at the output ({} pairs).", in_same, out_same, same));
      c.out.line(fmt::format("Different senses: {:.3f} at the input, {:.3f} at the output ({} pairs).", in_diff, out_diff, diff));
      c.out.line(fmt::format("Context moved the different senses {:.3f} apart, the same senses {:.3f}.", in_diff - out_diff, in_same - out_same));
      c.out.value("similarity_same_sense", std::vector<double>{in_same, out_same});
      c.out.value("similarity_different_sense", std::vector<double>{in_diff, out_diff});
    }
  }
  c.out.line("");
}

// ---- lesson 8 ---------------------------------------------------------------------------

namespace {

// Lesson 8's pair run through the model, teacher forced, and the cross-attention of its first and last
// decoder layers replayed: what both of its steps show.
struct CrossAttentionPair {
  std::size_t n = 0, m = 0;            // decoder positions (target + <bos>), source tokens
  std::vector<std::string> rl;         // row labels: the word each decoder position is about to write
  int last = 0;                        // the last decoder layer
  Replay r0, rl_;                      // layer 0 and the last layer
};

CrossAttentionPair run_cross_attention(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const TokenizedSentence& tgt = c.target();
  const std::vector<int> tgt_in = with_bos(tgt.int_ids());
  forward_one(net, c.src.int_ids(), tgt_in, with_eos(tgt.int_ids()));
  CrossAttentionPair p;
  p.n = tgt_in.size();
  p.m = c.src.tokens.size();
  // Row i holds the query of decoder position i, which reads tgt_in[i] and is about to write the
  // next word: label each row with the word it writes.
  p.rl = tgt.tokens;
  p.rl.push_back("<eos>");
  p.last = net.config().decoder_layers - 1;
  p.r0 = replay_attention(net, ModelBlock::DecoderCross, 0, p.n, p.m);
  p.rl_ = replay_attention(net, ModelBlock::DecoderCross, p.last, p.n, p.m);
  return p;
}

}  // namespace

void show_cross_attention_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const TokenizedSentence& tgt = c.target();
  const auto& src = c.src.tokens;
  const CrossAttentionPair p = run_cross_attention(c);
  const std::size_t n = p.n, m = p.m;
  const std::vector<std::string>& rl = p.rl;
  const Replay &r0 = p.r0, &rl_ = p.rl_;
  const core::HeadTrace& h = r0.trace.heads[0];
  c.out.line(fmt::format("Decoder (queries): <bos> {}  (n = {}, teacher forced: it reads the target shifted right by one).",
                         joined(tgt.tokens), n));
  c.out.line(fmt::format("Encoder output M (keys, values): \"{}\" after {} encoder layers, m = {}.", c.src.text,
                         net.config().encoder_layers, m));
  c.out.line("Each row is labelled with the word the decoder is about to write at that position.");
  c.out.line("");
  c.out.matrix(item("q", fmt::format("Q = Y · W_Q + b_Q  (layer 0, head 0; Y is the decoder stream: n × d_k = {} × {})", n, core::cols(h.q)),
                    h.q, rl, render::numbered_labels("q", core::cols(h.q))));
  c.out.side_by_side({item("k", fmt::format("K = M · W_K + b_K  ({} × {})", m, core::cols(h.k)), h.k, src, render::numbered_labels("k", core::cols(h.k))),
                      item("v", fmt::format("V = M · W_V + b_V  ({} × {})", m, core::cols(h.v)), h.v, src, render::numbered_labels("v", core::cols(h.v)))});
  c.out.matrix(item("scaled", fmt::format("Q · Kᵀ / √d_k  (n × m = {} × {})", n, m), h.scaled, rl, src));
  c.out.matrix(weights_item("weights", fmt::format("alignment, layer 0 head 0 (n × m = {} × {}), each row sums to 1", n, m), h.weights, rl, src));
  c.out.matrix(item("context", "context = weights · V  (one row per decoder position)", h.context, rl, render::numbered_labels("v", core::cols(h.context))));
  c.out.line(fmt::format("Check: the core's replay equals the model's own cross-attention ({}).",
                         agreement(std::max(r0.max_difference, rl_.max_difference))));
  c.out.value("max_difference_from_model", std::max(r0.max_difference, rl_.max_difference));
  c.out.line("");
}

// Step 2 of lesson 8 ("Reading the alignment"): every head of the first and the last decoder layer,
// their mean and each target word's strongest source word, then the model's own translation.
void show_cross_attention_heads_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const auto& src = c.src.tokens;
  const std::vector<int> own = own_translation(net, c.src.int_ids());
  const CrossAttentionPair p = run_cross_attention(c);
  const std::size_t n = p.n;
  const std::vector<std::string>& rl = p.rl;
  const int last = p.last;
  const Replay &r0 = p.r0, &rl_ = p.rl_;
  for (const auto* r : {&r0, &rl_}) {
    const int layer = r == &r0 ? 0 : last;
    if (r == &rl_ && last == 0) break;
    std::vector<MatrixItem> heads;
    for (std::size_t k = 0; k < r->trace.heads.size(); ++k)
      heads.push_back(weights_item(fmt::format("layer_{}_head_{}", layer, k), fmt::format("layer {} head {}", layer, k),
                                   r->trace.heads[k].weights, rl, src));
    c.out.side_by_side(heads);
    const core::Matrix avg = mean_of(head_weights(r->trace));
    c.out.matrix(weights_item(fmt::format("layer_{}_mean", layer), fmt::format("layer {}: mean of the {} heads", layer, r->trace.heads.size()),
                              avg, rl, src));
    c.out.line(fmt::format("Layer {}, mean of the heads: the source word each target word looks at most", layer));
    std::vector<std::string> argmax;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t best = argmax_row(avg, i);
      argmax.push_back(src[best]);
      c.out.line(fmt::format("  {:<10} → {:<10} ({:.1f} %)", rl[i], src[best], 100.0 * avg(i, best)));
    }
    c.out.value(fmt::format("layer_{}_argmax", layer), argmax);
    c.out.line("");
  }
  const std::string own_text = c.model->vocab().decode(own);
  c.out.line(fmt::format("The model's own translation of \"{}\" (greedy): \"{}\"", c.src.text, own_text));
  c.out.value("translation", own_text);
  c.out.line("");
}

// ---- lesson 9 ---------------------------------------------------------------------------

namespace {

// Encoder layer 0 of the trained model recomputed by the lesson from the replayed attention.
struct EncoderLayer0 {
  core::Matrix x, a, residual, normalized, after_attn, hidden, ffn, output;
  NormParams ln1, ln2;
};

EncoderLayer0 encoder_layer0(LessonContext& c) {
  const TrainedModel& tm = *c.model;
  const auto& lay = tm.net().layout().enc.at(0);
  const float eps = tm.net().config().ln_eps;
  const bool pre = tm.net().config().pre_norm;
  EncoderLayer0 e;
  e.ln1 = norm_of(tm.net(), lay.ln1);
  e.ln2 = norm_of(tm.net(), lay.ln2);
  e.x = model_input(c.embeddings, c.pe);
  e.a = c.encoder_replay().trace.output;
  e.residual = add(e.x, e.a);
  e.normalized = layer_norm(e.residual, eps);
  // post-norm: h = LN1(x + A), out = LN2(h + FFN(h)); pre-norm: h = x + A, out = h + FFN(LN2(h)).
  e.after_attn = pre ? e.residual : layer_norm(e.residual, eps, &e.ln1.gain, &e.ln1.bias);
  const core::Matrix ffn_in = pre ? layer_norm(e.after_attn, eps, &e.ln2.gain, &e.ln2.bias) : e.after_attn;
  e.ffn = feed_forward(ffn_in, feed_forward_of(tm.net(), lay.ffn), &e.hidden);
  e.output = pre ? add(e.after_attn, e.ffn) : layer_norm(add(e.after_attn, e.ffn), eps, &e.ln2.gain, &e.ln2.bias);
  return e;
}

}  // namespace

void show_residual_layernorm_trained(LessonContext& c) {
  const EncoderLayer0 e = encoder_layer0(c);
  const auto& tk = c.src.tokens;
  const auto dl = render::numbered_labels("d", c.d_model);
  const bool pre = c.model->net().config().pre_norm;
  c.out.matrix(item("attention_output", "A = MultiHead(X): encoder layer 0's attention output (n × d_model)", e.a, tk, dl));
  c.out.matrix(item("residual", "X + A  (the residual connection)", e.residual, tk, dl));
  c.out.matrix(item("layer_norm", "(x − μ) / √(σ² + ε) for each row of X + A: mean 0, variance 1", e.normalized, tk, dl));
  c.out.side_by_side({item("stats_before", "rows of X + A", row_stats(e.residual), tk, {"mean", "var"}),
                      item("stats_after", "rows after normalising", row_stats(e.normalized), tk, {"mean", "var"})});
  c.out.side_by_side({item("ln1_gain", "learned gain γ of LayerNorm 1", e.ln1.gain, {"γ"}, dl),
                      item("ln1_bias", "learned bias β of LayerNorm 1", e.ln1.bias, {"β"}, dl)});
  if (!pre) c.out.matrix(item("after_attention", "H = γ ⊙ normalised + β = LayerNorm(X + A)", e.after_attn, tk, dl));
  else c.out.line("This model is pre-norm: the residual stream X + A goes on unnormalised, and LayerNorm is applied to each sub-layer's input.");
}

void show_feed_forward_trained(LessonContext& c) {
  const EncoderLayer0 e = encoder_layer0(c);
  model::Transformer<float>& net = c.model->net();
  const auto& tk = c.src.tokens;
  const auto dl = render::numbered_labels("d", c.d_model);
  const std::size_t F = static_cast<std::size_t>(net.config().d_ff);
  c.out.line(fmt::format("FFN(x) = max(0, x·W1 + b1)·W2 + b2 with the model's W1: {} × {}, W2: {} × {} (d_ff = {})", c.d_model, F, F,
                         c.d_model, F));
  c.out.line("");
  c.out.matrix(item("ffn_hidden", "hidden = max(0, H·W1 + b1)  (n × d_ff; ReLU zeroes the negatives)", e.hidden, tk,
                    render::numbered_labels("f", core::cols(e.hidden))));
  std::size_t zeros = 0;
  for (float v : e.hidden) zeros += v == 0.0f;
  c.out.line(fmt::format("{:.0f} % of the hidden units are exactly 0 after the ReLU.", 100.0 * zeros / static_cast<double>(e.hidden.size())));
  c.out.line("");
  c.out.matrix(item("ffn_out", "FFN(H)  (n × d_model)", e.ffn, tk, dl));
  c.out.matrix(item("encoder_output", "LayerNorm(H + FFN(H)) with LayerNorm 2's γ and β: encoder layer 0's output", e.output, tk, dl));
  if (net.config().encoder_layers > 1 && !net.config().pre_norm) {
    // Layer 1's attention input is layer 0's output: compare with the model's own forward pass.
    forward_one(net, c.src.int_ids(), {model::kBos});
    const auto v = net.attention_view(ModelBlock::EncoderSelf, 1);
    const float d = max_abs_difference(e.output, rows_of(v.query_input.data(), 0, tk.size(), c.d_model));
    c.out.line(fmt::format("Check: the lesson's recomputation equals the input of the model's encoder layer 1 ({}).", agreement(d)));
    c.out.value("max_difference_from_model", d);
    c.out.line("");
  }
}

void show_encoder_decoder_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const TokenizedSentence& tgt = c.target();
  const std::vector<int> tgt_in = with_bos(tgt.int_ids());
  forward_one(net, c.src.int_ids(), tgt_in, with_eos(tgt.int_ids()));
  const auto& src = c.src.tokens;
  const std::size_t n = tgt_in.size(), m = src.size(), C = c.d_model, H = c.heads;
  const std::vector<std::string> dt = prefixed("<bos>", tgt.tokens);
  const auto& cfg = net.config();
  c.out.line(fmt::format("The model's own forward pass: {} encoder and {} decoder layers, {} heads each, d_model = {}, d_ff = {}.",
                         cfg.encoder_layers, cfg.decoder_layers, cfg.heads, cfg.d_model, cfg.d_ff));
  c.out.line("");
  c.out.matrix(item("encoder_output", "encoder output M (after the last layer and the final LayerNorm)", rows_of(net.memory().data(), 0, m, C), src,
                    render::numbered_labels("d", C)));
  auto head = [&](const std::vector<float>& att, std::size_t k, std::size_t tq, std::size_t tkn) { return rows_of(att.data(), k * tq, tq, tkn); };
  std::vector<MatrixItem> self;
  for (std::size_t k = 0; k < H; ++k)
    self.push_back(weights_item(fmt::format("decoder_self_weights_{}", k), fmt::format("layer 0 head {}", k), head(net.decoder_self_attention(0), k, n, n),
                                dt, dt));
  c.out.line("Decoder masked self-attention, layer 0 (rows: decoder input tokens):");
  c.out.line("");
  c.out.side_by_side(self);
  const int last = cfg.decoder_layers - 1;
  std::vector<MatrixItem> cross;
  for (std::size_t k = 0; k < H; ++k)
    cross.push_back(weights_item(fmt::format("decoder_cross_weights_{}", k), fmt::format("layer {} head {}", last, k),
                                 head(net.decoder_cross_attention(last), k, n, m), dt, src));
  c.out.line(fmt::format("Decoder cross-attention to M, layer {} (n × m; rows: decoder input tokens):", last));
  c.out.line("");
  c.out.side_by_side(cross);
}

void show_next_token_trained(LessonContext& c) {
  model::Transformer<float>& net = c.model->net();
  const text::Vocab& vocab = c.model->vocab();
  const TokenizedSentence& tgt = c.target();
  const std::vector<int> tgt_in = with_bos(tgt.int_ids());
  forward_one(net, c.src.int_ids(), tgt_in, with_eos(tgt.int_ids()));
  const std::size_t n = tgt_in.size(), V = vocab.size();
  const core::Matrix probs = rows_of(net.probabilities().data(), 0, n, V);
  std::vector<std::string> want = tgt.tokens;
  want.push_back("<eos>");
  const std::vector<std::string> ins = prefixed("<bos>", tgt.tokens);
  show_next_token_table(c, probs, ins, want);
  std::size_t right_top = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t best = argmax_row(probs, i);
    const std::size_t right = static_cast<std::size_t>(vocab.id(want[i]));
    right_top += best == right;
    c.out.line(fmt::format("  after {:<10} most likely: {:<10} ({:.4f}); the right word {:<10} gets {:.4f}", ins[i],
                           vocab.word(static_cast<text::TokenId>(best)), probs(i, best), want[i], probs(i, right)));
  }
  c.out.line("");
  // The example of the lesson text: P(next | source, a prefix of the target).
  const auto pos = std::find(tgt.tokens.begin(), tgt.tokens.end(), c.text.next);
  if (!c.text.next.empty() && pos != tgt.tokens.end()) {
    const auto i = static_cast<std::size_t>(pos - tgt.tokens.begin());
    std::vector<std::string> prefix(tgt.tokens.begin(), pos);
    c.out.line(fmt::format("After \"{}\" the model gives \"{}\" the probability {:.4f} (given the source \"{}\").", joined(prefix), c.text.next,
                           probs(i, static_cast<std::size_t>(vocab.id(c.text.next))), c.src.text));
    c.out.value("example_probability", probs(i, static_cast<std::size_t>(vocab.id(c.text.next))));
  }
  c.out.line(fmt::format("The right word is the most likely one at {} of {} positions.", right_top, n));
  c.out.value("right_word_is_top", right_top);
  c.out.line("");
}

void show_coreference_trained(LessonContext& c) {
  if (c.text.coreference.size() != 2) throw RuntimeError("data/sentences/lessons.json: lesson 9 needs a \"coreference\" pair");
  model::Transformer<float>& net = c.model->net();
  const text::Vocab& vocab = c.model->vocab();
  const auto& cfg = net.config();
  const std::size_t H = static_cast<std::size_t>(cfg.heads);
  const text::TokenId il = vocab.id("il"), elle = vocab.id("elle");
  std::vector<TokenizedSentence> sents;
  for (const std::string& s : c.text.coreference) sents.push_back(c.encode(s, "coreference sentence"));
  const std::size_t f = focus_index(sents[0].tokens, c.text.coreference_focus);
  if (c.text.coreference_nouns.size() != 2)
    throw RuntimeError("data/sentences/lessons.json: lesson 9 needs \"coreference_nouns\", the two nouns the pronoun may name");
  const std::string& noun0 = c.text.coreference_nouns[0];
  const std::string& noun1 = c.text.coreference_nouns[1];
  const std::size_t first = focus_index(sents[0].tokens, noun0), second = focus_index(sents[0].tokens, noun1);
  const std::string last0 = sents[0].tokens[sents[0].tokens.size() - 2], last1 = sents[1].tokens[sents[1].tokens.size() - 2];
  // Encoder self-attention from the pronoun to the two nouns, for every layer and head (rows), in
  // both sentences (columns).
  const std::size_t rows_n = static_cast<std::size_t>(cfg.encoder_layers) * H;
  core::Matrix enc = core::Matrix::from_shape({rows_n, 4});  // (layer, head) × (noun 0, noun 1 in sentence 0, then 1)
  std::vector<std::string> enc_rows;
  for (int l = 0; l < cfg.encoder_layers; ++l)
    for (std::size_t k = 0; k < H; ++k) enc_rows.push_back(fmt::format("L{}h{}", l, k));
  const std::vector<std::string> ends{"…" + last0, "…" + last1};
  const std::vector<std::string> pair_rows{last0 + ":" + noun0, last0 + ":" + noun1, last1 + ":" + noun0, last1 + ":" + noun1};
  // Cross-attention while writing the pronoun: (layer, sentence) × source tokens, mean of the heads.
  std::vector<std::string> src_cols;
  for (std::size_t j = 0; j < sents[0].tokens.size(); ++j)
    src_cols.push_back(sents[0].tokens[j] == sents[1].tokens[j] ? sents[0].tokens[j] : sents[0].tokens[j] + "/" + sents[1].tokens[j]);
  if (sents[0].tokens.size() != sents[1].tokens.size()) throw RuntimeError("the coreference pair must have the same number of tokens");
  core::Matrix cross = core::Matrix(core::Matrix::shape_type{2 * static_cast<std::size_t>(cfg.decoder_layers), src_cols.size()}, 0.0f);
  std::vector<std::string> cross_rows;
  for (int l = 0; l < cfg.decoder_layers; ++l)
    for (std::size_t s = 0; s < 2; ++s) cross_rows.push_back(fmt::format("L{} {}", l, ends[s]));
  std::vector<std::string> translations;
  for (std::size_t s = 0; s < 2; ++s) {
    const std::vector<int> src = sents[s].int_ids();
    const std::size_t m = src.size();
    const std::vector<int> own = own_translation(net, src);
    translations.push_back(vocab.decode(own));
    forward_one(net, src, with_bos(own), with_eos(own));
    for (int l = 0; l < cfg.encoder_layers; ++l) {
      const std::vector<float>& att = net.encoder_attention(l);
      for (std::size_t k = 0; k < H; ++k) {
        const std::size_t r = static_cast<std::size_t>(l) * H + k;
        enc(r, 2 * s) = att[(k * m + f) * m + first];
        enc(r, 2 * s + 1) = att[(k * m + f) * m + second];
      }
    }
    c.out.line(fmt::format("\"{}\"", sents[s].text));
    c.out.line(fmt::format("  the model translates: \"{}\"", translations.back()));
    // The pronoun in its own translation: P(il) and P(elle) where it wrote it, and what the
    // decoder's cross-attention looked at in that step.
    const auto pos = std::find_if(own.begin(), own.end(), [&](int t) { return t == il || t == elle; });
    if (pos == own.end()) {
      c.out.line("  (the translation has neither il nor elle)");
      continue;
    }
    const auto i = static_cast<std::size_t>(pos - own.begin());
    const std::size_t V = vocab.size();
    const std::vector<float> probs = net.probabilities();
    const float p_il = probs[i * V + static_cast<std::size_t>(il)], p_elle = probs[i * V + static_cast<std::size_t>(elle)];
    std::vector<std::string> prefix;
    for (std::size_t k = 0; k < i; ++k) prefix.push_back(vocab.word(own[k]));
    c.out.line(fmt::format("  after \"{}\": P(il) = {:.4f}, P(elle) = {:.4f}", joined(prefix), p_il, p_elle));
    c.out.value(fmt::format("p_il_{}", s), p_il);
    c.out.value(fmt::format("p_elle_{}", s), p_elle);
    const std::size_t T = own.size() + 1;
    for (int l = 0; l < cfg.decoder_layers; ++l) {
      const std::vector<float>& att = net.decoder_cross_attention(l);
      for (std::size_t k = 0; k < H; ++k)
        for (std::size_t j = 0; j < m; ++j) cross(2 * static_cast<std::size_t>(l) + s, j) += att[(k * T + i) * m + j] / static_cast<float>(H);
    }
  }
  c.out.value("translations", translations);
  c.out.line("");
  core::Matrix enc_t = core::Matrix::from_shape({4, rows_n});
  for (std::size_t r = 0; r < rows_n; ++r)
    for (std::size_t q = 0; q < 4; ++q) enc_t(q, r) = enc(r, q);
  c.out.matrix(item("it_encoder_weights",
                    fmt::format("encoder self-attention: weight from \"{}\" on each noun, per layer L and head h", sents[0].tokens[f]),
                    enc_t, pair_rows, enc_rows));
  double best_gap = -1.0;
  std::size_t best = 0;
  for (std::size_t r = 0; r < rows_n; ++r) {
    // How much more this head prefers the right noun: noun 0 in the first sentence, noun 1 in the second.
    const double gap = (enc(r, 0) - enc(r, 1)) + (enc(r, 3) - enc(r, 2));
    if (gap > best_gap) {
      best_gap = gap;
      best = r;
    }
  }
  c.out.line(fmt::format("Encoder head that best separates the nouns: {} ({} {:.3f} vs {} {:.3f} in {}; {} {:.3f} vs {} {:.3f} in {}).",
                         enc_rows[best], noun0, enc(best, 0), noun1, enc(best, 1), ends[0], noun0, enc(best, 2), noun1,
                         enc(best, 3), ends[1]));
  c.out.value("most_telling_head", enc_rows[best]);
  c.out.line("");
  MatrixItem x = weights_item("pronoun_cross_weights", "cross-attention while writing il/elle, mean of the heads (rows: layer, sentence)",
                              cross, cross_rows, src_cols);
  // What decides il/elle: the two nouns, the pronoun and the adjective ("tired/wide").
  x.focus_cols = {noun0, noun1, c.text.coreference_focus};
  for (const auto& l : src_cols)
    if (l.find('/') != std::string::npos) x.focus_cols.push_back(l);
  c.out.matrix(x);
  for (std::size_t r = 0; r < core::rows(cross); ++r) {
    const std::size_t top = argmax_row(cross, r);
    c.out.line(fmt::format("  {:<10} looks most at {:<12} ({:.1f} %)", cross_rows[r], src_cols[top], 100.0 * cross(r, top)));
  }
  c.out.line("");
}

}  // namespace attnlab::lessons
