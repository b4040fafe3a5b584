#include "exercises/checker.hpp"

#include <cstdlib>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exercises/child_process.hpp"
#include "io/files.hpp"
#include "util/error.hpp"

namespace attnlab::exercises {

Kit load_kit() {
  Kit kit;
  const char* env = std::getenv("ATTNLAB_EXERCISE_KIT");
  kit.file = (env && *env) ? fs::path(env) : fs::path(ATTNLAB_EXERCISE_KIT);
  std::error_code ec;
  if (!fs::exists(kit.file, ec)) {
    throw RuntimeError("the exercise graders are not built (no " + kit.file.string() +
                       "). Build attnlab first: cmake --build build");
  }
  try {
    const auto j = nlohmann::json::parse(read_text_file(kit.file.string(), 1 << 20));
    kit.compiler = j.at("compiler").get<std::string>();
    kit.compile_flags = j.at("compile_flags").get<std::vector<std::string>>();
    kit.support_objects = j.at("support_objects").get<std::vector<std::string>>();
    kit.libraries = j.at("libraries").get<std::vector<std::string>>();
    kit.graders = j.at("graders").get<std::map<std::string, std::vector<std::string>>>();
  } catch (const std::exception& err) {
    throw RuntimeError(kit.file.string() + ": unreadable exercise kit (" + err.what() +
                       "); rebuild with cmake --build build");
  }
  return kit;
}

std::string trim_compiler_output(const std::string& text, const std::string& learner_file, std::size_t max_lines) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> kept;
  bool keeping = false;
  while (std::getline(in, line)) {
    const bool about_learner = line.rfind(learner_file + ":", 0) == 0;
    const bool context = !line.empty() && line[0] == ' ';  // source excerpt and caret lines
    if (about_learner) {
      keeping = true;
      kept.push_back(line);
    } else if (context && keeping) {
      kept.push_back(line);
    } else {
      keeping = false;
      // An error inside a library header (std::sort on a type without <, say) is reported there, with
      // only a "required from here" line in the learner's file: keep the error's own line, too.
      if (line.find(": error: ") != std::string::npos) kept.push_back(line);
    }
  }
  if (kept.empty()) {  // nothing names the learner's file: show the start of the raw output
    std::istringstream raw(text);
    while (std::getline(raw, line) && kept.size() < max_lines) kept.push_back(line);
  }
  std::string out;
  for (std::size_t i = 0; i < kept.size() && i < max_lines; ++i) out += kept[i] + "\n";
  if (kept.size() > max_lines) {
    out += "... (" + std::to_string(kept.size() - max_lines) + " more lines; fix the first error first)\n";
  }
  return out;
}

namespace {

std::string last_test_started(const fs::path& status_file) {
  std::string text;
  try {
    text = read_text_file(status_file.string(), 1 << 20);
  } catch (const Error&) {
    return "";
  }
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.rfind("test\t", 0) == 0) last = line.substr(5);
  return last;
}

// Keeps the first and last lines of a long grader output (a learner's debug prints can be huge).
std::string shorten(const std::string& text, std::size_t head = 80, std::size_t tail = 20) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line.size() > 400 ? line.substr(0, 400) + " ..." : line);
  std::string out;
  if (lines.size() <= head + tail) {
    for (const auto& l : lines) out += l + "\n";
    return out;
  }
  for (std::size_t i = 0; i < head; ++i) out += lines[i] + "\n";
  out += "... (" + std::to_string(lines.size() - head - tail) + " lines left out) ...\n";
  for (std::size_t i = lines.size() - tail; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

std::string describe_link_failure(const std::string& output, const ExerciseInfo& ex) {
  std::smatch m;
  const std::regex undefined("undefined reference to `([^']+)'");
  if (std::regex_search(output, m, undefined)) {
    const std::string sym = m[1];
    if (sym.rfind("ex::", 0) == 0) {
      return "The grader looks for " + sym + " in your file and cannot find it. Keep the function's name, the\n"
             "namespace ex and the parameter types exactly as in the stub:\n    " + ex.function + "\n";
    }
    return "The program cannot be linked: undefined reference to " + sym + ".\n";
  }
  const std::regex multiple("multiple definition of `([^']+)'");
  if (std::regex_search(output, m, multiple)) {
    return "The program cannot be linked: " + std::string(m[1]) + " is defined twice. A helper with the same\n"
           "name as one of attnlab's functions? Put your helpers in an unnamed namespace (namespace { ... }).\n";
  }
  return "The program cannot be linked. The linker says:\n" + trim_compiler_output(output, "\x01", 20);
}

}  // namespace

CheckResult run_check(const Kit& kit, const ExerciseInfo& ex, const Workspace& ws, const CheckOptions& opts) {
  CheckResult res;
  const auto grader = kit.graders.find(ex.slug);
  if (grader == kit.graders.end()) {
    throw RuntimeError("no grader for exercise " + ex.slug + " in " + kit.file.string() +
                       "; re-run cmake (cmake -S . -B build) and rebuild");
  }
  const fs::path dir = ws.build_dir(ex);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeError("cannot create " + dir.string() + " (" + ec.message() + ")");
  const fs::path source = ws.learner_file(ex), object = dir / "exercise.o", program = dir / "grader";

  // 1. Compile the learner's file (only this file: the grader is prebuilt).
  std::vector<std::string> cc{kit.compiler};
  cc.insert(cc.end(), kit.compile_flags.begin(), kit.compile_flags.end());
  cc.insert(cc.end(), {"-fdiagnostics-color=never", "-fmax-errors=10", "-c", source.string(), "-o", object.string()});
  fs::remove(object, ec);
  const ChildResult c = run_child(cc, {"LC_ALL=C"}, {.timeout_s = 120, .memory_mb = 0}, dir / "compile.log");
  res.compile_s = c.seconds;
  if (!c.started) throw RuntimeError(c.error);
  if (c.timed_out || c.exit_code != 0) {
    res.verdict = Verdict::CompileError;
    res.report = c.timed_out ? "The compiler did not finish within 120 s.\n"
                             : "Your file does not compile. The compiler says:\n\n" +
                                   trim_compiler_output(c.output, source.string());
    return res;
  }
  if (!c.output.empty()) res.warnings = trim_compiler_output(c.output, source.string(), 20);

  // 2. Link it with the grader.
  std::vector<std::string> ld{kit.compiler, object.string()};
  ld.insert(ld.end(), grader->second.begin(), grader->second.end());
  ld.insert(ld.end(), kit.support_objects.begin(), kit.support_objects.end());
  ld.insert(ld.end(), kit.libraries.begin(), kit.libraries.end());
  ld.insert(ld.end(), {"-o", program.string()});
  const ChildResult l = run_child(ld, {"LC_ALL=C"}, {.timeout_s = 120, .memory_mb = 0}, dir / "link.log");
  res.link_s = l.seconds;
  if (!l.started) throw RuntimeError(l.error);
  if (l.timed_out || l.exit_code != 0) {
    res.verdict = Verdict::LinkError;
    res.report = describe_link_failure(l.output, ex);
    return res;
  }

  // 3. Run the grader with limits; it appends each test's name to the status file as it starts.
  const fs::path status = dir / "status.txt";
  fs::remove(status, ec);
  const ChildResult r = run_child({program.string()},
                                  {"ATTNLAB_GRADER_STATUS=" + status.string(), "OPENBLAS_NUM_THREADS=1"},
                                  {.timeout_s = opts.timeout_s, .memory_mb = opts.memory_mb}, dir / "run.log");
  res.run_s = r.seconds;
  if (!r.started) throw RuntimeError(r.error);
  const std::string test = last_test_started(status);
  const std::string in_test = test.empty() ? "" : " while running the test '" + test + "'";
  res.report = shorten(r.output);
  if (r.timed_out) {
    res.verdict = Verdict::TimedOut;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", opts.timeout_s);
    res.report += std::string("\ntimed out after ") + secs + " s" + in_test +
                  ".\nLook for a loop that never ends: a condition that stays true, a counter that is never\n"
                  "incremented, or an unsigned index counting down past 0.\n";
  } else if (r.signal != 0) {
    res.verdict = Verdict::Crashed;
    res.report += "\ncrashed" + in_test + ":\n" + describe_signal(r.signal) + ".\n";
  } else if (r.exit_code == 0) {
    res.verdict = Verdict::Passed;
  } else {
    res.verdict = Verdict::Failed;
    if (r.exit_code != 1) {
      res.report += "\nthe grader exited with code " + std::to_string(r.exit_code) + in_test +
                    " (did your code call exit() or std::abort()?)\n";
    }
  }
  return res;
}

}  // namespace attnlab::exercises
