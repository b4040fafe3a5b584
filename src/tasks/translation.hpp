#pragma once
// How a learner's sentence is translated, the same in `translate`, `serve`, `eval --everyday` and the
// lessons: the decoding settings, and the full stop a generated-corpus model needs.
#include <optional>
#include <string>

#include "model/decode.hpp"
#include "tasks/task.hpp"

namespace attnlab::tasks {

// Beam search of width `beam` with GNMT's length penalty α (0.6, the paper's), loops blocked unless
// `allow_loops` (model/decode.hpp: French never writes a token thrice in a row or a phrase twice back
// to back, so blocking loses nothing it should write).
model::DecodeOptions learner_decode(int beam = 4, double length_penalty = 0.6, bool allow_loops = false);

// The generated corpus ends every sentence with . ! or ?; a model trained only on it has never read a
// sentence without, and "I love you" sent as is came back as "Je t'aime aime aime …". For such a
// model (a translation model of the generated corpus whose vocabulary has the full stop), the text
// with a full stop added when it ends with none; nullopt when it needs none.
std::optional<std::string> with_full_stop(const LoadedModel& m, const std::string& text);

}  // namespace attnlab::tasks
