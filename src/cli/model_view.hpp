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

// Tokenises and encodes `text`; unknown words become <unk> and are named in one warning on stderr.
inline std::vector<int> encode_user_text(const text::Vocab& vocab, const std::string& text, std::size_t max_tokens,
                                         std::vector<std::string>* tokens_out) {
  if (vocab.bpe()) {  // sub-word tokens: every text has them, none is <unk>
    const auto ids = vocab.encode(text);
    if (ids.empty()) throw InputError("TEXT: is empty; give a sentence, e.g. \"Your journey starts with one step\"");
    if (ids.size() > max_tokens) {
      throw InputError("TEXT: has " + std::to_string(ids.size()) + " tokens; this model reads at most " + std::to_string(max_tokens));
    }
    if (tokens_out) *tokens_out = vocab.labels_of(ids);
    return std::vector<int>(ids.begin(), ids.end());
  }
  const std::vector<std::string> toks = text::tokenize(text);
  if (toks.empty()) throw InputError("TEXT: is empty; give a sentence, e.g. \"The boy trains the puppy.\"");
  if (toks.size() > max_tokens) {
    throw InputError("TEXT: has " + std::to_string(toks.size()) + " tokens; this model reads at most " + std::to_string(max_tokens));
  }
  std::vector<std::string> unknown;
  const auto ids = vocab.encode_tokens(toks, &unknown);
  if (std::all_of(ids.begin(), ids.end(), [](auto id) { return id == text::Vocab::kUnk; })) {
    // Every token would be <unk>: whatever the model printed would be noise, not a result.
    std::string list;
    for (std::size_t i = 0; i < unknown.size() && i < 5; ++i) {
      const std::string& w = unknown[i];
      list += (i ? ", \"" : "\"") + (w.size() > 30 ? w.substr(0, 27) + "..." : w) + "\"";
    }
    if (unknown.size() > 5) list += ", ...";
    throw InputError("TEXT: none of its words is in the model's vocabulary (" + list +
                     "); the model knows only the corpus's words, e.g. \"The boy trains the puppy.\"");
  }
  if (!unknown.empty()) std::cerr << "attnlab: " << text::unknown_words_warning(unknown) << '\n';
  if (tokens_out) {
    tokens_out->clear();
    for (std::size_t i = 0; i < toks.size(); ++i) tokens_out->push_back(ids[i] == text::Vocab::kUnk ? "<unk>" : toks[i]);
  }
  return std::vector<int>(ids.begin(), ids.end());
}

// A rows × cols block of weights as a Matrix.
inline Matrix to_matrix(const float* data, std::size_t r, std::size_t c) {
  Matrix m = Matrix::from_shape({r, c});
  std::copy(data, data + r * c, m.data());
  return m;
}

struct ViewOptions {
  bool no_color = false;
  bool full = false;
};

inline void print_heatmap(const std::string& title, const Matrix& m, const std::vector<std::string>& rows_l,
                          const std::vector<std::string>& cols_l, const ViewOptions& v,
                          const std::vector<std::size_t>& keep_cols = {}) {
  const Terminal term = detect_terminal(v.no_color);
  PrintOptions po;
  po.precision = 2;
  po.max_width = term.width;
  po.full = v.full;
  po.color = term.color;
  po.heatmap = true;
  po.keep_cols = keep_cols;
  print_matrix(std::cout, title, m, rows_l, cols_l, po);
}

}  // namespace attnlab::cli
