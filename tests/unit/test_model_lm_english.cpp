// The language model of real English, piece by piece: a BPE vocabulary behind text::Vocab, the
// tokenizer stored in checkpoints, packed training windows, the n-gram baselines `eval` prints, and
// sampling with temperature / top-k / top-p.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>

#include <unistd.h>

#include "backend/cpu/cpu_backend.hpp"
#include "model/checkpoint.hpp"
#include "model/decode.hpp"
#include "model/ngram.hpp"
#include "model/trainer.hpp"
#include "tasks/task.hpp"
#include "text/bpe.hpp"
#include "text/vocab.hpp"
#include "util/error.hpp"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kText = {
    "The cat sat on the mat.", "The dog sat on the log.", "Unbelievable: the cat and the dog sat together.",
    "Your journey starts with one step.", "Every effort moves you.", "It was the best of times, it was the worst of times."};

text::Vocab small_bpe_vocab() { return text::Vocab::from_bpe(text::Bpe::train_on_texts(kText, 320)); }

fs::path temp_folder(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("attnlab-lm-english-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

}  // namespace

TEST_CASE("a BPE vocabulary: exact round trip, nothing unknown, labels that show where words start") {
  const text::Vocab v = small_bpe_vocab();
  REQUIRE(v.bpe() != nullptr);
  CHECK(v.size() == v.bpe()->size());
  const std::string s = "Zebras can't dance — or can they? ½ 🦓";
  std::vector<std::string> unknown;
  const auto ids = v.encode(s, &unknown);
  CHECK(unknown.empty());
  CHECK(std::find(ids.begin(), ids.end(), text::Vocab::kUnk) == ids.end());
  CHECK(v.decode(ids) == s);  // case, punctuation and spacing kept
  // Labels: the leading space of a word's first piece is dropped; a piece inside a word gets "##".
  const auto cat = v.encode("the cat");
  const auto labels = v.labels_of(cat);
  CHECK(labels.front().rfind("t", 0) == 0);  // "the", or its first piece
  for (const auto& l : labels) CHECK(l.find(' ') == std::string::npos);
  const auto z = v.encode("zzyzx");  // surely several pieces with this tiny vocabulary
  REQUIRE(z.size() > 1);
  const auto zl = v.labels_of(z);
  CHECK(zl[0].rfind("##", 0) != 0);
  for (std::size_t i = 1; i < zl.size(); ++i) CHECK(zl[i].rfind("##", 0) == 0);
  CHECK(v.tokens_of(z) == zl);
  // A word-level vocabulary is unchanged.
  const text::Vocab words = text::Vocab::build({{"the", "cat"}});
  CHECK(words.bpe() == nullptr);
  CHECK(words.decode(words.encode("the cat")) == "The cat");
}

TEST_CASE("a checkpoint keeps its BPE tokenizer; a tokenizer that does not match the vocabulary is refused") {
  const text::Vocab v = small_bpe_vocab();
  model::ModelConfig c;
  c.decoder_only = true;
  c.vocab_size = static_cast<int>(v.size());
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 8;
  c.decoder_layers = 1;
  c.max_len = 16;
  model::Checkpoint ck;
  ck.config = c;
  ck.vocab = v.words();
  ck.tokenizer = v.bpe()->to_json();
  ck.params.assign(model::make_layout(c).total, 0.01f);
  ck.meta = nlohmann::json::object();
  const fs::path dir = temp_folder("ckpt");
  model::save_checkpoint((dir / "model.ckpt").string(), ck);
  tasks::LoadedModel m = tasks::load_model(dir.string(), attnlab::backend::cpu_backend<float>());
  REQUIRE(m.vocab.bpe() != nullptr);
  CHECK(*m.vocab.bpe() == *v.bpe());
  CHECK(m.vocab.decode(m.vocab.encode("Every effort moves you.")) == "Every effort moves you.");
  // Another BPE's merges with this vocabulary: refused at load, naming the tokenizer.
  ck.tokenizer = text::Bpe::train_on_texts({"aaaa bbbb aaaa bbbb"}, 262).to_json();
  model::save_checkpoint((dir / "model.ckpt").string(), ck);
  CHECK_THROWS_WITH_AS(tasks::load_model(dir.string(), attnlab::backend::cpu_backend<float>()), doctest::Contains("tokenizer"), InputError);
  fs::remove_all(dir);
}

TEST_CASE("packed windows: every token after a record's <bos> is scored exactly once") {
  const fs::path dir = temp_folder("corpus");
  for (const char* split : {"train", "valid", "test"}) {
    std::ofstream f(dir / (std::string(split) + ".txt"));
    for (const auto& s : kText) f << s << '\n';
  }
  const fs::path cfg = dir / "cfg.json";
  tasks::RunConfig run = tasks::run_config_from_json(
      {{"task", "lm"},
       {"corpus", {{"source", "english"}, {"dir", dir.string()}}},
       {"tokenizer", {{"kind", "bpe"}, {"vocab_size", 300}}},
       {"model", {{"d_model", 8}, {"heads", 2}, {"d_ff", 8}, {"decoder_layers", 1}, {"max_len", 7}}}},
      "test");
  const tasks::TaskData d = tasks::build_task_data(run);
  REQUIRE(d.vocab.bpe() != nullptr);
  CHECK(run.model.vocab_size == static_cast<int>(d.vocab.size()));
  std::size_t expected = 0;  // each sentence: its tokens and its <eos>
  for (const auto& s : kText) expected += d.vocab.encode(s).size() + 1;
  const auto pairs = model::lm_pairs(d.train);
  CHECK(pairs.size() == expected);
  for (const auto& e : d.train) {
    CHECK(e.raw);
    CHECK(e.tgt.size() <= 8);  // max_len + 1
  }
  // The batch reads input tgt[0..T-1] and target tgt[1..T]; a <bos> target is not scored.
  std::vector<std::size_t> all(d.train.size());
  std::iota(all.begin(), all.end(), 0);
  const model::Batch b = model::make_batch(d.train, all, true);
  CHECK(b.T == 7);
  std::size_t scored = 0;
  for (int t : b.tgt_out) scored += t != model::kPad;
  CHECK(scored == expected);
  for (std::size_t i = 0; i + 1 < d.train[0].tgt.size(); ++i) {
    CHECK(b.tgt_in[i] == d.train[0].tgt[i]);
    const int next = d.train[0].tgt[i + 1];
    CHECK(b.tgt_out[i] == (next == model::kBos ? model::kPad : next));
  }
  // The text of the test split is kept for per-word figures.
  CHECK(d.lm_test_sentences == kText);
  // A missing folder says how to make it.
  run.english_dir = (dir / "nothing-here").string();
  CHECK_THROWS_WITH_AS(tasks::build_task_data(run), doctest::Contains("scripts/english-corpus.sh"), InputError);
  fs::remove_all(dir);
}

TEST_CASE("run config: the english corpus and the BPE tokenizer, and what is refused") {
  auto parse = [](const nlohmann::json& j) { return tasks::run_config_from_json(j, "cfg"); };
  const nlohmann::json ok = {{"task", "lm"}, {"corpus", {{"source", "english"}}}, {"tokenizer", {{"kind", "bpe"}, {"vocab_size", 4096}}}};
  const tasks::RunConfig r = parse(ok);
  CHECK(r.english);
  CHECK(r.bpe_vocab == 4096);
  CHECK(r.english_dir == "data/english");
  CHECK_THROWS_WITH_AS(parse({{"task", "translate"}, {"corpus", {{"source", "english"}}}}), doctest::Contains("needs \"task\": \"lm\""), InputError);
  CHECK_THROWS_WITH_AS(parse({{"task", "lm"}, {"corpus", {{"source", "english"}}}}), doctest::Contains("cfg.tokenizer"), InputError);
  CHECK_THROWS_WITH_AS(parse({{"task", "lm"}, {"corpus", {{"source", "english"}, {"train", 5}}}, {"tokenizer", {{"kind", "bpe"}, {"vocab_size", 300}}}}),
                       doctest::Contains("unknown field \"train\""), InputError);
  CHECK_THROWS_WITH_AS(parse({{"task", "lm"}, {"corpus", {{"source", "english"}}}, {"tokenizer", {{"kind", "bpe"}, {"vocab_size", 100}}}}),
                       doctest::Contains("cfg.tokenizer.vocab_size: expected a whole number from 261"), InputError);
  CHECK_THROWS_WITH_AS(parse({{"task", "lm"}, {"tokenizer", {{"kind", "bpe"}, {"vocab_size", 300}}}}), doctest::Contains("\"english\" corpus only"), InputError);
  CHECK_THROWS_WITH_AS(parse({{"task", "lm"}, {"corpus", {{"source", "web"}}}}), doctest::Contains("cfg.corpus.source"), InputError);
  // A change of tokenizer or corpus source is a change of run for --resume.
  nlohmann::json other = ok;
  other["tokenizer"]["vocab_size"] = 8000;
  const auto changes = tasks::resume_changes(ok, parse(other));
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].field == "tokenizer.vocab_size");
}

TEST_CASE("n-gram baselines: each distribution sums to 1, and the losses match a hand count") {
  // Stream "<bos> a b <eos>", "<bos> a a <eos>" with ids a = 4, b = 5 (vocabulary of 6).
  std::vector<model::Example> data = {{{}, {4, 5}}, {{}, {4, 4}}};
  const auto pairs = model::lm_pairs(data);
  REQUIRE(pairs.size() == 6);
  CHECK(pairs[0] == std::pair<int, int>{2, 4});
  CHECK(pairs[2] == std::pair<int, int>{5, 3});
  const model::NgramBaseline g(pairs, 6);
  // Targets: a 3 times, b once, <eos> twice: p(a) = (3 + 1) / (6 + 6).
  CHECK(g.unigram_prob(4) == doctest::Approx(4.0 / 12));
  for (int v = 0; v < 6; ++v) {
    for (double d : {0.1, 0.5, 0.9}) {
      double sum = 0;
      for (int w = 0; w < 6; ++w) sum += g.bigram_prob(v, w, d);
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-12));
    }
  }
  // After a: a once, b once, <eos> once. p(b | a) with D = 0.5: (1 − 0.5)/3 + 0.5·3/3·p(b).
  CHECK(g.bigram_prob(4, 5, 0.5) == doctest::Approx(0.5 / 3 + 0.5 * (2.0 / 12)));
  CHECK(g.unigram_loss(pairs) == doctest::Approx(-(3 * std::log(4.0 / 12) + std::log(2.0 / 12) + 2 * std::log(3.0 / 12)) / 6));
  // A raw window: pairs of neighbours, <bos> targets left out.
  model::Example w;
  w.raw = true;
  w.tgt = {3, 2, 4, 5};
  const auto wp = model::lm_pairs({w});
  REQUIRE(wp.size() == 2);
  CHECK(wp[0] == std::pair<int, int>{2, 4});
}

TEST_CASE("sampling: temperature, top-k and top-p keep what they say, and a seed repeats the text") {
  std::vector<double> lp = {0, 0, 0, std::log(0.1), std::log(0.4), std::log(0.3), std::log(0.2)};  // pad unk bos eos 4 5 6
  lp[0] = lp[1] = lp[2] = std::log(0.5);  // specials other than <eos> are never drawn, however likely
  model::SampleOptions o;
  o.temperature = 1;
  o.top_p = 1;
  auto p = model::sampling_distribution(lp, o);
  CHECK(p[0] == 0);
  CHECK(p[1] == 0);
  CHECK(p[2] == 0);
  CHECK(p[4] == doctest::Approx(0.4));
  CHECK(std::accumulate(p.begin(), p.end(), 0.0) == doctest::Approx(1.0));
  o.top_k = 2;  // 0.4 and 0.3 left, renormalised
  p = model::sampling_distribution(lp, o);
  CHECK(p[4] == doctest::Approx(0.4 / 0.7));
  CHECK(p[5] == doctest::Approx(0.3 / 0.7));
  CHECK(p[6] == 0);
  o.top_k = 0;
  o.top_p = 0.65;  // 0.4 + 0.3 ≥ 0.65: the nucleus is {4, 5}
  p = model::sampling_distribution(lp, o);
  CHECK(p[6] == 0);
  CHECK(p[3] == 0);
  CHECK(p[5] == doctest::Approx(0.3 / 0.7));
  o.top_p = 1;
  o.temperature = 0.5;  // p^2 renormalised
  p = model::sampling_distribution(lp, o);
  CHECK(p[4] == doctest::Approx(0.16 / (0.01 + 0.16 + 0.09 + 0.04)));
  o.temperature = 0;
  CHECK_THROWS_AS(model::sampling_distribution(lp, o), InputError);

  model::ModelConfig c;
  c.decoder_only = true;
  c.vocab_size = 12;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 8;
  c.decoder_layers = 1;
  c.max_len = 20;
  c.dropout = 0;
  model::Transformer<float> net(c, attnlab::backend::cpu_backend<float>());
  net.init_params(3);
  model::SampleOptions s;
  s.temperature = 1.5;
  const auto a = model::continue_sampled(net, {4, 5}, 10, s);
  CHECK(model::continue_sampled(net, {4, 5}, 10, s) == a);
  bool differs = false;
  for (std::uint64_t seed = 2; seed < 12 && !differs; ++seed) {
    s.seed = seed;
    differs = model::continue_sampled(net, {4, 5}, 10, s) != a;
  }
  CHECK(differs);
  for (int t : a) CHECK((t != model::kPad && t != model::kBos && t != model::kUnk && t != model::kEos));
  CHECK(a.size() <= 10);
}

TEST_CASE("a BPE file whose merges make a token longer than any piece is refused (no 1 MiB tokens)") {
  // The eighth adversarial pass: merging a token with itself 14 times made a 1 MiB token in a 4 MB
  // checkpoint, and generate wrote 1 GB.
  nlohmann::json merges = nlohmann::json::array();
  text::TokenId last = text::Bpe::kFirstByte + 'a';
  std::string bytes = "a";
  for (int r = 0; r < 8; ++r) {
    bytes += bytes;
    merges.push_back({last, last, bytes});
    last = text::Bpe::kFirstMerge + r;
  }
  const nlohmann::json j = {{"format", "attnlab-bpe"}, {"version", 1}, {"specials", {"<pad>", "<unk>", "<bos>", "<eos>"}}, {"merges", merges}};
  CHECK_THROWS_WITH_AS(text::Bpe::from_json(j), doctest::Contains("merges[6] makes a token of 128 bytes; at most 64"), InputError);
  nlohmann::json ok = j;
  ok["merges"].erase(7);  // up to 64 bytes: fine
  ok["merges"].erase(6);
  CHECK(text::Bpe::from_json(ok).size() == 266);
}
