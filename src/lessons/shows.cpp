// What several lessons' computations share (shows.hpp), and the registry of every show.
#include "lessons/shows.hpp"

#include <fmt/format.h>

#include "model/decode.hpp"

namespace attnlab::lessons {

std::string dims(std::size_t r, std::size_t c) { return fmt::format("{} × {}", r, c); }

std::string projection_formula(const core::HeadWeights& h, const char* name) {
  const bool bias = name[0] == 'Q' ? h.b_q.has_value() : name[0] == 'K' ? h.b_k.has_value() : h.b_v.has_value();
  return fmt::format("X · W_{}{}", name, bias ? fmt::format(" + b_{}", name) : "");
}

std::size_t focus_index(const std::vector<std::string>& tokens, const std::string& word) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] == word) return i;
  return tokens.size() / 2;
}

// 1e-4: float32 replays of the same product in another order differ by about 1e-5, and by which BLAS
// kernel the machine has (1.5e-5 on a Cooperlake one for lesson 8), so a finer line would flicker.
std::string agreement(float d) { return d <= 1e-4f ? "largest difference below 1e-4" : fmt::format("largest difference {:.2g}", d); }

std::vector<int> with_bos(const std::vector<int>& ids) {
  std::vector<int> v{model::kBos};
  v.insert(v.end(), ids.begin(), ids.end());
  return v;
}

std::vector<int> with_eos(const std::vector<int>& ids) {
  std::vector<int> v = ids;
  v.push_back(model::kEos);
  return v;
}

std::vector<std::string> prefixed(const char* first, const std::vector<std::string>& tokens) {
  std::vector<std::string> v{first};
  v.insert(v.end(), tokens.begin(), tokens.end());
  return v;
}

std::string joined(const std::vector<std::string>& tokens) {
  std::string s;
  for (const auto& t : tokens) s += (s.empty() ? "" : " ") + t;
  return s;
}

std::string width_ratio(int d_ff, int d_model) {
  if (d_model > 0 && d_ff % d_model == 0) return std::to_string(d_ff / d_model);
  return fmt::format("{:.2g}", d_model > 0 ? static_cast<double>(d_ff) / d_model : 0.0);
}

std::size_t argmax_row(const core::Matrix& m, std::size_t i) {
  std::size_t best = 0;
  for (std::size_t j = 1; j < core::cols(m); ++j)
    if (m(i, j) > m(i, best)) best = j;
  return best;
}

std::vector<int> own_translation(model::Transformer<float>& net, const std::vector<int>& src) {
  model::DecodeOptions o;
  return model::translate(net, src, o).tokens;
}

const std::map<std::string, Show>& show_registry() {
  static const ShowMap registry = [] {
    ShowMap r;
    register_lesson_1(r);
    register_lesson_2(r);
    register_lesson_3(r);
    register_lesson_4(r);
    register_lesson_5(r);
    register_lesson_6(r);
    register_lesson_7(r);
    register_lesson_8(r);
    register_lesson_9(r);
    register_lesson_10(r);
    return r;
  }();
  return registry;
}

}  // namespace attnlab::lessons
