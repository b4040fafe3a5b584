// attnlab: a terminal lab that teaches self-attention step by step.
//
// main() builds the command line from the subcommands' setup functions and is the one place where
// errors are turned into messages and exit codes: 0 success, 1 run-time failure, 2 bad input or usage.
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>

#include <fmt/format.h>

#include "render/terminal.hpp"
#include "cli/commands.hpp"
#include "cli/pictures.hpp"
#include "backend/cpu/blas_setup.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace {

// Whatever the command wrote to stdout must really have arrived: a full disk, /dev/full or a closed
// stdout otherwise leaves truncated output (invalid JSON, say) behind an exit code of 0. std::cout
// shares stdout's buffer (sync_with_stdio), so one fflush reports both; a failure turns the exit code
// into 1 with the reason, unless the command already failed. A reader that went away (EPIPE, as in
// `attnlab lessons | head -1` with SIGPIPE ignored) is not an error worth a message.
bool g_stdout_was_closed = false;
// ensure_blas_kernel may restart the program (backend/cpu/blas_setup.hpp), and the restarted one
// finds fd 1 already on /dev/full: this variable, set only around that restart, carries the fact.
constexpr const char* kStdoutClosedVar = "ATTNLAB_STDOUT_WAS_CLOSED";

// A program started with stdin, stdout or stderr closed would hand those descriptor numbers to the
// next files it opens: a checkpoint being written could then receive the output meant for stdout.
// Fill them first: stdin and stderr with /dev/null, stdout with /dev/full so that writing to it fails
// and finish_output says why.
void guard_standard_fds() {
  if (std::getenv(kStdoutClosedVar)) {
    g_stdout_was_closed = true;
    ::unsetenv(kStdoutClosedVar);
  }
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int got = open(fd == 1 ? "/dev/full" : "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got >= 0 && got != fd) {
      dup2(got, fd);
      close(got);
    }
    if (fd == 1) g_stdout_was_closed = true;
  }
}

// A write that failed before the last fflush (an explicit flush, std::endl) leaves stdout's error
// flag but not its errno. Name the likely cause from what stdout is: a pipe or socket whose reader
// went away, /dev/full, or a regular file on a full file system; 0 when none fits.
int guess_stdout_errno() {
  struct stat st {};
  if (fstat(1, &st) != 0) return errno;
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) return EPIPE;
  if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 7) return ENOSPC;  // /dev/full
  struct statvfs vfs {};
  if (S_ISREG(st.st_mode) && fstatvfs(1, &vfs) == 0 && vfs.f_bavail == 0) return ENOSPC;
  return 0;
}

int finish_output(int rc) {
  std::cout.flush();
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || std::cout.fail();
  if (!failed) return rc;
  const int err = errno ? errno : guess_stdout_errno();
  if (err == EPIPE) return rc == 0 ? 1 : rc;
  if (g_stdout_was_closed) std::fprintf(stderr, "attnlab: error: stdout: is closed; the output was lost\n");
  else std::fprintf(stderr, "attnlab: error: stdout: could not write the output (%s); it is incomplete\n",
                    err ? std::strerror(err) : "write error");
  return rc == 0 ? 1 : rc;
}

int run(int argc, char** argv);

// An error's message as printed: one line, and at most one hint line after it that starts with "Run "
// or "Continue with: " (docs/errors.md). Every control character, newline included, is shown as an
// escape in both (attnlab::visible_text), so a path or a sentence quoted in a message cannot start a
// line of its own, clear the screen or move the cursor ($'no\nsuch' prints as no\x0asuch).
std::string shown_message(const std::string& what) {
  std::size_t hint = std::string::npos;
  for (const char* start : {"\nContinue with: ", "\nRun "}) {
    const std::size_t at = what.rfind(start);
    if (at != std::string::npos && (hint == std::string::npos || at > hint)) hint = at;
  }
  if (hint == std::string::npos) return attnlab::visible_text(what);
  return attnlab::visible_text(what.substr(0, hint)) + "\n" + attnlab::visible_text(what.substr(hint + 1));
}

}  // namespace

int main(int argc, char** argv) {
  guard_standard_fds();
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, which the writers report with the
  // file's name, instead of SIGXFSZ killing attnlab without a word. Children get the default back.
  std::signal(SIGXFSZ, SIG_IGN);
  // Not a terminal: one 1 MiB buffer, so that a failing write (a full disk) usually happens in
  // finish_output's fflush, where its errno can still be named.
  static char out_buffer[1 << 20];
  if (!isatty(1)) std::setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
  return finish_output(run(argc, argv));
}

namespace {

int run(int argc, char** argv) {
  if (g_stdout_was_closed) ::setenv(kStdoutClosedVar, "1", 1);
  attnlab::cpu::ensure_blas_kernel(argv);  // may restart the program with the right OpenBLAS kernel
  ::unsetenv(kStdoutClosedVar);            // not restarted: nothing to carry, and no child inherits it
  attnlab::cli::set_command_line(argc, argv);  // for the footer of --html pages
  CLI::App app{"attnlab: learn self-attention and multi-head attention step by step, on real sentences,\n"
               "with every intermediate matrix printed.",
               "attnlab"};
  app.set_version_flag("--version", std::string("attnlab ") + ATTNLAB_VERSION);
  app.set_help_all_flag("--help-all", "Print help for every subcommand and exit");
  app.footer("Run 'attnlab SUBCOMMAND --help' for the options of one subcommand.");
  app.require_subcommand(0, 1);  // one command per run, so "attnlab hint attention" names an exercise
  attnlab::cli::setup_lessons(app);
  attnlab::cli::setup_lesson(app);
  attnlab::cli::setup_tour(app);
  attnlab::cli::setup_attention(app);
  attnlab::cli::setup_train(app);
  attnlab::cli::setup_eval(app);
  attnlab::cli::setup_ship(app);
  attnlab::cli::setup_translate(app);
  attnlab::cli::setup_attend(app);
#ifdef ATTNLAB_WITH_SERVE
  attnlab::cli::setup_serve(app);
#endif
  attnlab::cli::setup_generate(app);
  attnlab::cli::setup_heads(app);
  attnlab::cli::setup_timeline(app);
  attnlab::cli::setup_doctor(app);
  attnlab::cli::setup_bench(app);
  attnlab::cli::setup_params(app);
  attnlab::cli::setup_corpus(app);
  attnlab::cli::setup_exercises(app);
  attnlab::cli::setup_check(app);
  attnlab::cli::setup_hint(app);
  attnlab::cli::setup_solution(app);
  attnlab::cli::setup_reset(app);
  attnlab::cli::setup_watch(app);
  attnlab::cli::setup_progress(app);

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      fmt::print("{}", app.help());
      return 0;
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Bad flags or flag values are usage errors: exit code 2, as for every other bad input.
    std::fprintf(stderr, "attnlab: error: %s\nRun 'attnlab --help' (or 'attnlab SUBCOMMAND --help') for usage.\n",
                 attnlab::visible_text(e.what()).c_str());
    return 2;
  } catch (const attnlab::cli::ExitCode& e) {
    return e.code;
  } catch (const attnlab::Interrupted& e) {
    std::fprintf(stderr, "attnlab: %s\n", shown_message(e.what()).c_str());
    return e.exit_code();
  } catch (const attnlab::Error& e) {
    // Messages quote the user's input and files' contents: their control characters are shown.
    std::fprintf(stderr, "attnlab: error: %s\n", shown_message(e.what()).c_str());
    return e.exit_code();
  } catch (const std::filesystem::filesystem_error& e) {
    // The file system refused a path the command was given or reads, somewhere no check of its own
    // caught it first: a path that does not resolve (a symbolic link loop, a file where a folder should
    // be, a name too long, a missing one) is the input's fault, exit 2, anything else (permissions,
    // a full disk) a run-time failure, exit 1. Either way the path is named: never "internal error".
    const std::error_code c = e.code();
    const bool bad_path = c == std::errc::too_many_symbolic_link_levels || c == std::errc::no_such_file_or_directory ||
                          c == std::errc::not_a_directory || c == std::errc::filename_too_long;
    const std::string where = e.path1().empty() ? std::string("a file") : e.path1().string();
    std::fprintf(stderr, "attnlab: error: %s\n", attnlab::visible_text(where + ": cannot be used (" + c.message() + ")").c_str());
    return bad_path ? 2 : 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "attnlab: error: out of memory; try a smaller problem\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: internal error: %s\nPlease report this with the command you ran.\n",
                 attnlab::visible_text(e.what()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
