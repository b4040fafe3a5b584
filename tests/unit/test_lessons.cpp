// The lesson layer: tokenizing with a vocabulary, positional encoding, layer norm, feed-forward net,
// the lesson.md parser, and that every shipped lesson only names computations that exist.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <tuple>

#include "helpers.hpp"
#include "lessons/lesson_doc.hpp"
#include "lessons/model.hpp"
#include "lessons/session.hpp"
#include "lessons/text.hpp"
#include "lessons/trained.hpp"
#include "lessons/transformer.hpp"
#include "render/matrix_print.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::test::make;

TEST_CASE("the lessons tokenize with the real tokenizer and map unknown words to <unk>") {
  text::Vocab v;
  for (const char* w : {"the", "cat", ".", "l'", "animal"}) v.add(w);
  const TokenizedSentence t = encode("The cat zorbled the zorbled dog.", v, "--sentence");
  CHECK(t.tokens == std::vector<std::string>{"the", "cat", "<unk>", "the", "<unk>", "<unk>", "."});
  CHECK(t.unknown == std::vector<std::string>{"zorbled", "dog"});
  CHECK(t.ids[2] == static_cast<std::size_t>(text::Vocab::kUnk));
  // French elision is split as the trained models' tokenizer splits it.
  CHECK(encode("L’animal", v, "--sentence").tokens == std::vector<std::string>{"l'", "animal"});
  CHECK_THROWS_AS(encode("", v, "--sentence"), InputError);
  std::string long_sentence;
  for (std::size_t i = 0; i <= kMaxSentenceTokens; ++i) long_sentence += "cat ";
  CHECK_THROWS_WITH_AS(encode(long_sentence, v, "--sentence"), doctest::Contains("limit of 32"), InputError);
}

TEST_CASE("data/vocab.txt keeps the special tokens at the ids the models use") {
  const text::Vocab v = load_word_list(std::string(ATTNLAB_SOURCE_DIR) + "/data/vocab.txt");
  CHECK(v.id("<pad>") == text::Vocab::kPad);
  CHECK(v.id("<unk>") == text::Vocab::kUnk);
  CHECK(v.id("<bos>") == text::Vocab::kBos);
  CHECK(v.id("<eos>") == text::Vocab::kEos);
  CHECK(v.contains("cat"));
}

TEST_CASE("positional encoding: interleaved sin/cos as in the paper") {
  // d_model = 4: columns (0,1) use angle pos / 10000^0 = pos, columns (2,3) use pos / 10000^(2/4) = pos/100.
  const core::Matrix pe = positional_encoding(3, 4);
  CHECK(pe(0, 0) == doctest::Approx(0.0));
  CHECK(pe(0, 1) == doctest::Approx(1.0));
  CHECK(pe(0, 3) == doctest::Approx(1.0));
  CHECK(pe(1, 0) == doctest::Approx(std::sin(1.0)));      // 0.841471
  CHECK(pe(1, 1) == doctest::Approx(std::cos(1.0)));      // 0.540302
  CHECK(pe(1, 2) == doctest::Approx(std::sin(0.01)));     // 0.0099998
  CHECK(pe(2, 3) == doctest::Approx(std::cos(0.02)));     // 0.9998
  CHECK(pe(2, 0) == doctest::Approx(std::sin(2.0)));
}

TEST_CASE("model input is E·√d_model + PE") {
  const core::Matrix e = make({{1, 0}, {0, 1}});
  const core::Matrix pe = positional_encoding(2, 2);
  const core::Matrix x = model_input(e, pe);
  CHECK(x(0, 0) == doctest::Approx(std::sqrt(2.0) + 0.0));
  CHECK(x(0, 1) == doctest::Approx(0.0 + 1.0));
  CHECK(x(1, 1) == doctest::Approx(std::sqrt(2.0) + std::cos(1.0)));
}

TEST_CASE("seeded randomness is deterministic and word-specific") {
  CHECK(embedding_row("cat", 8, 42) == embedding_row("cat", 8, 42));
  CHECK(embedding_row("cat", 8, 42) != embedding_row("cat", 8, 43));
  CHECK(embedding_row("cat", 8, 42) != embedding_row("dog", 8, 42));
  for (float v : embedding_row("<pad>", 8, 42)) CHECK(v == 0.0f);
  // Sample moments of the normal sampler: mean ≈ 0, variance ≈ σ².
  Rng rng(1, "moments");
  const core::Matrix m = random_matrix(rng, 200, 100, 2.0f);
  double s = 0, q = 0;
  for (float v : m) { s += v; q += double(v) * v; }
  const double mean = s / m.size(), var = q / m.size() - mean * mean;
  CHECK(std::fabs(mean) < 0.05);
  CHECK(var == doctest::Approx(4.0).epsilon(0.05));
  CHECK_THROWS_AS(random_attention_weights(8, 3, 1, "x"), InputError);
  const core::AttentionWeights w = random_attention_weights(8, 2, 1, "x");
  CHECK(w.heads.size() == 2);
  CHECK(core::cols(w.heads[0].w_q) == 4);
  CHECK(w.w_o->shape()[0] == 8);
}

TEST_CASE("layer norm: hand-worked row, ε inside the square root, per-row statistics") {
  // Row [1, 2, 3, 4]: mean 2.5, population variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25.
  // With ε = 1e-5: y = (x − 2.5) / √1.25001 = [−1.341635, −0.447212, 0.447212, 1.341635].
  // Row [10, 10, 10, 10]: variance 0, so y = 0 / √ε = 0 (no division by zero).
  const core::Matrix y = layer_norm(make({{1, 2, 3, 4}, {10, 10, 10, 10}}));
  CHECK(y(0, 0) == doctest::Approx(-1.5 / std::sqrt(1.25001)));
  CHECK(y(0, 1) == doctest::Approx(-0.5 / std::sqrt(1.25001)));
  CHECK(y(0, 3) == doctest::Approx(1.5 / std::sqrt(1.25001)));
  for (std::size_t j = 0; j < 4; ++j) CHECK(y(1, j) == 0.0f);
  // Statistics are over the features of one token (a row), not over the tokens (a column).
  const core::Matrix z = layer_norm(make({{1, 100}, {3, 300}}));
  CHECK(z(0, 0) == doctest::Approx(-1.0).epsilon(1e-4));
  CHECK(z(1, 0) == doctest::Approx(-1.0).epsilon(1e-4));
}

TEST_CASE("feed-forward: ReLU between two affine maps") {
  // x = [1, −1]; W1 = I₂, b1 = [0, 0.5] → pre-activation [1, −0.5] → ReLU [1, 0];
  // W2 = [[2, 3], [5, 7]], b2 = [1, 1] → [1·2 + 0·5 + 1, 1·3 + 0·7 + 1] = [3, 4].
  FeedForward f{make({{1, 0}, {0, 1}}), make({{0, 0.5f}}), make({{2, 3}, {5, 7}}), make({{1, 1}})};
  core::Matrix hidden;
  const core::Matrix y = feed_forward(make({{1, -1}}), f, &hidden);
  CHECK(hidden(0, 0) == 1.0f);
  CHECK(hidden(0, 1) == 0.0f);
  CHECK(y(0, 0) == doctest::Approx(3.0));
  CHECK(y(0, 1) == doctest::Approx(4.0));
  CHECK_THROWS_AS(add(make({{1, 2}}), make({{1}, {2}})), ShapeError);
}

TEST_CASE("encoder and decoder layers keep shapes; the decoder is causal") {
  const std::size_t d = 8;
  const core::Matrix x = positional_encoding(5, d), y = positional_encoding(4, d);
  EncoderLayer enc{random_attention_weights(d, 2, 3, "e"), random_feed_forward(d, 32, 3, "ef")};
  DecoderLayer dec{random_attention_weights(d, 2, 3, "ds"), random_attention_weights(d, 2, 3, "dc"),
                   random_feed_forward(d, 32, 3, "df")};
  LayerTrace et, dt;
  const core::Matrix m = encoder_layer(x, enc, &et);
  const core::Matrix out = decoder_layer(y, m, dec, &dt);
  CHECK(m.shape() == x.shape());
  CHECK(out.shape() == y.shape());
  CHECK(core::rows(dt.cross.heads[0].weights) == 4);
  CHECK(core::cols(dt.cross.heads[0].weights) == 5);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = i + 1; j < 4; ++j) CHECK(dt.self.heads[0].weights(i, j) == 0.0f);
  // Changing the last decoder token leaves the earlier outputs unchanged.
  core::Matrix y2 = y;
  for (std::size_t j = 0; j < d; ++j) y2(3, j) += 1.0f;
  const core::Matrix out2 = decoder_layer(y2, m, dec);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < d; ++j) CHECK(out2(i, j) == doctest::Approx(out(i, j)));
}

TEST_CASE("lesson.md parser: title, summary, steps, directives, fences") {
  const std::string md =
      "# A title\n\nFirst paragraph\non two lines.\n\nMore intro.\n\n## Step one\nText.\n<!-- show: scores -->\n"
      "<!-- an author's note -->\nAfter.\n\n## Step two\n```\n## not a heading\n```\n";
  const LessonDoc d = parse_lesson_markdown(md, "test.md");
  CHECK(d.title == "A title");
  CHECK(d.summary == "First paragraph on two lines.");
  REQUIRE(d.steps.size() == 2);
  CHECK(d.steps[0].title == "Step one");
  REQUIRE(d.steps[0].blocks.size() == 3);
  CHECK(d.steps[0].blocks[1].kind == Block::Kind::Show);
  CHECK(d.steps[0].blocks[1].text == "scores");
  CHECK(d.steps[0].blocks[2].text.find("note") == std::string::npos);
  CHECK(d.steps[1].blocks[0].text.find("## not a heading") != std::string::npos);
  CHECK_THROWS_AS(parse_lesson_markdown("no title\n## step\n", "x.md"), RuntimeError);
  CHECK_THROWS_AS(parse_lesson_markdown("# title only\n", "x.md"), RuntimeError);
}

TEST_CASE("the shipped lessons: ten, in order, every directive known, findable by number and name") {
  const auto all = load_lessons(ATTNLAB_SOURCE_DIR);
  REQUIRE(all.size() == 10);
  const auto& reg = show_registry();
  for (std::size_t i = 0; i < all.size(); ++i) {
    INFO(all[i].file.string());
    CHECK(all[i].number == static_cast<int>(i + 1));
    CHECK(!all[i].summary.empty());
    bool any_show = false;
    for (const Step& s : all[i].steps)
      for (const Block& b : s.blocks)
        if (b.kind == Block::Kind::Show) {
          any_show = true;
          CHECK_MESSAGE(reg.count(b.text) == 1, "unknown directive " << b.text);
        }
    CHECK(any_show);
  }
  CHECK(find_lesson(all, "3").number == 3);
  CHECK(find_lesson(all, "03").number == 3);
  CHECK(find_lesson(all, "softmax").number == 4);
  CHECK(find_lesson(all, "08-cross-attention").number == 8);
  CHECK(find_lesson(all, "cross").number == 8);
  CHECK(find_lesson(all, "10").number == 10);
  CHECK_THROWS_AS(find_lesson(all, "11"), InputError);
  CHECK_THROWS_AS(find_lesson(all, "nope"), InputError);
}

TEST_CASE("heatmap without colour uses shades and no escape codes") {
  CHECK(render::shade_glyph(0.0f) == " ");
  CHECK(render::shade_glyph(1.0f) == "█");
  CHECK(render::shade_glyph(0.5f) == "▒");
  CHECK(render::shade_glyph(0.863f) == "█");  // nearly a whole row's weight looks full
  CHECK(render::shade_glyph(0.79f) == "▓");
  CHECK(render::shade_glyph(0.19f) == " ");
  CHECK(render::shade_glyph(0.2f) == "░");
  CHECK(render::shade_glyph(std::nanf("")) == " ");
  std::ostringstream os;
  render::HeatmapOptions o;
  print_heatmap(os, "w", make({{0, 1}, {0.5f, 0.25f}}), {"a", "b"}, {"x", "y"}, o);
  CHECK(os.str().find('\x1b') == std::string::npos);
  CHECK(os.str().find("███") != std::string::npos);
  std::ostringstream oc;
  o.color = render::ColorMode::TrueColor;
  print_heatmap(oc, "w", make({{0, 1}}), {"a"}, {"x", "y"}, o);
  CHECK(oc.str().find("\x1b[") != std::string::npos);
}

TEST_CASE("side by side: placed next to each other when they fit, stacked otherwise") {
  CHECK(render::visible_width("\x1b[1mab\x1b[0mc") == 3);
  CHECK(render::visible_width("garçon") == 6);
  std::ostringstream wide, narrow;
  render::print_side_by_side(wide, {"ab\ncd\n", "xyz\n"}, 2, 80, false);
  CHECK(wide.str() == "ab  xyz\ncd\n");
  render::print_side_by_side(narrow, {"ab\ncd\n", "xyz\n"}, 2, 5, false);
  CHECK(narrow.str() == "ab\ncd\n\nxyz\n");
}

TEST_CASE("the lessons' replay of a trained model's attention equals the model's own (1e-5)") {
  using Block = model::Transformer<float>::Block;
  std::string missing;
  for (const char* name : {"translate-small", "lm-small", "lm-english"}) {
    CAPTURE(name);
    const std::string dir = std::string(ATTNLAB_SOURCE_DIR) + "/data/models/" + name;
    if (!std::ifstream(dir + "/model.ckpt").good()) {
      missing += (missing.empty() ? "" : ", ") + dir + "/model.ckpt";
      continue;
    }
    const TrainedModel m = load_trained_model(dir, name);
    const auto& cfg = m.net().config();
    const TokenizedSentence src = encode("The boy trains the puppy.", m.vocab(), "test");
    const TokenizedSentence tgt = encode(cfg.decoder_only ? "The boy trains the puppy." : "Le garçon entraîne le chiot.", m.vocab(), "test");
    CHECK(src.unknown.empty());
    std::vector<int> tgt_in{model::kBos};
    for (std::size_t id : tgt.ids) tgt_in.push_back(static_cast<int>(id));
    forward_one(m.net(), cfg.decoder_only ? std::vector<int>{} : src.int_ids(), tgt_in);
    const std::size_t n = tgt_in.size(), s = src.ids.size();
    std::vector<std::tuple<Block, int, std::size_t, std::size_t>> blocks;
    for (int l = 0; l < cfg.decoder_layers; ++l) {
      blocks.emplace_back(Block::DecoderSelf, l, n, n);
      if (!cfg.decoder_only) blocks.emplace_back(Block::DecoderCross, l, n, s);
    }
    if (!cfg.decoder_only) {
      for (int l = 0; l < cfg.encoder_layers; ++l) blocks.emplace_back(Block::EncoderSelf, l, s, s);
      // Lesson 1's sum E·√d_model + PE is the model's own encoder input.
      core::Matrix e = core::Matrix::from_shape({s, static_cast<std::size_t>(cfg.d_model)});
      for (std::size_t i = 0; i < s; ++i)
        for (int j = 0; j < cfg.d_model; ++j)
          e(i, static_cast<std::size_t>(j)) = m.net().params.download(m.net().layout().tok_emb + src.ids[i] * static_cast<std::size_t>(cfg.d_model) + static_cast<std::size_t>(j), 1)[0];
      const core::Matrix x = model_input(e, positional_encoding(s, static_cast<std::size_t>(cfg.d_model)));
      CHECK(max_abs_difference(x, rows_of(m.net().encoder_embedding().data(), 0, s, static_cast<std::size_t>(cfg.d_model))) <= 1e-5f);
    }
    for (const auto& [blk, layer, nq, nk] : blocks) {
      CAPTURE(static_cast<int>(blk));
      CAPTURE(layer);
      const Replay r = replay_attention(m.net(), blk, layer, nq, nk);
      CHECK(r.trace.heads.size() == static_cast<std::size_t>(cfg.heads));
      CHECK(r.w.heads[0].b_q.has_value());
      CHECK(r.max_difference <= 1e-5f);
      for (std::size_t h = 0; h < r.trace.heads.size(); ++h)
        for (std::size_t i = 0; i < nq; ++i)
          for (std::size_t j = 0; j < nk; ++j) CHECK(r.trace.heads[h].weights(i, j) == doctest::Approx(r.model_weights[h](i, j)).epsilon(1e-5));
    }
  }
  if (!missing.empty()) ATTNLAB_SKIP(missing << " not in the source tree (the models found were checked)");
}
