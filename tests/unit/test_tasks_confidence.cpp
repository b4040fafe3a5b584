// The "unsure" verdict and the everyday set: per-token log-probabilities against a teacher-forced
// oracle, the calibration's floors on hand-made numbers, each reason, the loop finder, the
// calibration file (with its checkpoint hash), and the everyday set's reader and comparison.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "backend/cpu/cpu_backend.hpp"
#include "model/decode.hpp"
#include "tasks/confidence.hpp"
#include "tasks/everyday.hpp"
#include "tasks/task.hpp"
#include "util/error.hpp"

using namespace attnlab;

namespace {

namespace fs = std::filesystem;

model::ModelConfig tiny(int vocab) {
  model::ModelConfig c;
  c.vocab_size = vocab;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.max_len = 12;
  c.dropout = 0.0f;
  return c;
}

// log p(token | src, tokens before) by teacher forcing, one decode step each: uses only decode_step,
// none of the beam's bookkeeping.
std::vector<double> teacher_forced(model::Transformer<float>& m, const std::vector<int>& src, const std::vector<int>& tokens, bool eos) {
  m.start_decoding(src, 1);
  const int V = m.config().vocab_size;
  std::vector<double> out;
  std::vector<int> feed{model::kBos};
  for (std::size_t i = 0; i < tokens.size() + (eos ? 1 : 0); ++i) {
    const auto& logits = m.decode_step(feed);
    double mx = -1e300;
    for (int v = 0; v < V; ++v) mx = std::max(mx, static_cast<double>(logits[v]));
    double z = 0;
    for (int v = 0; v < V; ++v) z += std::exp(static_cast<double>(logits[v]) - mx);
    const int t = i < tokens.size() ? tokens[i] : model::kEos;
    out.push_back(static_cast<double>(logits[t]) - mx - std::log(z));
    feed = {t};
  }
  return out;
}

fs::path temp_dir(const char* name) {
  fs::path d = fs::temp_directory_path() / (std::string("attnlab-confidence-") + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("decoding records each chosen token's log-probability, as teacher forcing computes it") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    model::Transformer<float> m(tiny(9), attnlab::backend::cpu_backend<float>());
    m.init_params(seed);
    for (int beam : {1, 3}) {
      model::DecodeOptions d;
      d.beam = beam;
      const std::vector<int> src{4, 5, 6, 7};
      const model::Hypothesis h = model::translate(m, src, d);
      REQUIRE(h.token_logprobs.size() == h.tokens.size() + (h.finished ? 1 : 0));
      const std::vector<double> oracle = teacher_forced(m, src, h.tokens, h.finished);
      double sum = 0;
      for (std::size_t i = 0; i < oracle.size(); ++i) {
        CHECK(h.token_logprobs[i] == doctest::Approx(oracle[i]).epsilon(1e-5));
        sum += h.token_logprobs[i];
      }
      CHECK(h.logprob == doctest::Approx(sum).epsilon(1e-9));
    }
  }
}

TEST_CASE("confidence_of: the least likely token and the mean log-probability") {
  model::Hypothesis h;
  h.tokens = {10, 11, 12};
  h.token_logprobs = {std::log(0.9), std::log(0.2), std::log(0.8), std::log(0.95)};
  const tasks::Confidence c = tasks::confidence_of(h);
  CHECK(c.min_token_prob == doctest::Approx(0.2));
  CHECK(c.weakest_token == 1);
  CHECK(c.mean_logprob == doctest::Approx((std::log(0.9) + std::log(0.2) + std::log(0.8) + std::log(0.95)) / 4));
  h.token_logprobs.back() = std::log(0.1);  // the <eos> is the weakest: index == tokens.size()
  CHECK(tasks::confidence_of(h).weakest_token == 3);
}

TEST_CASE("calibrate: each floor lets exactly the quantile of right translations fall below it") {
  std::vector<tasks::Confidence> right, wrong;
  for (int i = 1; i <= 100; ++i) right.push_back({i / 100.0, -1.0 + i / 1000.0, 0});  // 0.01 … 1.00; −0.999 … −0.9
  for (int i = 1; i <= 10; ++i) wrong.push_back({i < 8 ? 0.02 : 0.5, -0.95, 0});
  const tasks::Calibration cal = tasks::calibrate(right, wrong, 0.05, 4);
  CHECK(cal.min_token_prob == doctest::Approx(0.06));  // 0.01 … 0.05 lie below: 5 of 100
  CHECK(cal.mean_logprob == doctest::Approx(-0.994));
  CHECK(cal.right_flagged == doctest::Approx(0.05));  // the same five lie below both floors
  CHECK(cal.wrong_flagged == doctest::Approx(0.7));   // 0.02 < 0.06 for 7; mean −0.95 is above −0.994
  CHECK_THROWS_AS(tasks::calibrate({}, wrong, 0.05, 4), InputError);
}

TEST_CASE("judge: each reason on its own, and none for a confident translation") {
  model::Hypothesis h;
  h.tokens = {10, 11};
  h.finished = true;
  h.token_logprobs = {std::log(0.99), std::log(0.3), std::log(0.98)};
  tasks::Calibration cal;
  cal.min_token_prob = 0.5;
  cal.mean_logprob = -2.0;
  tasks::VerdictInputs in;
  in.target_tokens = {"Le", " chat"};
  tasks::Verdict v = tasks::judge(h, in, cal);
  REQUIRE(v.unsure);
  REQUIRE(v.why.size() == 1);
  CHECK(v.why[0].code == "low_confidence");
  CHECK(v.why[0].text.find("\" chat\" with probability 0.30") != std::string::npos);
  CHECK(v.calibrated);
  // Without a calibration, confidence is not judged.
  v = tasks::judge(h, in, std::nullopt);
  CHECK_FALSE(v.unsure);
  CHECK_FALSE(v.calibrated);
  // A confident translation with nothing else is not unsure.
  h.token_logprobs = {std::log(0.99), std::log(0.9), std::log(0.98)};
  CHECK_FALSE(tasks::judge(h, in, cal).unsure);
  // The mean alone.
  cal.mean_logprob = -0.01;
  v = tasks::judge(h, in, cal);
  REQUIRE(v.why.size() == 1);
  CHECK(v.why[0].text.find("mean log-probability") != std::string::npos);
  cal.mean_logprob = -2.0;
  // The other reasons, in a fixed order.
  in.unseen_words = {"zebra"};
  in.loop = "par un pas";
  in.length_limit = 22;
  in.source_tokens = 6;
  v = tasks::judge(h, in, cal);
  REQUIRE(v.why.size() == 3);
  CHECK(v.why[0].code == "unseen_words");
  CHECK(v.why[0].text == "outside what this model learned: \"zebra\" never occurred in its training sentences");
  CHECK(v.why[1].code == "loop");
  CHECK(v.why[2].text == "the translation reached the length limit (22 tokens for a 6-token sentence)");
  CHECK(v.why_json().size() == 3);
  CHECK(tasks::reasons_text(v).find("; it repeats \"par un pas\"") != std::string::npos);
}

TEST_CASE("repeated_phrase finds the first loop in a translation's words, and none in French that has none") {
  CHECK(tasks::repeated_phrase("Ton voyage commence par un pas par un pas.") == "par un pas");
  CHECK(tasks::repeated_phrase("Il est très très très fatigué.") == "très");
  CHECK(tasks::repeated_phrase("Nous nous promenons.") == "");
  CHECK(tasks::repeated_phrase("Le chat dort.") == "");
}

TEST_CASE("the calibration file: written beside the checkpoint, read back, refused for another checkpoint") {
  const fs::path dir = temp_dir("file");
  write(dir / "model.ckpt", std::string("not a real checkpoint") + std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  tasks::LoadedModel m;
  m.dir = dir.string();
  CHECK(tasks::checkpoint_hash(m) == 0x0807060504030201ull);
  std::string why;
  CHECK_FALSE(tasks::load_calibration(m, &why).has_value());
  CHECK(why.find("no confidence.json") != std::string::npos);
  tasks::Calibration c;
  c.min_token_prob = 0.25;
  c.mean_logprob = -0.5;
  c.quantile = 0.05;
  c.right = 90;
  c.wrong = 10;
  c.checkpoint_hash = tasks::checkpoint_hash(m);
  CHECK(tasks::save_calibration(m, c) == (dir / "confidence.json").string());
  const auto back = tasks::load_calibration(m);
  REQUIRE(back.has_value());
  CHECK(back->min_token_prob == 0.25);
  CHECK(back->mean_logprob == -0.5);
  CHECK(back->right == 90);
  // The checkpoint changes (retrained): the floors belong to the old one.
  write(dir / "model.ckpt", std::string("another checkpoint") + std::string(8, '\x09'));
  CHECK_FALSE(tasks::load_calibration(m, &why).has_value());
  CHECK(why.find("another checkpoint") != std::string::npos);
  // A damaged file is an input error naming it.
  write(dir / "confidence.json", "{\"format\": \"attnlab-confidence\", \"version\": 1, \"min_token_prob\": \"low\"}");
  CHECK_THROWS_WITH_AS(tasks::load_calibration(m), doctest::Contains("confidence.json: min_token_prob: expected a finite number"), InputError);
  fs::remove_all(dir);
}

TEST_CASE("the everyday set: the shipped file reads, and malformed lines are named") {
  const auto items = tasks::read_everyday(ATTNLAB_SOURCE_DIR + std::string("/") + tasks::kEverydaySet);
  CHECK(items.size() >= 150);
  for (const auto& it : items) {
    CHECK_FALSE(it.en.empty());
    CHECK_FALSE(it.accepted.empty());
  }
  const fs::path dir = temp_dir("set");
  write(dir / "bad.tsv", "category\tenglish\tfrench\n# a comment\nplain\tThe cat sleeps.\tLe chat dort.\nplain no tab here\n");
  CHECK_THROWS_WITH_AS(tasks::read_everyday((dir / "bad.tsv").string()), doctest::Contains("bad.tsv:4: expected 3 tab-separated columns, got 1"),
                       InputError);
  write(dir / "noheader.tsv", "plain\tThe cat sleeps.\tLe chat dort.\n");
  CHECK_THROWS_WITH_AS(tasks::read_everyday((dir / "noheader.tsv").string()), doctest::Contains("noheader.tsv:1: expected the header"),
                       InputError);
  write(dir / "empty.tsv", "category\tenglish\tfrench\nplain\tThe cat sleeps.\tLe chat dort. |  | Le chat sommeille.\n");
  CHECK_THROWS_WITH_AS(tasks::read_everyday((dir / "empty.tsv").string()), doctest::Contains("empty.tsv:2: french"), InputError);
  fs::remove_all(dir);
}

TEST_CASE("everyday_right: any accepted translation, spaces and the typographic apostrophe aside, nothing else") {
  tasks::EverydayItem it{"plain", "I love you.", {"Je t'aime.", "Je vous aime."}, 1};
  CHECK(tasks::everyday_right(it, "Je t'aime."));
  CHECK(tasks::everyday_right(it, "  Je  vous aime. "));
  CHECK(tasks::everyday_right(it, "Je t\xE2\x80\x99" "aime."));
  CHECK_FALSE(tasks::everyday_right(it, "je t'aime."));
  CHECK_FALSE(tasks::everyday_right(it, "Je t'aime"));
  CHECK_FALSE(tasks::everyday_right(it, "Je t'adore."));
}
