#include "lessons/text.hpp"

#include <cctype>

#include "io/files.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

text::Vocab load_word_list(const std::filesystem::path& file) {
  const std::string content = read_text_file(file.string(), 4u << 20);
  text::Vocab v;  // starts with <pad>, <unk>, <bos>, <eos>; add() keeps their ids when listed again
  std::size_t pos = 0;
  while (pos < content.size()) {
    std::size_t end = content.find('\n', pos);
    if (end == std::string::npos) end = content.size();
    std::string line = content.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.erase(0, 1);
    if (line.empty() || line[0] == '#') continue;
    v.add(line);
  }
  return v;
}

TokenizedSentence encode(std::string_view sentence, const text::Vocab& vocab, const std::string& what) {
  TokenizedSentence out;
  out.text = std::string(sentence);
  if (vocab.bpe()) {  // a sub-word model: labels show the pieces ("un", "##believ", "##able")
    const std::vector<text::TokenId> ids = vocab.encode(sentence);
    if (ids.empty()) throw InputError(what + ": the sentence is empty; give at least one word");
    if (ids.size() > kMaxSentenceTokens) {
      throw InputError(what + ": the sentence has " + std::to_string(ids.size()) + " sub-word tokens, more than the limit of " +
                       std::to_string(kMaxSentenceTokens));
    }
    out.tokens = vocab.labels_of(ids);
    for (text::TokenId id : ids) out.ids.push_back(static_cast<std::size_t>(id));
    return out;
  }
  const std::vector<std::string> words = text::tokenize(sentence);
  if (words.empty()) throw InputError(what + ": the sentence is empty; give at least one word");
  if (words.size() > kMaxSentenceTokens) {
    throw InputError(what + ": the sentence has " + std::to_string(words.size()) +
                     " tokens (words and punctuation), more than the limit of " + std::to_string(kMaxSentenceTokens));
  }
  const std::vector<text::TokenId> ids = vocab.encode_tokens(words, &out.unknown);
  for (std::size_t i = 0; i < words.size(); ++i) {
    out.tokens.push_back(ids[i] == text::Vocab::kUnk ? "<unk>" : words[i]);
    out.ids.push_back(static_cast<std::size_t>(ids[i]));
  }
  return out;
}

}  // namespace attnlab::lessons
