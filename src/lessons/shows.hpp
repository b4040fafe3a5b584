#pragma once
// Helpers shared by the computations behind the <!-- show: NAME --> directives
// (shows_basics.cpp: lessons 1–5, shows_advanced.cpp: lessons 6–9).
#include <map>
#include <string>
#include <vector>

#include "core/mask.hpp"
#include "lessons/output.hpp"
#include "lessons/session.hpp"
#include "render/matrix_print.hpp"

namespace attnlab::lessons {

inline MatrixItem item(std::string key, std::string title, core::Matrix m, std::vector<std::string> row_labels,
                       std::vector<std::string> col_labels) {
  MatrixItem it;
  it.key = std::move(key);
  it.title = std::move(title);
  it.m = std::move(m);
  it.row_labels = std::move(row_labels);
  it.col_labels = std::move(col_labels);
  return it;
}

inline MatrixItem weights_item(std::string key, std::string title, core::Matrix m, std::vector<std::string> row_labels,
                               std::vector<std::string> col_labels) {
  MatrixItem it = item(std::move(key), std::move(title), std::move(m), std::move(row_labels), std::move(col_labels));
  it.weights = true;
  return it;
}

// A heatmap whose scale is symmetric around zero (for signed matrices such as PE or X).
MatrixItem signed_heat_item(std::string key, std::string title, core::Matrix m, std::vector<std::string> row_labels,
                            std::vector<std::string> col_labels);

// Index of `word` among the tokens, or the middle token when it is absent.
std::size_t focus_index(const std::vector<std::string>& tokens, const std::string& word);

// Row i of a matrix as a 1 × cols matrix.
core::Matrix row_of(const core::Matrix& m, std::size_t i);

// A 0/1 mask shown as a matrix.
MatrixItem mask_item(std::string key, std::string title, const core::Mask& m, std::vector<std::string> rl, std::vector<std::string> cl);

// A transposed weight row (keys down, one column per sentence): a [0, 1] heatmap, but its columns,
// not its rows, sum to 1, so it is not marked as a weight matrix.
MatrixItem column_weights_item(std::string key, std::string title, core::Matrix m, std::vector<std::string> rl, std::vector<std::string> cl);

// Mean and (population) variance of each row: n × 2.
core::Matrix row_stats(const core::Matrix& x);

// Lesson 9: the probability of each wanted word (columns, without repeats) after each decoder input
// (rows), from n × V probabilities, and the uniform baseline.
void show_next_token_table(LessonContext& c, const core::Matrix& probs, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& want);

// "below 1e-5" or the difference itself: how a replay or a recomputation agrees with the model.
std::string agreement(float max_difference);

// With a trained model (shows_trained.cpp). show_causal_trained returns false when there is no
// language model, and the caller falls back to the translation model's decoder.
bool show_causal_trained(LessonContext& c);
void show_cross_attention_trained(LessonContext& c);
void show_cross_attention_heads_trained(LessonContext& c);
void show_residual_layernorm_trained(LessonContext& c);
void show_feed_forward_trained(LessonContext& c);
void show_encoder_decoder_trained(LessonContext& c);
void show_next_token_trained(LessonContext& c);
void show_coreference_trained(LessonContext& c);
void show_word_sense_trained(LessonContext& c);
void show_focus_row_all_heads_trained(LessonContext& c);
void show_head_probes_trained(LessonContext& c);
void show_head_ablation_trained(LessonContext& c);
void show_head_relations_trained(LessonContext& c);

void register_basic_shows(std::map<std::string, Show>& r);
void register_advanced_shows(std::map<std::string, Show>& r);

}  // namespace attnlab::lessons
