#pragma once
// The computations behind the <!-- show: NAME --> directives of the lessons' Markdown: one file per
// lesson (lesson_NN_<name>.cpp) holds that lesson's computations with random weights and with the
// trained model, and registers each as {name, random, trained} in its register_lesson_N. Which of
// the two runs is decided in one place, run_show (session.cpp). This header holds what several
// lessons share.
#include <map>
#include <string>
#include <vector>

#include "core/attention.hpp"
#include "lessons/output.hpp"
#include "lessons/session.hpp"
#include "model/transformer.hpp"
#include "render/matrix_print.hpp"

namespace attnlab::lessons {

using ShowMap = std::map<std::string, Show>;
using ModelBlock = model::Transformer<float>::Block;

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

// "r × c", as the lessons write a shape.
std::string dims(std::size_t r, std::size_t c);

// "X · W_Q" or "X · W_Q + b_Q": how projection `name` (Q, K or V) of head h is computed.
std::string projection_formula(const core::HeadWeights& h, const char* name);

// Index of `word` among the tokens, or the middle token when it is absent.
std::size_t focus_index(const std::vector<std::string>& tokens, const std::string& word);

// "below 1e-5" or the difference itself: how a replay or a recomputation agrees with the model.
std::string agreement(float max_difference);

// Token ids and labels around a sentence the model reads.
std::vector<int> with_bos(const std::vector<int>& ids);
std::vector<int> with_eos(const std::vector<int>& ids);
std::vector<std::string> prefixed(const char* first, const std::vector<std::string>& tokens);
std::string joined(const std::vector<std::string>& tokens);

// d_ff / d_model as a learner would write it: "4", "3", else "3.5".
std::string width_ratio(int d_ff, int d_model);

// Column of the largest entry in row i.
std::size_t argmax_row(const core::Matrix& m, std::size_t i);

// The model's greedy translation of `src`, as tokens (without <eos>).
std::vector<int> own_translation(model::Transformer<float>& net, const std::vector<int>& src);

void register_lesson_1(ShowMap& r);
void register_lesson_2(ShowMap& r);
void register_lesson_3(ShowMap& r);
void register_lesson_4(ShowMap& r);
void register_lesson_5(ShowMap& r);
void register_lesson_6(ShowMap& r);
void register_lesson_7(ShowMap& r);
void register_lesson_8(ShowMap& r);
void register_lesson_9(ShowMap& r);
void register_lesson_10(ShowMap& r);

}  // namespace attnlab::lessons
