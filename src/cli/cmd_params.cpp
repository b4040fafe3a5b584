// attnlab params --config NAME|FILE [--vocab V] [--seq T] [--format text|json]
// How big a model is: its parameter count broken down (embeddings, each stack, one layer's attention,
// feed-forward and LayerNorms, the output projection), compared with the published model a config
// mirrors, and the matrix-product FLOPs of training it per token. The numbers come from the model's own
// layout (model/size.hpp over make_layout), so they are what Transformer<float> would allocate.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "cli/config_lookup.hpp"
#include "model/size.hpp"
#include "tasks/task.hpp"
#include "util/error.hpp"

namespace attnlab::cli {

struct ParamsOptions {
  std::string config;
  int vocab = 0;  // when not given: the reference's vocabulary, else the corpus's
  int seq = 0;    // when not given: the config's max_len
  bool vocab_given = false, seq_given = false;
  std::string format = "text";
};

namespace {

namespace fs = std::filesystem;

constexpr int kMinVocab = 5;  // <pad> <unk> <bos> <eos> and one word, as Transformer requires
constexpr int kMaxVocab = 10'000'000;  // model_config_from_json's limit

// 63084544 → "63,084,544"
std::string grouped(double v) {
  const bool neg = v < 0;
  std::string digits = fmt::format("{:.0f}", std::fabs(v));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (neg ? "-" : "") + out;
}

// 63084544 → "63.1M", 2.1e9 → "2.10G": for FLOPs and rough sizes.
std::string short_num(double v) {
  const double a = std::fabs(v);
  if (a >= 1e12) return fmt::format("{:.2f}T", v / 1e12);
  if (a >= 1e9) return fmt::format("{:.2f}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f}K", v / 1e3);
  return fmt::format("{:.0f}", v);
}

// A published count as the paper writes it: 65000000 → "65M", 124439808 → "124,439,808".
std::string reported_str(std::int64_t p) {
  return p % 1'000'000 == 0 ? fmt::format("{}M", p / 1'000'000) : grouped(static_cast<double>(p));
}

struct Alternative {
  std::string what;
  double params;
};

// Everything `params` reports, computed once: the JSON document, and the values the text printer reads.
struct ParamsReport {
  std::string name, path, vocab_source, method, excluded;
  model::ModelConfig mc;
  model::ParamBreakdown p;
  model::FlopBreakdown f;
  int seq = 0;
  std::optional<tasks::ReferenceModel> reference;
  std::vector<Alternative> alts;
  nlohmann::ordered_json ref_json, json;
};

// Phase 1: the configuration, the counts and the comparison with the published model, as a report.
ParamsReport build_report(const ParamsOptions& o) {
  const std::string path = find_config(o.config);
  tasks::RunConfig run = tasks::load_run_config(path);
  model::ModelConfig mc = run.model;
  const std::string name = run.name.empty() ? fs::path(path).stem().string() : run.name;

  // The vocabulary: --vocab, else the published model's, else the one `attnlab train` would build.
  std::string vocab_source;
  if (o.vocab_given) {
    if (o.vocab < kMinVocab || o.vocab > kMaxVocab) {
      throw InputError("--vocab " + std::to_string(o.vocab) + ": expected " + std::to_string(kMinVocab) + " to " +
                       grouped(kMaxVocab) + " (the 4 special tokens <pad> <unk> <bos> <eos> plus at least one word)");
    }
    mc.vocab_size = o.vocab;
    vocab_source = "--vocab";
  } else if (run.reference && run.reference->vocab_size > 0) {
    mc.vocab_size = run.reference->vocab_size;
    vocab_source = "the reference model, " + run.reference->model;
  } else {
    tasks::build_task_data(run);  // generates the corpus and sets run.model.vocab_size from its vocabulary
    mc.vocab_size = run.model.vocab_size;
    vocab_source = "the config's corpus, as `attnlab train` builds it";
  }
  const int seq = o.seq_given ? o.seq : mc.max_len;
  if (seq < 1 || seq > mc.max_len) {
    throw InputError("--seq " + std::to_string(o.seq) + ": expected 1 to " + std::to_string(mc.max_len) +
                     " (the config's max_len: the model has no positions beyond it)");
  }
  model::validate(mc, path + ".model");

  const model::ParamBreakdown p = model::count_parameters(mc);
  const model::FlopBreakdown f = model::count_flops(mc, seq);
  const double C = mc.d_model, V = mc.vocab_size;
  const double VC = V * C;

  // ---- compared with the published model ----------------------------------------------------------
  nlohmann::ordered_json ref_json;
  std::vector<Alternative> alts;
  double comparable = static_cast<double>(p.total);  // attnlab's count made like the reference's
  std::string comparable_what = "attnlab, as configured";
  if (run.reference) {
    const tasks::ReferenceModel& r = *run.reference;
    if (r.learned_positions) {
      comparable = p.total + static_cast<double>(mc.max_len) * C;
      comparable_what = fmt::format("attnlab + a learned {} × {} position table, as the reference has", mc.max_len,
                                    mc.d_model);
    }
    alts.push_back({fmt::format("attnlab, as configured ({}, V = {})", p.tied ? "tied embeddings" : "untied",
                                grouped(V)),
                    static_cast<double>(p.total)});
    if (r.learned_positions) alts.push_back({comparable_what, comparable});
    model::ModelConfig other = mc;
    other.tie_embeddings = !mc.tie_embeddings;
    const double other_total = static_cast<double>(model::count_parameters(other).total);
    const double pos_extra = comparable - p.total;
    const std::string with_pos = r.learned_positions ? ", with the learned positions" : "";
    if (!mc.decoder_only) {
      if (p.tied) {
        alts.push_back({"untied: separate source, target and output matrices (3 × V·C)" + with_pos, other_total + pos_extra});
        alts.push_back({"separate source embedding, target tied to the output (2 × V·C)" + with_pos, p.total + VC + pos_extra});
      } else {
        alts.push_back({"tied: one V × C matrix for source, target and output" + with_pos, other_total + pos_extra});
      }
    } else {
      alts.push_back({(p.tied ? "untied output projection (2 × V·C)" : "tied output projection (1 × V·C)") + with_pos,
                      other_total + pos_extra});
    }
    ref_json["model"] = r.model;
    ref_json["positions"] = r.learned_positions ? "learned" : "sinusoidal";
    ref_json["activation"] = r.gelu ? "gelu" : "relu";
    if (r.vocab_size) ref_json["vocab_size"] = r.vocab_size;
    if (r.reported_params) {
      const double rep = static_cast<double>(r.reported_params);
      ref_json["reported_params"] = r.reported_params;
      ref_json["comparable"] = {{"what", comparable_what}, {"params", comparable},
                                {"difference", comparable - rep}, {"relative", (comparable - rep) / rep}};
      // The vocabulary that would give exactly the reported count with this config's embeddings: the
      // count is (everything else) + k·V·C with k embedding matrices.
      const double k = static_cast<double>(p.embeddings() + p.output_projection) / VC;
      const double v_star = (rep - (comparable - k * VC)) / (k * C);
      ref_json["vocab_for_reported"] = v_star > 0 ? nlohmann::json(std::llround(v_star)) : nlohmann::json(nullptr);
    }
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& x : alts) {
      nlohmann::ordered_json e = {{"what", x.what}, {"params", x.params}};
      if (r.reported_params) e["difference"] = x.params - static_cast<double>(r.reported_params);
      a.push_back(e);
    }
    ref_json["alternatives"] = a;
  }

  // ---- JSON ----------------------------------------------------------------------------------------
  auto layer_json = [](const model::LayerParams& l, bool cross) {
    nlohmann::ordered_json j = {{"self_attention", l.self_attention}};
    if (cross) j["cross_attention"] = l.cross_attention;
    j["ffn"] = l.ffn;
    j["norms"] = l.norms;
    j["total"] = l.total();
    return j;
  };
  const double per_seq = f.training();
  const std::string method =
      "every matrix product (m×k)·(k×n) counted as 2·m·n·k FLOPs; training = 3 × forward (each product's "
      "backward is two products of its size: the input's and the weight's gradients; attention: dQ, dK, dV and "
      "dweights); attention's Q·Kᵀ and weights·V counted in full Tq × Tk, causal or not (the plain path computes "
      "the masked half too)";
  const std::string excluded =
      "softmax, LayerNorm, ReLU, dropout, residual and bias additions, embedding lookup and scaling, the loss, and "
      "the optimizer update (element-wise work, or once per step)";
  nlohmann::ordered_json j;
  j["config"] = name;
  j["file"] = path;
  j["model"] = {{"decoder_only", mc.decoder_only}, {"encoder_layers", p.encoder_layers},
                {"decoder_layers", p.decoder_layers}, {"d_model", mc.d_model}, {"heads", mc.heads},
                {"d_k", mc.d_model / mc.heads}, {"d_ff", mc.d_ff}, {"max_len", mc.max_len},
                {"norm", mc.pre_norm ? "pre" : "post"}, {"tie_embeddings", mc.tie_embeddings}};
  j["vocab"] = {{"size", mc.vocab_size}, {"source", vocab_source}};
  nlohmann::ordered_json pj;
  pj["total"] = p.total;
  pj["embeddings"] = {{"token", p.token_embedding}, {"source", p.source_embedding}, {"total", p.embeddings()}};
  if (!mc.decoder_only) {
    pj["encoder"] = {{"layers", p.encoder_layers}, {"per_layer", layer_json(p.encoder_layer, false)},
                     {"final_norm", p.encoder_final_norm}, {"total", p.encoder}};
  }
  pj["decoder"] = {{"layers", p.decoder_layers}, {"per_layer", layer_json(p.decoder_layer, !mc.decoder_only)},
                   {"final_norm", p.decoder_final_norm}, {"total", p.decoder}};
  pj["output_projection"] = {{"tied", p.tied}, {"params", p.output_projection}};
  j["params"] = pj;
  if (run.reference) j["reference"] = ref_json;
  j["flops"] = {{"seq", seq},
                {"source_tokens", f.S},
                {"target_tokens", f.T},
                {"forward_per_sequence",
                 {{"projections", f.projections}, {"attention", f.attention}, {"ffn", f.ffn}, {"output", f.output},
                  {"total", f.forward()}}},
                {"training_per_sequence", per_seq},
                {"training_per_token", per_seq / f.tokens()},
                {"training_per_target_token", per_seq / f.T},
                {"method", method},
                {"excluded", excluded}};
  ParamsReport report;
  report.name = name;
  report.path = path;
  report.vocab_source = vocab_source;
  report.method = method;
  report.excluded = excluded;
  report.mc = mc;
  report.p = p;
  report.f = f;
  report.seq = seq;
  report.reference = run.reference;
  report.alts = alts;
  report.ref_json = ref_json;
  report.json = j;
  return report;
}

// Phase 2: the report as text.
void print_report(const ParamsReport& rep) {
  const model::ModelConfig& mc = rep.mc;
  const model::ParamBreakdown& p = rep.p;
  const model::FlopBreakdown& f = rep.f;
  const std::string &name = rep.name, &path = rep.path, &vocab_source = rep.vocab_source;
  const double V = mc.vocab_size, per_seq = f.training();
  const int seq = rep.seq;
  const double total = static_cast<double>(p.total);
  auto row = [&](int indent, const std::string& label, const std::string& formula, double n, bool share = true) {
    const std::string lab = std::string(static_cast<std::size_t>(indent), ' ') + label;
    std::cout << fmt::format("  {:<34}{:<20}{:>14}", lab, formula, grouped(n));
    if (share) std::cout << fmt::format("  {:>5.1f}%", 100.0 * n / total);
    std::cout << '\n';
  };
  std::cout << fmt::format("attnlab params: {} ({})\n", name, path);
  std::cout << fmt::format("  model       {}, d_model {}, {} heads (d_k {}), d_ff {}, {}-norm, {} embeddings, max_len {}\n",
                           mc.decoder_only ? fmt::format("decoder-only, {} layers", p.decoder_layers)
                                           : fmt::format("encoder–decoder, {} + {} layers", p.encoder_layers, p.decoder_layers),
                           mc.d_model, mc.heads, mc.d_model / mc.heads, mc.d_ff, mc.pre_norm ? "pre" : "post",
                           p.tied ? "tied" : "untied", mc.max_len);
  std::cout << fmt::format("  vocabulary  {} (from {})\n\n", grouped(V), vocab_source);

  std::cout << fmt::format("parameters (C = {}, F = {}, V = {})\n", mc.d_model, mc.d_ff, mc.vocab_size);
  if (p.tied) {
    row(0, "embedding (shared)", "V·C", static_cast<double>(p.token_embedding));
  } else {
    row(0, mc.decoder_only ? "token embedding" : "target embedding", "V·C", static_cast<double>(p.token_embedding));
    if (p.source_embedding) row(0, "source embedding", "V·C", static_cast<double>(p.source_embedding));
  }
  auto stack = [&](const char* label, int layers, const model::LayerParams& l, std::size_t final_norm, std::size_t sum,
                   int norms) {
    row(0, label, "", static_cast<double>(sum));
    row(2, fmt::format("per layer (× {})", layers), "", static_cast<double>(l.total()), false);
    row(4, "self-attention", "4·C² + 4·C", static_cast<double>(l.self_attention), false);
    if (l.cross_attention) row(4, "cross-attention", "4·C² + 4·C", static_cast<double>(l.cross_attention), false);
    row(4, "feed-forward", "2·C·F + F + C", static_cast<double>(l.ffn), false);
    row(4, "layer norms", fmt::format("{} × 2·C", norms), static_cast<double>(l.norms), false);
    row(2, "final layer norm", "2·C", static_cast<double>(final_norm), false);
  };
  if (!mc.decoder_only) stack("encoder", p.encoder_layers, p.encoder_layer, p.encoder_final_norm, p.encoder, 2);
  stack("decoder", p.decoder_layers, p.decoder_layer, p.decoder_final_norm, p.decoder, mc.decoder_only ? 2 : 3);
  if (p.tied) {
    std::cout << fmt::format("  {:<34}{:<20}{:>14}\n", "output projection", "tied (= embeddingᵀ)", 0);
  } else {
    row(0, "output projection", "C·V", static_cast<double>(p.output_projection));
  }
  row(0, "total", "", total);
  std::cout << fmt::format("  {:<54}{:>14}\n", "", "(" + short_num(total) + ")");

  if (rep.reference) {
    const tasks::ReferenceModel& r = *rep.reference;
    const auto& alts = rep.alts;
    const auto& ref_json = rep.ref_json;
    std::cout << fmt::format("\ncompared with {}", r.model);
    if (r.reported_params) std::cout << fmt::format(": reported {}", reported_str(r.reported_params));
    std::cout << '\n';
    for (const auto& a : alts) {
      std::cout << fmt::format("  {:<70}{:>14}", a.what, grouped(a.params));
      if (r.reported_params) {
        const double d = a.params - static_cast<double>(r.reported_params);
        std::cout << fmt::format("  {0}{1} ({0}{2:.1f}%)", d >= 0 ? "+" : "−", short_num(std::fabs(d)),
                                 100.0 * std::fabs(d) / static_cast<double>(r.reported_params));
      }
      std::cout << '\n';
    }
    if (r.reported_params && !ref_json["vocab_for_reported"].is_null()) {
      std::cout << fmt::format("  {:<70}{:>14}\n",
                               fmt::format("vocabulary that would give exactly {} with these embeddings",
                                           reported_str(r.reported_params)),
                               "V = " + grouped(ref_json["vocab_for_reported"].get<double>()));
    }
    if (r.gelu) {
      std::cout << "  (the reference's feed-forward uses GELU, attnlab's ReLU: no parameters and no matrix products "
                   "either way)\n";
    }
  }

  std::cout << fmt::format("\ntraining FLOPs per token at {} = {} (matrix products only)\n",
                           mc.decoder_only ? "T" : "S = T", seq);
  std::cout << fmt::format("  forward, one {}: projections {}, attention scores/context {}, feed-forward {}, "
                           "output {}; total {}\n",
                           mc.decoder_only ? "sequence" : "sentence pair", short_num(f.projections),
                           short_num(f.attention), short_num(f.ffn), short_num(f.output), short_num(f.forward()));
  if (mc.decoder_only) {
    std::cout << fmt::format("  training (3 × forward): {} per sequence, {} per token\n", short_num(per_seq),
                             short_num(per_seq / f.tokens()));
  } else {
    std::cout << fmt::format("  training (3 × forward): {} per pair, {} per token (source and target tokens both "
                             "counted), {} per target token\n",
                             short_num(per_seq), short_num(per_seq / f.tokens()), short_num(per_seq / f.T));
  }
  std::cout << "  method: " << rep.method << "\n";
  std::cout << "  not counted: " << rep.excluded << "\n";
}

void run_params(const ParamsOptions& o) {
  const ParamsReport report = build_report(o);
  if (o.format == "json") {
    std::cout << report.json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  print_report(report);
}

}  // namespace

void setup_params(CLI::App& app) {
  auto o = std::make_shared<ParamsOptions>();
  CLI::App* sub = app.add_subcommand(
      "params",
      "Count a model's parameters (embeddings, encoder, decoder, per-layer attention/FFN/LayerNorm, output "
      "projection) from the model's own layout, compare them with the published model, and count training FLOPs "
      "per token");
  sub->add_option("-c,--config", o->config,
                  "A config name from data/configs (e.g. transformer-base, transformer-big, gpt2-small) or a file")
      ->required();
  CLI::Option* vocab = sub->add_option("--vocab", o->vocab,
                  "Vocabulary size V (default: the config's reference vocabulary, else the one `attnlab train` builds "
                  "from the config's corpus)")
      ->transform(whole_number(kMinVocab, kMaxVocab));
  CLI::Option* seq = sub->add_option("--seq", o->seq, "Tokens per sequence for the FLOP count (default: the config's max_len)")
      ->transform(whole_number(1, 1 << 20));
  add_format_option(*sub, o->format);
  sub->footer(
      "Example: attnlab params --config transformer-base --vocab 37000\n"
      "The counts are read off the layout the model allocates (model/config.hpp); FLOPs count matrix products only "
      "(2·m·n·k each, training = 3 × forward).");
  sub->callback([o, vocab, seq] {
    o->vocab_given = vocab->count() > 0;
    o->seq_given = seq->count() > 0;
    run_params(*o);
  });
}

}  // namespace attnlab::cli
