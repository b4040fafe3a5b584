#include "tasks/translation.hpp"

namespace attnlab::tasks {

model::DecodeOptions learner_decode(int beam, double length_penalty, bool allow_loops) {
  model::DecodeOptions d;
  d.beam = beam;
  d.length_penalty = length_penalty;
  d.block_loops = !allow_loops;
  return d;
}

std::optional<std::string> with_full_stop(const LoadedModel& m, const std::string& text) {
  const auto last = text.find_last_not_of(" \t\r\n");
  if (m.run.english || m.run.lm || last == std::string::npos || std::string(".!?").find(text[last]) != std::string::npos) return std::nullopt;
  if (!m.vocab.bpe() && m.vocab.id(".") == text::Vocab::kUnk) return std::nullopt;
  return text.substr(0, last + 1) + ".";
}

}  // namespace attnlab::tasks
