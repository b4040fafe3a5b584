#include "cli/model_documents.hpp"

#include <charconv>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "cli/model_view.hpp"
#include "cli/pictures.hpp"
#include "model/transformer.hpp"
#include "render/html_page.hpp"
#include "render/terminal.hpp"
#include "tasks/attention_sets.hpp"
#include "tasks/translation.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace attnlab::cli {

namespace {

void warn(std::vector<std::string>* warnings, const std::string& line) {
  if (warnings) warnings->push_back(line);
  else std::cerr << line << '\n';
}

std::vector<int> all_ids(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

// The float written in its shortest round-trip form, as a double that prints that way (0.1f: 0.1, not
// 0.10000000149011612), so that the JSON is no longer than it must be and reads back as the same float.
double shortest(float f) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf - 1, f);
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

}  // namespace

nlohmann::json vectors_json(const std::vector<std::vector<float>>& queries, const std::vector<std::vector<float>>& keys,
                            const std::vector<int>& layers, const std::vector<int>& heads, std::size_t rows,
                            std::size_t columns, int d_model, int n_heads) {
  const std::size_t C = static_cast<std::size_t>(d_model), dk = C / static_cast<std::size_t>(n_heads);
  auto per_head = [&](const std::vector<float>& m, std::size_t n, int hd) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < n; ++i) {
      nlohmann::json v = nlohmann::json::array();
      const float* p = m.data() + i * C + static_cast<std::size_t>(hd) * dk;
      for (std::size_t d = 0; d < dk; ++d) v.push_back(shortest(p[d]));
      out.push_back(std::move(v));
    }
    return out;
  };
  nlohmann::json q = nlohmann::json::array(), k = nlohmann::json::array();
  for (int l : layers) {
    const auto& ql = queries.at(static_cast<std::size_t>(l));
    const auto& kl = keys.at(static_cast<std::size_t>(l));
    if (ql.size() < rows * C || kl.size() < columns * C) throw std::logic_error("vectors_json: fewer vectors than tokens");
    nlohmann::json qh = nlohmann::json::array(), kh = nlohmann::json::array();
    for (int hd : heads) {
      qh.push_back(per_head(ql, rows, hd));
      kh.push_back(per_head(kl, columns, hd));
    }
    q.push_back(std::move(qh));
    k.push_back(std::move(kh));
  }
  return {{"d_k", dk}, {"q", std::move(q)}, {"k", std::move(k)}};
}

std::string json_text(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

AttendComputation compute_attend(tasks::LoadedModel& m, const std::string& text, const std::string& what, int layer, int head,
                                 std::vector<std::string>* warnings, bool vectors) {
  const model::ModelConfig& c = m.net->config();
  const int layers = c.decoder_only ? c.decoder_layers : c.encoder_layers;
  AttendComputation a;
  const auto ids = encode_user_text(m.vocab, text, static_cast<std::size_t>(c.max_len - 1), &a.tokens, what, warnings);
  if (c.decoder_only) {
    // The language model reads <bos> + text; report the rows of the text's own tokens.
    std::vector<int> tgt_in = {model::kBos};
    tgt_in.insert(tgt_in.end(), ids.begin(), ids.end());
    tasks::forward_one(*m.net, {}, tgt_in);
    a.tokens.insert(a.tokens.begin(), "<bos>");
  } else {
    tasks::forward_one(*m.net, ids, {model::kBos});
  }
  for (auto& t : a.tokens) t = render::visible_controls(t);
  for (int l = 0; l < layers; ++l)
    a.attention.push_back(c.decoder_only ? m.net->decoder_self_attention(l) : m.net->encoder_attention(l));
  using Block = model::Transformer<float>::Block;
  for (int l = 0; vectors && l < layers; ++l) {
    auto qk = m.net->attention_queries_keys(c.decoder_only ? Block::DecoderSelf : Block::EncoderSelf, l);
    a.queries.push_back(std::move(qk.q));
    a.keys.push_back(std::move(qk.k));
  }
  for (int l = 0; l < layers; ++l)
    if (layer < 0 || l == layer) a.layer_ids.push_back(l);
  for (int hd = 0; hd < c.heads; ++hd)
    if (head < 0 || hd == head) a.head_ids.push_back(hd);
  return a;
}

nlohmann::json attend_document(const tasks::LoadedModel& m, const AttendComputation& a, bool with_layers) {
  const model::ModelConfig& c = m.net->config();
  const std::size_t n = a.tokens.size();
  AttentionSetInfo si;
  si.name = c.decoder_only ? "causal self-attention" : "encoder self-attention";
  si.kind = c.decoder_only ? "causal" : "self";
  si.description = c.decoder_only ? "each row is a token of the text (after <bos>) gathering from the tokens up to it."
                                  : "each row is a word of the sentence gathering from every word of it.";
  si.row_title = "attending (query)";
  si.column_title = "attended to (key)";
  si.rows = a.tokens;
  si.columns = a.tokens;
  si.layers = a.layer_ids;
  si.heads = a.head_ids;
  nlohmann::json d = {{"tokens", a.tokens},
                      {"model", model_json(m)},
                      {"attention", nlohmann::json::array({attention_set(si, [&](int l, int hd) { return a.block(l, hd); })})}};
  if (!a.queries.empty())
    d["attention"][0]["vectors"] = vectors_json(a.queries, a.keys, a.layer_ids, a.head_ids, n, n, c.d_model, c.heads);
  if (!with_layers) return d;
  // "layers": the same weights in the shape attend printed before the explorer existed.
  nlohmann::json jl = nlohmann::json::array();
  for (int l : a.layer_ids) {
    nlohmann::json jh = nlohmann::json::array();
    for (int hd : a.head_ids) {
      const float* b = a.block(l, hd);
      nlohmann::json rows = nlohmann::json::array();
      for (std::size_t i = 0; i < n; ++i) rows.push_back(std::vector<float>(b + i * n, b + (i + 1) * n));
      jh.push_back({{"layer", l}, {"head", hd}, {"weights", rows}});
    }
    jl.push_back(jh);
  }
  d["layers"] = jl;
  return d;
}

TranslateResult translate_document(tasks::LoadedModel& m, const TranslateRequest& r, std::vector<std::string>* warnings) {
  const std::string& text = r.text;
  const std::size_t max_len = static_cast<std::size_t>(m.net->config().max_len);
  TranslateResult out;
  std::vector<std::string>& src_tokens = out.src_tokens;
  auto src = encode_user_text(m.vocab, text, max_len, &src_tokens, r.what, warnings);
  // A model of the generated corpus reads the sentence with the full stop it was trained on, and says so.
  std::string read_as = text;
  if (const std::optional<std::string> stopped = tasks::with_full_stop(m, text)) {
    text::EncodedSentence with_stop = text::encode_sentence(m.vocab, *stopped, max_len + 1, r.what);
    if (with_stop.ids.size() <= max_len) {
      src.assign(with_stop.ids.begin(), with_stop.ids.end());
      src_tokens = std::move(with_stop.labels);
      read_as = *stopped;
      const std::string shown = render::fit_width(render::visible_controls(read_as), 80);  // one line, cut at a character
      warn(warnings, "attnlab: note: the model learned only sentences that end with . ! or ?; it reads \"" + shown + "\"");
    }
  }
  model::DecodeOptions d = tasks::learner_decode(r.beam, r.length_penalty, r.allow_loops);
  d.record_attention = r.record_attention;
  const model::ModelConfig& c = m.net->config();
  out.hypothesis = model::translate(*m.net, src, d);
  const model::Hypothesis& h = out.hypothesis;
  std::vector<std::string> out_tokens = m.vocab.tokens_of(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
  out.translation = m.vocab.decode(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
  const int H = c.heads, S = static_cast<int>(src.size()), L = c.decoder_layers;
  std::vector<std::string>& rows = out.rows;
  rows = out_tokens;
  rows.push_back("<eos>");
  // Is it likely wrong? Unseen words, the model's own calibrated confidence, a loop, the length limit
  // (tasks/confidence.hpp): one verdict, in the JSON and as one warning line.
  std::string calibration_note;
  const std::optional<tasks::Calibration> calibration = tasks::load_calibration(m, &calibration_note);
  out.verdict = tasks::judge_translation(m, text, static_cast<int>(src.size()), h, d, calibration);
  const tasks::Verdict& verdict = out.verdict;

  // Every attention of the translation (tasks/attention_sets.hpp): the model re-reads the source and
  // its own output (teacher forcing, no dropout), which gives the attention the decoder used at each
  // step of decoding.
  nlohmann::json sets = nlohmann::json::array();
  if (r.attention_sets) {
    sets = tasks::translation_attention_sets(*m.net, src, src_tokens, h.tokens, out_tokens);
    if (r.vectors) {  // the neuron view's queries and keys of each block (--vectors), from the same forward pass
      using Block = model::Transformer<float>::Block;
      std::vector<std::vector<float>> enc_q, enc_k, dec_q, dec_k, cross_q, cross_k;
      for (int l = 0; l < c.encoder_layers; ++l) {
        auto qk = m.net->attention_queries_keys(Block::EncoderSelf, l);
        enc_q.push_back(std::move(qk.q));
        enc_k.push_back(std::move(qk.k));
      }
      for (int l = 0; l < L; ++l) {
        auto sq = m.net->attention_queries_keys(Block::DecoderSelf, l);
        dec_q.push_back(std::move(sq.q));
        dec_k.push_back(std::move(sq.k));
        auto x = m.net->attention_queries_keys(Block::DecoderCross, l);
        cross_q.push_back(std::move(x.q));
        cross_k.push_back(std::move(x.k));
      }
      const std::size_t T = rows.size();
      sets[0]["vectors"] = vectors_json(enc_q, enc_k, all_ids(c.encoder_layers), all_ids(H), src.size(), src.size(), c.d_model, H);
      sets[1]["vectors"] = vectors_json(dec_q, dec_k, all_ids(L), all_ids(H), T, T, c.d_model, H);
      sets[2]["vectors"] = vectors_json(cross_q, cross_k, all_ids(L), all_ids(H), T, src.size(), c.d_model, H);
    }
  }
  nlohmann::json& j = out.doc;
  j = {{"source", text}, {"source_tokens", src_tokens}, {"translation", out.translation},
       {"tokens", out_tokens}, {"logprob", h.logprob}, {"score", h.score}, {"finished", h.finished},
       {"beam", r.beam}, {"loops_blocked", !r.allow_loops}, {"model", model_json(m)}};
  if (read_as != text) j["read_as"] = read_as;  // the sentence with the full stop the model needs
  if (!m.known_source_words.empty()) j["unseen_words"] = verdict.inputs.unseen_words;
  j["reached_length_limit"] = verdict.inputs.length_limit > 0;
  j["loop"] = verdict.inputs.loop.empty() ? nlohmann::json(nullptr) : nlohmann::json(verdict.inputs.loop);
  j["unsure"] = verdict.unsure;
  j["unsure_why"] = verdict.why_json();
  j["confidence"] = {{"min_token_prob", verdict.confidence.min_token_prob},
                     {"mean_logprob", verdict.confidence.mean_logprob},
                     {"calibrated", verdict.calibrated}};
  if (!calibration_note.empty()) j["confidence"]["not_calibrated_because"] = calibration_note;
  if (calibration) j["confidence"]["floors"] = {{"min_token_prob", calibration->min_token_prob}, {"mean_logprob", calibration->mean_logprob},
                                                {"quantile", calibration->quantile}};
  if (r.cross_attention_json) {
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
  return out;
}

}  // namespace attnlab::cli
