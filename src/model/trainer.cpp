#include "model/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <type_traits>

#include "model/checkpoint.hpp"
#include "io/json_text.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace attnlab::model {

TrainConfig train_config_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object");
  static const std::set<std::string> known = {"steps", "batch_size", "warmup", "lr_scale", "label_smoothing", "clip",
                                              "weight_decay", "seed", "eval_every", "checkpoint_every"};
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) throw InputError(where + ": unknown field \"" + k + "\"");
  TrainConfig c;
  auto num = [&](const char* key, double lo, double hi, auto& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_number()) throw InputError(where + "." + key + ": expected a number, got " + io::json_brief(j[key]));
    const double x = j[key].get<double>();
    if (!(x >= lo && x <= hi)) {
      throw InputError(where + "." + key + ": " + io::json_brief(j[key]) + " is out of range [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    }
    // A count (an integer field) must be given as a whole number: 6.5 steps is a mistake to name, not
    // something to truncate silently (the command line's --steps 6.5 is refused the same way).
    if constexpr (std::is_integral_v<std::remove_reference_t<decltype(out)>>) {
      if (x != std::floor(x))
        throw InputError(where + "." + key + ": expected a whole number, got " + io::json_brief(j[key]));
    }
    out = static_cast<std::remove_reference_t<decltype(out)>>(x);
  };
  num("steps", 1, 1e9, c.steps);
  num("batch_size", 1, 1e6, c.batch_size);
  num("warmup", 1, 1e9, c.warmup);
  num("lr_scale", 0, 1e3, c.lr_scale);
  num("label_smoothing", 0, 0.999, c.label_smoothing);
  num("clip", 0, 1e9, c.clip);
  num("weight_decay", 0, 1, c.weight_decay);
  num("seed", 0, 9.0e15, c.seed);
  num("eval_every", 0, 1e9, c.eval_every);
  num("checkpoint_every", 0, 1e9, c.checkpoint_every);
  return c;
}

nlohmann::json train_config_to_json(const TrainConfig& c) {
  return {{"steps", c.steps},       {"batch_size", c.batch_size}, {"warmup", c.warmup},
          {"lr_scale", c.lr_scale}, {"label_smoothing", c.label_smoothing}, {"clip", c.clip},
          {"weight_decay", c.weight_decay}, {"seed", c.seed}, {"eval_every", c.eval_every},
          {"checkpoint_every", c.checkpoint_every}};
}

std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, std::int64_t epoch) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(epoch) + 1;
  for (std::size_t i = n; i > 1; --i) {
    std::swap(order[i - 1], order[bounded([&] { return splitmix64(s); }, i)]);
  }
  return order;
}

Batch make_batch(const std::vector<Example>& ex, const std::vector<std::size_t>& idx, bool decoder_only) {
  Batch b;
  b.B = static_cast<int>(idx.size());
  for (std::size_t i : idx) {
    b.T = std::max(b.T, static_cast<int>(ex[i].tgt.size()) + (ex[i].raw ? -1 : 1));
    if (!decoder_only) b.S = std::max(b.S, static_cast<int>(ex[i].src.size()));
  }
  b.tgt_in.assign(static_cast<std::size_t>(b.B) * b.T, kPad);
  b.tgt_out.assign(b.tgt_in.size(), kPad);
  if (!decoder_only) {
    b.src.assign(static_cast<std::size_t>(b.B) * b.S, kPad);
    b.src_len.assign(b.B, 0);
  }
  for (int r = 0; r < b.B; ++r) {
    const Example& e = ex[idx[r]];
    int* in = b.tgt_in.data() + static_cast<std::size_t>(r) * b.T;
    int* out = b.tgt_out.data() + static_cast<std::size_t>(r) * b.T;
    if (e.raw) {
      for (std::size_t t = 0; t + 1 < e.tgt.size(); ++t) {
        in[t] = e.tgt[t];
        out[t] = e.tgt[t + 1] == kBos ? kPad : e.tgt[t + 1];
      }
      continue;
    }
    in[0] = kBos;
    for (std::size_t t = 0; t < e.tgt.size(); ++t) {
      in[t + 1] = e.tgt[t];
      out[t] = e.tgt[t];
    }
    out[e.tgt.size()] = kEos;
    if (!decoder_only) {
      std::copy(e.src.begin(), e.src.end(), b.src.begin() + static_cast<std::ptrdiff_t>(r) * b.S);
      b.src_len[r] = static_cast<int>(e.src.size());
    }
  }
  return b;
}

EvalResult evaluate(Transformer<float>& model, const std::vector<Example>& data, int batch_size) {
  EvalResult r;
  double loss_sum = 0;
  std::size_t correct = 0;
  const int V = model.config().vocab_size;
  for (std::size_t start = 0; start < data.size(); start += static_cast<std::size_t>(batch_size)) {
    std::vector<std::size_t> idx;
    for (std::size_t i = start; i < std::min(data.size(), start + batch_size); ++i) idx.push_back(i);
    const Batch b = make_batch(data, idx, model.config().decoder_only);
    const float loss = model.forward(b, 0.0f, false, nullptr);
    const int n = model.targets_counted();
    loss_sum += static_cast<double>(loss) * n;
    r.tokens += static_cast<std::size_t>(n);
    const std::vector<float> logits = model.logits();
    for (std::size_t row = 0; row < b.tgt_out.size(); ++row) {
      if (b.tgt_out[row] == kPad) continue;
      const float* z = logits.data() + row * V;
      correct += static_cast<std::size_t>(std::max_element(z, z + V) - z) == static_cast<std::size_t>(b.tgt_out[row]);
    }
  }
  if (r.tokens) {
    r.loss = loss_sum / static_cast<double>(r.tokens);
    r.token_accuracy = static_cast<double>(correct) / static_cast<double>(r.tokens);
  }
  return r;
}

Transformer<float>::StepReadback train_step(Transformer<float>& net, const Batch& b, float smoothing,
                                            std::uint64_t* rng, double clip, float* m, float* v,
                                            const std::uint8_t* decay_mask, backend::AdamStep h) {
  net.forward_queued(b, smoothing, true, rng);
  net.backward();
  h.grad_scale_at = net.clip_gradients(clip);
  net.adamw_step(m, v, decay_mask, h);  // skipped on the backend when the factor is NaN
  return net.read_step();               // the step's one wait
}

Trainer::Trainer(const ModelConfig& model, const TrainConfig& train, std::vector<std::string> vocab,
                 backend::Ops<float>& backend)
    : mcfg_(model), tcfg_(train), vocab_(std::move(vocab)), model_(model, backend), m_(backend), v_(backend),
      decay_mask_(backend) {
  if (static_cast<int>(vocab_.size()) != mcfg_.vocab_size) throw RuntimeError("Trainer: vocabulary size does not match the config");
  model_.init_params(tcfg_.seed);
  m_.assign_zero(model_.params.size());
  v_.assign_zero(model_.params.size());
  // Weight decay applies to matrices only, never to biases, norm gains or (by convention) embeddings.
  std::vector<std::uint8_t> decay(model_.params.size(), 0);
  for (const TensorInfo& t : model_.layout().tensors) {
    const bool matrix = t.shape.size() == 2 && t.name.find("emb") == std::string::npos;
    if (matrix) std::fill(decay.begin() + static_cast<std::ptrdiff_t>(t.offset),
                          decay.begin() + static_cast<std::ptrdiff_t>(t.offset + t.size()), 1);
  }
  decay_mask_.upload(decay);
  dropout_rng_ = tcfg_.seed ^ 0xD20F0D7ull;
}

void Trainer::save(const std::string& path, const nlohmann::json& meta) const {
  Checkpoint ck;
  ck.config = mcfg_;
  ck.vocab = vocab_;
  ck.tokenizer = tokenizer_;
  ck.params = model_.params.download();
  ck.adam_m = m_.download();
  ck.adam_v = v_.download();
  ck.train_state = {{"step", step_},
                    {"epoch", epoch_},
                    {"cursor", cursor_},
                    {"dropout_rng", std::to_string(dropout_rng_)},
                    {"train", train_config_to_json(tcfg_)},
                    {"losses", losses_}};
  ck.meta = meta;
  save_checkpoint(path, ck);
}

void Trainer::save_model(const std::string& path, const nlohmann::json& meta) const {
  Checkpoint ck;
  ck.config = mcfg_;
  ck.vocab = vocab_;
  ck.tokenizer = tokenizer_;
  ck.params = model_.params.download();
  ck.meta = meta;
  save_checkpoint(path, ck);
}

nlohmann::json Trainer::restore(const std::string& path) {
  Checkpoint ck = load_checkpoint(path);
  if (ck.adam_m.empty() || ck.train_state.is_null()) {
    throw InputError(path + ": holds no training state (it is an inference-only model); start a new run instead of --resume");
  }
  const nlohmann::json saved_model = model_config_to_json(ck.config), given_model = model_config_to_json(mcfg_);
  if (saved_model != given_model) {
    // Name the field and both values, as a changed train or corpus field is named (round three's item
    // 12: "dropout 0.1 → 0.5" was only "its model config differs").
    auto text = [](const nlohmann::json& v) {
      if (v.is_number_float()) return fmt::format("{}", static_cast<float>(v.get<double>()));  // 0.1, not 0.10000000149
      return v.dump();
    };
    std::string field, others;
    for (const auto& [key, value] : given_model.items()) {
      const nlohmann::json saved_value = saved_model.contains(key) ? saved_model[key] : nlohmann::json();
      if (saved_value == value) continue;
      if (field.empty()) {
        field = fmt::format("model.{} is {} in the config given, but the run was trained with {}", key, text(value), text(saved_value));
        if (key == "vocab_size") field += " (the vocabulary comes from the corpus settings)";
      } else {
        others += (others.empty() ? "" : ", ") + ("model." + key);
      }
    }
    throw InputError(fmt::format("{}: {}{}; a model's settings cannot change within a run: resume with the config "
                                 "it was trained with", path, field.empty() ? "its model config differs" : field,
                                 others.empty() ? "" : " (also changed: " + others + ")"));
  }
  if (ck.vocab != vocab_ || ck.tokenizer != tokenizer_)
    throw InputError(path + ": its vocabulary differs from this corpus's; resume with the same corpus settings");
  if (ck.adam_m.size() != ck.params.size() || ck.adam_v.size() != ck.params.size())
    throw InputError(path + ": its Adam moments do not match its parameter count");
  model_.params.upload(ck.params);
  m_.upload(ck.adam_m);
  v_.upload(ck.adam_v);
  try {
    step_ = ck.train_state.at("step").get<std::int64_t>();
    epoch_ = ck.train_state.at("epoch").get<std::int64_t>();
    cursor_ = ck.train_state.at("cursor").get<std::size_t>();
    dropout_rng_ = std::stoull(ck.train_state.at("dropout_rng").get<std::string>());
    losses_ = ck.train_state.at("losses").get<std::vector<double>>();
  } catch (const std::exception& e) {
    throw InputError(path + ": corrupt training state (" + io::json_error_text(e) + ")");
  }
  return ck.meta;
}

std::int64_t Trainer::run(const std::vector<Example>& train, const std::vector<Example>& valid, std::int64_t until_step,
                          const std::function<void(const StepInfo&)>& on_step,
                          const std::function<void(std::int64_t)>& on_checkpoint, const std::atomic<bool>* stop) {
  if (train.empty()) throw InputError("training data is empty");
  const std::int64_t last = std::min<std::int64_t>(until_step > 0 ? until_step : tcfg_.steps, tcfg_.steps);
  const AdamConfig adam{0.9f, 0.98f, 1e-9f, tcfg_.weight_decay};
  std::vector<std::size_t> order = epoch_order(train.size(), tcfg_.seed, epoch_);
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t tokens_done = 0;
  while (step_ < last) {
    if (stop && stop->load()) break;
    std::vector<std::size_t> idx;
    while (idx.size() < static_cast<std::size_t>(tcfg_.batch_size)) {
      if (cursor_ >= order.size()) {
        ++epoch_;
        cursor_ = 0;
        order = epoch_order(train.size(), tcfg_.seed, epoch_);
      }
      idx.push_back(order[cursor_++]);
    }
    const Batch b = make_batch(train, idx, mcfg_.decoder_only);
    StepInfo info;
    info.lr = noam_lr(step_ + 1, mcfg_.d_model, tcfg_.warmup, tcfg_.lr_scale);
    const auto r = train_step(model_, b, tcfg_.label_smoothing, &dropout_rng_, tcfg_.clip, m_.data(), v_.data(),
                              decay_mask_.data(), adam_hyper(adam, step_ + 1, info.lr));
    if (!r.updated() || !std::isfinite(r.loss)) {
      throw NumericError("training diverged at step " + std::to_string(step_ + 1) + " (" +
                         (std::isfinite(r.loss) ? "gradient norm" : "loss") +
                         " is not finite); lower train.lr_scale or raise train.warmup");
    }
    ++step_;
    const float loss = r.loss;
    info.grad_norm = r.grad_norm;
    losses_.push_back(loss);
    tokens_done += static_cast<std::size_t>(model_.targets_counted());
    info.step = step_;
    info.total = last;
    info.loss = loss;
    info.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    info.tokens_per_s = info.elapsed_s > 0 ? static_cast<double>(tokens_done) / info.elapsed_s : 0;
    if ((tcfg_.eval_every > 0 && step_ % tcfg_.eval_every == 0) || step_ == last) {
      if (!valid.empty()) {
        info.valid = evaluate(model_, valid, 64);
        info.evaluated = true;
      }
    }
    if (on_step) on_step(info);
    if (on_checkpoint && ((tcfg_.checkpoint_every > 0 && step_ % tcfg_.checkpoint_every == 0) || step_ == last)) {
      on_checkpoint(step_);
    }
  }
  return step_;
}

}  // namespace attnlab::model
