// End-to-end tests of `attnlab lessons | lesson | tour`: golden text output per lesson, the JSON
// document's shapes, bad input (exit code 2 and the message), and the interactive mode driven
// through a pseudo-terminal.
//
// Regenerate the golden files after an intended change to a lesson or to the rendering:
//   ATTNLAB_UPDATE_GOLDEN=1 ctest --test-dir build -R lesson_golden
// (or scripts/update-golden.sh). Review the diff with `git diff tests/golden` before committing.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The environment every run gets: the source tree's data, a fixed width, no colour preference.
std::vector<std::string> base_env(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env{{"ATTNLAB_DATA_DIR", ATTNLAB_SOURCE_DIR},
                                         {"COLUMNS", "80"},
                                         {"PATH", "/usr/bin:/bin"},
                                         {"OPENBLAS_NUM_THREADS", "1"}};
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env)
    if (!v.empty()) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs attnlab with stdin from /dev/null and stdout/stderr captured to files.
Result run(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
  char out_path[] = "/tmp/attnlab_out_XXXXXX", err_path[] = "/tmp/attnlab_err_XXXXXX";
  const int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
  REQUIRE(out_fd >= 0);
  REQUIRE(err_fd >= 0);
  args.insert(args.begin(), ATTNLAB_BIN);
  std::vector<std::string> envs = base_env(env);
  auto argv = c_strings(args);
  auto envp = c_strings(envs);
  const pid_t pid = fork();
  if (pid == 0) {
    const int in = open("/dev/null", O_RDONLY);
    dup2(in, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execve(ATTNLAB_BIN, argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(out_fd);
  close(err_fd);
  Result r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  unlink(out_path);
  unlink(err_path);
  return r;
}

const char* kSlugs[] = {"01-words-to-vectors", "02-queries-keys-values", "03-scores-and-scaling",
                        "04-softmax",          "05-weighted-sum",        "06-masking",
                        "07-multi-head",       "08-cross-attention",     "09-whole-transformer",
                        "10-beyond"};

}  // namespace

// ---- golden text output ----------------------------------------------------------------

namespace {

// True when the shipped translation model is in the source tree (trained-mode tests need it).
bool have_model() {
  return std::ifstream(std::string(ATTNLAB_SOURCE_DIR) + "/data/models/translate-wide/model.ckpt").good();
}

// Two printed lines that differ only in the last digit of some numbers, by one unit: the same
// numbers rounded on either side of a boundary. A build with other optimisation flags (the
// sanitized suite's -O2) sums the English language model's 256-wide rows in another order, and
// -0.6045 printed as -0.605 in one and -0.604 in the other. Any other difference is a difference.
// A number may sit in brackets or before punctuation ("(0.9214);"), which must then match exactly.
bool same_but_last_digit(const std::string& a, const std::string& b) {
  std::istringstream ia(a), ib(b);
  std::string ta, tb;
  bool any = false;
  auto unwrap = [](std::string& t, std::string& around) {
    const std::size_t lead = std::min(t.find_first_not_of("(["), t.size());
    const std::size_t end = t.find_last_not_of(")];,:%");
    const std::size_t trail = end == std::string::npos ? 0 : t.size() - end - 1;
    around = t.substr(0, lead) + "|" + t.substr(t.size() - trail);
    t = lead + trail < t.size() ? t.substr(lead, t.size() - lead - trail) : "";
  };
  while (true) {
    const bool ga = static_cast<bool>(ia >> ta), gb = static_cast<bool>(ib >> tb);
    if (ga != gb) return false;
    if (!ga) break;
    if (ta == tb) continue;
    std::string around_a, around_b;
    unwrap(ta, around_a);
    unwrap(tb, around_b);
    if (around_a != around_b || ta.empty()) return false;
    const auto da = ta.find('.'), db = tb.find('.');
    if (da == std::string::npos || db == std::string::npos || ta.size() - da != tb.size() - db) return false;
    char* ea = nullptr;
    char* eb = nullptr;
    const double va = std::strtod(ta.c_str(), &ea), vb = std::strtod(tb.c_str(), &eb);
    if (*ea != '\0' || *eb != '\0') return false;
    const double ulp = std::pow(10.0, -static_cast<double>(ta.size() - da - 1));
    if (std::abs(va - vb) > ulp * 1.001) return false;
    any = true;
  }
  return any && a.size() == b.size();
}

// Runs every lesson with `extra` arguments and compares with tests/golden/<dir><slug>.txt.
void check_goldens(const std::string& dir, const std::vector<std::string>& extra) {
  const bool update = std::getenv("ATTNLAB_UPDATE_GOLDEN") && *std::getenv("ATTNLAB_UPDATE_GOLDEN") == '1';
  for (int n = 1; n <= 10; ++n) {
    CAPTURE(n);
    std::vector<std::string> args{"lesson", std::to_string(n), "--no-pause", "--no-color"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = run(args, {{"NO_COLOR", "1"}});
    REQUIRE(r.rc == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find('\x1b') == std::string::npos);
    if (n != 4 && n != 6) CHECK(r.out.find("nan") == std::string::npos);  // only lessons 4 and 6 show a naive NaN
    const std::string path = std::string(ATTNLAB_SOURCE_DIR) + "/tests/golden/" + dir + kSlugs[n - 1] + ".txt";
    if (update) {
      std::ofstream(path, std::ios::binary) << r.out;
      MESSAGE("updated " << path);
      continue;
    }
    const std::string want = slurp(path);
    REQUIRE_MESSAGE(!want.empty(), "missing " << path << "; run ATTNLAB_UPDATE_GOLDEN=1 ctest --test-dir build -R lesson_golden");
    if (r.out != want) {
      // Point at the first differing line rather than dumping both outputs.
      std::istringstream a(r.out), b(want);
      std::string la, lb;
      int line = 0;
      while (true) {
        ++line;
        const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
        if (!ga && !gb) break;
        if ((la != lb && !same_but_last_digit(la, lb)) || ga != gb) {
          FAIL_CHECK(path << ":" << line << " differs\n  got:  " << la << "\n  want: " << lb
                          << "\n(after an intended change: ATTNLAB_UPDATE_GOLDEN=1 ctest --test-dir build -R lesson_golden)");
          break;
        }
      }
    }
  }
}

}  // namespace

// Output with its wrapped lines joined again (a newline and the indent after it read as one space), for
// finding a sentence that the terminal width may have wrapped.
std::string one_line(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    out += ' ';
  }
  return out;
}

TEST_CASE("golden comparison: numbers may differ by one unit of their last digit, nothing else may") {
  CHECK(same_but_last_digit("loss -0.605 here", "loss -0.604 here"));
  // The sanitized build printed lesson 9's P(<eos>) as 0.9214 where the release build prints 0.9213.
  CHECK(same_but_last_digit("most likely: <eos> (0.9214); gets 0.9214", "most likely: <eos> (0.9213); gets 0.9213"));
  CHECK_FALSE(same_but_last_digit("(0.9214);", "[0.9213];"));
  CHECK_FALSE(same_but_last_digit("(0.9214);", "(0.9213),"));
  CHECK_FALSE(same_but_last_digit("0.9214", "0.9216"));
  CHECK_FALSE(same_but_last_digit("0.92", "0.9213"));
  CHECK_FALSE(same_but_last_digit("cat", "cap"));
  CHECK_FALSE(same_but_last_digit("();", "();"));  // equal lines never reach here; no number: not "the same but a digit"
}

TEST_CASE("golden: every lesson's text output with random weights (--random, seed 42, no colour, 80 columns)") {
  check_goldens("", {"--random", "--seed", "42"});
}

TEST_CASE("golden: every lesson's text output on the shipped trained models (no colour, 80 columns)") {
  if (!have_model()) {
    ATTNLAB_SKIP("data/models/translate-wide/model.ckpt is not in the source tree");
  }
  check_goldens("trained/", {});
}

// ---- JSON -------------------------------------------------------------------------------

namespace {

// Every matrix: rows × cols consistent with data and labels; only numbers, except "-inf" where a
// mask hides a key and "nan"/"inf" in matrices flagged as broken demonstrations. Weight matrices
// have rows that sum to 1 (or 0 for a fully masked row).
int check_lesson_json(const nlohmann::json& lesson) {
  int matrices = 0;
  REQUIRE(lesson.contains("steps"));
  CHECK(lesson["settings"]["d_model"].get<int>() > 0);
  for (const auto& step : lesson["steps"]) {
    REQUIRE(step.contains("title"));
    for (const auto& block : step["blocks"]) {
      const std::string type = block["type"];
      if (type == "text") continue;
      REQUIRE(type == "show");
      for (const auto& m : block["matrices"]) {
        ++matrices;
        CAPTURE(block["name"].get<std::string>());
        CAPTURE(m["key"].get<std::string>());
        const std::size_t r = m["rows"], c = m["cols"];
        REQUIRE(m["data"].size() == r);
        CHECK(m["row_labels"].size() == r);
        CHECK(m["col_labels"].size() == c);
        const bool broken = m.value("broken_demo", false);
        for (const auto& row : m["data"]) {
          REQUIRE(row.size() == c);
          double sum = 0.0;
          for (const auto& v : row) {
            if (v.is_number()) {
              sum += v.get<double>();
              CHECK(std::isfinite(v.get<double>()));
            } else {
              REQUIRE(v.is_string());
              const std::string s = v;
              CHECK((s == "-inf" || (broken && (s == "nan" || s == "inf"))));
            }
          }
          if (m.value("kind", "") == "weights") CHECK((std::fabs(sum - 1.0) < 1e-3 || sum == 0.0));
        }
      }
    }
  }
  return matrices;
}

}  // namespace

TEST_CASE("json: each lesson and the tour are one document with consistent shapes") {
  for (const bool random : {true, false}) {
    if (!random && !have_model()) {
      MESSAGE("skipped the trained-model JSON: data/models/translate-wide/model.ckpt is not in the source tree");
      continue;
    }
    for (int n = 1; n <= 10; ++n) {
      CAPTURE(random);
      CAPTURE(n);
      std::vector<std::string> args{"lesson", std::to_string(n), "--format", "json"};
      if (random) args.push_back("--random");
      const Result r = run(args);
      REQUIRE(r.rc == 0);
      const auto j = nlohmann::json::parse(r.out);
      REQUIRE(j["lessons"].size() == 1);
      CHECK(j["lessons"][0]["number"] == n);
      CHECK(j["lessons"][0]["settings"]["trained"] == !random);
      CHECK(check_lesson_json(j["lessons"][0]) > 0);
    }
  }
  if (have_model()) {
    const Result t = run({"tour", "--format", "json"});
    REQUIRE(t.rc == 0);
    const auto j = nlohmann::json::parse(t.out);
    REQUIRE(j["lessons"].size() == 10);
    for (const auto& l : j["lessons"]) {
      CHECK(l["settings"]["d_model"] == 256);
      check_lesson_json(l);
    }
  }
  const Result t = run({"tour", "--format", "json", "--heads", "4", "--d-model", "16", "--seed", "7"});
  REQUIRE(t.rc == 0);
  const auto j = nlohmann::json::parse(t.out);
  REQUIRE(j["lessons"].size() == 10);
  for (const auto& l : j["lessons"]) {
    CHECK(l["settings"]["sentence"] == "The boy trains the puppy.");
    CHECK(l["settings"]["heads"] == 4);
    check_lesson_json(l);
  }
}

TEST_CASE("json: the numbers agree with the structure they describe") {
  for (const char* mode : {"--random", "--no-pause"}) {
  CAPTURE(mode);
  const Result r = run({"lesson", "6", "--format", "json", mode});
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> by_key;
  for (const auto& step : j["lessons"][0]["steps"])
    for (const auto& b : step["blocks"])
      if (b["type"] == "show")
        for (const auto& m : b["matrices"]) by_key.emplace(m["key"].get<std::string>(), m);
  // Causal weights: zero above the diagonal.
  const auto& w = by_key.at("weights")["data"];
  for (std::size_t i = 0; i < w.size(); ++i)
    for (std::size_t k = i + 1; k < w[i].size(); ++k) CHECK(w[i][k].get<double>() == 0.0);
  // The padded sentence's padding rows are fully masked: all zeros.
  const auto& w1 = by_key.at("weights_1")["data"];
  for (const auto& v : w1[w1.size() - 1]) CHECK(v.get<double>() == 0.0);
  }
}

TEST_CASE("lesson 9's word-sense step: the trained encoder moves the two senses of \"trains\" apart more than the same sense") {
  const Result r = run({"lesson", "9", "--format", "json", "--no-pause"});
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  nlohmann::json values;
  for (const auto& step : j["lessons"][0]["steps"])
    for (const auto& b : step["blocks"])
      if (b["type"] == "show" && b["name"] == "word-sense") values = b["values"];
  REQUIRE(values.is_object());
  CHECK(values["translation_0"].get<std::string>().find("entraîne") != std::string::npos);
  CHECK(values["translation_2"].get<std::string>().find("les trains") != std::string::npos);
  const auto same = values["similarity_same_sense"], diff = values["similarity_different_sense"];
  CHECK(diff[0].get<double>() - diff[1].get<double>() > same[0].get<double>() - same[1].get<double>());
  CHECK(diff[1].get<double>() < same[1].get<double>());
  // With random weights the step shows its text only.
  const Result rr = run({"lesson", "9", "--random", "--no-pause", "--no-color"});
  REQUIRE(rr.rc == 0);
  CHECK(rr.out.find("This step needs the trained model") != std::string::npos);
}

TEST_CASE("lesson 1 opens with why attention: path lengths of a recurrent network against self-attention") {
  const Result r = run({"lesson", "1", "--format", "json", "--no-pause"});
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& steps = j["lessons"][0]["steps"];
  CHECK(steps[0]["title"] == "Why attention?");
  nlohmann::json values, tokens;
  for (const auto& step : steps)
    for (const auto& b : step["blocks"])
      if (b["type"] == "show") {
        if (b["name"] == "why-attention") values = b["values"];
        if (b["name"] == "tokens") tokens = b["values"]["tokens"];
      }
  REQUIRE(tokens.is_array());
  CHECK(values["rnn_longest_path"] == tokens.size() - 1);
  CHECK(values["attention_longest_path"] == 1);
}

TEST_CASE("lesson 5 sets the explainers' \"I love you\" row beside every trained head's") {
  const Result r = run({"lesson", "5", "--format", "json", "--no-pause"});
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  nlohmann::json rows, range;
  for (const auto& step : j["lessons"][0]["steps"])
    for (const auto& b : step["blocks"])
      if (b["type"] == "show" && b["name"] == "percentages") {
        range = b["values"]["focus_self_weight_range"];
        for (const auto& m : b["matrices"])
          if (m["key"] == "focus_row_all_heads") rows = m["data"];
      }
  REQUIRE(rows.size() == 12);  // 3 encoder layers × 4 heads of translate-wide
  for (const auto& row : rows) {
    double sum = 0;
    for (const auto& v : row) sum += v.get<double>();
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-4));
  }
  CHECK(range[0].get<double>() <= range[1].get<double>());
}

TEST_CASE("lesson 7's one-token example: each head's weight is 1 and its output is its V row") {
  for (const char* mode : {"--random", "--no-pause"}) {
    CAPTURE(mode);
    const Result r = run({"lesson", "7", "--format", "json", mode});
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    nlohmann::json values;
    for (const auto& step : j["lessons"][0]["steps"])
      for (const auto& b : step["blocks"])
        if (b["type"] == "show" && b["name"] == "one-token-heads") values = b["values"];
    REQUIRE(values.is_object());
    for (const char* h : {"0", "1"}) {
      CHECK(values[std::string("head_") + h + "_weight"].get<double>() == 1.0);
      CHECK(values[std::string("head_") + h + "_output"] == values[std::string("head_") + h + "_v"]);
    }
    // X = [1, 2, 3, 4] times the course notes' W_V1 = [[1,0],[0,2],[1,1],[0,1]]: [1+3, 4+3+4], and W_V2
    // = [[0,1],[1,1],[0,2],[1,0]]: [2+4, 1+2+6]; the notes assume [0.5, 1.2] and [-0.4, 2.3].
    CHECK(values["head_0_v"] == nlohmann::json::array({4.0, 11.0}));
    CHECK(values["head_1_v"] == nlohmann::json::array({6.0, 9.0}));
    CHECK(values["notes_assumed_outputs"] == nlohmann::json::parse("[[0.5, 1.2], [-0.4, 2.3]]"));
  }
}

TEST_CASE("lesson 6 reads any English sentence with the English language model: no <unk>, no warning") {
  const Result r = run({"lesson", "6", "--no-pause", "--format", "json", "--sentence", "Supercalifragilistic zebras quietly arrived, didn't they?"});
  REQUIRE(r.rc == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  bool seen = false;
  int sentences = 0;  // the learner's sentence alone: none of the lesson's own is added to it
  for (const auto& step : j["lessons"][0]["steps"])
    for (const auto& b : step["blocks"])
      if (b["type"] == "show" && b["name"] == "causal") {
        for (const auto& m : b["matrices"]) {
          seen = true;
          for (const auto& l : m["row_labels"]) CHECK(l != "<unk>");
        }
        for (const auto& l : b["lines"]) sentences += l.get<std::string>().find("as the language model reads it") != std::string::npos;
      }
  CHECK(seen);
  CHECK(sentences == 1);
  CHECK(j["lessons"][0]["status"].get<std::string>().find("lm-english") != std::string::npos);
}

TEST_CASE("lesson 10 measures the trained model's heads and removes some: no last-layer cross-attention head is indispensable") {
  const Result r = run({"lesson", "10", "--format", "json", "--no-pause"});
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  nlohmann::json probes, ablation, relations;
  for (const auto& step : j["lessons"][0]["steps"])
    for (const auto& b : step["blocks"])
      if (b["type"] == "show") {
        if (b["name"] == "head-probes") probes = b;
        if (b["name"] == "head-ablation") ablation = b;
        if (b["name"] == "head-relations") relations = b;
      }
  REQUIRE(probes.is_object());
  REQUIRE(ablation.is_object());
  REQUIRE(relations.is_object());
  // Relations: 12 encoder heads and the uniform row; one head gives the noun "it" refers to well above
  // chance (lesson 9 shows it finds the subject), and enc.1.1 is the adjective → noun head
  // (docs/models.md, the texts of lessons 9 and 10).
  CHECK(relations["matrices"][0]["rows"] == 13);
  CHECK(relations["values"]["coref_best_mass"].get<double>() > relations["values"]["coref_chance"].get<double>() + 0.1);
  CHECK(relations["values"]["agreement_best_head"] == "enc.1.1");
  CHECK(probes["matrices"][0]["rows"] == 24);
  // No single head of the ablated ones is indispensable: the most one costs is under 5 points of exact
  // match ("a few sentences in a hundred", lesson 10's text).
  CHECK(ablation["values"]["exact_match_all_heads"].get<double>() > 0.9);
  CHECK(ablation["values"]["exact_match_worst_ablation"].get<double>() > ablation["values"]["exact_match_all_heads"].get<double>() - 0.05);
}

TEST_CASE("lesson 7's parameter table counts biases in every row or in none (the base row too)") {
  for (const char* mode : {"--random", "--no-pause"}) {
    CAPTURE(mode);
    const Result r = run({"lesson", "7", "--format", "json", mode});
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    nlohmann::json table;
    for (const auto& step : j["lessons"][0]["steps"])
      for (const auto& b : step["blocks"])
        if (b["type"] == "show")
          for (const auto& m : b["matrices"])
            if (m["key"] == "parameters") table = m["data"];
    REQUIRE(table.size() == 3);
    // total − (W_Q + W_K + W_V + W_O) is the biases: 4 × width (the lesson's d_model, 512 in the base model), or 0.
    const double width = j["lessons"][0]["settings"]["d_model"].get<double>();
    auto biases = [&](std::size_t row) {
      double w = 0;
      for (std::size_t k = 0; k < 4; ++k) w += table[row][k].get<double>();
      return table[row][4].get<double>() - w;
    };
    CHECK(biases(2) / 512 == doctest::Approx(biases(0) / width));
    CHECK(biases(1) == biases(0));
  }
}

TEST_CASE("trained model: the weights line, --random, --model, and flags that imply random weights") {
  if (!have_model()) {
    ATTNLAB_SKIP("data/models/translate-wide/model.ckpt is not in the source tree");
  }
  const Result t = run({"lesson", "2", "--no-pause"});
  CHECK(t.rc == 0);
  CHECK(t.out.find("Weights: trained model data/models/translate-wide (") != std::string::npos);
  CHECK(t.out.find("d_model = 256, h = 4") != std::string::npos);
  CHECK(t.out.find("X · W_Q + b_Q") != std::string::npos);
  const Result r = run({"lesson", "2", "--no-pause", "--random"});
  CHECK(r.out.find("Weights: seeded random (--seed 42; --random)") != std::string::npos);
  const Result d = run({"lesson", "3", "--no-pause", "--d-model", "16"});
  CHECK(d.rc == 0);
  std::string flat = d.out;  // the status lines are wrapped to the width
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  CHECK(flat.find("--d-model given, and a trained model fixes d_model and h") != std::string::npos);
  CHECK(d.out.find("d_model = 16") != std::string::npos);
  const std::string dir = std::string(ATTNLAB_SOURCE_DIR) + "/data/models/translate-small";
  const Result m = run({"lesson", "1", "--no-pause", "--model", dir});
  CHECK(m.rc == 0);
  CHECK(m.out.find("Weights: trained model " + dir) != std::string::npos);
  // A word-level model reads an unknown word as <unk>; the default BPE model reads its pieces and
  // says the word lies outside what it learned. One line each.
  const Result u = run({"lesson", "1", "--no-pause", "--model", dir, "--sentence", "The zorblax sees the dog."});
  CHECK(u.rc == 0);
  CHECK(u.err.find("not in the vocabulary of " + dir + ", read as <unk>: \"zorblax\"") != std::string::npos);
  CHECK(std::count(u.err.begin(), u.err.end(), '\n') == 1);
  const Result b = run({"lesson", "1", "--no-pause", "--sentence", "The zorblax sees the dog."});
  CHECK(b.rc == 0);
  CHECK(b.err.find("outside what data/models/translate-wide learned: \"zorblax\" never occurred") != std::string::npos);
  CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);
  CHECK(b.out.find("A rare word is split, never <unk>") != std::string::npos);
}

TEST_CASE("lessons 8 and 9 with --sentence but no --target use the model's own translation, and say so") {
  if (!have_model()) {
    ATTNLAB_SKIP("data/models/translate-wide/model.ckpt is not in the source tree");
  }
  // Before: the default target "Le garçon entraîne le chiot." was silently paired with any sentence.
  for (const char* lesson : {"8", "9"}) {
    CAPTURE(lesson);
    const Result r = run({"lesson", lesson, "--no-pause", "--sentence", "The cat sees the small dog."});
    CHECK(r.rc == 0);
    CHECK(one_line(r.out).find("Target: \"Le chat voit le petit chien.\", the model's own translation of your sentence") !=
          std::string::npos);
    // The decoder reads the translation (the prose may still mention the default pair by name).
    if (std::string(lesson) == "8") {
      CHECK(r.out.find("Decoder (queries): <bos> Le chat voit le petit chien .") != std::string::npos);
    } else {
      CHECK(r.out.find("      <bos>    Le  chat  voit    le petit chien     .") != std::string::npos);
    }
    CHECK(r.out.find("<bos> Le garçon") == std::string::npos);
  }
  // An explicit --target is used as given.
  const Result t = run({"lesson", "8", "--no-pause", "--sentence", "The cat sees the small dog.", "--target",
                        "Le chat voit le chien."});
  CHECK(t.rc == 0);
  CHECK(t.out.find("the model's own translation") == std::string::npos);
  // Random weights have no translation to offer: --target is required, said in one line.
  const Result u = run({"lesson", "8", "--no-pause", "--random", "--sentence", "The cat sees the small dog."});
  CHECK(u.rc == 2);
  CHECK(u.err.find("attnlab: error: --target:") != std::string::npos);
}

TEST_CASE("a lesson ends by pointing at its exercises") {
  const Result r = run({"lesson", "4", "--no-pause", "--random"});
  CHECK(r.rc == 0);
  CHECK(r.out.find("Your turn.") != std::string::npos);
  CHECK(r.out.find("`attnlab check softmax`: Stable softmax over each row") != std::string::npos);
  const Result six = run({"lesson", "6", "--no-pause", "--random"});
  CHECK(six.out.find("attnlab check causal-mask") != std::string::npos);
  CHECK(six.out.find("attnlab check padding-mask") != std::string::npos);
}

TEST_CASE("--weights: a problem file's heads drive the lesson") {
  const std::string file = std::string(ATTNLAB_SOURCE_DIR) + "/data/examples/one_token_two_heads.json";
  const Result r = run({"lesson", "7", "--weights", file, "--format", "json"});
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["lessons"][0]["settings"]["d_model"] == 4);
  CHECK(j["lessons"][0]["settings"]["heads"] == 2);
  CHECK(j["lessons"][0]["settings"]["weights"] == file);
}

// ---- bad input --------------------------------------------------------------------------

TEST_CASE("bad input: exit code 2 and a message that says what is wrong") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string bad_json = std::string(ATTNLAB_SOURCE_DIR) + "/data/vocab.txt";
  const std::string no_wo = std::string(ATTNLAB_SOURCE_DIR) + "/data/examples/causal_four_tokens.json";
  std::string thirty_three;
  for (int i = 0; i < 33; ++i) thirty_three += "cat ";
  const std::vector<Case> cases = {
      {{"lesson", "3", "--sentence", ""}, "the sentence is empty"},
      {{"lesson", "3", "--sentence", " . "}, ""},  // punctuation alone is a token: runs (checked below)
      {{"lesson", "3", "--sentence", thirty_three}, "more than the limit of 32"},
      {{"lesson", "3", "--random", "--sentence", thirty_three}, "has 33 tokens (words and punctuation), more than the limit of 32"},
      {{"lesson", "3", "--heads", "3"}, "--heads 3 does not divide --d-model 8"},
      {{"lesson", "3", "--heads", "4", "--d-model", "6"}, "--heads 4 does not divide --d-model 6"},
      {{"lesson", "12"}, "unknown lesson '12'"},
      {{"lesson", "nonsense"}, "unknown lesson 'nonsense'"},
      {{"lesson", "3", "--weights", bad_json}, "malformed JSON"},
      {{"lesson", "3", "--weights", "/nonexistent.json"}, "File does not exist"},
      {{"lesson", "3", "--weights", no_wo, "--heads", "2"}, "disagrees with --weights"},
      {{"lesson", "9", "--weights", no_wo, "--no-pause"}, "needs an output of width d_model"},
      {{"lesson", "3", "--d-model", "4096"}, "out of range"},
      {{"lesson", "3", "--format", "xml"}, "format"},
      {{"tour", "--target", "   "}, "--target: the sentence is empty"},
      {{"lesson", "3", "--model", "/nonexistent/model-folder"}, "no such folder or file"},
      {{"lesson", "3", "--random", "--sentence", ""}, "the sentence is empty"},
  };
  for (const Case& c : cases) {
    if (c.message.empty()) continue;
    CAPTURE(c.args[c.args.size() - 1]);
    CAPTURE(c.message);
    const Result r = run(c.args);
    CHECK(r.rc == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.err.find("internal error") == std::string::npos);
  }
  const Result ok = run({"lesson", "3", "--sentence", " . ", "--no-pause"});
  CHECK(ok.rc == 0);
}

TEST_CASE("unknown words: <unk> with one warning naming them, and the lesson goes on") {
  const Result r = run({"lesson", "2", "--sentence", "The zorblax sat on the flurg", "--no-pause", "--random"});
  CHECK(r.rc == 0);
  CHECK(r.err.find("warning") != std::string::npos);
  CHECK(r.err.find("\"zorblax\", \"flurg\"") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.find("<unk>") != std::string::npos);
}

TEST_CASE("--help on every lesson command; the list names all ten lessons") {
  for (const char* cmd : {"lessons", "lesson", "tour"}) {
    CAPTURE(cmd);
    const Result r = run({cmd, "--help"});
    CHECK(r.rc == 0);
    CHECK(r.out.find("Usage") != std::string::npos);
  }
  const Result h = run({"lesson", "--help"});
  for (const char* opt : {"--sentence", "--target", "--heads", "--d-model", "--seed", "--weights", "--format", "--no-color",
                          "--full", "--no-pause", "--random", "--model"})
    CHECK_MESSAGE(h.out.find(opt) != std::string::npos, opt);
  const Result l = run({"lessons"});
  CHECK(l.rc == 0);
  for (const char* s : kSlugs) CHECK(l.out.find(std::string(s).substr(3)) != std::string::npos);
}

TEST_CASE("not a terminal: no pause and no escape codes even without --no-pause") {
  const Result r = run({"lesson", "3"});
  CHECK(r.rc == 0);
  CHECK(r.out.find("Step 4/4") != std::string::npos);
  CHECK(r.out.find("[q] quit") == std::string::npos);
  CHECK(r.out.find('\x1b') == std::string::npos);
}

TEST_CASE("--full shows every column; the default abbreviates with an ellipsis column") {
  const Result narrow = run({"lesson", "9", "--no-pause"}, {{"COLUMNS", "60"}});
  const Result full = run({"lesson", "9", "--no-pause", "--full"}, {{"COLUMNS", "60"}});
  CHECK(narrow.out.find("of 256 columns; --full shows all") != std::string::npos);
  CHECK(full.out.find("abbreviated") == std::string::npos);
}

namespace {
// Code points of a UTF-8 line without escape codes (the lesson text has no wide characters).
std::size_t attnlab_display_width(const std::string& line) {
  std::size_t w = 0;
  for (unsigned char c : line) w += (c & 0xC0) != 0x80;
  return w;
}
}  // namespace

TEST_CASE("lesson prose is wrapped to the terminal width (at most 100 columns)") {
  // Issue "What a learner hit", 6: the Markdown's own line breaks (about 100 columns, some longer) were
  // printed as they are, ragged and too wide at 80 columns.
  for (const char* cols : {"60", "80", "200"}) {
    CAPTURE(cols);
    const Result r = run({"lesson", "1", "--no-pause"}, {{"COLUMNS", cols}});
    const std::size_t width = std::min<std::size_t>(std::stoul(cols), 100);
    const auto start = r.out.find("Attention works on numbers");
    REQUIRE(start != std::string::npos);
    const auto end = r.out.find("recurrent network: steps", start);  // the prose of step 1 ends there
    REQUIRE(end != std::string::npos);
    std::istringstream in(r.out.substr(start, end - start));
    std::string line;
    std::size_t longest = 0;
    while (std::getline(in, line))
      if (line.rfind("  position", 0) != 0 && line.rfind("──", 0) != 0) longest = std::max(longest, attnlab_display_width(line));
    CHECK(longest <= width);
    CHECK(longest + 12 > width);  // and filled, not broken early
  }
}

TEST_CASE("abbreviated attention keeps the words a step is about: lesson 9's il/elle columns at 80 columns, lesson 2's 256-row weights") {
  // Issue "What a learner hit", 4 and 7: at 80 columns the cross-attention table used to keep the
  // first columns and drop "street" and "tired/wide", which decide il/elle.
  const Result r = run({"lesson", "9", "--no-pause"}, {{"COLUMNS", "80"}});
  const auto at = r.out.find("cross-attention while writing il/elle");
  REQUIRE(at != std::string::npos);
  // The column header is the line after the (wrapped) title, which ends with the abbreviation note.
  const auto title_end = r.out.find('\n', r.out.find("--full shows all)", at));
  const std::string header = r.out.substr(title_end + 1, r.out.find('\n', title_end + 1) - title_end - 1);
  INFO(header);
  for (const char* word : {"animal", "street", "it", "tired/wide"}) CHECK(header.find(word) != std::string::npos);
  const Result two = run({"lesson", "2", "--no-pause"}, {{"COLUMNS", "80"}});
  CHECK(one_line(two.out).find("rows left out; --full shows all") != std::string::npos);
  CHECK(two.out.find("⋮") != std::string::npos);
  const Result two_full = run({"lesson", "2", "--no-pause", "--full"}, {{"COLUMNS", "80"}});
  CHECK(two_full.out.find("⋮") == std::string::npos);
  CHECK(one_line(two.out).find("(256 × 64, abbreviated: 10 of 64 columns, 233 rows left out; --full shows all)") != std::string::npos);
  CHECK(two_full.out.find("rows left out") == std::string::npos);
}

// ---- the interactive mode, through a pseudo-terminal -------------------------------------

namespace {

struct Pty {
  int fd = -1;
  pid_t pid = -1;
  std::string seen;

  // Reads until `needle` has appeared `count` times in total, or the child closes the terminal,
  // or 10 s pass. Returns whether it appeared.
  bool wait_for(const std::string& needle, std::size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (true) {
      std::size_t found = 0;
      for (std::size_t p = seen.find(needle); p != std::string::npos; p = seen.find(needle, p + 1)) ++found;
      if (found >= count) return true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) return false;  // EIO: the child closed the terminal
      seen.append(buf, static_cast<std::size_t>(n));
    }
  }

  void drain() {
    char buf[4096];
    while (true) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 5000) <= 0) break;
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      seen.append(buf, static_cast<std::size_t>(n));
    }
  }

  int finish() {
    drain();
    int status = 0;
    waitpid(pid, &status, 0);
    close(fd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

Pty spawn_on_pty(std::vector<std::string> args, const std::map<std::string, std::string>& env) {
  Pty p;
  winsize ws{};
  ws.ws_row = 50;
  ws.ws_col = 100;
  args.insert(args.begin(), ATTNLAB_BIN);
  std::vector<std::string> envs = base_env(env);
  auto argv = c_strings(args);
  auto envp = c_strings(envs);
  p.pid = forkpty(&p.fd, nullptr, nullptr, &ws);
  REQUIRE(p.pid >= 0);
  if (p.pid == 0) {
    execve(ATTNLAB_BIN, argv.data(), envp.data());
    _exit(127);
  }
  return p;
}

}  // namespace

TEST_CASE("interactive: Enter goes to the next step, q quits (colour on a terminal)") {
  Pty p = spawn_on_pty({"lesson", "3"}, {{"TERM", "xterm-256color"}, {"COLUMNS", ""}});
  REQUIRE(p.wait_for("[q] quit", 1));
  CHECK(p.seen.find("Step 1/4") != std::string::npos);
  CHECK(p.seen.find("Step 2/4") == std::string::npos);  // waits for the key
  REQUIRE(write(p.fd, "\r", 1) == 1);
  REQUIRE(p.wait_for("[q] quit", 2));
  CHECK(p.seen.find("Step 2/4") != std::string::npos);
  REQUIRE(write(p.fd, "q", 1) == 1);
  CHECK(p.finish() == 0);
  CHECK(p.seen.find("Step 3/4") == std::string::npos);
  CHECK(p.seen.find("\x1b[") != std::string::npos);  // a colour terminal gets colour
}

TEST_CASE("interactive: NO_COLOR and --no-color on a terminal give plain text") {
  for (const bool flag : {false, true}) {
    CAPTURE(flag);
    std::vector<std::string> args{"lesson", "5"};
    if (flag) args.push_back("--no-color");
    Pty p = spawn_on_pty(args, {{"TERM", "xterm-256color"}, {"COLORTERM", "truecolor"}, {"NO_COLOR", flag ? "" : "1"}});
    REQUIRE(p.wait_for("[q] quit", 1));
    REQUIRE(write(p.fd, "\n", 1) == 1);
    REQUIRE(p.wait_for("[q] quit", 2));
    REQUIRE(write(p.fd, "q", 1) == 1);
    CHECK(p.finish() == 0);
    CHECK(p.seen.find('\x1b') == std::string::npos);
    CHECK(p.seen.find("Step 2/4") != std::string::npos);
  }
}

TEST_CASE("--no-pause on a terminal runs straight through") {
  Pty p = spawn_on_pty({"lesson", "4", "--no-pause"}, {{"TERM", "xterm-256color"}});
  CHECK(p.finish() == 0);
  CHECK(p.seen.find("Step 2/2") != std::string::npos);
  CHECK(p.seen.find("[q] quit") == std::string::npos);
}

// ---- the terminal after every way out of the prompt (round three's item 5) ---------------------

namespace {

// attnlab as a shell's foreground job on a pseudo-terminal: the pty's session leader plays the shell
// (a process group of its own for the job, the terminal handed to it and back), so that Ctrl-Z stops
// the job as it does at a real prompt (a session leader's own stop from the terminal is discarded: its
// process group is orphaned). The "shell" prints "[job stopped]" when the job stops and continues it
// on a line "fg"; when the job ends it exits with its status (128 + the signal when one ended it).
// Core dumps are off (Ctrl-\). `slave` stays open in the test so that the terminal's settings can
// be read after the job and its shell are gone (while the test still holds the master side).
struct Job {
  Pty pty;
  int slave = -1;
  bool cooked_at_end = false;

  // Like Pty::finish, reading the terminal's settings before the master side is closed.
  int finish();
};

Job spawn_job_on_pty(std::vector<std::string> args, const std::map<std::string, std::string>& env) {
  Job j;
  winsize ws{};
  ws.ws_row = 50;
  ws.ws_col = 100;
  args.insert(args.begin(), ATTNLAB_BIN);
  std::vector<std::string> envs = base_env(env);
  auto argv = c_strings(args);
  auto envp = c_strings(envs);
  j.pty.pid = forkpty(&j.pty.fd, nullptr, nullptr, &ws);
  REQUIRE(j.pty.pid >= 0);
  if (j.pty.pid == 0) {
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    for (int sig : {SIGINT, SIGQUIT, SIGTSTP, SIGTERM, SIGHUP, SIGCONT}) signal(sig, SIG_DFL);
    signal(SIGTTOU, SIG_IGN);  // the shell takes the terminal back from the background
    const pid_t job = fork();
    if (job == 0) {
      setpgid(0, 0);
      tcsetpgrp(STDIN_FILENO, getpid());
      signal(SIGTTOU, SIG_DFL);
      execve(ATTNLAB_BIN, argv.data(), envp.data());
      _exit(127);
    }
    setpgid(job, job);
    tcsetpgrp(STDIN_FILENO, job);
    while (true) {
      int status = 0;
      if (waitpid(job, &status, WUNTRACED) != job) _exit(126);
      if (WIFSTOPPED(status)) {
        tcsetpgrp(STDIN_FILENO, getpgrp());
        const char said[] = "[job stopped]\r\n";
        if (write(STDOUT_FILENO, said, sizeof said - 1) < 0) _exit(125);
        std::string line;
        char c = 0;
        while (line.find('\n') == std::string::npos && read(STDIN_FILENO, &c, 1) == 1) line.push_back(c);
        tcsetpgrp(STDIN_FILENO, job);
        kill(-job, SIGCONT);
        continue;
      }
      _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
  }
  j.slave = open(ptsname(j.pty.fd), O_RDWR | O_NOCTTY);
  REQUIRE(j.slave >= 0);
  return j;
}

// Whether the terminal is in line mode with echo (the state a shell expects).
bool cooked(int fd) {
  termios t{};
  REQUIRE(tcgetattr(fd, &t) == 0);
  return (t.c_lflag & ECHO) && (t.c_lflag & ICANON);
}

// Waits up to 10 s for the terminal to reach the state `want` (the job changes it after a signal).
bool becomes(int fd, bool want) {
  for (int i = 0; i < 200; ++i) {
    if (cooked(fd) == want) return true;
    usleep(50000);
  }
  return false;
}

int Job::finish() {
  pty.drain();
  int status = 0;
  waitpid(pty.pid, &status, 0);
  cooked_at_end = cooked(slave);
  close(slave);
  close(pty.fd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("interactive: Ctrl-C and Ctrl-\\ at the prompt end the lesson and leave the terminal with echo and line mode") {
  for (const auto& [key, sig] : {std::pair<char, int>{'\x03', SIGINT}, std::pair<char, int>{'\x1c', SIGQUIT}}) {
    CAPTURE(sig);
    Job j = spawn_job_on_pty({"lesson", "3"}, {{"TERM", "xterm-256color"}});
    REQUIRE(j.pty.wait_for("[q] quit", 1));
    REQUIRE(becomes(j.slave, false));  // the prompt reads one key, without echo
    REQUIRE(write(j.pty.fd, &key, 1) == 1);
    CHECK(j.finish() == 128 + sig);  // ended by the signal, as before
    CHECK(j.cooked_at_end);
  }
}

TEST_CASE("interactive: Ctrl-Z at the prompt gives the shell its terminal back; fg waits for the key again") {
  Job j = spawn_job_on_pty({"lesson", "3"}, {{"TERM", "xterm-256color"}});
  REQUIRE(j.pty.wait_for("[q] quit", 1));
  REQUIRE(becomes(j.slave, false));
  REQUIRE(write(j.pty.fd, "\x1a", 1) == 1);
  REQUIRE(j.pty.wait_for("[job stopped]", 1));
  CHECK(cooked(j.slave));  // what the shell gets while the lesson is stopped
  REQUIRE(write(j.pty.fd, "fg\n", 3) == 3);
  CHECK(becomes(j.slave, false));  // back at the prompt, one key without echo
  REQUIRE(write(j.pty.fd, "q", 1) == 1);
  CHECK(j.finish() == 0);
  CHECK(j.pty.seen.find("Step 2/4") == std::string::npos);
  CHECK(j.cooked_at_end);
}
