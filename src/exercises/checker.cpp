#include "exercises/checker.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exercises/checker_parts.hpp"
#include "exercises/child_process.hpp"
#include "exercises/sandbox.hpp"
#include "io/files.hpp"
#include "io/json_text.hpp"
#include "util/error.hpp"

namespace attnlab::exercises {

const char* built_kit_path() noexcept;  // generated into the build folder by src/exercises/CMakeLists.txt

Kit load_kit() {
  Kit kit;
  const char* env = std::getenv("ATTNLAB_EXERCISE_KIT");
  kit.file = (env && *env) ? fs::path(env) : fs::path(built_kit_path());
  std::error_code ec;
  if (!fs::exists(kit.file, ec)) {
    throw RuntimeError("the exercise graders are not built (no " + kit.file.string() +
                       "). Build attnlab first: cmake --build build");
  }
  try {
    const auto j = io::parse_json_bounded(io::read_text_file(kit.file.string(), 1 << 20));
    kit.compiler = j.at("compiler").get<std::string>();
    kit.compile_flags = j.at("compile_flags").get<std::vector<std::string>>();
    kit.support_objects = j.at("support_objects").get<std::vector<std::string>>();
    kit.libraries = j.at("libraries").get<std::vector<std::string>>();
    kit.graders = j.at("graders").get<std::map<std::string, std::vector<std::string>>>();
    if (j.contains("sanitizer_flags")) kit.sanitizer_flags = j.at("sanitizer_flags").get<std::vector<std::string>>();
    if (j.contains("grader_cases")) kit.grader_cases = j.at("grader_cases").get<std::map<std::string, std::size_t>>();
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

// A full disk is not the learner's mistake: a correct file was reported as "does not compile" with no
// message, and recorded as failing (the sixth adversarial pass). Say what happened instead, exit 2,
// and record nothing.
void refuse_if_disk_full(const fs::path& dir, const std::string& output, const std::string& who) {
  struct statvfs st{};
  const bool measured = ::statvfs(dir.c_str(), &st) == 0;
  const unsigned long long free_bytes = measured ? static_cast<unsigned long long>(st.f_bavail) * st.f_frsize : 0;
  if (output.find("No space left on device") == std::string::npos && (!measured || free_bytes >= (1u << 20))) return;
  throw InputError("check: the disk holding " + dir.string() + " is full (" + std::to_string(free_bytes / 1024) +
                   " KiB free), so " + who + " could not write its output; free some space and check again (nothing was recorded)");
}

// The grader's status file, at most 1 MiB. It is in the folder learner code may write, so it is read
// only if it is still a regular file there: never through a symbolic link it was replaced with (the
// second adversarial pass, Q2, had a link to ~/.ssh/id_rsa named as "the test that was running").
std::string read_status(const fs::path& status_file) {
  const int fd = ::open(status_file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  struct stat st{};
  std::string out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    out.resize(std::min<std::size_t>(static_cast<std::size_t>(st.st_size), std::size_t{1} << 20));
    std::size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    out.resize(got);
  }
  ::close(fd);
  return out;
}

// A fresh random token for one grader run: 128 bits from the kernel, as 32 hex digits.
std::string random_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RuntimeError(std::string("cannot get random bytes from the kernel: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  static const char hex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += hex[b >> 4];
    token += hex[b & 15];
  }
  return token;
}

}  // namespace

// The pure helpers, declared (and described) in exercises/checker_parts.hpp.

std::string last_test_started(const std::string& status) {
  std::istringstream in(status);
  std::string line, last;
  while (std::getline(in, line))
    if (line.rfind("test\t", 0) == 0) last = line.substr(5);
  return last;
}

ResultRecord find_result_record(const std::string& channel, const std::string& token) {
  ResultRecord rec;
  std::size_t matching = 0;
  std::istringstream in(channel);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("result\t", 0) != 0) continue;
    std::istringstream fields(line.substr(7));
    std::string got;
    unsigned long long run = 0, failed = 0;
    const bool parsed = static_cast<bool>(fields >> got >> run >> failed);
    if (parsed && got == token) {
      ++matching;
      rec.kind = ResultRecord::Kind::Found;
      rec.run = run;
      rec.failed = failed;
    } else if (parsed && got == "none" && rec.kind != ResultRecord::Kind::Found) {
      rec.kind = ResultRecord::Kind::TokenTaken;
    } else if (rec.kind == ResultRecord::Kind::Missing) {
      rec.kind = ResultRecord::Kind::Foreign;
    }
  }
  if (matching > 1) rec.kind = ResultRecord::Kind::Foreign;  // the token leaked: none of them counts
  return rec;
}

// Keeps the first and last lines of a long grader output (a learner's debug prints can be huge).
std::string shorten(const std::string& text, std::size_t head, std::size_t tail) {
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

// The global symbols a learner's object may define: its functions in namespace ex (and what the
// compiler makes for them: local statics, guard variables, type info), instantiations of the standard
// library's templates (weak), and what the compiler or AddressSanitizer adds. Anything else would
// take the place of the library's or the grader's own definition in the grader program: an
// `extern "C" ssize_t write(...)` of the learner's received the grader's result record, token and
// all, and forged a pass (the second adversarial pass, Q1); an inline function of doctest's or
// attnlab's namespace would replace theirs (the learner's object comes first on the link line).
bool allowed_learner_symbol(const std::string& name, char type) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  for (const char* ex : {"_ZN2ex", "_ZNK2ex", "_ZZN2ex", "_ZZNK2ex", "_ZGVZN2ex", "_ZGVZNK2ex", "_ZTVN2ex", "_ZTIN2ex",
                         "_ZTSN2ex", "__odr_asan_gen__ZN2ex", "__odr_asan_gen__ZZN2ex"})
    if (starts(ex)) return true;
  const bool weak = type == 'W' || type == 'V' || type == 'u' || type == 'w' || type == 'v';
  if (!weak) return false;
  if (starts("DW.ref.")) return true;  // the exception personality routine's reference
  for (const char* lib : {"_ZNSt", "_ZNKSt", "_ZSt", "_ZZNSt", "_ZZNKSt", "_ZZSt", "_ZGVZNSt", "_ZGVZNKSt",
                          "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx", "_ZZN9__gnu_cxx", "_ZNSa", "_ZNKSa", "_ZTVNSt", "_ZTINSt",
                          "_ZTSNSt", "_ZTVSt", "_ZTISt", "_ZTSSt"})
    if (starts(lib)) return true;
  return false;
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

// The grader output without AddressSanitizer's own text: its report (addresses, shadow bytes) is
// replaced by describe_sanitizer_report's sentence, and its "==PID==... soft rss limit exhausted"
// notes by the grader's own out-of-memory message.
std::string strip_sanitizer_output(const std::string& output) {
  const auto report = output.find("=================================================================\n==");
  std::istringstream in(output.substr(0, report));
  static const std::regex asan_note("^==[0-9]+==.*");
  std::string line, out;
  while (std::getline(in, line))
    if (!std::regex_match(line, asan_note) && line != "AddressSanitizer:DEADLYSIGNAL") out += line + "\n";
  return out;
}

std::string sanitizer_frame(const std::string& report, const std::string& learner_file, bool learner_only) {
  // The first stack frame in the learner's file, else (unless learner_only) the first with a source line.
  std::string where;
  static const std::regex frame_re(R"(#[0-9]+ 0x[0-9a-f]+ in ([^\n]+?) (/[^\s:]+):([0-9]+))");
  for (auto it = std::sregex_iterator(report.begin(), report.end(), frame_re); it != std::sregex_iterator(); ++it) {
    const std::string file = (*it)[2], function = (*it)[1];
    const bool mine = file == learner_file;
    if (mine || (where.empty() && !learner_only)) {
      where = " at " + fs::path(file).filename().string() + ":" + std::string((*it)[3]) + " in " +
              function.substr(0, function.find('('));
    }
    if (mine) break;
  }
  return where;
}

std::string describe_sanitizer_report(const std::string& output, const std::string& learner_file) {
  std::smatch m;
  static const std::regex kind_re(R"(ERROR: AddressSanitizer: ([A-Za-z-]+))");
  if (!std::regex_search(output, m, kind_re)) return "";
  const std::string kind = m[1];
  const std::string report = output.substr(static_cast<std::size_t>(m.position(0)));
  bool write = false;
  std::string size;
  static const std::regex access_re(R"((READ|WRITE) of size ([0-9]+))");
  if (std::regex_search(report, m, access_re)) {
    write = m[1] == "WRITE";
    size = m[2];
  }
  const std::string where = sanitizer_frame(report, learner_file, false);
  std::string region;
  static const std::regex region_re(R"(located ([0-9]+) bytes to the (right|left) of ([0-9]+)-byte region)");
  if (std::regex_search(report, m, region_re)) {
    const std::string by = m[1] == "0" ? std::string("just") : std::string(m[1]) + " bytes";
    region = (size.empty() ? std::string("an access ") : "a " + size + "-byte " + (write ? "write " : "read ")) + by +
             (m[2] == "right" ? " past the end of a " : " before the start of a ") + std::string(m[3]) + "-byte block: ";
  }
  std::string what;
  if (kind.find("overflow") != std::string::npos || kind.find("underflow") != std::string::npos) {
    what = write ? "wrote out of bounds" : "read out of bounds";
  } else if (kind == "heap-use-after-free") {
    what = write ? "wrote to memory after it was freed" : "read memory after it was freed";
  } else if (kind.rfind("stack-use-after", 0) == 0) {
    what = "used a local variable after its scope ended";
  } else if (kind == "attempting" && report.find("double-free") != std::string::npos) {
    what = "freed the same memory twice";
  } else {
    what = "made a memory error";
  }
  return what + where + " (" + region + kind + ")";
}

namespace {

// A fresh folder for one check under `parent` (run-XXXXXX), locked (flock) while the check runs; after
// it, it becomes `parent`/last (the object, the grader and the logs of the latest check, to look at),
// replacing the one before. Folders left by a check that was killed (unlocked) are removed by the
// next one.
class RunFolder {
 public:
  explicit RunFolder(const fs::path& parent) {
    std::error_code ec;
    // attnlab removes old run folders in here: never through a symbolic link to somewhere else, where
    // they could be the learner's own files (WORKSPACE/.build or .build/NAME made a link).
    for (const fs::path& p : {parent.parent_path(), parent})
      if (fs::is_symlink(fs::symlink_status(p, ec)))
        throw InputError(p.string() + ": expected a folder attnlab check keeps its builds in, got a symbolic link; "
                         "remove the link (attnlab makes the folder again)");
    fs::create_directories(parent, ec);
    if (ec) throw RuntimeError("cannot create " + parent.string() + " (" + ec.message() + ")");
    const auto now = fs::file_time_type::clock::now();
    for (const auto& e : fs::directory_iterator(parent, ec)) {
      const std::string name = e.path().filename().string();
      const bool run_or_old = name.rfind("run-", 0) == 0 || name.rfind("old-", 0) == 0;
      // A "new-" folder is one being set up (below); only one a minute old was left by a killed check.
      std::error_code tec;
      const bool stale_new = name.rfind("new-", 0) == 0 && now - fs::last_write_time(e.path(), tec) > std::chrono::minutes(1) && !tec;
      if ((run_or_old || stale_new) && io::abandoned_folder(e.path().string())) fs::remove_all(e.path(), ec);
    }
    // Made as "new-XXXXXX", locked, and only then named "run-XXXXXX": a check beside this one removes
    // unlocked run- folders as left by killed checks, and took a fresh one between its mkdtemp and its
    // lock (eight concurrent checks under load: "cannot create …/run-BOPaxy/compile.log").
    std::string tmpl = (parent / "new-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw RuntimeError("cannot create a build folder in " + parent.string() + " (" + std::strerror(errno) + ")");
    lock_ = ::open(tmpl.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock_ >= 0) ::flock(lock_, LOCK_EX | LOCK_NB);
    path_ = parent / ("run-" + fs::path(tmpl).filename().string().substr(4));
    if (::rename(tmpl.c_str(), path_.c_str()) != 0)
      throw RuntimeError("cannot name the build folder " + path_.string() + " (" + std::strerror(errno) + ")");
  }
  ~RunFolder() {
    std::error_code ec;
    const fs::path parent = path_.parent_path(), last = parent / "last";
    std::string old = (parent / "old-XXXXXX").string();
    if (::mkdtemp(old.data())) {
      ::rename(last.c_str(), old.c_str());  // the previous `last` (if any) aside, onto the empty folder
      fs::remove_all(old, ec);
    }
    if (::rename(path_.c_str(), last.c_str()) != 0) fs::remove_all(path_, ec);  // a check beside it won
    if (lock_ >= 0) ::close(lock_);
  }
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  int lock_ = -1;
};

}  // namespace

// What the learner's object defines, from `nm -P -g --defined-only`.
DefinedSymbols read_defined_symbols(const std::string& nm_output) {
  DefinedSymbols out;
  std::istringstream lines(nm_output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string name, type;
    if (!(f >> name >> type) || type.size() != 1) {
      out.foreign.push_back("(a line nm printed that is not a symbol: " + line.substr(0, 60) + ")");
      continue;
    }
    out.all.insert(name);
    if (std::string("TDBRC").find(type[0]) != std::string::npos) out.strong.insert(name);
    if (!allowed_learner_symbol(name, type[0])) out.foreign.push_back(name);
  }
  return out;
}

std::vector<std::string> foreign_uses(const std::string& nm_output) {
  // Compared without a symbol version ("malloc@GLIBC_2.2.5", reached through .symver) and without
  // leading underscores ("__mmap", "__libc_malloc", reached through an asm label), and with the
  // library functions that hand back malloc'd memory or any symbol by name (dlsym "malloc",
  // open_memstream as a buffer): the sixth adversarial pass allocated through each of these.
  static const std::set<std::string> raw_allocation = {
      "malloc", "calloc", "realloc", "reallocarray", "aligned_alloc", "posix_memalign", "memalign", "valloc",
      "pvalloc", "mmap", "mmap64", "mremap", "sbrk", "brk", "syscall", "libc_malloc", "libc_calloc",
      "libc_realloc", "libc_memalign", "libc_valloc", "libc_pvalloc", "dlsym", "dlvsym", "dlopen", "dlmopen",
      "libc_dlsym", "libc_dlopen_mode", "open_memstream", "open_wmemstream", "fmemopen", "strdup", "strndup",
      "asprintf", "vasprintf", "getline", "getdelim",
      // And memory outside the heap and the measured thread's stack (the seventh pass): System V and
      // POSIX shared memory, a buffer getcwd mallocs to the size asked, a thread with a big stack.
      "shmget", "shmat", "shm_open", "memfd_create", "getcwd", "get_current_dir_name", "realpath",
      "canonicalize_file_name"};
  static const std::set<std::string> threads = {"pthread_create", "pthread_attr_setstack", "pthread_attr_setstacksize",
                                                "clone", "clone3"};
  std::vector<std::string> foreign;
  std::istringstream used(nm_output);
  std::string line;
  while (std::getline(used, line)) {
    std::istringstream f(line);
    std::string name;
    if (!(f >> name)) continue;
    std::string base = name.substr(0, name.find('@'));
    base.erase(0, base.find_first_not_of('_') == std::string::npos ? 0 : base.find_first_not_of('_'));
    if (name.find("7doctest") != std::string::npos || name.find("7attnlab") != std::string::npos)
      foreign.push_back("(it uses the grader's own code: " + name.substr(0, 80) + ")");
    else if (raw_allocation.count(base))
      foreign.push_back("(it allocates with " + name.substr(0, 60) + ": use std::vector or new, which the grader measures)");
    else if (threads.count(base))
      foreign.push_back("(it starts threads with " + name.substr(0, 60) + " (std::thread does): the exercises are single-threaded)");
  }
  return foreign;
}

std::vector<std::string> big_static_arrays(const std::string& nm_output) {
  constexpr unsigned long long kMaxStatic = 16u << 10;
  std::vector<std::string> foreign;
  std::istringstream sized(nm_output);
  std::string line;
  while (std::getline(sized, line)) {
    std::istringstream f(line);
    std::string name, type, value, size;
    if (!(f >> name >> type >> value >> size) || type.size() != 1 || std::string("bBdDvVuC").find(type[0]) == std::string::npos)
      continue;
    const unsigned long long bytes = std::strtoull(size.c_str(), nullptr, 16);
    if (bytes > kMaxStatic)
      foreign.push_back("(a static array of " + std::to_string(bytes / 1024) + " KiB, " + name.substr(0, 60) +
                        ": keep working memory in std::vector, which the grader measures)");
  }
  return foreign;
}

std::string describe_foreign_symbols(const std::vector<std::string>& foreign) {
  std::vector<std::string> unique;
  for (const auto& f : foreign)
    if (std::find(unique.begin(), unique.end(), f) == unique.end()) unique.push_back(f);
  std::string names;
  for (std::size_t i = 0; i < unique.size() && i < 5; ++i) names += (i ? ", " : "") + unique[i];
  if (unique.size() > 5) names += ", ...";
  return "Your file defines or uses what an exercise may not: " + names +
         ".\nDefine helpers inside namespace ex, in an unnamed namespace, or make them static (a definition\n"
         "of a library or grader function, write or exit, would replace it in the grader too); use only the\n"
         "standard library and attnlab/exercise.hpp (not the grader's doctest or attnlab code), and\n"
         "allocate with std::vector or new. The check cannot run with it.\n";
}

namespace {

// One check's fixed facts, shared by its phases: the kit, the exercise and its grader's objects, the
// learner's file and what is made from it in this run's folder, and what the sandbox lets each step
// see.
struct CheckRun {
  const Kit& kit;
  const ExerciseInfo& ex;
  const std::vector<std::string>& grader_objects;  // kit.graders[ex.slug]
  const Sandbox& box;
  fs::path dir;                    // this run's folder (RunFolder)
  fs::path source, object, program;  // the learner's file, its object, the linked grader program
  SandboxPaths build_paths;        // the compiler and the linker: the exercise folder, the kit, this run's folder
  SandboxPaths run_paths;          // the grader: this run's folder alone
};

// Sets what the sandbox shows each step. The compiler and the linker read the exercise folder, the
// kit's include folders, objects and libraries, and write this run's folder; the grader, which runs
// the learner's code, sees this run's folder and nothing else of the learner's.
void set_sandbox_paths(CheckRun& run) {
  run.build_paths.read_only.push_back(run.source.parent_path());
  for (const auto& f : run.kit.compile_flags)
    if (f.rfind("-I", 0) == 0 && f.size() > 2) run.build_paths.read_only.emplace_back(f.substr(2));
  for (const auto* files : {&run.grader_objects, &run.kit.support_objects, &run.kit.libraries})
    for (const auto& f : *files) run.build_paths.read_only.emplace_back(f);
  run.build_paths.writable.push_back(run.dir);
  run.build_paths.chdir = run.dir;
  run.run_paths.writable.push_back(run.dir);
  run.run_paths.chdir = run.dir;
}

// Phase 1, compile: the learner's file alone (the grader is prebuilt) into run.object. Returns false
// with res's CompileError verdict and report when it does not compile (or the compiler's messages
// overflowed their file); its warnings about a file that compiles go to res.warnings. A full disk
// throws (refuse_if_disk_full).
bool compile_learner_file(const CheckRun& run, CheckResult& res) {
  const fs::path& dir = run.dir;
  std::error_code ec;
  std::vector<std::string> cc{run.kit.compiler};
  cc.insert(cc.end(), run.kit.compile_flags.begin(), run.kit.compile_flags.end());
  cc.insert(cc.end(), run.kit.sanitizer_flags.begin(), run.kit.sanitizer_flags.end());
  cc.insert(cc.end(), {"-fdiagnostics-color=never", "-fmax-errors=10", "-c", run.source.string(), "-o", run.object.string()});
  fs::remove(run.object, ec);
  // The compiler gets a memory limit too: `#include "/dev/zero"` or a runaway template would otherwise
  // eat the machine's memory.
  const ChildResult c =
      run_child(run.box.wrap(cc, run.build_paths), {"LC_ALL=C"}, {.timeout_s = 120, .memory_mb = 4096}, dir / "compile.log");
  res.compile_s = c.seconds;
  if (!c.started) throw RuntimeError(c.error);
  std::error_code size_ec;
  const auto log_bytes = fs::file_size(dir / "compile.log", size_ec);
  const bool output_capped = c.signal == SIGXFSZ ||
                             (!size_ec && log_bytes >= (static_cast<std::uintmax_t>(ChildLimits{}.max_output_mb) << 20));
  if (output_capped) {
    // Its messages filled the output file's limit (RLIMIT_FSIZE, 16 MiB) and the compiler was stopped:
    // that is not a compile error in the learner's code, so say what happened and show the start.
    res.verdict = Verdict::CompileError;
    res.report = "The compiler printed more than " + std::to_string(ChildLimits{}.max_output_mb) +
                 " MiB of messages about your file, so it was stopped before it finished (the limit keeps a "
                 "runaway from filling the disk). Fix what the first ones say; usually one line, or a macro or "
                 "template, repeats the same warning thousands of times:\n\n" +
                 trim_compiler_output(c.output, run.source.string(), 20);
    return false;
  }
  refuse_if_disk_full(dir, c.output, "the compiler");
  if (c.timed_out || c.exit_code != 0) {
    res.verdict = Verdict::CompileError;
    res.report = c.timed_out ? "The compiler did not finish within 120 s.\n"
                             : "Your file does not compile. The compiler says:\n\n" +
                                   trim_compiler_output(c.output, run.source.string());
    return false;
  }
  if (!c.output.empty()) res.warnings = trim_compiler_output(c.output, run.source.string(), 20);
  return true;
}

// nm (binutils) on the learner's object, in the sandbox, with `args` before the object's name; its
// output logged to `log` in this run's folder. A run of nm that fails throws RuntimeError(`what` +
// how).
std::string nm_of_object(const CheckRun& run, std::vector<std::string> args, const char* log, const std::string& what,
                         bool with_first_line) {
  const std::string nm = ::access("/usr/bin/nm", X_OK) == 0 ? "/usr/bin/nm" : "nm";
  args.insert(args.begin(), nm);
  args.push_back(run.object.string());
  const ChildResult n =
      run_child(run.box.wrap(args, run.build_paths), {"LC_ALL=C"}, {.timeout_s = 60, .memory_mb = 4096}, run.dir / log);
  if (!n.started || n.timed_out || n.exit_code != 0)
    throw RuntimeError(with_first_line ? what + ": " + (n.started ? n.output.substr(0, n.output.find('\n')) : n.error) : what);
  return n.output;
}

// Phase 2, vet: what the object defines may only be the exercise's own (allowed_learner_symbol), what
// it uses nothing of the grader's code and no allocation the grader cannot measure, and it holds no big
// writable static array. Returns false with res's LinkError verdict and report when it breaks one of
// these; else fills `symbols` (what it defines) for phase 2b.
bool vet_learner_object(const CheckRun& run, DefinedSymbols& symbols, CheckResult& res) {
  const std::string object = run.object.string();
  const std::string defined = nm_of_object(run, {"-P", "-g", "--defined-only"}, "symbols.log",
                                           "cannot list the symbols of " + object + " with nm (binutils)", true);
  symbols = read_defined_symbols(defined);
  std::vector<std::string> foreign = symbols.foreign;
  // run_child keeps the first 256 KiB of output: a longer list was not read whole (the third
  // adversarial pass hid a write() behind 1,400 long names), so it is not accepted.
  if (defined.size() >= (256u << 10)) foreign.push_back("(more symbols than check reads: the list is over 256 KiB)");
  // And what it uses: nothing of the grader's own code (doctest, attnlab: a doctest listener of the
  // learner's set the failure count to 0 before the grader's reporter read it, and a call of the
  // grader's stop_allocation_tracking() switched the online-softmax memory test off: the fourth
  // adversarial pass), and no allocation that bypasses operator new, which the memory test measures.
  const std::string used =
      nm_of_object(run, {"-P", "-u"}, "uses.log", "cannot list what " + object + " uses with nm (binutils)", false);
  if (used.size() >= (256u << 10)) foreign.push_back("(it uses more symbols than check reads: the list is over 256 KiB)");
  for (auto& f : foreign_uses(used)) foreign.push_back(std::move(f));
  // And no big writable static array: memory the heap measure cannot see (a static float[131072]
  // held a whole score matrix: the fifth adversarial pass). Constants (read-only data) are fine.
  const std::string sized = nm_of_object(run, {"-P", "-S", "--defined-only"}, "sizes.log",
                                         "cannot list the sizes of " + object + "'s symbols with nm (binutils)", false);
  if (sized.size() >= (256u << 10)) foreign.push_back("(more symbols than check reads: the list is over 256 KiB)");
  for (auto& f : big_static_arrays(sized)) foreign.push_back(std::move(f));
  if (foreign.empty()) return true;
  res.verdict = Verdict::LinkError;
  res.report = describe_foreign_symbols(foreign);
  return false;
}

// Phase 2b, rename: every global symbol the object defines, but the exercise functions its grader
// calls, is renamed (objcopy --redefine-syms, to __attnlab_learner_NAME), so that nothing else in it
// can take the place of a definition the grader uses: the third adversarial pass replaced the grader's
// std::string::append, which builds the result record, by a weak specialisation in the learner's
// file (an executable's definition wins over libstdc++'s, and the learner's object comes first on
// the link line), and an asm label can give any function a name in namespace ex. Renamed, such
// copies serve the learner's own code alone. (Making them local instead breaks shared COMDAT groups:
// the grader's references to a group the linker kept from the learner's object.) Throws when nm or
// objcopy fails.
void rename_learner_symbols(const CheckRun& run, const DefinedSymbols& symbols) {
  // What the grader refers to (its exercise functions stay as they are) and what the grader's own
  // objects define: those are not renamed either, since the grader's copies come first on the link
  // line and win (a template the learner's file instantiates too, a COMDAT group they share: renaming
  // the learner's copy of a group the linker then keeps left the grader's calls into it at address 0
  // in the AddressSanitizer build). Everything else the learner's object defines is renamed.
  std::set<std::string> needed, graders_own;
  const std::string nm = ::access("/usr/bin/nm", X_OK) == 0 ? "/usr/bin/nm" : "nm";
  std::vector<std::string> grader_objects = run.grader_objects;
  grader_objects.insert(grader_objects.end(), run.kit.support_objects.begin(), run.kit.support_objects.end());
  for (const bool undefined : {true, false}) {
    std::vector<std::string> cmd{nm, "-P", undefined ? "-u" : "--defined-only"};
    cmd.insert(cmd.end(), grader_objects.begin(), grader_objects.end());
    const ChildResult u = run_child(run.box.wrap(cmd, run.build_paths), {"LC_ALL=C"}, {.timeout_s = 60, .memory_mb = 4096},
                                    run.dir / (undefined ? "grader-needs.log" : "grader-defines.log"));
    if (!u.started || u.timed_out || u.exit_code != 0)
      throw RuntimeError("cannot list the symbols of the grader of " + run.ex.slug + " with nm (binutils): " +
                         (u.started ? u.output.substr(0, u.output.find('\n')) : u.error));
    std::istringstream lines(u.output);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream f(line);
      std::string name;
      if (!(f >> name)) continue;
      if (!undefined) graders_own.insert(name);
      else if (name.rfind("_ZN2ex", 0) == 0 || name.rfind("_ZNK2ex", 0) == 0) needed.insert(name);
    }
  }
  const fs::path renames = run.dir / "renames.txt";
  std::ofstream(renames) << learner_renames(symbols, needed, graders_own);
  const std::string objcopy = ::access("/usr/bin/objcopy", X_OK) == 0 ? "/usr/bin/objcopy" : "objcopy";
  const ChildResult o =
      run_child(run.box.wrap({objcopy, "--redefine-syms=" + renames.string(), run.object.string()}, run.build_paths),
                {"LC_ALL=C"}, {.timeout_s = 60, .memory_mb = 4096}, run.dir / "objcopy.log");
  if (!o.started || o.timed_out || o.exit_code != 0)
    throw RuntimeError("cannot prepare " + run.object.string() + " for linking with objcopy (binutils): " +
                       (o.started ? o.output.substr(0, o.output.find('\n')) : o.error));
}

// Phase 3, link: the learner's object with the grader into run.program, the grader's objects first,
// so that where both define one thing (a template instantiation, a COMDAT group) the grader's copy is
// the one kept. Returns false with res's LinkError verdict and report when it does not link.
bool link_with_grader(const CheckRun& run, CheckResult& res) {
  const Kit& kit = run.kit;
  std::vector<std::string> ld{kit.compiler};
  ld.insert(ld.end(), run.grader_objects.begin(), run.grader_objects.end());
  ld.insert(ld.end(), kit.support_objects.begin(), kit.support_objects.end());
  ld.push_back(run.object.string());
  ld.insert(ld.end(), kit.libraries.begin(), kit.libraries.end());
  ld.insert(ld.end(), kit.sanitizer_flags.begin(), kit.sanitizer_flags.end());
  ld.insert(ld.end(), {"-o", run.program.string()});
  const ChildResult l =
      run_child(run.box.wrap(ld, run.build_paths), {"LC_ALL=C"}, {.timeout_s = 120, .memory_mb = 4096}, run.dir / "link.log");
  res.link_s = l.seconds;
  if (!l.started) throw RuntimeError(l.error);
  refuse_if_disk_full(run.dir, l.output, "the linker");
  if (l.timed_out || l.exit_code != 0) {
    res.verdict = Verdict::LinkError;
    res.report = describe_link_failure(l.output, run.ex);
    return false;
  }
  return true;
}

// Phase 4, run: the grader program with limits, in the sandbox, with a clean environment. It appends
// each test's name to the status file as it starts, and after the last one writes a result record
// carrying the token it was handed on file descriptor 3 to the socket on file descriptor 4. Returns
// what phase 5 judges; throws when the grader cannot be started.
GraderRun run_grader(const CheckRun& run, const CheckOptions& opts) {
  GraderRun g;
  std::error_code ec;
  const fs::path status = run.dir / "status.txt";
  fs::remove(status, ec);
  g.token = random_token();
  // The grader's whole environment: none of attnlab's own (a GITHUB_TOKEN or a cloud key there would be
  // the learner code's to print).
  std::vector<std::string> env{"ATTNLAB_GRADER_STATUS=" + status.string(), "ATTNLAB_GRADER_TOKEN_FD=3",
                               "ATTNLAB_GRADER_RESULT_FD=4", "OPENBLAS_NUM_THREADS=1", "LC_ALL=C",
                               "PATH=/usr/local/bin:/usr/bin:/bin"};
  // RLIMIT_AS bounds address space, not memory used, and the grader reserves some before any learner
  // code runs: its libraries, and OpenBLAS's 128 MiB work buffer, which OpenBLAS retries forever when
  // mmap fails (a reference solution reported as an endless loop at --memory-mb 128). So the limit is
  // --memory-mb for the learner's code plus kGraderReserveMb for that (about 170 MiB measured).
  constexpr std::size_t kGraderReserveMb = 256;
  ChildLimits limits{.timeout_s = opts.timeout_s, .memory_mb = opts.memory_mb + kGraderReserveMb};
  limits.cwd = run.dir.string();
  g.sanitized = !run.kit.sanitizer_flags.empty();
  if (g.sanitized) {
    // AddressSanitizer reserves terabytes of address space for its shadow memory, so RLIMIT_AS cannot
    // bound it. Instead its allocator returns null (std::bad_alloc, reported by the grader) for one
    // allocation above the limit, and the parent kills the grader when its resident memory passes the
    // limit plus room for the shadow memory. (Not ASan's soft_rss_limit_mb: once it trips, every
    // allocation fails until its thread looks again, and a std::bad_alloc thrown inside doctest's
    // own bookkeeping ends in std::terminate.)
    env.push_back("ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=1:"
                  "allocator_may_return_null=1:max_allocation_size_mb=" + std::to_string(opts.memory_mb) +
                  ":color=never");
    limits.memory_mb = 0;
    limits.rss_limit_mb = opts.memory_mb + opts.memory_mb / 4 + 256;  // room for the shadow memory
  }
  g.rss_limit_mb = limits.rss_limit_mb;
  ChildResult& r = g.result;
  r = run_child(run.box.wrap({run.program.string()}, run.run_paths), env, limits, run.dir / "run.log",
                {.fd = 3, .data = g.token, .out_fd = 4}, /*clean_env=*/true);
  if (run.box.available && r.signal == 0 && !r.timed_out && !r.memory_exceeded) {
    // bwrap ends with 128 + n when the grader was killed by signal n.
    if (const int sig = exit_code_to_signal(r.exit_code)) {
      r.signal = sig;
      r.exit_code = -1;
    }
  }
  if (!r.started) throw RuntimeError(r.error);
  g.test = last_test_started(read_status(status));
  return g;
}

// Whether AddressSanitizer itself could not start (a hard ulimit -v, an unusual kernel) rather than
// the learner's code failing: no test started, and the output is ASan's own complaint.
bool sanitizer_could_not_start(const GraderRun& g) {
  const std::string& out = g.result.output;
  return g.sanitized && g.test.empty() && (out.find("AddressSanitizer failed to allocate") != std::string::npos ||
                                           out.find("ReserveShadowMemoryRange") != std::string::npos ||
                                           out.find("Shadow memory range interleaves") != std::string::npos ||
                                           out.find("AddressSanitizer:DEADLYSIGNAL") != std::string::npos);
}

}  // namespace

std::string learner_renames(const DefinedSymbols& symbols, const std::set<std::string>& needed,
                            const std::set<std::string>& graders_own) {
  std::string out;
  for (const auto& name : symbols.all)
    // (A strong definition of the learner's wins over the grader's weak one whatever the order, so
    // it is renamed even where the grader has its own: an asm label can give ex::Matrix::index's name.)
    if (!needed.count(name) && (!graders_own.count(name) || symbols.strong.count(name)))
      out += name + " __attnlab_learner_" + name + '\n';
  return out;
}

void judge_grader_run(const GraderRun& g, const std::string& learner_file, std::size_t expected_cases,
                      const CheckOptions& opts, CheckResult& res) {
  const ChildResult& r = g.result;
  const bool sanitized = g.sanitized;
  const std::string& test = g.test;
  const std::string in_test = test.empty() ? "" : " while running the test '" + test + "'";
  // With AddressSanitizer an abort (handle_abort=1) comes with a stack trace: name the learner's line.
  const std::size_t abrt = sanitized ? r.output.find("ERROR: AddressSanitizer: ABRT") : std::string::npos;
  const std::string sanitizer =
      sanitized && abrt == std::string::npos ? describe_sanitizer_report(r.output, learner_file) : "";
  res.report = shorten(sanitized ? strip_sanitizer_output(r.output) : r.output);
  if (!sanitizer.empty()) {
    res.verdict = Verdict::Crashed;
    res.report += "\n" + sanitizer + in_test +
                  ".\nCheck the loop bounds and the index arithmetic on that line: an n-element buffer has\n"
                  "indices 0 … n-1, and element (i, j) of a rows × cols matrix is data[i * cols + j].\n";
  } else if (abrt != std::string::npos) {
    res.verdict = Verdict::Crashed;
    res.report += "\ncrashed" + in_test + sanitizer_frame(r.output.substr(abrt), learner_file, true) + ":\n" +
                  describe_signal(SIGABRT) + ".\n";
    if (r.output.find("Assertion '__n < this->size()' failed") != std::string::npos)
      res.report += "That is a std::vector index that is not below its size() (ex::Matrix's data is one): check the\n"
                    "loop bounds and the index arithmetic on that line; element (i, j) of a rows × cols matrix is\n"
                    "data[i * cols + j].\n";
  } else if (r.memory_exceeded) {
    res.verdict = Verdict::Crashed;
    res.report += "\nused more than " + std::to_string(g.rss_limit_mb) + " MiB of memory" + in_test +
                  " and was stopped\n(attnlab check --memory-mb " + std::to_string(opts.memory_mb) +
                  ", plus room for AddressSanitizer). Is a size computed wrongly, or a vector growing inside an endless loop?\n";
  } else if (r.timed_out) {
    res.verdict = Verdict::TimedOut;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", opts.timeout_s);
    res.report += std::string("\ntimed out after ") + secs + " s" + in_test +
                  ".\nLook for a loop that never ends: a condition that stays true, a counter that is never\n"
                  "incremented, or an unsigned index counting down past 0.\n";
  } else if (r.signal != 0) {
    res.verdict = Verdict::Crashed;
    res.report += "\ncrashed" + in_test + ":\n" + describe_signal(r.signal) + ".\n";
  } else {
    // A pass needs more than exit code 0: the grader's record, with this run's token, saying that every
    // test case ran and none failed. Learner code that ends the process early never gets that far.
    const ResultRecord rec = find_result_record(r.from_child, g.token);
    const std::size_t expected = expected_cases;
    const bool all_ran = rec.kind == ResultRecord::Kind::Found && rec.run > 0 && (expected == 0 || rec.run == expected);
    const std::string code = std::to_string(r.exit_code);
    if (all_ran && rec.failed == 0 && r.exit_code == 0) {
      res.verdict = Verdict::Passed;
    } else {
      res.verdict = Verdict::Failed;
      if (rec.kind == ResultRecord::Kind::Missing) {
        res.report += "\nyour code ended the program (exit code " + code + ") " +
                      (test.empty() ? std::string("before the first test started (from a static constructor?)")
                                    : "while running the test '" + test + "', before the checks finished") +
                      ".\nIs there a leftover exit() call (or _exit, quick_exit)? A check passes only when every test has run.\n";
      } else if (rec.kind == ResultRecord::Kind::TokenTaken) {
        res.report += "\nthe grader's private token for this run was gone when it started: code in your file read\n"
                      "it first (a static constructor reading file descriptor 3?). This run cannot count as a pass.\n";
      } else if (rec.kind == ResultRecord::Kind::Foreign) {
        res.report += "\nthe result channel holds a record that the grader did not write (it lacks this run's\n"
                      "token), and none that it did: your code ended the program (exit code " + code + ")" + in_test +
                      "\nbefore the checks finished. This run cannot count as a pass.\n";
      } else if (!all_ran) {
        res.report += "\nthe grader ran " + std::to_string(rec.run) + " of its " + std::to_string(expected) +
                      " tests, so this cannot count as a pass (is the grader out of date? rebuild attnlab).\n";
      } else if (rec.failed == 0) {
        res.report += "\nevery test passed, but the program then ended with exit code " + code +
                      " (an exit() in a destructor or an atexit handler of yours?), so this does not count as a pass.\n";
      } else if (r.exit_code == 0) {
        res.report += "\nthe program ended with exit code 0 although " + std::to_string(rec.failed) +
                      " tests failed (code of yours that runs at exit?), so this does not count as a pass.\n";
      } else if (r.exit_code != 1) {
        res.report += "\nthe grader exited with code " + code + " after its tests (did your code call exit()?)\n";
      }
    }
  }
}

// The phases in order (checker_parts.hpp and the functions above): compile, vet, rename, link, run,
// judge. A phase that ends the check (a compile or link error) leaves its verdict and report in res.
CheckResult run_check(const Kit& kit, const ExerciseInfo& ex, const Workspace& ws, const CheckOptions& opts) {
  CheckResult res;
  const auto grader = kit.graders.find(ex.slug);
  if (grader == kit.graders.end()) {
    throw RuntimeError("no grader for exercise " + ex.slug + " in " + kit.file.string() +
                       "; re-run cmake (cmake -S . -B build) and rebuild");
  }
  // The compiler this build was made with compiles the learner's file: without it every check would
  // fail as "does not compile" (or as the sandbox's "execvp" message), so say what to install instead.
  if (::access(kit.compiler.c_str(), X_OK) != 0) {
    throw RuntimeError("attnlab check needs a C++ compiler to build your file, and " + kit.compiler +
                       " (the one attnlab was built with) is not there; install it with: sudo apt-get install g++");
  }
  // A folder of its own for this run (WORKSPACE/.build/SLUG/run-XXXXXX), so that two checks of one
  // exercise at once (watch and a manual check) never build or grade in each other's files.
  const RunFolder run_folder(ws.build_dir(ex));
  const fs::path source = ws.learner_file(ex);
  try {
    io::read_text_file(source.string(), 4u << 20);  // a folder, an unreadable or a giant file: say so plainly
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + "; it should be your exercise file: move it away and run attnlab check " +
                     ex.slug + " to start again from the stub");
  }
  // Every step runs in the sandbox (exercises/sandbox.hpp) when bubblewrap can start here: the home
  // folders hidden, only this run's folder writable.
  CheckRun run{.kit = kit, .ex = ex, .grader_objects = grader->second, .box = sandbox(), .dir = run_folder.path(),
               .source = source, .object = run_folder.path() / "exercise.o", .program = run_folder.path() / "grader",
               .build_paths = {}, .run_paths = {}};
  // Without the sandbox, say so once.
  if (!run.box.available) {
    static bool warned = false;
    if (!warned)
      std::fprintf(stderr, "attnlab: warning: your code is compiled and graded without a sandbox, with your own "
                           "rights: %s\n", run.box.why_not.c_str());
    warned = true;
  }
  set_sandbox_paths(run);

  if (!compile_learner_file(run, res)) return res;
  DefinedSymbols symbols;
  if (!vet_learner_object(run, symbols, res)) return res;
  rename_learner_symbols(run, symbols);
  if (!link_with_grader(run, res)) return res;
  const GraderRun g = run_grader(run, opts);
  res.run_s = g.result.seconds;
  if (sanitizer_could_not_start(g)) {
    // Check again without AddressSanitizer rather than blame the learner's code.
    Kit plain = kit;
    plain.sanitizer_flags.clear();
    CheckResult again = run_check(plain, ex, ws, opts);
    again.report = "(note: checked without AddressSanitizer, which cannot start here; is ulimit -v set?)\n" + again.report;
    again.compile_s += res.compile_s;
    again.link_s += res.link_s;
    return again;
  }
  const auto cases = kit.grader_cases.find(ex.slug);
  judge_grader_run(g, run.source.string(), cases != kit.grader_cases.end() ? cases->second : 0, opts, res);
  return res;
}

}  // namespace attnlab::exercises
