#include "text/bpe.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <queue>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/json_text.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace attnlab::text {

namespace {

// ---- UTF-8 and character classes -------------------------------------------------------------------

// The code point at s[i]: util/utf8.hpp's reader (an invalid byte is taken on its own).
using utf8::CodePoint;
using utf8::decode_at;

enum class CharClass { Letter, Digit, Space, Other };

bool is_unicode_space(char32_t c) {
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// Punctuation, symbols and emoji outside ASCII: kept apart from words, like ASCII punctuation, so that
// "word”" or "café…" do not become new whole words. Blocks, not a Unicode table: enough for English
// and European text, and every other code point is a letter.
bool is_unicode_other(char32_t c) {
  if (c >= 0x80 && c <= 0x9F) return true;                                    // C1 controls
  if (c >= 0xA1 && c <= 0xBF) return c != 0xAA && c != 0xB5 && c != 0xBA;    // ¡ « » ¿ £ © ° …
  if (c == 0xD7 || c == 0xF7) return true;                                    // × ÷
  if (c >= 0x200B && c <= 0x206F) return true;                                // zero-width, dashes, quotes, …
  if (c >= 0x20A0 && c <= 0x20CF) return true;                                // currency (€)
  if (c >= 0x2100 && c <= 0x2BFF) return true;                                // arrows, maths, shapes, dingbats
  if (c >= 0x2E00 && c <= 0x2E7F) return true;                                // supplemental punctuation
  if (c >= 0x3001 && c <= 0x303F) return true;                                // CJK punctuation
  if (c >= 0xFE00 && c <= 0xFE0F) return true;                                // variation selectors (emoji style)
  if (c >= 0xFE10 && c <= 0xFE6F) return true;                                // vertical and small forms
  if (c >= 0xFF01 && c <= 0xFF0F) return true;                                // fullwidth ! " # …
  if (c >= 0x1F000 && c <= 0x1FAFF) return true;                              // emoji and pictographs
  if (c >= 0xE0000 && c <= 0xE007F) return true;                              // tags (flag sequences)
  return false;
}

CharClass class_of(const CodePoint& cp) {
  if (!cp.valid) return CharClass::Other;
  const char32_t c = cp.value;
  if (c < 0x80) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return CharClass::Letter;
    if (c >= '0' && c <= '9') return CharClass::Digit;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') return CharClass::Space;
    return CharClass::Other;
  }
  if (is_unicode_space(c)) return CharClass::Space;
  if (is_unicode_other(c)) return CharClass::Other;
  return CharClass::Letter;
}

bool ascii_ieq(char a, char lower) { return a == lower || a == lower - 'a' + 'A'; }

// Length of the contraction at s[i] ("'s", "'ll", ...), or 0.
std::size_t contraction_at(std::string_view s, std::size_t i) {
  if (s[i] != '\'' || i + 1 >= s.size()) return 0;
  std::size_t n = 0;
  const char a = s[i + 1];
  if (ascii_ieq(a, 's') || ascii_ieq(a, 't') || ascii_ieq(a, 'm') || ascii_ieq(a, 'd')) n = 2;
  if (i + 2 < s.size()) {
    const char b = s[i + 2];
    if ((ascii_ieq(a, 'r') && ascii_ieq(b, 'e')) || (ascii_ieq(a, 'v') && ascii_ieq(b, 'e')) ||
        (ascii_ieq(a, 'l') && ascii_ieq(b, 'l')))
      n = 3;
  }
  if (n == 0) return 0;
  // "'s" in "'sand" is a quote and a word, not a contraction.
  if (i + n < s.size() && class_of(decode_at(s, i + n)) == CharClass::Letter) return 0;
  return n;
}

// End of the run of `cls` starting at s[i], no further than i + budget bytes (cut at a code point
// boundary; at least one code point is always taken).
std::size_t run_end(std::string_view s, std::size_t i, CharClass cls, std::size_t budget) {
  std::size_t j = i;
  while (j < s.size()) {
    const CodePoint cp = decode_at(s, j);
    if (class_of(cp) != cls) break;
    if (j + cp.length - i > budget && j > i) break;
    j += cp.length;
  }
  return j;
}

// The end of the piece that starts at s[i] (rules in bpe.hpp).
std::size_t piece_end(std::string_view s, std::size_t i) {
  constexpr std::size_t kMax = Bpe::kMaxPieceBytes;
  if (const std::size_t n = contraction_at(s, i)) return i + n;
  const CodePoint first = decode_at(s, i);
  const CharClass cls = class_of(first);
  if (s[i] == ' ' && i + 1 < s.size()) {
    const CharClass next = class_of(decode_at(s, i + 1));
    if (next != CharClass::Space) return run_end(s, i + 1, next, kMax - 1);
  }
  if (cls == CharClass::Space) {
    const std::size_t j = run_end(s, i, CharClass::Space, kMax);
    // Leave a final ASCII space to the word after it.
    if (j < s.size() && j - i > 1 && s[j - 1] == ' ' && class_of(decode_at(s, j)) != CharClass::Space) return j - 1;
    return j;
  }
  return run_end(s, i, cls, kMax);
}

constexpr std::uint64_t pair_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

}  // namespace

// ---- Pre-tokenization ------------------------------------------------------------------------------

std::vector<std::string> pretokenize(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t j = piece_end(text, i);
    out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

void count_pieces(std::string_view text, PieceCounts& counts) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t j = piece_end(text, i);
    ++counts[std::string(text.substr(i, j - i))];
    i = j;
  }
}

std::string display_bytes(std::string_view bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size();) {
    const CodePoint cp = decode_at(bytes, i);
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (!cp.valid) {
      out += fmt::format("\\x{:02x}", b);
    } else if (cp.value == '\\') {
      out += "\\\\";
    } else if (cp.value == '\n') {
      out += "\\n";
    } else if (cp.value == '\t') {
      out += "\\t";
    } else if (cp.value == '\r') {
      out += "\\r";
    } else if (cp.value < 0x20 || cp.value == 0x7F) {
      out += fmt::format("\\x{:02x}", b);
    } else if (cp.value >= 0x80 && cp.value <= 0x9F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp.value));
    } else {
      out += bytes.substr(i, cp.length);
    }
    i += cp.length;
  }
  return out;
}

// ---- The tokenizer ---------------------------------------------------------------------------------

// Encoding is called per sentence, and the same words come back all the time; a piece's ids are
// computed once. Bounded: it is emptied when it reaches kMaxEntries, so no input can make it grow
// without limit. The mutex makes a const Bpe safe to share between threads.
struct Bpe::Cache {
  static constexpr std::size_t kMaxEntries = 1 << 17;
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<TokenId>> ids;
};

Bpe::Bpe() : cache_(std::make_unique<Cache>()) {
  for (std::string_view s : Vocab::kSpecials) bytes_.emplace_back(s);
  for (int b = 0; b < 256; ++b) bytes_.emplace_back(1, static_cast<char>(b));
}

Bpe::Bpe(const Bpe& other)
    : merges_(other.merges_), bytes_(other.bytes_), rank_(other.rank_), cache_(std::make_unique<Cache>()) {}
Bpe& Bpe::operator=(const Bpe& other) {
  if (this != &other) {
    merges_ = other.merges_;
    bytes_ = other.bytes_;
    rank_ = other.rank_;
    cache_ = std::make_unique<Cache>();
  }
  return *this;
}
Bpe::Bpe(Bpe&&) noexcept = default;
Bpe& Bpe::operator=(Bpe&&) noexcept = default;
Bpe::~Bpe() = default;

void Bpe::add_merge(TokenId left, TokenId right) {
  rank_.emplace(pair_key(left, right), static_cast<TokenId>(merges_.size()));
  merges_.emplace_back(left, right);
  bytes_.push_back(bytes_[static_cast<std::size_t>(left)] + bytes_[static_cast<std::size_t>(right)]);
}

const std::string& Bpe::bytes_of(TokenId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= bytes_.size())
    throw InputError(fmt::format("token id {} is outside the BPE vocabulary (ids 0 to {})", id, bytes_.size() - 1));
  return bytes_[static_cast<std::size_t>(id)];
}

std::string Bpe::token_text(TokenId id) const { return display_bytes(bytes_of(id)); }

std::vector<TokenId> Bpe::encode_piece(std::string_view piece) const {
  std::vector<TokenId> ids;
  ids.reserve(piece.size());
  for (char c : piece) ids.push_back(kFirstByte + static_cast<unsigned char>(c));
  std::vector<TokenId> next;
  while (ids.size() > 1) {
    // The adjacent pair with the lowest merge rank...
    TokenId best_rank = std::numeric_limits<TokenId>::max();
    std::uint64_t best = 0;
    for (std::size_t k = 0; k + 1 < ids.size(); ++k) {
      const std::uint64_t key = pair_key(ids[k], ids[k + 1]);
      if (const auto it = rank_.find(key); it != rank_.end() && it->second < best_rank) {
        best_rank = it->second;
        best = key;
      }
    }
    if (best_rank == std::numeric_limits<TokenId>::max()) break;
    // ... merged at every occurrence, left to right, as training did.
    const TokenId merged = kFirstMerge + best_rank;
    next.clear();
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (k + 1 < ids.size() && pair_key(ids[k], ids[k + 1]) == best) {
        next.push_back(merged);
        ++k;
      } else {
        next.push_back(ids[k]);
      }
    }
    ids.swap(next);
  }
  return ids;
}

std::vector<TokenId> Bpe::encode(std::string_view text) const {
  std::vector<TokenId> out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t j = piece_end(text, i);
    const std::string_view piece = text.substr(i, j - i);
    i = j;
    {
      std::lock_guard lock(cache_->mutex);
      if (const auto it = cache_->ids.find(std::string(piece)); it != cache_->ids.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        continue;
      }
    }
    std::vector<TokenId> ids = encode_piece(piece);
    out.insert(out.end(), ids.begin(), ids.end());
    std::lock_guard lock(cache_->mutex);
    if (cache_->ids.size() >= Cache::kMaxEntries) cache_->ids.clear();
    cache_->ids.emplace(std::string(piece), std::move(ids));
  }
  return out;
}

std::string Bpe::decode(const std::vector<TokenId>& ids) const {
  std::string out;
  for (TokenId id : ids) {
    if (id == Vocab::kEos) break;
    if (id == Vocab::kPad || id == Vocab::kBos) continue;
    out += bytes_of(id);
  }
  return out;
}

std::vector<std::string> Bpe::pieces(std::string_view text) const {
  std::vector<std::string> out;
  for (TokenId id : encode(text)) out.push_back(bytes_of(id));
  return out;
}

std::string Bpe::show_pieces(std::string_view text, std::string_view separator) const {
  std::string out;
  for (TokenId id : encode(text)) {
    if (!out.empty()) out += separator;
    out += token_text(id);
  }
  return out;
}

// ---- Training --------------------------------------------------------------------------------------

Bpe Bpe::train_on_texts(const std::vector<std::string>& texts, std::size_t vocab_size, std::uint64_t min_pair_count) {
  PieceCounts counts;
  for (const auto& t : texts) count_pieces(t, counts);
  return train(counts, vocab_size, min_pair_count);
}

Bpe Bpe::train(const PieceCounts& counts, std::size_t vocab_size, std::uint64_t min_pair_count) {
  if (vocab_size < static_cast<std::size_t>(kFirstMerge) || vocab_size > kMaxVocabSize)
    throw InputError(fmt::format("BPE vocabulary size {} is outside {} to {} (the 4 special tokens and 256 bytes "
                                 "come first)",
                                 vocab_size, kFirstMerge, kMaxVocabSize));
  min_pair_count = std::max<std::uint64_t>(min_pair_count, 1);

  // The unique pieces in byte order, so word indices (and everything after) do not depend on the
  // hash map's order.
  std::vector<std::pair<std::string_view, std::uint64_t>> sorted;
  sorted.reserve(counts.size());
  for (const auto& [piece, n] : counts)
    if (n > 0 && piece.size() > 1) sorted.emplace_back(piece, n);  // a 1-byte piece has no pair
  std::sort(sorted.begin(), sorted.end());

  std::vector<std::vector<TokenId>> words(sorted.size());
  std::vector<std::uint64_t> freq(sorted.size());
  std::unordered_map<std::uint64_t, std::uint64_t> pair_count;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> where;  // pair → words that held it (may be stale)
  for (std::size_t w = 0; w < sorted.size(); ++w) {
    freq[w] = sorted[w].second;
    for (char c : sorted[w].first) words[w].push_back(kFirstByte + static_cast<unsigned char>(c));
    for (std::size_t k = 0; k + 1 < words[w].size(); ++k) {
      const std::uint64_t key = pair_key(words[w][k], words[w][k + 1]);
      pair_count[key] += freq[w];
      auto& list = where[key];
      if (list.empty() || list.back() != w) list.push_back(static_cast<std::uint32_t>(w));
    }
  }

  // Candidates, best first: highest count, then smaller left id, then smaller right id. Entries go
  // stale when a count changes; a popped entry whose count is no longer current is skipped.
  struct Candidate {
    std::uint64_t count;
    std::uint64_t key;
  };
  const auto worse = [](const Candidate& a, const Candidate& b) {
    return a.count != b.count ? a.count < b.count : a.key > b.key;  // key order is (left, right) order
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> heap(worse);
  for (const auto& [key, n] : pair_count) heap.push({n, key});

  Bpe bpe;
  std::vector<std::uint64_t> changed;
  std::vector<TokenId> merged_word;
  while (bpe.size() < vocab_size && !heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    const auto it = pair_count.find(top.key);
    if (it == pair_count.end() || it->second != top.count) continue;  // stale
    if (top.count < min_pair_count) break;
    const auto left = static_cast<TokenId>(top.key >> 32), right = static_cast<TokenId>(top.key & 0xFFFFFFFFu);
    const auto new_id = static_cast<TokenId>(bpe.size());
    bpe.add_merge(left, right);

    std::vector<std::uint32_t> holders = std::move(where[top.key]);
    where.erase(top.key);
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    changed.clear();
    for (std::uint32_t w : holders) {
      auto& word = words[w];
      merged_word.clear();
      bool found = false;
      for (std::size_t k = 0; k < word.size(); ++k) {
        if (k + 1 < word.size() && word[k] == left && word[k + 1] == right) {
          merged_word.push_back(new_id);
          ++k;
          found = true;
        } else {
          merged_word.push_back(word[k]);
        }
      }
      if (!found) continue;  // the pair left this word in an earlier merge
      // Exact update: take the word's old pairs out of the counts and put its new pairs in.
      for (std::size_t k = 0; k + 1 < word.size(); ++k) {
        const std::uint64_t key = pair_key(word[k], word[k + 1]);
        pair_count[key] -= freq[w];
        changed.push_back(key);
      }
      for (std::size_t k = 0; k + 1 < merged_word.size(); ++k) {
        const std::uint64_t key = pair_key(merged_word[k], merged_word[k + 1]);
        pair_count[key] += freq[w];
        changed.push_back(key);
        if (merged_word[k] == new_id || merged_word[k + 1] == new_id) {  // a pair this word did not have
          auto& list = where[key];
          if (list.empty() || list.back() != w) list.push_back(w);
        }
      }
      word.swap(merged_word);
    }
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    for (std::uint64_t key : changed) {
      const auto c = pair_count.find(key);
      if (c->second == 0) {
        pair_count.erase(c);
      } else {
        heap.push({c->second, key});
      }
    }
  }
  return bpe;
}

// ---- JSON ------------------------------------------------------------------------------------------

nlohmann::json Bpe::to_json() const {
  nlohmann::json merges = nlohmann::json::array();
  for (std::size_t r = 0; r < merges_.size(); ++r)
    merges.push_back({merges_[r].first, merges_[r].second, token_text(kFirstMerge + static_cast<TokenId>(r))});
  nlohmann::json specials = nlohmann::json::array();
  for (std::string_view s : Vocab::kSpecials) specials.push_back(std::string(s));
  return {{"format", "attnlab-bpe"}, {"version", kFormatVersion}, {"specials", specials}, {"merges", merges}};
}

Bpe Bpe::from_json(const nlohmann::json& j) {
  if (!j.is_object())
    throw InputError(fmt::format(
        "BPE tokenizer: expected a JSON object with \"format\", \"version\", \"specials\" and \"merges\" (found {})",
        io::json_brief(j)));
  if (!j.contains("format") || j["format"] != "attnlab-bpe")
    throw InputError(fmt::format("BPE tokenizer: \"format\" must be \"attnlab-bpe\" (found {})",
                                 j.contains("format") ? io::json_brief(j["format"]) : "(missing)"));
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != kFormatVersion)
    throw InputError(fmt::format("BPE tokenizer: unsupported \"version\" {} (this attnlab reads version {})",
                                 j.contains("version") ? io::json_brief(j["version"]) : "(missing)", kFormatVersion));
  if (!j.contains("specials") || !j["specials"].is_array() || j["specials"].size() != Vocab::kSpecials.size())
    throw InputError(fmt::format("BPE tokenizer: \"specials\" must be [\"<pad>\", \"<unk>\", \"<bos>\", \"<eos>\"] "
                                 "(found {})",
                                 j.contains("specials") ? io::json_brief(j["specials"]) : "(missing)"));
  for (std::size_t i = 0; i < Vocab::kSpecials.size(); ++i)
    if (!j["specials"][i].is_string() || j["specials"][i].get<std::string>() != Vocab::kSpecials[i])
      throw InputError(fmt::format("BPE tokenizer: specials[{}] must be \"{}\" (found {})", i, Vocab::kSpecials[i],
                                   io::json_brief(j["specials"][i])));
  if (!j.contains("merges") || !j["merges"].is_array())
    throw InputError(fmt::format("BPE tokenizer: \"merges\" must be an array of [left id, right id, text] (found {})",
                                 j.contains("merges") ? io::json_brief(j["merges"]) : "(missing)"));
  const auto& merges = j["merges"];
  if (merges.size() + kFirstMerge > kMaxVocabSize)
    throw InputError(fmt::format("BPE tokenizer: \"merges\" has {} entries; at most {} are read", merges.size(),
                                 kMaxVocabSize - kFirstMerge));
  Bpe bpe;
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const auto& m = merges[r];
    if (!m.is_array() || m.size() != 3)
      throw InputError(fmt::format("BPE tokenizer: merges[{}] must be [left id, right id, text] (found {})", r,
                                   io::json_brief(m)));
    const auto made = static_cast<std::int64_t>(bpe.size());
    TokenId ids[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
      const auto& v = m[static_cast<std::size_t>(side)];
      if (!v.is_number_integer() || v.get<std::int64_t>() < kFirstByte || v.get<std::int64_t>() >= made)
        throw InputError(fmt::format("BPE tokenizer: merges[{}][{}] must be a token id from {} to {} (a byte or an "
                                     "earlier merge; found {})",
                                     r, side, kFirstByte, made - 1, io::json_brief(v)));
      ids[side] = static_cast<TokenId>(v.get<std::int64_t>());
    }
    // No piece is longer than kMaxPieceBytes, so no merge that training can make is either; a longer
    // one (doubling each step, a 4 MB file held a 1 MiB token, and generate wrote 1 GB: the eighth
    // adversarial pass) is refused before its bytes are built.
    const std::size_t merged_size = bpe.bytes_[static_cast<std::size_t>(ids[0])].size() + bpe.bytes_[static_cast<std::size_t>(ids[1])].size();
    if (merged_size > kMaxPieceBytes)
      throw InputError(fmt::format("BPE tokenizer: merges[{}] makes a token of {} bytes; at most {} (the longest piece)", r,
                                   merged_size, kMaxPieceBytes));
    const std::string expected = display_bytes(bpe.bytes_[static_cast<std::size_t>(ids[0])] +
                                               bpe.bytes_[static_cast<std::size_t>(ids[1])]);
    if (!m[2].is_string() || m[2].get<std::string>() != expected)
      throw InputError(fmt::format("BPE tokenizer: merges[{}][2] must be the merged text \"{}\" (found {})", r, expected,
                                   io::json_brief(m[2])));
    if (bpe.rank_.count(pair_key(ids[0], ids[1])))
      throw InputError(fmt::format("BPE tokenizer: merges[{}] repeats the merge [{}, {}]", r, ids[0], ids[1]));
    bpe.add_merge(ids[0], ids[1]);
  }
  return bpe;
}

}  // namespace attnlab::text
