// attnlab corpus [--seed N] [--out DIR] [--train N --valid N --test N] [--format text|json]
// Generates the English→French corpus (and the English corpus for the language model), prints a
// summary, and either writes the files to DIR or shows a few samples of each category.
#include <algorithm>
#include <chrono>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/stop_signals.hpp"
#include "cli/validators.hpp"
#include "cli/config_lookup.hpp"
#include "corpus/corpus.hpp"
#include "corpus/coverage.hpp"
#include "corpus/grammar.hpp"
#include "corpus/tsv.hpp"
#include "io/files.hpp"
#include "render/terminal.hpp"
#include "tasks/task.hpp"
#include "util/paths.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace attnlab::cli {

struct CorpusOptions {
  std::string grammar = "lessons";
  std::uint64_t seed = 1;
  std::string out;
  bool out_given = false;
  std::size_t train = corpus::CorpusOptions{}.train;
  std::size_t valid = corpus::CorpusOptions{}.valid;
  std::size_t test = corpus::CorpusOptions{}.test;
  std::size_t lm_train = corpus::LmOptions{}.train;
  std::size_t lm_valid = corpus::LmOptions{}.valid;
  std::size_t lm_test = corpus::LmOptions{}.test;
  std::size_t samples = 3;
  std::string format = "text";
  std::string config;          // --config: the corpus settings of a run config
  bool coverage = false;       // --coverage [FILE]
  std::string coverage_file = corpus::kCoverageList;
};

namespace {

namespace fs = std::filesystem;

nlohmann::json stats_json(const corpus::SplitStats& s) {
  return {{"examples", s.examples},
          {"per_category", s.per_category},
          {"max_en_tokens", s.max_en_tokens},
          {"max_fr_tokens", s.max_fr_tokens},
          {"held_out_keys", s.combos}};
}

std::string lm_text(const std::vector<std::string>& sentences) {
  std::string out;
  for (const auto& s : sentences) out += s + '\n';
  return out;
}

// Words of valid/test that never occur in train (they would be <unk> to a model trained on it).
// Happens only with a very small --train; reported so the user knows.
std::vector<std::string> words_missing_from(const text::Vocab& vocab, const corpus::Corpus& c) {
  std::set<std::string> missing;
  for (const auto* split : {&c.valid, &c.test})
    for (const auto& e : *split)
      for (const auto* s : {&e.en, &e.fr})
        for (const auto& tok : text::tokenize(*s))
          if (!vocab.contains(tok)) missing.insert(tok);
  return {missing.begin(), missing.end()};
}

// Up to `k` training examples of each category (the first ones in the shuffled training split).
std::map<std::string, std::vector<const corpus::Example*>> samples_of(const corpus::Corpus& c, std::size_t k) {
  std::map<std::string, std::vector<const corpus::Example*>> out;
  for (const auto& e : c.train)
    if (out[e.category].size() < k) out[e.category].push_back(&e);
  return out;
}

// The files --out holds; the folder is replaced as a whole (FolderReplacement), so it may hold
// nothing else.
const std::set<std::string>& corpus_files() {
  static const std::set<std::string> names = {"train.tsv",    "valid.tsv",    "test.tsv",    "vocab.json",
                                              "lm_train.txt", "lm_valid.txt", "lm_test.txt", "lm_vocab.json"};
  return names;
}

// --coverage: the share of the word list (the commonest Brown word forms) that the training split's
// English side holds, and the words it lacks.
void report_coverage(const CorpusOptions& o, const corpus::CorpusOptions& co, const std::string& what) {
  // The shipped list is found under attnlab's data folder from anywhere; a file the user names is used as given.
  const std::string list_file = o.coverage_file == corpus::kCoverageList ? resolve_data_path(o.coverage_file) : o.coverage_file;
  const std::vector<std::string> list = corpus::read_word_list(list_file);
  const auto t0 = std::chrono::steady_clock::now();
  const corpus::Corpus c = corpus::generate(co);
  const corpus::Coverage cov = corpus::coverage(c.train, list);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.format == "json") {
    const nlohmann::json j{{"corpus", what},
                           {"train", c.train.size()},
                           {"list", o.coverage_file},
                           {"coverage", {{"words", cov.words}, {"covered", cov.covered}, {"share", cov.share()}, {"missing", cov.missing}}},
                           {"seconds", secs}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  const std::size_t width = render::detect_terminal(true).width;
  std::cout << render::wrap_words(fmt::format("coverage of {}: {} of the {} word forms of {} ({:.1f} %) occur in the English side of "
                                              "its {} training pairs ({:.1f} s)",
                                              what, cov.covered, cov.words, o.coverage_file, 100 * cov.share(), c.train.size(), secs),
                                  width, "", "  ")
            << '\n';
  if (!cov.missing.empty()) {
    std::string list_text;
    for (const auto& w : cov.missing) list_text += (list_text.empty() ? "" : ", ") + w;
    std::cout << render::wrap_words(render::visible_controls(fmt::format("missing ({}, commonest first): {}", cov.missing.size(), list_text)),
                                    width, "  ", "  ")
              << '\n';
  }
}

void run_corpus(const CorpusOptions& o) {
  corpus::CorpusOptions co;
  co.grammar = corpus::parse_grammar(o.grammar).value_or(corpus::Grammar::Lessons);
  co.seed = o.seed;
  co.train = o.train;
  co.valid = o.valid;
  co.test = o.test;
  std::string what = fmt::format("the {} grammar, seed {}", o.grammar, o.seed);
  if (!o.config.empty()) {
    const tasks::RunConfig run = tasks::load_run_config(find_config(o.config));
    if (run.lm || run.english)
      throw InputError("--config " + o.config + ": expected a translation config (its corpus is generated), got a language-model config");
    co = run.corpus;
    what = "config " + run.name;
  }
  if (o.coverage) {
    report_coverage(o, co, what);
    return;
  }
  corpus::LmOptions lo;
  lo.seed = o.seed;
  lo.train = o.lm_train;
  lo.valid = o.lm_valid;
  lo.test = o.lm_test;
  // Ctrl-C or SIGTERM before the new folder is in place undoes the work and leaves --out as it was.
  const StopOnSignals signals;
  auto stop_if_asked = [&] {
    if (StopOnSignals::requested())
      throw Interrupted(o.out_given ? fmt::format("interrupted; --out {} left as it was", o.out) : "interrupted");
  };
  std::optional<io::FolderReplacement> out_dir;
  if (o.out_given) out_dir.emplace(o.out, corpus_files(), "--out");

  const corpus::Corpus c = corpus::generate(co);
  stop_if_asked();
  const corpus::LmCorpus lm = corpus::generate_lm(lo);
  stop_if_asked();
  const text::Vocab vocab = corpus::build_vocab(c.train);
  const text::Vocab lm_vocab = corpus::build_lm_vocab(lm.train);
  const corpus::SplitStats st[3] = {corpus::split_stats(c.train), corpus::split_stats(c.valid), corpus::split_stats(c.test)};
  const auto missing = words_missing_from(vocab, c);

  std::vector<std::string> written;
  if (o.out_given) {
    const auto write = [&](const std::string& name, const std::string& content) {
      stop_if_asked();
      const std::string staged = (fs::path(out_dir->staging()) / name).string(), final_path = (fs::path(o.out) / name).string();
      try {
        io::write_file_atomic(staged, content);
      } catch (const RuntimeError& e) {  // name the file the user asked for, not the hidden staging copy
        std::string why = e.what();
        if (why.rfind(staged, 0) == 0) why = final_path + why.substr(staged.size());
        throw RuntimeError(why + "; --out " + o.out + " was left as it was");
      }
      written.push_back(final_path);
    };
    write("train.tsv", corpus::to_tsv(c.train));
    write("valid.tsv", corpus::to_tsv(c.valid));
    write("test.tsv", corpus::to_tsv(c.test));
    write("vocab.json", vocab.to_json().dump(1) + '\n');
    write("lm_train.txt", lm_text(lm.train));
    write("lm_valid.txt", lm_text(lm.valid));
    write("lm_test.txt", lm_text(lm.test));
    write("lm_vocab.json", lm_vocab.to_json().dump(1) + '\n');
    stop_if_asked();
    out_dir->commit();
  }

  if (o.format == "json") {
    nlohmann::json j{{"seed", o.seed},
                     {"splits", {{"train", stats_json(st[0])}, {"valid", stats_json(st[1])}, {"test", stats_json(st[2])}}},
                     {"vocab_size", vocab.size()},
                     {"words_missing_from_train", missing},
                     {"lm", {{"train", lm.train.size()}, {"valid", lm.valid.size()}, {"test", lm.test.size()},
                             {"vocab_size", lm_vocab.size()}}}};
    if (o.out_given) {
      j["files"] = written;
    } else {
      nlohmann::json samples = nlohmann::json::object();
      for (const auto& [cat, list] : samples_of(c, o.samples))
        for (const auto* e : list)
          samples[cat].push_back({{"en", e->en}, {"fr", e->fr}, {"focus_en", e->focus_en}, {"focus_fr", e->focus_fr}});
      j["samples"] = samples;
    }
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }

  std::cout << fmt::format("attnlab corpus, seed {}: English → French sentence pairs\n\n", o.seed);
  std::cout << fmt::format("{:<16}{:>8}{:>8}{:>8}\n", "category", "train", "valid", "test");
  std::vector<std::string> cats = corpus::categories();
  if (co.grammar != corpus::Grammar::Lessons)
    for (const auto& g : co.grammar == corpus::Grammar::Everyday ? corpus::everyday_categories() : corpus::grammar_categories())
      if (std::find(cats.begin(), cats.end(), g) == cats.end()) cats.push_back(g);
  const auto count = [](const corpus::SplitStats& s, const std::string& cat) {
    auto it = s.per_category.find(cat);
    return it == s.per_category.end() ? std::size_t{0} : it->second;
  };
  for (const auto& cat : cats)
    std::cout << fmt::format("{:<16}{:>8}{:>8}{:>8}\n", cat, count(st[0], cat), count(st[1], cat), count(st[2], cat));
  std::cout << fmt::format("{:<16}{:>8}{:>8}{:>8}\n", "total", st[0].examples, st[1].examples, st[2].examples);
  std::cout << fmt::format("{:<16}{:>8}{:>8}{:>8}   (no valid or test key occurs in train)\n", "held-out keys",
                           st[0].combos, st[1].combos, st[2].combos);
  std::cout << fmt::format("\nlongest sentence: {} English tokens, {} French tokens\n",
                           std::max({st[0].max_en_tokens, st[1].max_en_tokens, st[2].max_en_tokens}),
                           std::max({st[0].max_fr_tokens, st[1].max_fr_tokens, st[2].max_fr_tokens}));
  std::cout << fmt::format("shared EN+FR vocabulary (from train): {} tokens, 4 of them special\n", vocab.size());
  std::cout << fmt::format("language-model corpus (English): train {}, valid {}, test {} sentences; vocabulary {} tokens\n",
                           lm.train.size(), lm.valid.size(), lm.test.size(), lm_vocab.size());
  if (!missing.empty()) {
    std::string list;
    for (const auto& w : missing) list += (list.empty() ? "\"" : ", \"") + w + "\"";
    std::cerr << fmt::format("attnlab: warning: {} word{} of valid/test never occur{} in train (use a larger --train): {}\n",
                             missing.size(), missing.size() == 1 ? "" : "s", missing.size() == 1 ? "s" : "", list);
  }
  if (o.out_given) {
    std::cout << "\nwrote:\n";
    for (const auto& p : written) std::cout << "  " << shown_path(p) << '\n';
  } else {
    std::cout << "\nsamples from train (focus: the word whose translation depends on context):\n";
    for (const auto& [cat, list] : samples_of(c, o.samples)) {
      std::cout << fmt::format("\n[{}]\n", cat);
      for (const auto* e : list) {
        std::cout << fmt::format("  {}\n  {}\n", e->en, e->fr);
        if (!e->focus_en.empty()) std::cout << fmt::format("    focus: {} → {}\n", e->focus_en, e->focus_fr);
      }
    }
    std::cout << "\nlanguage model:\n";
    for (std::size_t i = 0; i < std::min(o.samples, lm.train.size()); ++i) std::cout << "  " << lm.train[i] << '\n';
    std::cout << "\nUse --out DIR to write train.tsv, valid.tsv, test.tsv, vocab.json and the lm_* files.\n";
  }
  std::cout.flush();
}

}  // namespace

void setup_corpus(CLI::App& app) {
  auto opts = std::make_shared<CorpusOptions>();
  CLI::App* sub = app.add_subcommand(
      "corpus", "Generate the English→French corpus in which context decides the translation (and the English LM corpus)");
  sub->add_option("--grammar", opts->grammar,
                  "lessons: the lesson-sized templates (translate-small); wide: the grammar over the lexicon tables "
                  "of data/lexicon (translate-wide); everyday: the wide grammar and the sentences of a beginners' "
                  "textbook (translate-everyday; docs/corpus.md)")
      ->check(CLI::IsMember({"lessons", "wide", "everyday"}))
      ->capture_default_str();
  add_seed_option(*sub, opts->seed, "Random seed (0 to 2^64-1); the same seed gives the same corpus everywhere");
  CLI::Option* out = sub->add_option("-o,--out", opts->out,
                                     "Write train.tsv, valid.tsv, test.tsv, vocab.json, lm_train.txt, lm_valid.txt, "
                                     "lm_test.txt and lm_vocab.json here (created if missing); without it, print samples");
  const auto size_range = whole_number(0, static_cast<long long>(corpus::kMaxSplitSize));
  sub->add_option("--train", opts->train, "Training sentence pairs (at least the lesson sentences)")
      ->transform(size_range)
      ->capture_default_str();
  sub->add_option("--valid", opts->valid, "Validation sentence pairs")->transform(size_range)->capture_default_str();
  sub->add_option("--test", opts->test, "Test sentence pairs")->transform(size_range)->capture_default_str();
  sub->add_option("--lm-train", opts->lm_train, "English sentences for training the language model")
      ->transform(size_range)
      ->capture_default_str();
  sub->add_option("--lm-valid", opts->lm_valid, "English validation sentences for the language model")
      ->transform(size_range)
      ->capture_default_str();
  sub->add_option("--lm-test", opts->lm_test, "English test sentences for the language model")
      ->transform(size_range)
      ->capture_default_str();
  sub->add_option("--samples", opts->samples, "Samples per category to print when there is no --out")
      ->transform(whole_number(0, 100))
      ->capture_default_str();
  sub->add_option("-f,--format", opts->format, "Output format of the summary")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  CLI::Option* config = sub->add_option("--config", opts->config,
                                        "Take the corpus settings (grammar, seed, split sizes) from a translation run config, "
                                        "e.g. translate-wide");
  CLI::Option* coverage = sub->add_option("--coverage", opts->coverage_file,
                                          "Report which of the commonest English word forms (a rank/word/count list) occur in the "
                                          "training split's English side, instead of writing or sampling the corpus")
                              ->expected(0, 1)
                              ->default_str(corpus::kCoverageList);
  coverage->excludes(out);
  for (const char* name : {"--grammar", "--seed", "--train", "--valid", "--test"}) config->excludes(sub->get_option(name));
  sub->footer(
      "Categories: coref (it → il/elle), sense (bank, apple, trains), agreement (gender, number, adjective order), plain.\n"
      "The test split holds noun–adjective and other combinations never seen in training; see docs/corpus.md.\n"
      "Example: attnlab corpus --seed 1 --out data/corpus");
  sub->callback([opts, out, coverage] {
    opts->out_given = out->count() > 0;
    opts->coverage = coverage->count() > 0;
    if (opts->coverage && opts->coverage_file.empty()) opts->coverage_file = corpus::kCoverageList;
    run_corpus(*opts);
  });
}

}  // namespace attnlab::cli
