#include "lessons/text.hpp"

#include <algorithm>
#include <cctype>

#include "io/files.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

namespace {

bool is_ascii_punct(unsigned char c) { return c < 0x80 && std::ispunct(c); }

// Lower-cases one UTF-8 sequence starting at s[i] (ASCII and Latin-1 capitals À–Þ except ×).
std::string fold(std::string_view s, std::size_t i, std::size_t len) {
  std::string out(s.substr(i, len));
  const unsigned char c0 = static_cast<unsigned char>(out[0]);
  if (len == 1) {
    out[0] = static_cast<char>(std::tolower(c0));
  } else if (len == 2 && c0 == 0xC3) {
    const unsigned char c1 = static_cast<unsigned char>(out[1]);
    if (c1 >= 0x80 && c1 <= 0x9E && c1 != 0x97) out[1] = static_cast<char>(c1 + 0x20);
  }
  return out;
}

std::size_t seq_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 0x6) return 2;
  if ((c >> 4) == 0xE) return 3;
  if ((c >> 3) == 0x1E) return 4;
  return 1;  // a stray continuation byte: take it alone
}

bool is_letter_at(std::string_view s, std::size_t i) {
  if (i >= s.size()) return false;
  const unsigned char c = static_cast<unsigned char>(s[i]);
  return c >= 0x80 || std::isalnum(c);
}

}  // namespace

std::vector<std::string> tokenize(std::string_view in) {
  // Normalise the typographic apostrophe (U+2019, E2 80 99) to '.
  std::string s;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in.substr(i, 3) == "\xE2\x80\x99") {
      s += '\'';
      i += 2;
    } else {
      s += in[i];
    }
  }
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) out.push_back(std::move(word));
    word.clear();
  };
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t len = std::min(seq_len(c), s.size() - i);
    if (len == 1 && std::isspace(c)) {
      flush();
    } else if (len == 1 && is_ascii_punct(c)) {
      const bool joiner = (c == '\'' || c == '-') && !word.empty() && is_letter_at(s, i + 1);
      if (joiner) {
        word += static_cast<char>(c);
      } else {
        flush();
        out.emplace_back(1, static_cast<char>(c));
      }
    } else {
      word += fold(s, i, len);
    }
    i += len;
  }
  flush();
  return out;
}

Vocabulary Vocabulary::from_words(std::vector<std::string> words) {
  Vocabulary v;
  for (auto& w : words) {
    if (v.index_.count(w)) continue;
    v.index_[w] = v.words_.size();
    v.words_.push_back(std::move(w));
  }
  if (!v.contains("<unk>")) {
    v.index_["<unk>"] = v.words_.size();
    v.words_.push_back("<unk>");
  }
  return v;
}

Vocabulary Vocabulary::load(const std::filesystem::path& file) {
  const std::string text = read_text_file(file.string(), 4u << 20);
  std::vector<std::string> words;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.erase(0, 1);
    if (line.empty() || line[0] == '#') continue;
    words.push_back(std::move(line));
  }
  return from_words(std::move(words));
}

std::size_t Vocabulary::id(const std::string& w) const {
  auto it = index_.find(w);
  return it != index_.end() ? it->second : index_.at("<unk>");
}

TokenizedSentence encode(std::string_view sentence, const Vocabulary& vocab, const std::string& what) {
  TokenizedSentence out;
  out.text = std::string(sentence);
  const std::vector<std::string> words = tokenize(sentence);
  if (words.empty()) throw InputError(what + ": the sentence is empty; give at least one word");
  if (words.size() > kMaxSentenceTokens) {
    throw InputError(what + ": the sentence has " + std::to_string(words.size()) + " tokens (words and punctuation), more than the limit of " +
                     std::to_string(kMaxSentenceTokens));
  }
  for (const std::string& w : words) {
    const bool known = vocab.contains(w);
    if (!known && std::find(out.unknown.begin(), out.unknown.end(), w) == out.unknown.end()) out.unknown.push_back(w);
    out.tokens.push_back(known ? w : "<unk>");
    out.ids.push_back(vocab.id(w));
  }
  return out;
}

}  // namespace attnlab::lessons
