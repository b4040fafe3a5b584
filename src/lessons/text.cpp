#include "lessons/text.hpp"

#include <cctype>

#include "io/files.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace attnlab::lessons {

text::Vocab load_word_list(const std::filesystem::path& file) {
  const std::string content = io::read_text_file(file.string(), 4u << 20);
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
  text::EncodedSentence e = text::encode_sentence(vocab, sentence, kMaxSentenceTokens, what);
  TokenizedSentence out;
  out.text = std::string(sentence);
  out.tokens = std::move(e.labels);
  for (text::TokenId id : e.ids) out.ids.push_back(static_cast<std::size_t>(id));
  out.unknown = std::move(e.unknown);
  return out;
}

}  // namespace attnlab::lessons
