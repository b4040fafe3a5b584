#pragma once
// Shared by the commands that use a trained model (translate, attend, generate, eval): tokenising the
// user's text with a warning for unknown words, and printing attention weights as labelled heatmaps.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/matrix.hpp"
#include "io/trace_json.hpp"
#include "render/matrix_print.hpp"
#include "render/terminal.hpp"
#include "text/tokenizer.hpp"
#include "text/vocab.hpp"
#include "util/error.hpp"

namespace attnlab::cli {

// Encodes `text` (text::encode_sentence: "TEXT: …" errors, or `what` in place of TEXT), refuses a
// sentence whose every word is unknown (whatever the model printed would be noise, not a result), and
// names the unknown words in one warning: on stderr, or into `warnings` when given. `tokens_out` gets
// the labels.
inline std::vector<int> encode_user_text(const text::Vocab& vocab, const std::string& text, std::size_t max_tokens,
                                         std::vector<std::string>* tokens_out, const std::string& what = "TEXT",
                                         std::vector<std::string>* warnings = nullptr) {
  text::EncodedSentence e = text::encode_sentence(vocab, text, max_tokens, what);
  if (!vocab.bpe() && std::all_of(e.ids.begin(), e.ids.end(), [](auto id) { return id == text::Vocab::kUnk; })) {
    std::string list;
    for (std::size_t i = 0; i < e.unknown.size() && i < 5; ++i) {
      const std::string& w = e.unknown[i];
      list += (i ? ", \"" : "\"") + (w.size() > 30 ? w.substr(0, 27) + "..." : w) + "\"";
    }
    if (e.unknown.size() > 5) list += ", ...";
    throw InputError(what + ": none of its words is in the model's vocabulary (" + list +
                     "); the model knows only the corpus's words, e.g. \"The boy trains the puppy.\"");
  }
  if (!e.unknown.empty()) {
    const std::string line = "attnlab: " + text::unknown_words_warning(e.unknown);
    if (warnings) warnings->push_back(line);
    else std::cerr << line << '\n';
  }
  if (tokens_out) *tokens_out = std::move(e.labels);
  return std::vector<int>(e.ids.begin(), e.ids.end());
}

// A rows × cols block of weights as a Matrix.
inline core::Matrix to_matrix(const float* data, std::size_t r, std::size_t c) {
  core::Matrix m = core::Matrix::from_shape({r, c});
  std::copy(data, data + r * c, m.data());
  return m;
}

struct ViewOptions {
  bool no_color = false;
  bool full = false;
};

inline void print_heatmap(const std::string& title, const core::Matrix& m, const std::vector<std::string>& rows_l,
                          const std::vector<std::string>& cols_l, const ViewOptions& v,
                          const std::vector<std::size_t>& keep_cols = {}) {
  const render::Terminal term = render::detect_terminal(v.no_color);
  render::PrintOptions po;
  po.precision = 2;
  po.max_width = term.width;
  po.full = v.full;
  po.color = term.color;
  po.heatmap = true;
  po.keep_cols = keep_cols;
  render::print_matrix(std::cout, title, m, rows_l, cols_l, po);
}

}  // namespace attnlab::cli
