// End-to-end tests of the attnlab binary as a user runs it: exit codes, messages, output formats.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path temp_dir() {
  static fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "attnlab-cli-XXXXXX").string();
    return fs::path(::mkdtemp(tmpl.data()));
  }();
  return dir;
}

fs::path write_temp(const std::string& name, const std::string& content) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

// Runs attnlab with `args`, feeding `input` on stdin; stdout and stderr go to files (so a large output
// cannot deadlock a pipe). `env` entries are added to (or override) the environment; an entry without
// '=' (just a NAME) removes that variable.
Result run(const std::vector<std::string>& args, const std::string& input = "",
           const std::vector<std::string>& env = {}) {
  const fs::path in = write_temp("stdin.txt", input), out = temp_dir() / "stdout.txt", err = temp_dir() / "stderr.txt";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> argv_s{ATTNLAB_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    bool overridden = false;
    for (const auto& o : env) overridden = overridden || kv.substr(0, kv.find('=')) == o.substr(0, o.find('='));
    if (!overridden) env_s.push_back(kv);
  }
  for (const auto& o : env)
    if (o.find('=') != std::string::npos) env_s.push_back(o);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid;
  Result r;
  if (posix_spawn(&pid, ATTNLAB_BIN, &fa, nullptr, argv.data(), envp.data()) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    return r;
  }
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

const std::string kExamples = std::string(ATTNLAB_SOURCE_DIR) + "/data/examples/";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A bad input must give exit code 2, exactly one line on stderr naming the problem, nothing on stdout.
void expect_input_error(const Result& r, const std::vector<std::string>& parts) {
  INFO("stderr: " << r.err);
  INFO("stdout: " << r.out);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("attnlab: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  for (const auto& p : parts) {
    INFO("expected in stderr: " << p);
    CHECK(contains(r.err, p));
  }
}

// Problem text with one field replaced.
std::string problem(const std::string& field, const std::string& value) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "tokens": ["a", "b", "c"],
    "x": [[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]],
    "heads": [
      {"w_q": [[1, 0], [0, 1], [0, 0], [1, 1]], "w_k": [[1, 0], [0, 1], [0, 0], [1, 1]], "w_v": [[1, 0], [0, 1], [1, 1], [0, 0]]},
      {"w_q": [[0, 1], [1, 0], [0, 0], [1, 1]], "w_k": [[0, 1], [1, 0], [1, 1], [0, 0]], "w_v": [[0, 1], [1, 0], [0, 0], [1, 1]]}
    ],
    "w_o": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
    "mask": "causal"
  })");
  if (!field.empty()) {
    if (value.empty()) j.erase(field);
    else j[field] = nlohmann::json::parse(value);
  }
  return j.dump();
}

}  // namespace

TEST_CASE("--version and --help") {
  Result r = run({"--version"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, std::string("attnlab ") + "0."));
  r = run({"--help"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "attention"));
  r = run({"attention", "--help"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "--input"));
  CHECK(contains(r.out, "--format"));
  r = run({});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "attention"));
}

TEST_CASE("text output of the shipped examples: labelled, plain when not a terminal") {
  Result r = run({"attention", "--input", kExamples + "causal_four_tokens.json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "mask: causal"));
  CHECK(contains(r.out, "scores = Q · Kᵀ"));
  CHECK(contains(r.out, "-inf"));
  CHECK(contains(r.out, "effort"));
  CHECK(!contains(r.out, "\x1b"));
  CHECK(!contains(r.out, "nan"));
  r = run({"attention", "-i", kExamples + "one_token_two_heads.json", "--format", "text"});
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "head 1 of 2"));
  CHECK(contains(r.out, "output = concat · W_O"));
}

TEST_CASE("JSON output holds every intermediate with consistent shapes") {
  Result r = run({"attention", "--input", kExamples + "causal_four_tokens.json", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["shapes"]["n"] == 4);
  REQUIRE(j["heads"].size() == 1);
  const auto& h = j["heads"][0];
  for (const char* key : {"q", "k", "v", "scores", "scaled", "masked", "weights", "context"}) {
    INFO(key);
    CHECK(h.contains(key));
    CHECK(h[key].size() == 4);
  }
  CHECK(h["masked"][0][1] == "-inf");
  for (const auto& row : h["weights"]) {
    double sum = 0;
    for (const auto& v : row) sum += v.get<double>();
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
  }
  CHECK(h["weights"][0][1] == 0.0);
  CHECK(j.contains("concat"));
  CHECK(j.contains("output"));
  CHECK(!j.contains("fully_masked_rows"));

  // Without a mask there is no "masked" key; cross-attention gives n × m weights.
  r = run({"attention", "-i", "-", "-f", "json"},
          R"({"x": [[1, 0]], "memory": [[1, 0], [0, 1], [1, 1]], "heads": [{"w_q": [[1], [0]], "w_k": [[1], [0]], "w_v": [[1], [1]]}]})");
  REQUIRE(r.code == 0);
  const auto c = nlohmann::json::parse(r.out);
  CHECK(!c["heads"][0].contains("masked"));
  CHECK(c["heads"][0]["weights"].size() == 1);
  CHECK(c["heads"][0]["weights"][0].size() == 3);
  CHECK(c["cross_attention"] == true);
}

TEST_CASE("a fully masked row: zeros, reported, never NaN") {
  const std::string in = problem("mask", "[[1,1,0],[0,0,0],[1,1,1]]");
  Result r = run({"attention", "-i", "-", "-f", "json"}, in);
  REQUIRE(r.code == 0);
  CHECK(!contains(r.out, "NaN"));
  CHECK(!contains(r.out, "nan"));
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["fully_masked_rows"] == nlohmann::json::array({1}));
  for (const auto& v : j["heads"][0]["weights"][1]) CHECK(v == 0.0);
  r = run({"attention", "-i", "-"}, in);
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "fully masked row 1 (b)"));
  CHECK(!contains(r.out, "nan"));
}

TEST_CASE("labels name the biases given; a causal mask on cross-attention is pointed out") {
  nlohmann::json j = nlohmann::json::parse(problem("", ""));
  j["heads"][0]["b_q"] = {0.5, 0.5};
  j["heads"][0]["b_v"] = {1, 1};
  j["b_o"] = {0, 0, 0, 1};
  Result r = run({"attention", "-i", "-"}, j.dump());
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "Q = X · W_Q + b_Q"));
  CHECK(contains(r.out, "K = X · W_K  ("));  // no b_K given: no "+ b_K"
  CHECK(contains(r.out, "V = X · W_V + b_V"));
  CHECK(contains(r.out, "output = concat · W_O + b_O"));
  CHECK(!contains(r.out, "a causal mask on cross-attention"));
  // Without biases the plain labels.
  r = run({"attention", "-i", "-"}, problem("", ""));
  CHECK(contains(r.out, "Q = X · W_Q  ("));
  CHECK(contains(r.out, "output = concat · W_O  ("));
  // Cross-attention (memory) with "causal": computed, with a note saying it is unusual.
  j = nlohmann::json::parse(problem("", ""));
  j["memory"] = {{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}};
  r = run({"attention", "-i", "-"}, j.dump());
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "note: a causal mask on cross-attention"));
  // A fully masked row: the weights' title does not claim every row sums to 1.
  r = run({"attention", "-i", "-"}, problem("mask", "[[1,1,0],[0,0,0],[1,1,1]]"));
  CHECK(contains(r.out, "each row sums to 1, except fully masked rows"));
}

TEST_CASE("control characters in tokens, file names and sentences are shown, never sent to the terminal") {
  nlohmann::json j = nlohmann::json::parse(problem("", ""));
  j["tokens"][0] = "\x1b]0;PWNED\x07\x1b[2J";   // retitle the window, clear the screen
  j["tokens"][1] = std::string("b\0c\xc2\x9b", 5);  // NUL and a C1 control (CSI)
  Result r = run({"attention", "-i", "-"}, j.dump());
  REQUIRE(r.code == 0);
  auto raw_controls = [](const std::string& s) {
    for (const unsigned char c : s)
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return true;
    return s.find("\xc2\x9b") != std::string::npos;
  };
  CHECK(!raw_controls(r.out));
  CHECK(contains(r.out, "\\x1b]0;PWN"));
  CHECK(contains(r.out, "b\\x00c\\u009b"));
  // An error message that quotes the input.
  r = run({"attention", "-i", "/tmp/no\x1b[2Jfile"});
  CHECK(r.code == 2);
  CHECK(!raw_controls(r.err));
  CHECK(contains(r.err, "no\\x1b[2Jfile"));
}

TEST_CASE("paths with escapes and newlines are shown escaped in every message and every 'wrote' line") {
  // Round three's item 6: the raw escape reached the terminal in "wrote ...", and a newline in a path
  // split an error message in two.
  auto raw_controls = [](const std::string& s) {
    for (const unsigned char c : s)
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return true;
    return false;
  };
  const std::string name = "p\x1b[2Jq\nr.html";
  const fs::path page = temp_dir() / name;
  Result r = run({"translate", "The boy trains the puppy.", "--model", "data/models/translate-small", "--html", page.string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(fs::exists(page));
  CHECK(!raw_controls(r.out));
  CHECK(contains(r.out, "wrote " + (temp_dir() / "p\\x1b[2Jq\\x0ar.html").string()));
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);  // the translation and the one "wrote" line
  r = run({"attention", "-i", "no\nsuch"});
  CHECK(r.code == 2);
  CHECK(r.err == "attnlab: error: no\\x0asuch: cannot open (No such file or directory); check the path\n");
  const fs::path out = temp_dir() / "corpus\x1b]0;x\x07" "dir";
  r = run({"corpus", "--out", out.string(), "--train", "50", "--valid", "5", "--test", "5"});
  REQUIRE(r.code == 0);
  CHECK(!raw_controls(r.out));
  CHECK(contains(r.out, "corpus\\x1b]0;x\\x07dir/train.tsv"));
  // attend --svg, and train's "output:" and "model in" lines.
  const fs::path svg = temp_dir() / "s\x1b[1mv\ng.svg";
  r = run({"attend", "The boy trains the puppy.", "--model", "data/models/translate-small", "--svg", svg.string(), "--layer", "0",
           "--head", "0"});
  REQUIRE(r.code == 0);
  CHECK(!raw_controls(r.out));
  CHECK(contains(r.out, "wrote " + (temp_dir() / "s\\x1b[1mv\\x0ag.svg").string()));
  const fs::path run_dir = temp_dir() / "tr\x1b[2Jx\ny";
  fs::remove_all(run_dir);
  r = run({"train", "--config", std::string(ATTNLAB_SOURCE_DIR) + "/data/configs/tiny-test.json", "--out", run_dir.string(), "--steps", "2"});
  REQUIRE(r.code == 0);
  CHECK(!raw_controls(r.out));
  CHECK(!raw_controls(r.err.substr(0, r.err.find('\r'))));  // the progress bar redraws with \r; the lines before it
  CHECK(contains(r.err, "output: " + (temp_dir() / "tr\\x1b[2Jx\\x0ay").string()));
  CHECK(contains(r.out, "model in " + (temp_dir() / "tr\\x1b[2Jx\\x0ay").string() + "/model.ckpt"));
}

TEST_CASE("every number option of every command goes through the validators (src/cli/validators.hpp)") {
  // Round three's item 10: CLI::Range let "nan" through and read '' as "Value  not in range", and a
  // number without a check read "0x10" as 16. A checked option shows its validator in --help: "INT:INT
  // 1..64", "UINT:INT 0..100", "FLOAT:NUMBER 0..100" or "UINT:UINT64"; a bare INT, UINT or FLOAT, or
  // CLI::Range's "FLOAT:FLOAT in [0 - 100]", is one that is not.
  const Result top = run({"--help"});
  REQUIRE(top.code == 0);
  std::vector<std::string> commands;
  std::istringstream lines(top.out.substr(top.out.find("Subcommands:")));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ') commands.push_back(line.substr(2, line.find(' ', 2) - 2));
  REQUIRE(commands.size() >= 20);
  std::size_t numbers = 0;
  for (const std::string& c : commands) {
    CAPTURE(c);
    const Result help = run({c, "--help"});
    REQUIRE(help.code == 0);
    std::istringstream opts(help.out);
    for (std::string line; std::getline(opts, line);) {
      const auto dashes = line.find("--");
      if (line.rfind("  ", 0) != 0 || dashes == std::string::npos || dashes > 6) continue;
      const auto space = line.find(' ', dashes);
      if (space == std::string::npos) continue;
      const std::string type = line.substr(space + 1, line.find(' ', space + 1) - space - 1);
      const std::string kind = type.substr(0, type.find_first_of(":="));
      if (kind != "INT" && kind != "UINT" && kind != "FLOAT") continue;
      ++numbers;
      INFO(line);
      const auto colon = type.find(':');
      const std::string check = colon == std::string::npos ? "" : type.substr(colon + 1, type.find('=') - colon - 1);
      CHECK((check == "INT" || check == "NUMBER" || check == "UINT64"));
    }
  }
  CHECK(numbers >= 30);
  // The validators hand CLI11 the decimal number they checked: "010" is ten, not octal eight.
  const Result ten = run({"params", "--config", "transformer-base", "--seq", "010", "--format", "json"});
  REQUIRE(ten.code == 0);
  CHECK(nlohmann::json::parse(ten.out)["flops"]["seq"] == 10);
}

TEST_CASE("colour: on for a terminal only; NO_COLOR and --no-color respected") {
  // stdout is a file here, so there is never colour, whatever COLORTERM says.
  Result r = run({"attention", "-i", kExamples + "causal_four_tokens.json"}, "", {"COLORTERM=truecolor"});
  CHECK(!contains(r.out, "\x1b"));
}

TEST_CASE("bad input: exit code 2 and one message naming the field, expected and actual") {
  expect_input_error(run({"attention", "-i", "-"}, "{\"x\": [[1, 2]"), {"standard input", "malformed JSON"});
  expect_input_error(run({"attention", "-i", "-"}, problem("x", "[[1, 0, 0, 1], [0, 1, 0], [0, 0, 1, 1]]")),
                     {"x[1]", "has 3 numbers, expected 4"});
  expect_input_error(run({"attention", "-i", "-"}, problem("x", "[[1, 0, 0], [0, 1, 0], [0, 0, 1]]")),
                     {"heads[0].w_q", "expected 3 × 2", "got 4 × 2"});
  expect_input_error(
      run({"attention", "-i", "-"},
          problem("heads", R"([{"w_q": [[1, 0], [0, 1], [0, 0], [1, 1]], "w_k": [[1, 0], [0, 1], [0, 0], [1, 1]], "w_v": [[1], [0], [1], [0]]},
                               {"w_q": [[1], [0], [0], [1]], "w_k": [[1], [0], [0], [1]], "w_v": [[1], [0], [1], [0]]}])")),
      {"heads[1].w_q", "expected 4 × 2", "got 4 × 1", "all heads must share d_k"});
  expect_input_error(run({"attention", "-i", "-"}, problem("w_o", "[[1, 0, 0, 0], [0, 1, 0, 0]]")),
                     {"w_o", "expected 4 × 4", "got 2 × 4"});
  expect_input_error(run({"attention", "-i", "-"}, problem("mask", "[[1, 0], [1, 1]]")),
                     {"mask", "expected 3 × 3", "got 2 rows"});
  expect_input_error(run({"attention", "-i", "-"}, problem("x", "[[1, 0, 0, 1], [0, 1e39, 0, 1], [0, 0, 1, 1]]")),
                     {"x[1][1]", "not a finite float32"});
  {
    // 1e999 does not even fit a double; the test's own JSON library cannot build it, so patch the text.
    std::string text = problem("x", "[[1, 0, 0, 1], [0, 12345, 0, 1], [0, 0, 1, 1]]");
    text.replace(text.find("12345"), 5, "1e999");
    expect_input_error(run({"attention", "-i", "-"}, text), {"1e999"});
  }
  expect_input_error(run({"attention", "-i", "-"}, problem("x", "[]")), {"x: is empty"});
  expect_input_error(run({"attention", "-i", "-"}, problem("mask", "\"upper\"")), {"mask", "unknown mask \"upper\""});
  expect_input_error(run({"attention", "-i", "-"}, ""), {"standard input", "is empty"});
  // Scores that overflow float32 although every input is finite.
  expect_input_error(run({"attention", "-i", "-"},
                         R"({"x": [[1e30]], "heads": [{"w_q": [[1e30]], "w_k": [[1e30]], "w_v": [[1]]}]})"),
                     {"overflowed float32"});
}

TEST_CASE("missing and unreadable files, bad flags") {
  expect_input_error(run({"attention", "-i", "/nonexistent/problem.json"}), {"/nonexistent/problem.json", "cannot open"});
  expect_input_error(run({"attention", "-i", temp_dir().string()}), {"is a folder"});
  Result r = run({"attention", "-i", kExamples + "causal_four_tokens.json", "--format", "xml"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--format"));
  CHECK(contains(r.err, "xml"));
  r = run({"attention"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--input"));
  r = run({"attention", "-i", kExamples + "causal_four_tokens.json", "--precision", "99"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "precision"));
  r = run({"frobnicate"});
  CHECK(r.code == 2);
}

TEST_CASE("doctor reports the BLAS kernel, and attnlab restarts itself when OpenBLAS picked a generic one") {
  Result r = run({"doctor", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["blas"]["kernel"].is_string());
  CHECK(j["blas"]["threads"].get<int>() >= 1);
  CHECK(j["cuda"].contains("compiled"));
  CHECK(j["huge_pages"]["attnlab_asks"] == true);
  CHECK(j["huge_pages"]["kernel_mode"].is_string());
  const std::string best = j["blas"]["cpu_best_kernel"].get<std::string>();

  r = run({"doctor", "-f", "json"}, "", {"ATTNLAB_HUGE_PAGES=0"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["huge_pages"]["attnlab_asks"] == false);

  // A user's OPENBLAS_CORETYPE is respected, even a slow one.
  r = run({"doctor", "-f", "json"}, "", {"OPENBLAS_CORETYPE=Prescott"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["blas"]["kernel"] == "Prescott");

  if (best.empty()) return;  // a CPU without AVX2: nothing better to pick
  // Simulate OpenBLAS's mis-detection: attnlab must restart with the CPU's best kernel.
  // (Without the caller's own OPENBLAS_CORETYPE, which some machines set and attnlab rightly respects.)
  r = run({"doctor", "-f", "json"}, "", {"ATTNLAB_BLAS_PRETEND_DETECTED=Prescott", "OPENBLAS_CORETYPE"});
  REQUIRE(r.code == 0);
  const auto k = nlohmann::json::parse(r.out);
  CHECK(k["blas"]["kernel"] == best);
  CHECK(contains(k["blas"]["verdict"].get<std::string>(), "restarted itself"));
}

TEST_CASE("corpus: summary and samples without --out") {
  Result r = run({"corpus", "--train", "4000", "--valid", "50", "--test", "50", "--lm-train", "100", "--lm-valid", "10",
                  "--lm-test", "10"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* part : {"coref", "sense", "agreement", "plain", "total", "4000", "held-out keys", "vocabulary",
                           "focus: it →", "Use --out DIR"})
    CHECK(contains(r.out, part));
  CHECK(r.err.empty());
  // A tiny training split leaves valid/test words unseen: still a corpus, with a warning naming them.
  Result tiny = run({"corpus", "--train", "20", "--valid", "50", "--test", "50"});
  CHECK(tiny.code == 0);
  CHECK(contains(tiny.err, "attnlab: warning:"));
  CHECK(contains(tiny.err, "never occur in train"));
  // Same seed, same output.
  CHECK(run({"corpus", "--train", "4000", "--valid", "50", "--test", "50", "--lm-train", "100", "--lm-valid", "10",
             "--lm-test", "10"}).out == r.out);
}

TEST_CASE("corpus --out writes the splits, vocabularies and LM files; --format json summarises") {
  const fs::path dir = temp_dir() / "corpus-out" / "nested";
  Result r = run({"corpus", "--seed", "7", "--out", dir.string(), "--train", "500", "--valid", "60", "--test", "70",
                  "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["seed"] == 7);
  CHECK(j["splits"]["train"]["examples"] == 500);
  CHECK(j["splits"]["test"]["examples"] == 70);
  CHECK(j["files"].size() == 8);
  CHECK(!j.contains("samples"));
  for (const char* name : {"train.tsv", "valid.tsv", "test.tsv", "vocab.json", "lm_train.txt", "lm_valid.txt",
                           "lm_test.txt", "lm_vocab.json"}) {
    INFO(name);
    CHECK(fs::exists(dir / name));
  }
  const std::string test_tsv = slurp(dir / "test.tsv");
  CHECK(test_tsv.rfind("en\tfr\tcategory\tfocus_en\tfocus_fr\n", 0) == 0);
  CHECK(std::count(test_tsv.begin(), test_tsv.end(), '\n') == 71);
  const auto vocab = nlohmann::json::parse(slurp(dir / "vocab.json"));
  CHECK(vocab["format"] == "attnlab-vocab");
  CHECK(vocab["tokens"][0] == "<pad>");
  CHECK(vocab["tokens"].size() == j["vocab_size"]);
  const std::string train_tsv = slurp(dir / "train.tsv");
  CHECK(contains(train_tsv, "The animal didn't cross the street because it was too tired.\t"
                            "L'animal n'a pas traversé la rue parce qu'il était trop fatigué.\tcoref\tit\til\n"));
  CHECK(contains(slurp(dir / "lm_train.txt"), "Every effort moves you.\n"));
  // Without --out the JSON holds samples instead of files.
  r = run({"corpus", "--train", "200", "--valid", "20", "--test", "20", "--samples", "2", "-f", "json"});
  REQUIRE(r.code == 0);
  const auto s = nlohmann::json::parse(r.out);
  CHECK(s["samples"]["coref"].size() == 2);
  CHECK(!s.contains("files"));
}

TEST_CASE("corpus --out leaves the user's own folders beside DIR alone, and removes what a killed run left") {
  // The fourth adversarial pass: the leftover cleanup removed any unlocked .DIR.old-* / .DIR.new-*
  // folder, the user's ".data.old-2024" full of notes included.
  const fs::path parent = temp_dir() / "corpus-neighbours";
  fs::create_directories(parent / ".data.old-2024");
  fs::create_directories(parent / ".data.new-ideas");
  fs::create_directories(parent / ".data.old-abc123");  // a mkdtemp-like name, but holding the user's file
  std::ofstream(parent / ".data.old-2024" / "notes.txt") << "mine\n";
  std::ofstream(parent / ".data.new-ideas" / "plan.txt") << "mine\n";
  std::ofstream(parent / ".data.old-abc123" / "draft.txt") << "mine\n";
  fs::create_directories(parent / ".data.new-v2try1");  // a user's copy of an earlier corpus, named like a leftover
  std::ofstream(parent / ".data.new-v2try1" / "train.tsv") << "my copy\n";
  fs::create_directories(parent / ".data.new-Xy12Zq");  // what a killed run leaves: its own files and its marker
  std::ofstream(parent / ".data.new-Xy12Zq" / "train.tsv") << "partial\n";
  std::ofstream(parent / ".data.new-Xy12Zq" / ".attnlab-set-aside") << "";
  // Killed while write_file_atomic wrote one of its files: the half-written temporary beside the marker.
  fs::create_directories(parent / ".data.new-Ab34Cd");
  std::ofstream(parent / ".data.new-Ab34Cd" / ".train.tsv.tmp-Q1w2E3") << "half";
  std::ofstream(parent / ".data.new-Ab34Cd" / ".attnlab-set-aside") << "";
  fs::create_directories(parent / ".data.new-Ef56Gh");  // killed between mkdtemp and the marker: empty
  // A temporary-like name of a file that is not ours keeps its folder.
  fs::create_directories(parent / ".data.new-Ij78Kl");
  std::ofstream(parent / ".data.new-Ij78Kl" / ".notes.txt.tmp-Q1w2E3") << "mine\n";
  std::ofstream(parent / ".data.new-Ij78Kl" / ".attnlab-set-aside") << "";
  const Result r = run({"corpus", "--out", (parent / "data").string(), "--train", "50", "--valid", "5", "--test", "5"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(slurp(parent / ".data.old-2024" / "notes.txt") == "mine\n");
  CHECK(slurp(parent / ".data.new-ideas" / "plan.txt") == "mine\n");
  CHECK(slurp(parent / ".data.old-abc123" / "draft.txt") == "mine\n");
  CHECK(slurp(parent / ".data.new-v2try1" / "train.tsv") == "my copy\n");
  CHECK_FALSE(fs::exists(parent / ".data.new-Xy12Zq"));
  CHECK_FALSE(fs::exists(parent / ".data.new-Ab34Cd"));
  CHECK_FALSE(fs::exists(parent / ".data.new-Ef56Gh"));
  CHECK(slurp(parent / ".data.new-Ij78Kl" / ".notes.txt.tmp-Q1w2E3") == "mine\n");
  CHECK_FALSE(fs::exists(parent / "data" / ".attnlab-set-aside"));
}

TEST_CASE("corpus --out LINK/../data checks and replaces the same folder; a folder named like a corpus file is not one") {
  // The sixth adversarial pass: the contents check went through the link (the kernel's path), the swap
  // and removal through the text with "LINK/.." dropped, and removed a folder never checked.
  const fs::path root = temp_dir() / "corpus-link-dotdot";
  fs::remove_all(root);
  fs::create_directories(root / "far" / "sub");
  fs::create_directories(root / "proj" / "data");
  std::ofstream(root / "proj" / "data" / "thesis.txt") << "thesis draft\n";
  fs::create_directory_symlink("../far/sub", root / "proj" / "sub");
  const std::vector<std::string> sizes = {"--train", "50", "--valid", "5", "--test", "5"};
  std::vector<std::string> args = {"corpus", "--out", (root / "proj" / "sub" / ".." / "data").string()};
  args.insert(args.end(), sizes.begin(), sizes.end());
  Result r = run(args);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::exists(root / "far" / "data" / "train.tsv"));  // where the kernel's path leads
  CHECK(slurp(root / "proj" / "data" / "thesis.txt") == "thesis draft\n");
  // A folder named train.tsv holding the user's notes.
  fs::create_directories(root / "c2" / "train.tsv");
  std::ofstream(root / "c2" / "train.tsv" / "notes.txt") << "mine\n";
  args = {"corpus", "--out", (root / "c2").string()};
  args.insert(args.end(), sizes.begin(), sizes.end());
  expect_input_error(run(args), {"train.tsv", "not a plain file"});
  CHECK(slurp(root / "c2" / "train.tsv" / "notes.txt") == "mine\n");
}

TEST_CASE("corpus --out . and --out .. are refused: the folder is swapped away, and the shell would be left in a deleted one") {
  // Round three's item 8: exit 0, and the caller's shell in a folder that no longer existed.
  const fs::path here = temp_dir() / "corpus-here" / "inner";
  fs::remove_all(here.parent_path());
  fs::create_directories(here);
  const std::vector<std::string> sizes = {"--train", "50", "--valid", "5", "--test", "5"};
  for (const std::string& out : std::vector<std::string>{".", "..", here.string()}) {
    CAPTURE(out);
    std::vector<std::string> args = {"corpus", "--out", out};
    args.insert(args.end(), sizes.begin(), sizes.end());
    const fs::path before = fs::current_path();
    fs::current_path(here);
    const Result r = run(args);
    fs::current_path(before);
    expect_input_error(r, {"--out " + out + ":", out == ".." ? "holds the folder you are in" : "is the folder you are in"});
    CHECK(fs::is_directory(here));
    CHECK(fs::is_empty(here));
  }
}

TEST_CASE("corpus: bad flag values exit with code 2 and say why") {
  Result r = run({"corpus", "--train", "-1"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--train"));
  r = run({"corpus", "--test", "2000000"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--test"));
  r = run({"corpus", "--seed", "-3"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--seed: expected a whole number from 0 to 18446744073709551615, got '-3'"));
  r = run({"corpus", "--seed", "18446744073709551616"});
  CHECK(r.code == 2);
  r = run({"corpus", "--format", "xml"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "xml"));
  expect_input_error(run({"corpus", "--train", "5"}), {"train size 5 is too small", "lesson sentences"});
  const fs::path file = write_temp("not-a-dir", "x");
  expect_input_error(run({"corpus", "--out", file.string()}), {"exists and is not a folder"});
  expect_input_error(run({"corpus", "--out", ""}), {"--out needs a folder"});
}

// A seconds-long smoke of `attnlab bench` on a tiny model: it runs, its JSON parses and holds every
// part of the report. The real measurements are not tests (docs/performance.md).
TEST_CASE("bench smoke: a tiny config runs and its JSON parses") {
  const std::string copy = (std::filesystem::temp_directory_path() / ("attnlab-bench-" + std::to_string(::getpid()) + ".json")).string();
  const Result r = run({"bench", "--d-model", "32", "--heads", "2", "--layers", "1", "--d-ff", "64", "--vocab", "100",
                        "--batch", "2", "--seq", "16", "--repeats", "1", "--attention-max", "256", "--json", "--quiet",
                        "--json-out", copy});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  // --json-out writes the same report to a file.
  std::ifstream copied(copy);
  REQUIRE(copied.good());
  CHECK(nlohmann::json::parse(copied) == j);
  std::filesystem::remove(copy);
  CHECK(j["format"] == "attnlab-bench");
  CHECK(!j["blas"]["kernel"].get<std::string>().empty());
  CHECK(j["sgemm_ceiling_gflops"].get<double>() > 0.0);
  REQUIRE(j["models"].size() == 2);
  for (const auto& m : j["models"]) {
    CHECK(m["forward"]["tokens_per_s"].get<double>() > 0.0);
    CHECK(m["train_step"]["tokens_per_s"].get<double>() > 0.0);
    for (const char* which : {"breakdown", "forward_breakdown"}) {
      INFO(which);
      double share = 0.0;
      for (const auto& op : m[which]["ops"]) share += op["share"].get<double>();
      CHECK(share == doctest::Approx(1.0).epsilon(0.05));  // exclusive categories add up to the wall time
    }
    // A forward pass runs no optimizer; a training step does.
    for (const auto& op : m["forward_breakdown"]["ops"])
      if (op["op"].get<std::string>().rfind("optimizer", 0) == 0) CHECK(op["calls_per_step"].get<int>() == 0);
  }
  REQUIRE(j["attention"]["rows"].size() == 3);  // n = 64, 128, 256
  // The plain path keeps the n × n weights; the tiled one a fixed tile plus O(n).
  const auto& last = j["attention"]["rows"].back();
  CHECK(last["plain"]["extra_bytes_forward"].get<double>() == 4.0 * 256 * 256);
  CHECK(last["tiled"]["extra_bytes_forward"].get<double>() < last["plain"]["extra_bytes_forward"].get<double>());

  const Result bad = run({"bench", "--d-model", "32", "--heads", "3", "--layers", "1", "--d-ff", "64"});
  CHECK(bad.code == 2);
  const Result both = run({"bench", "--config", "transformer-base", "--d-model", "32"});
  CHECK(both.code == 2);
}

TEST_CASE("params: the paper's base model, text and JSON; the reference comparison") {
  Result r = run({"params", "--config", "transformer-base", "--vocab", "37000", "--seq", "64"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "63,084,544"));
  CHECK(contains(r.out, "reported 65M"));
  CHECK(contains(r.out, "training FLOPs per token at S = T = 64"));
  CHECK(contains(r.out, "not counted:"));

  r = run({"params", "-c", "transformer-base", "--vocab", "37000", "--format", "json"});
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["params"]["total"] == 63084544);
  CHECK(j["params"]["embeddings"]["total"] == 37000 * 512);
  CHECK(j["params"]["output_projection"]["tied"] == true);
  CHECK(j["params"]["encoder"]["per_layer"]["total"] == 3152384);
  CHECK(j["reference"]["reported_params"] == 65000000);
  CHECK(j["reference"]["vocab_for_reported"] == 40741);  // (65M − 44,140,544) / 512
  CHECK(j["flops"]["seq"] == 128);                        // the config's max_len by default
  const double per_token = j["flops"]["training_per_token"].get<double>();
  CHECK(per_token == doctest::Approx(j["flops"]["training_per_sequence"].get<double>() / 256));

  // Without --vocab a config with a reference takes its vocabulary; GPT-2 small matches its checkpoint
  // once the learned position table it has (and attnlab does not) is added back.
  r = run({"params", "--config", "gpt2-small", "--format", "json"});
  REQUIRE(r.code == 0);
  const nlohmann::json g = nlohmann::json::parse(r.out);
  CHECK(g["vocab"]["size"] == 50257);
  CHECK(g["params"]["total"] == 123653376);
  CHECK(g["reference"]["comparable"]["params"].get<double>() == 124439808.0);
  CHECK(g["reference"]["comparable"]["difference"].get<double>() == 0.0);

  // A file path works as well as a name; a config without a reference counts the corpus's vocabulary.
  r = run({"params", "--config", std::string(ATTNLAB_SOURCE_DIR) + "/data/configs/tiny-test.json", "-f", "json"});
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "the config's corpus"));
  CHECK_FALSE(nlohmann::json::parse(r.out).contains("reference"));
}

TEST_CASE("params: bad input exits with code 2 and says why") {
  expect_input_error(run({"params", "--config", "no-such-model"}), {"no-such-model", "known configs:", "transformer-base"});
  {
    // A folder named like a config in the working folder (a run's folder, `--out NAME`) does not hide
    // the config of that name: found resuming a run from its parent folder ("is a folder, expected a file").
    const fs::path here = fs::current_path();
    fs::create_directories(temp_dir() / "cwd" / "transformer-base");
    fs::current_path(temp_dir() / "cwd");
    const Result named = run({"params", "--config", "transformer-base", "-f", "json"});
    fs::current_path(here);
    INFO(named.err);
    CHECK(named.code == 0);
  }
  // Out of the options' own ranges: the validators' message (src/cli/validators.hpp) and the usage hint.
  for (const auto& [flag, value, range] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--vocab", "4", "from 5 to 10000000"}, {"--vocab", "0", "from 5 to 10000000"}, {"--seq", "0", "from 1 to 1048576"}}) {
    const Result bad = run({"params", "--config", "transformer-base", flag, value});
    INFO(bad.err);
    CHECK(bad.code == 2);
    CHECK(contains(bad.err, "attnlab: error: " + flag + ": " + value + " is out of range; use a whole number " + range));
  }
  // Within them but beyond the config's max_len: said when the config is read.
  expect_input_error(run({"params", "--config", "transformer-base", "--seq", "129"}), {"--seq 129"});
  Result r = run({"params", "--config", "transformer-base", "--vocab", "many"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--vocab"));
  r = run({"params"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--config is required"));
  r = run({"params", "--help"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "--vocab"));
  CHECK(contains(r.out, "--seq"));
}
