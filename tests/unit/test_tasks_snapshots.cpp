// Attention snapshots during training (tasks/snapshots.hpp): the log-spaced schedule, the probe file's
// checks, and that a snapshot is the attention of the model at that step: equal (to the 1e-6 the
// JSON keeps) to what the checkpoint saved at the same step computes, read back and run on its own.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.hpp"
#include "model/decode.hpp"
#include "tasks/snapshots.hpp"
#include "tasks/task.hpp"
#include "tasks/training.hpp"
#include "text/vocab.hpp"
#include "util/error.hpp"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

fs::path snap_scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("attnlab-snapshots-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(p);
  return p;
}

std::string probe_write(const fs::path& p, const std::string& content) {
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

std::string snap_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

nlohmann::json snap_read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("the snapshot schedule: step 0, K log-spaced steps, the last; merged where they meet") {
  // round(30^(i/4)), i = 1..4: 30^0.25 = 2.34, 30^0.5 = 5.48, 30^0.75 = 12.82, 30.
  CHECK(tasks::snapshot_steps(4, 30) == std::vector<std::int64_t>{0, 2, 5, 13, 30});
  CHECK(tasks::snapshot_steps(1, 4000) == std::vector<std::int64_t>{0, 4000});
  // 4000^(i/12): 1.996, 3.98, 7.95, 15.87, 31.69, 63.25, 126.2, 251.98, 502.97, 1003.96, 2003.96, 4000.
  CHECK(tasks::snapshot_steps(12, 4000) == std::vector<std::int64_t>{0, 2, 4, 8, 16, 32, 63, 126, 252, 503, 1004, 2004, 4000});
  for (int k : {1, 2, 5, 10}) {
    const auto s = tasks::snapshot_steps(k, 10);
    CAPTURE(k);
    CHECK(s.front() == 0);
    CHECK(s.back() == 10);
    CHECK(s.size() <= static_cast<std::size_t>(k) + 1);
    CHECK(std::is_sorted(s.begin(), s.end()));
    CHECK(std::set<std::int64_t>(s.begin(), s.end()).size() == s.size());
  }
  CHECK_THROWS_AS(tasks::snapshot_steps(0, 10), InputError);
  CHECK_THROWS_AS(tasks::snapshot_steps(11, 10), InputError);
}

TEST_CASE("a probe file: one sentence a line; missing, empty, not UTF-8 are refused naming --probe") {
  const fs::path d = snap_scratch("probe");
  fs::create_directories(d);
  CHECK(tasks::read_probe_file(probe_write(d / "ok.txt", "# comment\nThe boy trains the puppy.\n\n  The girl sees the dog.  \r\n")) ==
        std::vector<std::string>{"The boy trains the puppy.", "The girl sees the dog."});
  CHECK(snap_error_of([&] { tasks::read_probe_file((d / "none.txt").string()); }).rfind("--probe: ", 0) == 0);
  const std::string empty = snap_error_of([&] { tasks::read_probe_file(probe_write(d / "empty.txt", "\n# only a comment\n")); });
  CHECK(empty.find("--probe") == 0);
  CHECK(empty.find("expected at least one sentence") != std::string::npos);
  const std::string bad = snap_error_of([&] { tasks::read_probe_file(probe_write(d / "latin1.txt", "The boy.\nCaf\xe9 noir.\n")); });
  CHECK(bad.find("line 2: expected UTF-8 text, got the byte 0xE9 at byte 4") != std::string::npos);
  std::string many;
  for (int i = 0; i < 65; ++i) many += "The boy sees the dog.\n";
  CHECK(snap_error_of([&] { tasks::read_probe_file(probe_write(d / "many.txt", many)); }).find("expected at most 64 sentences") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("the lessons' sentences are the default probes, each once") {
  const auto s = tasks::lesson_probe_sentences();
  REQUIRE(s.size() >= 4);
  CHECK(s.front() == "The cat sees the small dog.");
  CHECK(std::set<std::string>(s.begin(), s.end()).size() == s.size());
  CHECK(std::find(s.begin(), s.end(), "The animal didn't cross the street because it was too tired.") != s.end());
}

TEST_CASE("a snapshot equals the attention computed from the checkpoint saved at that step (1e-6)") {
  const fs::path out = snap_scratch("checkpoints");
  tasks::TrainRequest req;
  req.config_file = std::string(ATTNLAB_SOURCE_DIR) + "/data/configs/tiny-test.json";
  req.run = tasks::load_run_config(req.config_file);
  req.out = out.string();
  req.snapshots = 4;
  auto& be = backend::cpu_backend<float>();
  tasks::TrainingRun tr(req, be, [](const std::string&) {});
  const std::vector<std::int64_t> schedule = tr.snapshots().schedule();
  REQUIRE(schedule == std::vector<std::int64_t>{0, 2, 5, 13, 30});
  // A checkpoint at each snapshot step: stop there, save, keep a copy of model.ckpt, go on.
  std::atomic<bool> stop{false};
  auto keep = [&](std::int64_t step) {
    tr.save_checkpoint(step);
    fs::copy_file(out / "model.ckpt", out / ("model-" + std::to_string(step) + ".ckpt"));
  };
  keep(0);
  while (tr.step() < req.run.train.steps) {
    stop = false;
    tr.train([&](const model::StepInfo& s) { stop = std::binary_search(schedule.begin(), schedule.end(), s.step); }, &stop);
    keep(tr.step());
  }
  CHECK(tr.snapshots().taken() == schedule.size());

  for (std::int64_t step : schedule) {
    CAPTURE(step);
    const nlohmann::json snap = snap_read_json(out / "snapshots" / tasks::Snapshots::file_name(step));
    CHECK(snap["step"] == step);
    CHECK(snap["loss"].is_null() == (step == 0));
    tasks::LoadedModel m = tasks::load_model((out / ("model-" + std::to_string(step) + ".ckpt")).string(), be);
    const model::ModelConfig& c = m.net->config();
    const auto sentences = tasks::lesson_probe_sentences();
    REQUIRE(snap["probes"].size() == sentences.size());
    double worst = 0;
    for (std::size_t p = 0; p < sentences.size(); ++p) {
      const nlohmann::json& jp = snap["probes"][p];
      CHECK(jp["sentence"] == sentences[p]);
      const text::EncodedSentence e = text::encode_sentence(m.vocab, sentences[p], static_cast<std::size_t>(c.max_len), "probe");
      const std::vector<int> src(e.ids.begin(), e.ids.end());
      const model::Hypothesis h = model::translate(*m.net, src, model::DecodeOptions{});
      CHECK(jp["translation"] == m.vocab.decode(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end())));
      // The checkpoint's attention, from a forward of the source and the translation as written.
      model::Batch b;
      b.B = 1;
      b.src = src;
      b.S = static_cast<int>(src.size());
      b.src_len = {b.S};
      b.tgt_in = {model::kBos};
      b.tgt_in.insert(b.tgt_in.end(), h.tokens.begin(), h.tokens.end());
      b.T = static_cast<int>(b.tgt_in.size());
      b.tgt_out.assign(b.tgt_in.size(), model::kPad);
      m.net->forward(b, 0.0f, false, nullptr);
      const std::size_t S = src.size(), T = b.tgt_in.size();
      const nlohmann::json& sets = jp["attention"];
      REQUIRE(sets.size() == 3);
      auto compare = [&](const nlohmann::json& set, int layers, const std::function<std::vector<float>(int)>& of, std::size_t R, std::size_t C) {
        REQUIRE(set["weights"].size() == static_cast<std::size_t>(layers));
        for (int l = 0; l < layers; ++l) {
          const std::vector<float> a = of(l);
          for (int hd = 0; hd < c.heads; ++hd)
            for (std::size_t i = 0; i < R; ++i)
              for (std::size_t j = 0; j < C; ++j)
                worst = std::max(worst, std::abs(set["weights"][l][hd][i][j].get<double>() -
                                                 static_cast<double>(a[(static_cast<std::size_t>(hd) * R + i) * C + j])));
        }
      };
      compare(sets[0], c.encoder_layers, [&](int l) { return m.net->encoder_attention(l); }, S, S);
      compare(sets[1], c.decoder_layers, [&](int l) { return m.net->decoder_self_attention(l); }, T, T);
      compare(sets[2], c.decoder_layers, [&](int l) { return m.net->decoder_cross_attention(l); }, T, S);
      CHECK(sets[2]["rows"].size() == T);
      CHECK(sets[2]["columns"] == e.labels);
    }
    CHECK(worst <= 1e-6);
  }
  fs::remove_all(out);
}

TEST_CASE("snapshots change nothing in training: the same losses and weights with and without") {
  auto& be = backend::cpu_backend<float>();
  std::vector<std::vector<double>> losses;
  std::vector<std::vector<float>> params;
  for (int k : {0, 8}) {
    const fs::path out = snap_scratch("same-" + std::to_string(k));
    tasks::TrainRequest req;
    req.config_file = std::string(ATTNLAB_SOURCE_DIR) + "/data/configs/tiny-test.json";
    req.run = tasks::load_run_config(req.config_file);
    req.out = out.string();
    req.snapshots = k;
    tasks::TrainingRun tr(req, be, [](const std::string&) {});
    CHECK(tr.snapshots().active() == (k > 0));
    tr.train([](const model::StepInfo&) {}, nullptr);
    losses.push_back(tr.trainer().loss_history());
    params.push_back(tr.trainer().model().params.download());
    fs::remove_all(out);
  }
  CHECK(losses[0] == losses[1]);
  CHECK(params[0] == params[1]);
}

TEST_CASE("the summary: the best-aligned cross head and each encoder layer's strongest relation above chance") {
  const nlohmann::json heads = {
      {"relations",
       {{{"block", "enc"}, {"layer", 0}, {"head", 0}, {"coref", {{"mass", 0.5}, {"chance", 0.2}, {"top1", 0.4}, {"rows", 10}}},
         {"agreement", {{"mass", 0.6}, {"chance", 0.5}, {"top1", 0.4}, {"rows", 10}}}},
        {{"block", "enc"}, {"layer", 0}, {"head", 1}, {"coref", {{"mass", 0.45}, {"chance", 0.2}, {"top1", 0.4}, {"rows", 10}}},
         {"agreement", {{"mass", 0.9}, {"chance", 0.5}, {"top1", 0.4}, {"rows", 0}}}},
        {{"block", "enc"}, {"layer", 1}, {"head", 0}, {"coref", {{"mass", 0.3}, {"chance", 0.2}, {"top1", 0.4}, {"rows", 10}}}}}},
      {"alignment",
       {{{"block", "cross"}, {"layer", 0}, {"head", 0}, {"alignment_error_rate", 0.5}, {"rows", 4}},
        {{"block", "cross"}, {"layer", 1}, {"head", 1}, {"alignment_error_rate", 0.25}, {"rows", 4}},
        {{"block", "cross"}, {"layer", 1}, {"head", 0}, {"alignment_error_rate", 0.0}, {"rows", 0}}}}};
  const nlohmann::json s = tasks::snapshot_summary(heads);
  CHECK(s["alignment_error"] == nlohmann::json{{"layer", 1}, {"head", 1}, {"rate", 0.25}});
  REQUIRE(s["strongest_relation"].size() == 2);
  // layer 0: coref of head 0 lifts 0.3, its agreement 0.1, head 1's agreement has no rows.
  CHECK(s["strongest_relation"][0]["relation"] == "coref");
  CHECK(s["strongest_relation"][0]["head"] == 0);
  CHECK(s["strongest_relation"][1]["mass"] == 0.3);
}
