// The JSON problem reader: every bad input is an InputError that names the field, the expected and
// the actual shape or value.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_text.hpp"
#include "io/problem.hpp"
#include "io/trace_json.hpp"
#include "util/error.hpp"

using namespace attnlab;

namespace {

// A valid two-token, two-head problem (d_model 3, d_k 2, d_v 1) that cases below break one field at a time.
nlohmann::json base() {
  return nlohmann::json::parse(R"({
    "tokens": ["a", "b"],
    "x": [[1, 0, 0], [0, 1, 0]],
    "heads": [
      {"w_q": [[1, 0], [0, 1], [0, 0]], "w_k": [[1, 0], [0, 1], [0, 0]], "w_v": [[1], [2], [3]]},
      {"w_q": [[0, 1], [1, 0], [0, 0]], "w_k": [[0, 1], [1, 0], [0, 0]], "w_v": [[3], [2], [1]]}
    ],
    "w_o": [[1, 0, 0], [0, 1, 0]]
  })");
}

std::string error_of(const nlohmann::json& j) {
  try {
    io::parse_problem(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_of_text(const std::string& text) {
  try {
    io::parse_problem_text(text, "in.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

void expect(const std::string& msg, std::vector<std::string> parts) {
  INFO("message: " << msg);
  CHECK(msg != "(no error)");
  for (const auto& p : parts) {
    INFO("expected to contain: " << p);
    CHECK(msg.find(p) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("a valid problem parses, with labels, weights, w_o and mask") {
  nlohmann::json j = base();
  j["mask"] = "causal";
  const io::Problem p = io::parse_problem(j);
  CHECK(p.n() == 2);
  CHECK(p.m() == 2);
  CHECK(p.d_model() == 3);
  CHECK(p.weights.heads.size() == 2);
  CHECK(p.weights.w_o.has_value());
  CHECK(p.mask_kind == io::MaskKind::Causal);
  CHECK((*p.mask)(0, 1) == 0);
  CHECK(p.tokens == std::vector<std::string>{"a", "b"});
  // Round trip through problem_to_json.
  const io::Problem q = io::parse_problem(io::problem_to_json(p));
  CHECK(q.x == p.x);
  CHECK(q.weights.heads[1].w_v == p.weights.heads[1].w_v);
  CHECK(q.mask_kind == io::MaskKind::Causal);
}

TEST_CASE("cross-attention problem: memory with its own length") {
  nlohmann::json j = base();
  j["memory"] = {{1, 1, 1}, {0, 0, 1}, {2, 0, 0}};
  j["memory_tokens"] = {"x", "y", "z"};
  j["mask"] = {{1, 1, 0}, {0, 1, 1}};
  const io::Problem p = io::parse_problem(j);
  CHECK(p.m() == 3);
  CHECK(p.mask_kind == io::MaskKind::Explicit);
  CHECK((*p.mask)(1, 0) == 0);
}

TEST_CASE("malformed JSON, empty input and overflowing numbers") {
  expect(error_of_text("{\"x\": [[1, 2]"), {"in.json", "malformed JSON", "line 1"});
  expect(error_of_text("   \n"), {"in.json", "is empty"});
  expect(error_of_text(R"({"x": [[1e400]]})"), {"in.json", "1e400"});
  expect(error_of_text(R"({"x": [[NaN]]})"), {"malformed JSON"});
  expect(error_of_text("[1, 2]"), {"JSON object"});
}

TEST_CASE("x: missing, empty, ragged, not numbers, non-finite") {
  nlohmann::json j = base();
  j.erase("x");
  expect(error_of(j), {"x: missing"});
  j = base();
  j["x"] = nlohmann::json::array();
  expect(error_of(j), {"x: is empty"});
  j["x"] = {{1, 0, 0}, {0, 1}};
  expect(error_of(j), {"x[1]", "has 2 numbers, expected 3"});
  j["x"] = {{1, 0, 0}, {0, "one", 0}};
  expect(error_of(j), {"x[1][1]", "expected a number", "\"one\""});
  j["x"] = {{1, 0, 0}, {0, 1e39, 0}};
  expect(error_of(j), {"x[1][1]", "not a finite float32"});
  j["x"] = "abc";
  expect(error_of(j), {"x:", "expected an array of rows", "n × d_model"});
  j["x"] = nlohmann::json::parse("[[]]");
  expect(error_of(j), {"x[0]", "empty row"});
}

TEST_CASE("heads: wrong shapes name the head, the matrix, expected and actual") {
  nlohmann::json j = base();
  j["heads"][1]["w_q"] = {{1, 0}, {0, 1}};  // 2 × 2 instead of 3 × 2
  expect(error_of(j), {"heads[1].w_q", "expected 3 × 2", "got 2 × 2"});
  j = base();
  j["heads"][1]["w_q"] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};  // d_k 3 where head 0 has 2
  j["heads"][1]["w_k"] = j["heads"][1]["w_q"];
  expect(error_of(j), {"heads[1].w_q", "expected 3 × 2", "got 3 × 3", "all heads must share d_k"});
  j = base();
  j["heads"][0]["w_k"] = {{1}, {0}, {0}};
  expect(error_of(j), {"heads[0].w_k", "expected 3 × 2", "got 3 × 1"});
  j = base();
  j["heads"][0].erase("w_v");
  expect(error_of(j), {"heads[0].w_v: missing"});
  j = base();
  j["heads"][0]["W_q"] = 1;
  expect(error_of(j), {"heads[0]", "unknown field \"W_q\""});
  j = base();
  j["heads"] = nlohmann::json::array();
  expect(error_of(j), {"heads: is empty"});
  j.erase("heads");
  expect(error_of(j), {"heads: missing"});
}

TEST_CASE("w_o of the wrong size") {
  nlohmann::json j = base();
  j["w_o"] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  expect(error_of(j), {"w_o", "expected 2 × 3", "h·d_v × d_model", "got 3 × 3"});
}

TEST_CASE("masks: unknown name, wrong shape, bad entries") {
  nlohmann::json j = base();
  j["mask"] = "diagonal";
  expect(error_of(j), {"mask", "unknown mask \"diagonal\"", "\"causal\""});
  j["mask"] = {{1, 0}};
  expect(error_of(j), {"mask", "expected 2 × 2", "got 1 rows"});
  j["mask"] = {{1, 0}, {1, 1, 1}};
  expect(error_of(j), {"mask", "expected 2 × 2", "mask[1] has 3 entries"});
  j["mask"] = {{1, 0}, {1, 2}};
  expect(error_of(j), {"mask[1][1]", "expected 0 or 1", "2"});
  j["mask"] = 5;
  expect(error_of(j), {"mask", "expected \"none\", \"causal\""});
}

TEST_CASE("memory and labels") {
  nlohmann::json j = base();
  j["memory"] = {{1, 1}};
  expect(error_of(j), {"memory", "expected m × 3", "got 1 × 2"});
  j = base();
  j["tokens"] = {"a"};
  expect(error_of(j), {"tokens", "has 1 label, expected 2"});
  j = base();
  j["memory_tokens"] = {"a", "b"};
  expect(error_of(j), {"memory_tokens", "no \"memory\""});
  j = base();
  j["tokens"] = {"a", 3};
  expect(error_of(j), {"tokens[1]", "expected a string"});
}

TEST_CASE("unknown top-level fields are rejected (typos would otherwise be silently ignored)") {
  nlohmann::json j = base();
  j["maks"] = "causal";
  expect(error_of(j), {"unknown field \"maks\"", "mask"});
}

TEST_CASE("size limits keep the problem small") {
  io::ProblemLimits lim;
  lim.max_tokens = 4;
  nlohmann::json j = base();
  j["x"] = nlohmann::json::array();
  for (int i = 0; i < 5; ++i) j["x"].push_back({1, 0, 0});
  try {
    io::parse_problem(j, lim);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("limit of 4") != std::string::npos);
  }
}

TEST_CASE("JSON output writes -inf as a string and floats compactly") {
  core::Matrix m = core::Matrix::from_shape({1, 3});
  m(0, 0) = 0.1f;
  m(0, 1) = -std::numeric_limits<float>::infinity();
  m(0, 2) = 2.0f;
  const std::string s = io::dump_json(io::matrix_to_json(m));
  CHECK(s.find("\"-inf\"") != std::string::npos);
  CHECK(s.find("0.1,") != std::string::npos);  // float32 shortest round-trip, not 0.10000000149011612
}

TEST_CASE("biases in the problem file") {
  nlohmann::json j = base();
  j["heads"][0]["b_q"] = {0.5, -0.5};
  j["heads"][1]["b_v"] = {1.0};
  j["b_o"] = {0, 1, 2};
  const io::Problem p = io::parse_problem(j);
  CHECK((*p.weights.heads[0].b_q)(0, 1) == -0.5f);
  CHECK(p.weights.b_o.has_value());
  CHECK(io::parse_problem(io::problem_to_json(p)).weights.heads[1].b_v.has_value());
  j["heads"][0]["b_k"] = {1, 2, 3};
  expect(error_of(j), {"heads[0].b_k", "expected 2 numbers", "got 3"});
  j = base();
  j.erase("w_o");
  j["b_o"] = {0, 1, 2};
  expect(error_of(j), {"b_o", "without \"w_o\""});
}

// Deep nesting is refused before parsing: nlohmann copies and compares values recursively, so a
// 100000-level value parsed fine but overflowed the stack when a run config was copied (ASan build).
TEST_CASE("parse_json_bounded refuses nesting beyond kMaxJsonDepth, counting only brackets outside strings") {
  const auto nested = [](int depth, const std::string& inner) {
    return std::string(depth, '[') + inner + std::string(depth, ']');
  };
  CHECK(io::parse_json_bounded(nested(io::kMaxJsonDepth, "1")).is_array());
  CHECK_THROWS_AS(io::parse_json_bounded(nested(io::kMaxJsonDepth + 1, "1")), nlohmann::json::parse_error);
  // Brackets inside strings, and escaped quotes there, are not nesting.
  const std::string brackets(10000, '[');
  CHECK(io::parse_json_bounded("{\"a\": \"" + brackets + "\\\"" + brackets + "\"}").is_object());
  // The message says what is wrong and where, after parse_json_text's usual prefix. The '{' is level 1,
  // so the 256th '[', at byte 6 + 256 = 262, opens level 257.
  try {
    io::parse_json_text("{\"x\": " + nested(100000, "0") + "}", "deep.json");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("deep.json: malformed JSON: parse error at byte 262: arrays and objects nested more than 256 levels deep") != std::string::npos);
  }
}
