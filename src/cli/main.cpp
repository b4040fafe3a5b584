// attnlab: a terminal lab that teaches self-attention step by step.
//
// main() builds the command line from the subcommands' setup functions and is the one place where
// errors are turned into messages and exit codes: 0 success, 1 run-time failure, 2 bad input or usage.
#include <cstdio>
#include <exception>
#include <new>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "util/blas_setup.hpp"
#include "util/error.hpp"

int main(int argc, char** argv) {
  attnlab::ensure_blas_kernel(argv);  // may restart the program with the right OpenBLAS kernel
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
  attnlab::cli::setup_translate(app);
  attnlab::cli::setup_attend(app);
  attnlab::cli::setup_generate(app);
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
    std::fprintf(stderr, "attnlab: error: %s\nRun 'attnlab --help' (or 'attnlab SUBCOMMAND --help') for usage.\n", e.what());
    return 2;
  } catch (const attnlab::cli::ExitCode& e) {
    return e.code;
  } catch (const attnlab::Interrupted& e) {
    std::fprintf(stderr, "attnlab: %s\n", e.what());
    return e.exit_code();
  } catch (const attnlab::Error& e) {
    std::fprintf(stderr, "attnlab: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "attnlab: error: out of memory; try a smaller problem\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: internal error: %s\nPlease report this with the command you ran.\n", e.what());
    return 1;
  }
  return 0;
}
