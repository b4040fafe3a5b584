// attnlab eval --model DIR [--beam K] [--limit N]
// Scores a trained model on its corpus's test split (regenerated from the config stored in the
// checkpoint): exact match, and separately the accuracy of the context-dependent words (il/elle on
// coreference sentences, the sense of ambiguous words, agreement).
#include <cctype>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "corpus/grammar.hpp"
#include "model/decode.hpp"
#include "model/ngram.hpp"
#include "render/progress.hpp"
#include "render/terminal.hpp"
#include "util/paths.hpp"
#include "tasks/confidence.hpp"
#include "tasks/everyday.hpp"
#include "tasks/task.hpp"
#include "tasks/translation.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace attnlab::cli {

struct EvalOptions {
  std::string model = tasks::kDefaultTranslateModel;
  int beam = 4;
  std::size_t limit = 0;
  int show_errors = 5;
  bool allow_loops = false;
  std::string format = "text";
  std::string backend = "cpu";
  bool everyday = false;
  std::string everyday_file = tasks::kEverydaySet;
  bool calibrate = false;
  double quantile = 0.05;
};

namespace {

struct Score {
  std::size_t right = 0, total = 0;
  double pct() const { return total ? 100.0 * static_cast<double>(right) / static_cast<double>(total) : 0.0; }
  nlohmann::json json() const { return {{"correct", right}, {"total", total}, {"accuracy", total ? static_cast<double>(right) / total : 0.0}}; }
};

// For the report's first line: a model shipped with its weights in bf16 is scored as it ships.
std::string weights_note(const tasks::LoadedModel& m) {
  return m.weights == model::Storage::bf16 ? "; weights stored in bf16, widened to float32 on load" : "";
}
const char* weights_name(const tasks::LoadedModel& m) { return m.weights == model::Storage::bf16 ? "bf16" : "fp32"; }

// The held-out everyday set (tasks/everyday.hpp): how many sentences the model gets right, by
// category, and how well its "unsure" verdict (tasks/confidence.hpp) separates the wrong from the right.
void run_everyday(const EvalOptions& o, tasks::LoadedModel& m) {
  if (m.net->config().decoder_only)
    throw InputError("--everyday: --model " + o.model + " is a decoder-only language model; the everyday set is English→French");
  // The shipped set is found under attnlab's data folder from anywhere; a file the user names is used as given.
  const std::string file = o.everyday_file == tasks::kEverydaySet ? resolve_data_path(o.everyday_file) : o.everyday_file;
  const std::vector<tasks::EverydayItem> items = tasks::read_everyday(file);
  std::string calibration_note;
  const std::optional<tasks::Calibration> calibration = tasks::load_calibration(m, &calibration_note);
  const model::DecodeOptions d = tasks::learner_decode(o.beam, 0.6, o.allow_loops);
  const std::size_t max_len = static_cast<std::size_t>(m.net->config().max_len);
  const auto t0 = std::chrono::steady_clock::now();
  Score right, flagged_right, flagged_wrong;
  std::map<std::string, Score> by_cat;
  std::map<std::string, std::size_t> reasons_on_wrong;
  nlohmann::json sentences = nlohmann::json::array();
  render::ProgressBar bar(static_cast<std::int64_t>(items.size()), "everyday");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const tasks::EverydayItem& it = items[i];
    // Read as `attnlab translate` reads it: with the full stop a generated-corpus model needs.
    const std::string read_as = tasks::with_full_stop(m, it.en).value_or(it.en);
    const text::EncodedSentence enc = text::encode_sentence(m.vocab, read_as, max_len, fmt::format("{}:{}", file, it.line));
    const std::vector<int> src(enc.ids.begin(), enc.ids.end());
    const model::Hypothesis h = model::translate(*m.net, src, d);
    const std::string got = m.vocab.decode(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
    const bool ok = tasks::everyday_right(it, got);
    const tasks::Verdict v = tasks::judge_translation(m, it.en, static_cast<int>(src.size()), h, d, calibration);
    right.right += ok;
    ++right.total;
    by_cat[it.category].right += ok;
    ++by_cat[it.category].total;
    Score& f = ok ? flagged_right : flagged_wrong;
    f.right += v.unsure;
    ++f.total;
    if (!ok)
      for (const auto& r : v.why) ++reasons_on_wrong[r.code];
    sentences.push_back({{"category", it.category}, {"en", it.en}, {"got", got}, {"accepted", it.accepted}, {"correct", ok},
                         {"unsure", v.unsure}, {"unsure_why", v.why_json()},
                         {"min_token_prob", v.confidence.min_token_prob}, {"mean_logprob", v.confidence.mean_logprob}});
    bar.update(static_cast<std::int64_t>(i + 1), fmt::format("right {:.1f}%", right.pct()));
  }
  bar.finish("");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json j = {{"model", m.dir}, {"weights", weights_name(m)}, {"set", file}, {"sentences", items.size()}, {"beam", o.beam},
                      {"loops_blocked", !o.allow_loops}, {"right", right.json()},
                      {"unsure", {{"calibrated", calibration.has_value()},
                                  {"flagged_among_wrong", flagged_wrong.json()},
                                  {"flagged_among_right", flagged_right.json()},
                                  {"reasons_on_wrong", reasons_on_wrong}}},
                      {"seconds", secs}};
  if (!calibration_note.empty()) j["unsure"]["not_calibrated_because"] = calibration_note;
  for (const auto& [cat, sc] : by_cat) j["right_by_category"][cat] = sc.json();
  j["results"] = sentences;
  if (o.format == "json") {
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  const std::size_t width = render::detect_terminal(true).width;
  std::cout << render::wrap_words(fmt::format("everyday set: {} sentences written by hand apart from the grammar ({}), beam {}, {:.1f} s{}",
                                              items.size(), o.everyday_file, o.beam, secs, weights_note(m)), width, "", "  ")
            << '\n';
  std::cout << fmt::format("  right                        {:6.2f}%  ({}/{})\n", right.pct(), right.right, right.total);
  std::cout << fmt::format("  \"unsure\" on the wrong ones   {:6.2f}%  ({}/{})\n", flagged_wrong.pct(), flagged_wrong.right, flagged_wrong.total);
  std::cout << fmt::format("  \"unsure\" on the right ones   {:6.2f}%  ({}/{})\n", flagged_right.pct(), flagged_right.right, flagged_right.total);
  if (!calibration) std::cout << render::wrap_words("  (not calibrated: " + calibration_note + "; only unseen words, loops and the length limit were judged)", width, "", "    ") << '\n';
  for (const auto& [cat, sc] : by_cat) std::cout << fmt::format("  right, {:<14} {:6.2f}%  ({}/{})\n", cat, sc.pct(), sc.right, sc.total);
  int shown = 0;
  for (const auto& e : sentences) {
    if (e["correct"].get<bool>() || shown >= o.show_errors) continue;
    ++shown;
    std::cout << render::visible_controls(fmt::format("  ✗ {}{}\n      got      {}\n      accepted {}\n", e["unsure"].get<bool>() ? "(unsure) " : "",
                                                      e["en"].get<std::string>(), e["got"].get<std::string>(),
                                                      e["accepted"][0].get<std::string>()), true);
  }
}

void run_eval(const EvalOptions& o) {
  tasks::LoadedModel m = tasks::load_model(o.model, open_backend(o.backend));
  if (o.everyday) {
    if (o.calibrate) throw InputError("--calibrate: measures the floors on the model's own test split; run it without --everyday");
    run_everyday(o, m);
    return;
  }
  if (m.run.raw.is_null()) throw InputError(o.model + ": the checkpoint does not record its corpus settings (meta.run_config); cannot rebuild its test split");
  tasks::RunConfig run = m.run;
  // A language model's score is set beside an n-gram baseline counted on the training split.
  const bool needs_train = m.net->config().decoder_only;
  const tasks::TaskData data = tasks::build_task_data(run, &m.vocab, needs_train ? tasks::Splits::All : tasks::Splits::TestOnly);
  if (data.test.empty())  // "0.00 % (0/0)" would read as a score
    throw InputError(o.model + ": corpus.test: expected at least 1 test sentence in the model's run config, got 0; "
                     "nothing to evaluate");
  nlohmann::json j = {{"model", m.dir}, {"weights", weights_name(m)}, {"task", run.lm ? "lm" : "translate"}};
  const auto t0 = std::chrono::steady_clock::now();
  if (run.lm) {
    // The transformer, then a unigram and a bigram model of the very same tokens, counted on the
    // training split (the bigram's discount chosen on the validation split).
    render::ProgressBar bar(static_cast<std::int64_t>(data.test.size()), "eval");
    model::EvalResult r;
    {
      double loss_sum = 0, correct = 0;
      for (std::size_t start = 0; start < data.test.size(); start += 64) {
        const std::vector<model::Example> chunk(data.test.begin() + static_cast<std::ptrdiff_t>(start),
                                                data.test.begin() + static_cast<std::ptrdiff_t>(std::min(data.test.size(), start + 64)));
        const model::EvalResult c = model::evaluate(*m.net, chunk, 64);
        loss_sum += c.loss * static_cast<double>(c.tokens);
        correct += c.token_accuracy * static_cast<double>(c.tokens);
        r.tokens += c.tokens;
        bar.update(static_cast<std::int64_t>(start + chunk.size()), "");
      }
      if (r.tokens) r.loss = loss_sum / static_cast<double>(r.tokens), r.token_accuracy = correct / static_cast<double>(r.tokens);
    }
    bar.finish("");
    const auto test_pairs = model::lm_pairs(data.test), valid_pairs = model::lm_pairs(data.valid);
    const model::NgramBaseline ngram(model::lm_pairs(data.train), m.net->config().vocab_size);
    const double discount = ngram.best_discount(valid_pairs);
    const double uni = ngram.unigram_loss(test_pairs), bi = ngram.bigram_loss(test_pairs, discount);
    std::size_t words = 0;
    for (const auto& s : data.lm_test_sentences) {
      bool in_word = false;
      for (unsigned char ch : s) {
        const bool space = std::isspace(ch) != 0;
        words += !space && !in_word;
        in_word = !space;
      }
    }
    const double tokens = static_cast<double>(r.tokens), per_word = words ? tokens / static_cast<double>(words) : 0.0;
    auto ppl = [&](double loss) { return nlohmann::json{{"loss", loss}, {"perplexity_per_token", std::exp(loss)},
                                                         {"perplexity_per_word", std::exp(loss * per_word)}}; };
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    j["test"] = {{"sentences", data.lm_test_sentences.size()}, {"examples", data.test.size()}, {"tokens", r.tokens},
                 {"words", words}, {"tokenizer", m.vocab.bpe() ? "byte-level BPE" : "words"}, {"vocab_size", m.vocab.size()}};
    j["model_scores"] = ppl(r.loss);
    j["model_scores"]["next_token_accuracy"] = r.token_accuracy;
    j["unigram"] = ppl(uni);
    j["bigram"] = ppl(bi);
    j["bigram"]["discount"] = discount;
    j["seconds"] = secs;
    if (o.format == "json") {
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      return;
    }
    std::cout << fmt::format("language model on its test split: {} sentences never seen in training, {} tokens ({}, {} ids), "
                             "{} words; {:.1f} s{}\n",
                             data.lm_test_sentences.size(), r.tokens, m.vocab.bpe() ? "byte-level BPE" : "whole words",
                             m.vocab.size(), words, secs, weights_note(m));
    std::cout << "                       loss   perplexity per token   per word\n";
    auto row = [&](const char* name, double loss) {
      std::cout << fmt::format("  {:<18} {:6.3f}   {:>20.1f}   {:>8.1f}\n", name, loss, std::exp(loss), std::exp(loss * per_word));
    };
    row("this transformer", r.loss);
    row("bigram", bi);
    row("unigram", uni);
    std::cout << fmt::format("  next-token accuracy {:.2f}%; the transformer's perplexity is {:.0f}% of the bigram's. The bigram sees one\n"
                             "  token back (absolute discounting, D = {:.1f} chosen on the validation split); the transformer attends to\n"
                             "  up to {} tokens back.\n",
                             100 * r.token_accuracy, 100 * std::exp(r.loss) / std::exp(bi), discount, m.net->config().max_len);
    return;
  }
  std::size_t n = data.test.size();
  if (o.limit > 0) n = std::min(n, o.limit);
  Score exact, focus;
  std::map<std::string, Score> exact_by_cat, focus_by_cat;
  std::vector<nlohmann::json> errors;
  std::vector<tasks::Confidence> confident_right, confident_wrong;  // --calibrate
  const model::DecodeOptions d = tasks::learner_decode(o.beam, 0.6, o.allow_loops);
  render::ProgressBar bar(static_cast<std::int64_t>(n), "eval");
  for (std::size_t i = 0; i < n; ++i) {
    const corpus::Example& ex = data.test_pairs[i];
    const model::Hypothesis h = model::translate(*m.net, data.test[i].src, d);
    const std::vector<int>& ref = data.test[i].tgt;
    const bool ok = h.tokens == ref;
    if (o.calibrate) (ok ? confident_right : confident_wrong).push_back(tasks::confidence_of(h));
    exact.right += ok;
    ++exact.total;
    exact_by_cat[ex.category].right += ok;
    ++exact_by_cat[ex.category].total;
    const std::string got = m.vocab.decode(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
    if (!ex.focus_fr.empty()) {
      const bool fok = tasks::focus_word_right(m.vocab, ex, ref, h.tokens);
      focus.right += fok;
      ++focus.total;
      focus_by_cat[ex.category].right += fok;
      ++focus_by_cat[ex.category].total;
    }
    if (!ok && static_cast<int>(errors.size()) < o.show_errors) {
      errors.push_back({{"en", ex.en}, {"expected", ex.fr}, {"got", got}, {"category", ex.category}});
    }
    bar.update(static_cast<std::int64_t>(i + 1), fmt::format("exact {:.1f}%", exact.pct()));
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bar.finish("");
  j["test_sentences"] = n;
  j["beam"] = o.beam;
  j["loops_blocked"] = !o.allow_loops;
  j["exact_match"] = exact.json();
  j["coreference_il_elle"] = focus_by_cat["coref"].json();
  j["word_sense"] = focus_by_cat["sense"].json();
  j["agreement"] = focus_by_cat["agreement"].json();
  for (const auto& [cat, s] : exact_by_cat) j["exact_match_by_category"][cat] = s.json();
  j["errors"] = errors;
  // The explainers' sentences, which the wide grammar keeps out of every split: reported apart.
  Score source;
  if (run.corpus.grammar != corpus::Grammar::Lessons) {
    nlohmann::json list = nlohmann::json::array();
    for (const corpus::Example& ex : corpus::source_sentences()) {
      const text::EncodedSentence enc = text::encode_sentence(m.vocab, ex.en, static_cast<std::size_t>(m.net->config().max_len), "source sentence");
      const model::Hypothesis h = model::translate(*m.net, std::vector<int>(enc.ids.begin(), enc.ids.end()), d);
      const std::string got = m.vocab.decode(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
      const bool ok = got == ex.fr;
      source.right += ok;
      ++source.total;
      list.push_back({{"en", ex.en}, {"expected", ex.fr}, {"got", got}, {"correct", ok}});
    }
    j["source_sentences"] = {{"score", source.json()}, {"sentences", list}};
  }
  std::string calibration_file;
  if (o.calibrate) {
    tasks::Calibration cal = tasks::calibrate(confident_right, confident_wrong, o.quantile, o.beam);
    cal.checkpoint_hash = tasks::checkpoint_hash(m);
    calibration_file = tasks::save_calibration(m, cal);
    j["calibration"] = cal.to_json();
    j["calibration"]["file"] = calibration_file;
  }
  j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.format == "json") {
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  std::cout << fmt::format("test split: {} sentence pairs never seen in training (beam {}), {:.1f} s{}\n", n, o.beam, secs, weights_note(m));
  std::cout << fmt::format("  exact match          {:6.2f}%  ({}/{})\n", exact.pct(), exact.right, exact.total);
  std::cout << fmt::format("  il/elle (coreference) {:5.2f}%  ({}/{})\n", focus_by_cat["coref"].pct(), focus_by_cat["coref"].right, focus_by_cat["coref"].total);
  std::cout << fmt::format("  word sense           {:6.2f}%  ({}/{})\n", focus_by_cat["sense"].pct(), focus_by_cat["sense"].right, focus_by_cat["sense"].total);
  std::cout << fmt::format("  agreement            {:6.2f}%  ({}/{})\n", focus_by_cat["agreement"].pct(), focus_by_cat["agreement"].right, focus_by_cat["agreement"].total);
  for (const auto& [cat, s] : exact_by_cat) std::cout << fmt::format("  exact match, {:<9} {:6.2f}%  ({}/{})\n", cat, s.pct(), s.right, s.total);
  if (o.calibrate) {
    const auto& c = j["calibration"];
    std::cout << fmt::format("  calibration: \"unsure\" below a token probability of {:.3f} or a mean log-probability of {:.3f}\n"
                             "    ({:.0f} % of the {} right translations reach both; they flag {:.1f} % of the right and {:.1f} % of the {} wrong)\n"
                             "    wrote {}\n",
                             c["min_token_prob"].get<double>(), c["mean_logprob"].get<double>(), 100 * (1 - o.quantile),
                             confident_right.size(), 100 * c["flagged_on_test"]["right"].get<double>(),
                             100 * c["flagged_on_test"]["wrong"].get<double>(), confident_wrong.size(),
                             render::visible_controls(calibration_file));
  }
  for (const auto& e : errors) {
    std::cout << fmt::format("  ✗ {}\n      expected {}\n      got      {}\n", e["en"].get<std::string>(), e["expected"].get<std::string>(),
                             e["got"].get<std::string>());
  }
  if (source.total) {
    std::cout << fmt::format("\nthe explainers' sentences (never in any split): {}/{} exactly right\n", source.right, source.total);
    for (const auto& e : j["source_sentences"]["sentences"]) {
      std::cout << fmt::format("  {} {}\n", e["correct"].get<bool>() ? "✓" : "✗", e["en"].get<std::string>());
      if (!e["correct"].get<bool>())
        std::cout << fmt::format("      expected {}\n      got      {}\n", e["expected"].get<std::string>(), e["got"].get<std::string>());
    }
  }
}

}  // namespace

void setup_eval(CLI::App& app) {
  auto opts = std::make_shared<EvalOptions>();
  CLI::App* sub = app.add_subcommand("eval", "Score a trained model on its test split (exact match, il/elle, word sense)");
  add_model_option(*sub, opts->model);
  sub->add_option("--beam", opts->beam, "Beam size (1 = greedy)")->transform(whole_number(1, 64))->capture_default_str();
  sub->add_option("--limit", opts->limit, "Only the first N test sentences (0 = all)")->transform(whole_number(0, 1000000000));
  sub->add_option("--show-errors", opts->show_errors, "How many wrong translations to print")->transform(whole_number(0, 100000))->capture_default_str();
  sub->add_flag("--allow-loops", opts->allow_loops, "Let decoding write a loop (a token thrice in a row, a phrase twice back to back), which it blocks by default");
  CLI::Option* everyday = sub->add_option("--everyday", opts->everyday_file,
                                          "Score the held-out everyday set (hand-written sentences with their acceptable French) "
                                          "instead of the test split, and how well \"unsure\" flags the wrong ones")
                               ->expected(0, 1)
                               ->default_str(tasks::kEverydaySet);
  sub->add_flag("--calibrate", opts->calibrate,
                "Set the model's confidence floors from its right test translations and write them beside the checkpoint "
                "(confidence.json), for translate's \"unsure\"");
  sub->add_option("--quantile", opts->quantile, "With --calibrate: the share of right test translations the floors may flag")
      ->transform(real_number(0.001, 0.5))
      ->capture_default_str();
  add_backend_option(*sub, opts->backend);
  add_format_option(*sub, opts->format);
  sub->callback([opts, everyday] {
    opts->everyday = everyday->count() > 0;
    if (opts->everyday && opts->everyday_file.empty()) opts->everyday_file = tasks::kEverydaySet;
    run_eval(*opts);
  });
}

}  // namespace attnlab::cli
