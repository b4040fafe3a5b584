#include "tasks/snapshots.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "io/files.hpp"
#include "io/json_text.hpp"
#include "model/decode.hpp"
#include "tasks/attention_sets.hpp"
#include "tasks/head_relations.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/shown.hpp"
#include "util/utf8.hpp"

namespace attnlab::tasks {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxProbes = 64;
constexpr const char* kHeaderFormat = "attnlab-timeline";
constexpr const char* kSnapshotFormat = "attnlab-snapshot";

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

void add_once(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

nlohmann::json read_json_file(const std::string& path) {
  try {
    return io::parse_json_bounded(io::read_text_file(path, 64u << 20));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": " + io::json_error_text(e));
  }
}

// The header's "format" and "version", checked.
void check_format(const nlohmann::json& j, const std::string& path, const char* format) {
  if (!j.is_object() || !j.contains("format") || j["format"] != format)
    throw InputError(fmt::format("{}: \"format\": expected \"{}\", got {}", path, format,
                                 j.is_object() && j.contains("format") ? j["format"].dump() : std::string("none")));
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kTimelineVersion)
    throw InputError(fmt::format("{}: \"version\": expected {}, got {} (written by another attnlab)", path, kTimelineVersion,
                                 j.contains("version") ? j["version"].dump() : std::string("none")));
}

}  // namespace

std::vector<std::int64_t> snapshot_steps(int k, std::int64_t total) {
  if (k < 1 || total < 1 || k > total) throw InputError(fmt::format("--snapshots: expected 1 to {}, got {}", total, k));
  std::vector<std::int64_t> steps = {0};
  for (int i = 1; i <= k; ++i) {
    const auto s = std::clamp<std::int64_t>(std::llround(std::pow(static_cast<double>(total), static_cast<double>(i) / k)), 1, total);
    if (s > steps.back()) steps.push_back(s);
  }
  if (steps.back() != total) steps.push_back(total);
  return steps;
}

std::vector<std::string> lesson_probe_sentences() {
  const std::string path = (fs::path(project_root()) / "data" / "sentences" / "lessons.json").string();
  const nlohmann::json j = read_json_file(path);
  std::vector<std::string> out;
  try {
    if (j.contains("trained")) {
      std::map<int, std::string> by_lesson;
      for (const auto& [key, v] : j.at("trained").items())
        if (v.is_object() && v.contains("sentence") && v["sentence"].is_string()) by_lesson[std::stoi(key)] = v["sentence"].get<std::string>();
      for (const auto& [n, s] : by_lesson) add_once(out, s);
    }
    if (j.contains("tour") && j["tour"].contains("sentence")) add_once(out, j["tour"]["sentence"].get<std::string>());
    for (const char* list : {"coreference", "word_sense"})
      if (j.at("default").contains(list))
        for (const auto& s : j["default"][list]) add_once(out, s.get<std::string>());
  } catch (const std::exception& e) {
    throw RuntimeError(path + ": cannot read the lessons' sentences (" + e.what() + ")");
  }
  if (out.empty()) throw RuntimeError(path + ": holds no sentence for the lessons");
  return out;
}

std::vector<std::string> read_probe_file(const std::string& path) {
  std::string text;
  try {
    text = io::read_text_file(path, 1u << 20);
  } catch (const InputError& e) {
    throw InputError(std::string("--probe: ") + e.what());
  }
  std::vector<std::string> out;
  std::size_t line_no = 0, start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    ++line_no;
    for (std::size_t i = 0; i < line.size();) {
      const utf8::CodePoint c = utf8::decode_at(line, i);
      if (!c.valid)
        throw InputError(fmt::format("--probe {} line {}: expected UTF-8 text, got the byte 0x{:02X} at byte {} of the line", shown_path(path),
                                     line_no, static_cast<unsigned char>(line[i]), i + 1));
      i += c.length;
    }
    const std::string s = trim(line);
    if (!s.empty() && s[0] != '#') out.push_back(s);
    if (out.size() > kMaxProbes)
      throw InputError(fmt::format("--probe {}: expected at most {} sentences, got more (line {})", shown_path(path), kMaxProbes, line_no));
    start = end + 1;
  }
  if (out.empty())
    throw InputError(fmt::format("--probe {}: expected at least one sentence (one a line), got none", shown_path(path)));
  return out;
}

std::vector<ProbeSentence> encode_probes(const text::Vocab& vocab, const std::vector<std::string>& sentences, int max_len,
                                         const std::string& where) {
  std::vector<ProbeSentence> out;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    const std::string what = fmt::format("{}, sentence {} (\"{}\")", where, i + 1, visible_text(sentences[i].substr(0, 40)));
    text::EncodedSentence e = text::encode_sentence(vocab, sentences[i], static_cast<std::size_t>(max_len), what);
    out.push_back({sentences[i], std::vector<int>(e.ids.begin(), e.ids.end()), std::move(e.labels)});
  }
  return out;
}

nlohmann::json snapshot_summary(const nlohmann::json& heads) {
  nlohmann::json best_align = nullptr;
  for (const auto& e : heads.value("alignment", nlohmann::json::array())) {
    if (e["rows"].get<std::size_t>() == 0) continue;
    const double rate = e["alignment_error_rate"].get<double>();
    if (best_align.is_null() || rate < best_align["rate"].get<double>())
      best_align = {{"layer", e["layer"]}, {"head", e["head"]}, {"rate", rate}};
  }
  std::map<int, nlohmann::json> strongest;
  for (const auto& e : heads.value("relations", nlohmann::json::array())) {
    const int layer = e["layer"].get<int>();
    for (const auto& [name, v] : e.items()) {
      if (!v.is_object() || v["rows"].get<std::size_t>() == 0) continue;
      const double lift = v["mass"].get<double>() - v["chance"].get<double>();
      auto it = strongest.find(layer);
      if (it == strongest.end() || lift > it->second["mass"].get<double>() - it->second["chance"].get<double>())
        strongest[layer] = {{"layer", layer}, {"head", e["head"]}, {"relation", name}, {"mass", v["mass"]}, {"chance", v["chance"]}};
    }
  }
  nlohmann::json per_layer = nlohmann::json::array();
  for (auto& [l, v] : strongest) per_layer.push_back(v);
  return {{"alignment_error", best_align}, {"strongest_relation", per_layer}};
}

nlohmann::json snapshot_measures(model::Transformer<float>& net, const text::Vocab& vocab, const std::vector<ProbeSentence>& probes,
                                 const std::vector<model::Example>& test, const std::vector<corpus::Example>& test_pairs,
                                 std::size_t relation_examples) {
  nlohmann::json jp = nlohmann::json::array();
  const model::DecodeOptions greedy;  // beam 1, loops blocked: as the learner's translate with --beam 1
  for (const ProbeSentence& p : probes) {
    const model::Hypothesis h = model::translate(net, p.ids, greedy);
    const std::vector<text::TokenId> out(h.tokens.begin(), h.tokens.end());
    const std::vector<std::string> out_tokens = vocab.tokens_of(out);
    jp.push_back({{"sentence", p.text},
                  {"source_tokens", p.tokens},
                  {"translation", vocab.decode(out)},
                  {"tokens", out_tokens},
                  {"attention", translation_attention_sets(net, p.ids, p.tokens, h.tokens, out_tokens)}});
  }
  Relations rel;
  const std::size_t n = std::min({relation_examples, test.size(), test_pairs.size()});
  for (std::size_t i = 0; i < n; ++i) {
    net.forward(model::make_batch(test, {i}, false), 0.0f, false, nullptr);  // as `attnlab heads`
    add_relations(net, vocab, test_pairs[i], test[i], rel);
  }
  nlohmann::json heads = relations_json(rel, net.config());
  heads["examples"] = n;
  nlohmann::json summary = snapshot_summary(heads);
  return {{"probes", jp}, {"heads", heads}, {"summary", summary}};
}

// --- Snapshots -------------------------------------------------------------------------------------

std::string Snapshots::dir() const { return (fs::path(o_.out) / "snapshots").string(); }
std::string Snapshots::file_name(std::int64_t step) { return fmt::format("step-{:09d}.json", step); }

Snapshots::Snapshots(const Options& o) : o_(o) {
  const std::string header_path = (fs::path(dir()) / "timeline.json").string();
  std::error_code ec;
  if (o.resume && fs::exists(header_path, ec)) {
    const nlohmann::json h = read_json_file(header_path);
    check_format(h, header_path, kHeaderFormat);
    k_ = h.at("snapshots").get<int>();
    sentences_ = h.at("probes").get<std::vector<std::string>>();
    probe_source_ = h.at("probe_source").get<std::string>();
    for (const auto& s : h.at("steps")) schedule_.push_back(s.get<std::int64_t>());
    if (o.k > 0 && o.k != k_)
      throw InputError(fmt::format("--snapshots: the run in {} records its timeline with --snapshots {}; expected {} or none, got {}",
                                   shown_path(o.out), k_, k_, o.k));
    if (!o.probe_file.empty() && read_probe_file(o.probe_file) != sentences_)
      throw InputError(fmt::format("--probe {}: the run's timeline probes other sentences (from {}); leave --probe out to continue it",
                                   shown_path(o.probe_file), probe_source_));
    active_ = true;
    return;
  }
  if (o.k <= 0) {
    if (!o.probe_file.empty()) throw InputError("--probe " + shown_path(o.probe_file) + ": the sentences of a timeline; expected --snapshots K with it, got none");
    return;
  }
  const std::int64_t most = std::min<std::int64_t>(kMaxSnapshots, o.total_steps);
  if (o.k > most)
    throw InputError(fmt::format("--snapshots: expected at most {} ({}), got {}", most,
                                 most == kMaxSnapshots ? "the limit" : "train.steps", o.k));
  k_ = o.k;
  if (o.probe_file.empty()) {
    sentences_ = lesson_probe_sentences();
    probe_source_ = "lessons";
  } else {
    sentences_ = read_probe_file(o.probe_file);
    probe_source_ = o.probe_file;
  }
  active_ = true;
}

void Snapshots::start(const text::Vocab& vocab, const model::ModelConfig& config, std::int64_t step) {
  if (!active_) return;
  probes_ = encode_probes(vocab, sentences_, config.max_len, probe_source_ == "lessons" ? "the lessons' sentences" : "--probe " + probe_source_);
  // The schedule: what the timeline recorded up to here, the log-spaced steps of this run after it
  // (train.steps may have grown on --resume).
  std::vector<std::int64_t> fresh = snapshot_steps(std::min<std::int64_t>(k_, o_.total_steps), o_.total_steps), kept;
  for (std::int64_t s : schedule_)
    if (s <= step) kept.push_back(s);
  for (std::int64_t s : fresh)
    if (s > step || !o_.resume) kept.push_back(s);
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  schedule_ = kept;
  // A killed run's snapshots after the state it saved are taken again (identically), so go.
  std::error_code ec;
  fs::create_directories(dir(), ec);
  if (ec) throw InputError(dir() + ": cannot create the folder (" + ec.message() + ")");
  for (const auto& e : fs::directory_iterator(dir(), ec)) {
    const std::string name = e.path().filename().string();
    // write_file_atomic's temporaries (".NAME.tmp-XXXXXX") that a kill mid-write left
    if (name.rfind(".step-", 0) == 0 || name.rfind(".timeline.json.tmp-", 0) == 0) {
      fs::remove(e.path(), ec);
      continue;
    }
    if (name.rfind("step-", 0) != 0 || name.size() != file_name(0).size()) continue;
    const std::int64_t s = std::strtoll(name.c_str() + 5, nullptr, 10);
    if (!o_.resume || s > step) fs::remove(e.path(), ec);
  }
  const nlohmann::json header = {{"format", kHeaderFormat}, {"version", kTimelineVersion}, {"snapshots", k_},
                                 {"train_steps", o_.total_steps}, {"steps", schedule_}, {"probe_source", probe_source_},
                                 {"probes", sentences_}, {"relation_examples", kRelationExamples}};
  io::write_file_atomic((fs::path(dir()) / "timeline.json").string(), header.dump(1));
}

bool Snapshots::due(std::int64_t step) const { return active_ && std::binary_search(schedule_.begin(), schedule_.end(), step); }

void Snapshots::take(model::Transformer<float>& net, const text::Vocab& vocab, const std::vector<model::Example>& test,
                     const std::vector<corpus::Example>& test_pairs, std::int64_t step, std::optional<double> loss,
                     const nlohmann::json& valid) {
  const auto t0 = std::chrono::steady_clock::now();
  nlohmann::json j = {{"format", kSnapshotFormat}, {"version", kTimelineVersion}, {"step", step},
                      {"loss", loss ? nlohmann::json(*loss) : nlohmann::json(nullptr)}, {"valid", valid}};
  j.update(snapshot_measures(net, vocab, probes_, test, test_pairs, kRelationExamples));
  io::write_file_atomic((fs::path(dir()) / file_name(step)).string(), j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  ++taken_;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::uintmax_t Snapshots::bytes() const {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir(), ec))
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  return total;
}

Timeline read_timeline(const std::string& run_dir) {
  const std::string d = (fs::path(run_dir) / "snapshots").string(), header_path = (fs::path(d) / "timeline.json").string();
  std::error_code ec;
  if (!fs::exists(header_path, ec))
    throw InputError(fmt::format("--model {}: holds no timeline ({} is missing); record one with attnlab train --snapshots K",
                                 shown_path(run_dir), shown_path(header_path)));
  Timeline t;
  t.header = read_json_file(header_path);
  check_format(t.header, header_path, kHeaderFormat);
  if (!t.header.contains("steps") || !t.header["steps"].is_array())
    throw InputError(header_path + ": \"steps\": expected a list of steps");
  for (const auto& s : t.header["steps"]) {
    if (!s.is_number_integer()) throw InputError(header_path + ": \"steps\": expected whole numbers, got " + s.dump());
    const std::string p = (fs::path(d) / Snapshots::file_name(s.get<std::int64_t>())).string();
    if (!fs::exists(p, ec)) continue;  // not taken yet (a run still going, or stopped)
    nlohmann::json j = read_json_file(p);
    check_format(j, p, kSnapshotFormat);
    if (j.value("step", std::int64_t{-1}) != s.get<std::int64_t>())
      throw InputError(fmt::format("{}: \"step\": expected {}, got {}", p, s.get<std::int64_t>(), j.contains("step") ? j["step"].dump() : "none"));
    t.snapshots.push_back(std::move(j));
  }
  return t;
}

}  // namespace attnlab::tasks
