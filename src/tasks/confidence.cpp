#include "tasks/confidence.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "io/files.hpp"
#include "io/json_text.hpp"
#include "text/tokenizer.hpp"
#include "tasks/task.hpp"
#include "util/error.hpp"

namespace attnlab::tasks {

namespace fs = std::filesystem;

Confidence confidence_of(const model::Hypothesis& h) {
  Confidence c;
  if (h.token_logprobs.empty()) return c;
  const auto weakest = std::min_element(h.token_logprobs.begin(), h.token_logprobs.end());
  c.min_token_prob = std::exp(*weakest);
  c.weakest_token = static_cast<std::size_t>(weakest - h.token_logprobs.begin());
  double sum = 0;
  for (double lp : h.token_logprobs) sum += lp;
  c.mean_logprob = sum / static_cast<double>(h.token_logprobs.size());
  return c;
}

namespace {

// The value that all but `q` of `v` reach: the ⌊q·n⌋-th smallest (0-based), so with q = 0.05 and
// 100 values the 6th smallest, and exactly 5 of the 100 lie below it (ties aside).
double floor_at(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::floor(q * static_cast<double>(v.size())));
  return v[std::min(k, v.size() - 1)];
}

bool flags(const Calibration& c, const Confidence& x) { return x.min_token_prob < c.min_token_prob || x.mean_logprob < c.mean_logprob; }

double number_field(const nlohmann::json& j, const char* key, const std::string& file) {
  if (!j.contains(key) || !j[key].is_number() || !std::isfinite(j[key].get<double>()))
    throw InputError(fmt::format("{}: {}: expected a finite number, got {}", file, key, j.contains(key) ? j[key].dump() : "nothing"));
  return j[key].get<double>();
}

}  // namespace

nlohmann::json Calibration::to_json() const {
  return {{"format", "attnlab-confidence"},
          {"version", 1},
          {"min_token_prob", min_token_prob},
          {"mean_logprob", mean_logprob},
          {"quantile", quantile},
          {"beam", beam},
          {"measured_on", {{"split", "test"}, {"right", right}, {"wrong", wrong}}},
          {"flagged_on_test", {{"right", right_flagged}, {"wrong", wrong_flagged}}},
          {"checkpoint_fnv1a", fmt::format("{:016x}", checkpoint_hash)}};
}

Calibration calibrate(const std::vector<Confidence>& right, const std::vector<Confidence>& wrong, double quantile, int beam) {
  if (right.empty()) throw InputError("eval --calibrate: the model translated no test sentence right; there is nothing to calibrate on");
  Calibration c;
  c.quantile = quantile;
  c.beam = beam;
  std::vector<double> mins, means;
  for (const Confidence& x : right) mins.push_back(x.min_token_prob), means.push_back(x.mean_logprob);
  c.min_token_prob = floor_at(mins, quantile);
  c.mean_logprob = floor_at(means, quantile);
  c.right = right.size();
  c.wrong = wrong.size();
  const auto share = [&](const std::vector<Confidence>& v) {
    if (v.empty()) return 0.0;
    return static_cast<double>(std::count_if(v.begin(), v.end(), [&](const Confidence& x) { return flags(c, x); })) /
           static_cast<double>(v.size());
  };
  c.right_flagged = share(right);
  c.wrong_flagged = share(wrong);
  return c;
}

std::string calibration_path(const LoadedModel& m) { return (fs::path(checkpoint_file(m)).parent_path() / "confidence.json").string(); }

std::uint64_t checkpoint_hash(const LoadedModel& m) {
  const std::string file = checkpoint_file(m);
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() < 8) throw InputError(file + ": cannot read the checkpoint's hash (its last 8 bytes)");
  in.seekg(-8, std::ios::end);
  unsigned char b[8];
  in.read(reinterpret_cast<char*>(b), 8);
  std::uint64_t h = 0;
  for (int i = 7; i >= 0; --i) h = (h << 8) | b[i];  // little-endian, as the checkpoint writes it
  return h;
}

std::optional<Calibration> load_calibration(const LoadedModel& m, std::string* why_not) {
  const std::string file = calibration_path(m);
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    if (why_not) *why_not = "the model has no confidence.json (attnlab eval --calibrate makes it)";
    return std::nullopt;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file + ": cannot be read");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const nlohmann::json j = io::parse_json_text(text, file);
  if (!j.is_object() || j.value("format", "") != "attnlab-confidence")
    throw InputError(file + ": format: expected \"attnlab-confidence\", got " + (j.is_object() && j.contains("format") ? j["format"].dump() : "nothing"));
  if (j.value("version", 0) != 1) throw InputError(file + ": version: expected 1, got " + (j.contains("version") ? j["version"].dump() : "nothing"));
  Calibration c;
  c.min_token_prob = number_field(j, "min_token_prob", file);
  c.mean_logprob = number_field(j, "mean_logprob", file);
  c.quantile = number_field(j, "quantile", file);
  c.beam = static_cast<int>(number_field(j, "beam", file));
  const std::string hash = j.value("checkpoint_fnv1a", "");
  try {
    std::size_t used = 0;
    c.checkpoint_hash = std::stoull(hash, &used, 16);
    if (used != hash.size() || hash.size() != 16) throw std::invalid_argument("length");
  } catch (const std::exception&) {
    throw InputError(file + ": checkpoint_fnv1a: expected 16 hexadecimal digits, got \"" + hash + "\"");
  }
  if (c.checkpoint_hash != checkpoint_hash(m)) {
    if (why_not) *why_not = "its confidence.json was measured on another checkpoint (run attnlab eval --calibrate again)";
    return std::nullopt;
  }
  const nlohmann::json& on = j.value("measured_on", nlohmann::json::object());
  c.right = on.value("right", std::size_t{0});
  c.wrong = on.value("wrong", std::size_t{0});
  const nlohmann::json& fl = j.value("flagged_on_test", nlohmann::json::object());
  c.right_flagged = fl.value("right", 0.0);
  c.wrong_flagged = fl.value("wrong", 0.0);
  return c;
}

std::string save_calibration(const LoadedModel& m, const Calibration& c) {
  const std::string file = calibration_path(m);
  io::write_file_atomic(file, c.to_json().dump(2) + '\n');
  return file;
}

nlohmann::json Verdict::why_json() const {
  nlohmann::json a = nlohmann::json::array();
  for (const UnsureReason& r : why) a.push_back({{"code", r.code}, {"text", r.text}});
  return a;
}

Verdict judge(const model::Hypothesis& h, const VerdictInputs& in, const std::optional<Calibration>& cal) {
  Verdict v;
  v.confidence = confidence_of(h);
  v.calibrated = cal.has_value();
  v.inputs = in;
  if (!in.unseen_words.empty()) {
    std::string list;
    for (std::size_t i = 0; i < in.unseen_words.size() && i < 5; ++i)
      list += (i ? ", \"" : "\"") + in.unseen_words[i] + "\"";
    if (in.unseen_words.size() > 5) list += ", ...";
    v.why.push_back({"unseen_words", fmt::format("outside what this model learned: {} never occurred in its training sentences", list)});
  }
  if (cal) {
    const Confidence& c = v.confidence;
    if (c.min_token_prob < cal->min_token_prob) {
      const std::string token = c.weakest_token < in.target_tokens.size()
                                    ? "\"" + in.target_tokens[c.weakest_token] + "\""
                                    : "the end of the sentence";
      v.why.push_back({"low_confidence", fmt::format("the model wrote {} with probability {:.2f}, where {:.0f} % of its right test "
                                                     "translations stay above {:.2f}",
                                                     token, c.min_token_prob, 100 * (1 - cal->quantile), cal->min_token_prob)});
    } else if (c.mean_logprob < cal->mean_logprob) {
      v.why.push_back({"low_confidence", fmt::format("the model's mean log-probability per token is {:.2f}, where {:.0f} % of its "
                                                     "right test translations stay above {:.2f}",
                                                     c.mean_logprob, 100 * (1 - cal->quantile), cal->mean_logprob)});
    }
  }
  if (!in.loop.empty())
    v.why.push_back({"loop", fmt::format("it repeats \"{}\", a loop the model falls into outside what it learned",
                                         in.loop)});
  if (in.length_limit > 0)
    v.why.push_back({"length_limit", fmt::format("the translation reached the length limit ({} tokens for a {}-token sentence)",
                                                 in.length_limit, in.source_tokens)});
  v.unsure = !v.why.empty();
  return v;
}

std::string repeated_phrase(const std::string& translation) {
  const std::vector<std::string> words = text::tokenize(translation);
  std::map<std::string, int> ids;
  std::vector<int> y;
  for (const auto& w : words) y.push_back(ids.emplace(w, static_cast<int>(ids.size())).first->second);
  std::string phrase;
  for (std::size_t n = 2; n < y.size() && phrase.empty(); ++n) {
    const std::size_t block = model::loop_closed_by(std::vector<int>(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(n)), y[n]);
    for (std::size_t i = n + 1 - block; block && i <= n; ++i) phrase += (phrase.empty() ? "" : " ") + words[i];
  }
  return phrase;
}

Verdict judge_translation(const LoadedModel& m, std::string_view sentence, int source_tokens, const model::Hypothesis& h,
                          const model::DecodeOptions& d, const std::optional<Calibration>& cal) {
  VerdictInputs in;
  in.unseen_words = unseen_words(m, sentence);
  const std::string translation = m.vocab.decode(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
  in.loop = repeated_phrase(translation);
  // Cut by the length limit (decoding then allows only <eos>): the model was still writing.
  const int limit = model::translation_limit(*m.net, source_tokens, d);
  if (!h.finished || static_cast<int>(h.tokens.size()) >= limit) in.length_limit = limit;
  in.source_tokens = source_tokens;
  in.target_tokens = m.vocab.tokens_of(std::vector<text::TokenId>(h.tokens.begin(), h.tokens.end()));
  return judge(h, in, cal);
}

std::string reasons_text(const Verdict& v) {
  std::string reasons;
  for (const UnsureReason& r : v.why) reasons += (reasons.empty() ? "" : "; ") + r.text;
  return reasons;
}

}  // namespace attnlab::tasks
