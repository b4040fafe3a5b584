#include "backend/cpu/cpu_backend.hpp"
#include "lessons/trained.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/mask.hpp"
#include "io/files.hpp"
#include "io/json_text.hpp"
#include "tasks/attention_sets.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace attnlab::lessons {

namespace fs = std::filesystem;

std::optional<std::string> find_default_model(const std::string& rel) {
  const std::string dir = resolve_data_path(rel);
  std::error_code ec;
  if (fs::is_regular_file(fs::path(dir) / "model.ckpt", ec)) return dir;
  return std::nullopt;
}

namespace {

// A JSON file next to the checkpoint, or null when it is missing or unreadable (it only adds detail).
nlohmann::json optional_json(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return nullptr;
  try {
    return io::parse_json_bounded(io::read_text_file(file.string(), 64u << 20));
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace

std::string describe_model(const tasks::LoadedModel& m) {
  std::string d;
  const nlohmann::json& meta = m.meta;
  if (meta.is_object() && meta.contains("trained_steps") && meta["trained_steps"].is_number_integer())
    d = fmt::format("{} steps", meta["trained_steps"].get<long long>());
  const fs::path dir = fs::is_directory(m.dir) ? fs::path(m.dir) : fs::path(m.dir).parent_path();
  // `attnlab eval --model DIR --format json > DIR/eval.json` records the test-split figures.
  const nlohmann::json ev = optional_json(dir / "eval.json");
  // These files are only read for detail: a field of the wrong type is skipped, never an error.
  if (ev.is_object() && ev.contains("exact_match") && ev["exact_match"].contains("accuracy") &&
      ev["exact_match"]["accuracy"].is_number()) {
    // The test split (sentences never seen in training), not validation token accuracy: a learner
    // reads "100 %" as "always right".
    d += fmt::format("{}exact match {:.1f}% on", d.empty() ? "" : "; ", 100.0 * ev["exact_match"]["accuracy"].get<double>());
    if (ev["exact_match"].contains("total") && ev["exact_match"]["total"].is_number_integer())
      d += fmt::format(" {}", ev["exact_match"]["total"].get<long long>());
    d += " test sentences it never saw";
    return d;
  }
  // A language model's eval.json: test perplexity next to the bigram baseline's, on the same tokens.
  auto number = [](const nlohmann::json& j, const char* a, const char* b) {
    return j.is_object() && j.contains(a) && j[a].is_object() && j[a].contains(b) && j[a][b].is_number();
  };
  if (number(ev, "model_scores", "perplexity_per_token") && number(ev, "bigram", "perplexity_per_token")) {
    d += fmt::format("{}test perplexity {:.1f} per token", d.empty() ? "" : "; ", ev["model_scores"]["perplexity_per_token"].get<double>());
    if (number(ev, "model_scores", "perplexity_per_word"))
      d += fmt::format(" ({:.1f} per word)", ev["model_scores"]["perplexity_per_word"].get<double>());
    d += fmt::format(" on text it never saw; a bigram model of the same tokens: {:.1f}", ev["bigram"]["perplexity_per_token"].get<double>());
    return d;
  }
  const nlohmann::json log = optional_json(dir / "train-log.json");
  if (log.is_object() && log.contains("valid") && log["valid"].is_array() && !log["valid"].empty()) {
    const auto& v = log["valid"].back();
    if (v.contains("token_accuracy") && v["token_accuracy"].is_number() && v.contains("step") && v["step"].is_number_integer())
      d += fmt::format("{}validation token accuracy {:.1f}% at step {}", d.empty() ? "" : "; ",
                       100.0 * v["token_accuracy"].get<double>(), v["step"].get<long long>());
  }
  return d;
}

TrainedModel load_trained_model(const std::string& dir, const std::string& label) {
  TrainedModel t{tasks::load_model(dir, backend::cpu_backend<float>()), label, ""};
  t.description = describe_model(t.m);
  return t;
}

void forward_one(model::Transformer<float>& net, const std::vector<int>& src, const std::vector<int>& tgt_in,
                 const std::vector<int>& tgt_out) {
  tasks::forward_one(net, src, tgt_in, tgt_out);
}

core::Matrix rows_of(const float* data, std::size_t row0, std::size_t n, std::size_t width) {
  core::Matrix m = core::Matrix::from_shape({n, width});
  std::copy(data + row0 * width, data + (row0 + n) * width, m.data());
  return m;
}

namespace {

// Columns [col0, col0 + ncols) of a row-major nrows × width tensor.
core::Matrix column_block(const std::vector<float>& p, std::size_t off, std::size_t nrows, std::size_t width, std::size_t col0,
                    std::size_t ncols) {
  core::Matrix w = core::Matrix::from_shape({nrows, ncols});
  for (std::size_t i = 0; i < nrows; ++i)
    for (std::size_t j = 0; j < ncols; ++j) w(i, j) = p[off + i * width + col0 + j];
  return w;
}

}  // namespace

core::AttentionWeights attention_weights_of(const model::Transformer<float>& net, const model::AttnLayout& p) {
  const std::vector<float> params = net.params.download();
  const auto C = static_cast<std::size_t>(net.config().d_model), H = static_cast<std::size_t>(net.config().heads);
  const std::size_t dk = C / H;
  core::AttentionWeights w;
  for (std::size_t h = 0; h < H; ++h) {
    core::HeadWeights hw{column_block(params, p.wq, C, C, h * dk, dk), column_block(params, p.wk, C, C, h * dk, dk),
                   column_block(params, p.wv, C, C, h * dk, dk)};
    hw.b_q = column_block(params, p.bq, 1, C, h * dk, dk);
    hw.b_k = column_block(params, p.bk, 1, C, h * dk, dk);
    hw.b_v = column_block(params, p.bv, 1, C, h * dk, dk);
    w.heads.push_back(std::move(hw));
  }
  w.w_o = column_block(params, p.wo, C, C, 0, C);
  w.b_o = column_block(params, p.bo, 1, C, 0, C);
  return w;
}

FeedForward feed_forward_of(const model::Transformer<float>& net, const model::FfnLayout& p) {
  const std::vector<float> params = net.params.download();
  const auto C = static_cast<std::size_t>(net.config().d_model), F = static_cast<std::size_t>(net.config().d_ff);
  return {column_block(params, p.w1, C, F, 0, F), column_block(params, p.b1, 1, F, 0, F),
          column_block(params, p.w2, F, C, 0, C), column_block(params, p.b2, 1, C, 0, C)};
}

NormParams norm_of(const model::Transformer<float>& net, const model::NormLayout& p) {
  const std::vector<float> params = net.params.download();
  const auto C = static_cast<std::size_t>(net.config().d_model);
  return {column_block(params, p.g, 1, C, 0, C), column_block(params, p.b, 1, C, 0, C)};
}

float max_abs_difference(const core::Matrix& a, const core::Matrix& b) {
  if (a.shape() != b.shape()) throw ShapeError("max_abs_difference: " + core::shape_str(a) + " vs " + core::shape_str(b));
  float d = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a.data()[i] - b.data()[i]));
  return d;
}

Replay replay_attention(const model::Transformer<float>& net, model::Transformer<float>::Block block, int layer,
                        std::size_t n, std::size_t m, int b) {
  const auto v = net.attention_view(block, layer);
  const auto C = static_cast<std::size_t>(net.config().d_model), H = static_cast<std::size_t>(net.config().heads);
  const auto Tq = static_cast<std::size_t>(v.Tq), Tk = static_cast<std::size_t>(v.Tk), bi = static_cast<std::size_t>(b);
  if (n > Tq || m > Tk || b >= v.B) throw ShapeError("replay_attention: rows beyond the last forward pass");
  Replay r;
  r.x = rows_of(v.query_input.data(), bi * Tq, n, C);
  r.kv = rows_of(v.kv_input.data(), bi * Tk, m, C);
  r.w = attention_weights_of(net, v.params);
  std::optional<core::Mask> mask;
  if (block == model::Transformer<float>::Block::DecoderSelf) mask = core::causal_mask(n);
  core::multi_head_attention(r.x, r.kv, r.w, mask ? &*mask : nullptr, &r.trace);
  r.model_output = rows_of(v.output.data(), bi * Tq, n, C);
  r.max_difference = max_abs_difference(r.trace.output, r.model_output);
  for (std::size_t h = 0; h < H; ++h) {
    core::Matrix mw = core::Matrix::from_shape({n, m});
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j) mw(i, j) = v.weights[((bi * H + h) * Tq + i) * Tk + j];
    r.max_difference = std::max(r.max_difference, max_abs_difference(r.trace.heads[h].weights, mw));
    r.model_weights.push_back(std::move(mw));
  }
  return r;
}

}  // namespace attnlab::lessons
