#include "io/json_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace attnlab::io {

std::string json_error_text(const std::exception& e) {
  std::string what = e.what();
  if (what.rfind("[json.exception", 0) == 0) {
    if (const auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
  }
  return what;
}

namespace {
// Whether the text just before byte `at` (1-based, where nlohmann stopped) starts a NaN or Infinity.
bool at_non_finite_token(std::string_view text, std::size_t at) {
  const std::size_t end = std::min(at, text.size());
  std::size_t start = end;
  while (start > 0 && (std::isalpha(static_cast<unsigned char>(text[start - 1])) || text[start - 1] == '-')) --start;
  std::string word(text.substr(start, end - start + 8));
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!word.empty() && word[0] == '-') word.erase(0, 1);
  return word.rfind("nan", 0) == 0 || word.rfind("inf", 0) == 0;
}

// The 0-based offset of the first '[' or '{' (outside strings) that opens a level beyond max_depth, or
// npos. Brackets inside strings do not count; a backslash escapes the character after it there.
std::size_t too_deep_at(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}
}  // namespace

nlohmann::json parse_json_bounded(std::string_view text) {
  if (const std::size_t at = too_deep_at(text, kMaxJsonDepth); at != std::string_view::npos) {
    throw nlohmann::json::parse_error::create(
        101, at + 1, "arrays and objects nested more than " + std::to_string(kMaxJsonDepth) + " levels deep", nullptr);
  }
  // A key twice in one object is refused: nlohmann keeps the last, other readers the first, so the
  // file would mean different things to different tools (and a hand edit that added a second
  // "steps" would silently win or lose).
  std::vector<std::unordered_set<std::string>> keys;  // one set per open object
  auto reject_duplicates = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    else if (event == E::object_end && !keys.empty()) keys.pop_back();
    else if (event == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
      std::string key;
      for (const char c : parsed.get<std::string>()) {  // control characters shown, never sent raw
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          key += buf;
        } else {
          key += c;
        }
      }
      if (key.size() > 40) key = key.substr(0, 37) + "...";
      throw nlohmann::json::parse_error::create(
          101, 0, "the key \"" + key + "\" appears twice in one object (which one counts would be a guess)", nullptr);
    }
    return true;
  };
  return nlohmann::json::parse(text.begin(), text.end(), reject_duplicates);
}

std::string json_brief(const nlohmann::json& j) {
  if (j.is_array()) return j.empty() ? "an empty array" : "an array of " + std::to_string(j.size());
  if (j.is_object()) return j.empty() ? "an empty object" : "an object with " + std::to_string(j.size()) + " fields";
  std::string text = j.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& source) {
  try {
    return parse_json_bounded(text);
  } catch (const nlohmann::json::out_of_range& e) {
    // nlohmann reports numbers beyond double range (e.g. 1e400) this way.
    throw InputError(source + ": " + json_error_text(e) + "; every number must be a finite float32 value");
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = source + ": malformed JSON: " + json_error_text(e);
    if (at_non_finite_token(text, e.byte)) msg += " (JSON has no NaN or Infinity: every number must be finite)";
    throw InputError(msg);
  }
}

}  // namespace attnlab::io
