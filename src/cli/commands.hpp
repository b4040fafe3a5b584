#pragma once
// Every subcommand lives in its own file as an options struct, setup_x(CLI::App&) which registers it,
// and run_x(const XOptions&) which does the work. Errors are thrown as attnlab::Error and reported
// once, in main().
#include <string>

#include <CLI/CLI.hpp>

#include "backend/backend.hpp"

namespace attnlab::cli {

void setup_attention(CLI::App& app);
void setup_doctor(CLI::App& app);
void setup_bench(CLI::App& app);
void setup_params(CLI::App& app);
void setup_corpus(CLI::App& app);
void setup_train(CLI::App& app);
void setup_eval(CLI::App& app);
void setup_ship(CLI::App& app);
void setup_translate(CLI::App& app);
void setup_attend(CLI::App& app);
void setup_serve(CLI::App& app);
void setup_generate(CLI::App& app);
void setup_heads(CLI::App& app);
void setup_timeline(CLI::App& app);
void setup_lessons(CLI::App& app);
void setup_lesson(CLI::App& app);
void setup_tour(CLI::App& app);

// Graded exercises (src/exercises/): one file each, cmd_exercises.cpp ... cmd_progress.cpp.
void setup_exercises(CLI::App& app);
void setup_check(CLI::App& app);
void setup_hint(CLI::App& app);
void setup_solution(CLI::App& app);
void setup_reset(CLI::App& app);
void setup_watch(CLI::App& app);
void setup_progress(CLI::App& app);

// Thrown by a subcommand that has already said everything and only needs a non-zero exit code
// (e.g. `check` on a failing exercise); main() returns the code without printing anything.
struct ExitCode {
  int code;
};

// `s` as one word a POSIX shell reads back as `s` (quoted with ' ' when it holds anything but letters,
// digits and -_./=:,+@%): for the commands attnlab prints to be run again ("Continue with: ..."), and
// the command line in an --html page's footer. Print it through attnlab::visible_text.
std::string shell_word(const std::string& s);

// --workspace DIR, shared by the exercise commands.
inline void add_workspace_option(CLI::App& sub, std::string& dir) {
  sub.add_option("--workspace", dir,
                 "Folder holding your exercise files (default: $XDG_DATA_HOME/attnlab/exercises, "
                 "usually ~/.local/share/attnlab/exercises); it must exist");
}

// The options of the commands that show or score a trained model (translate, attend, generate, heads,
// eval, the lessons), declared once so that they read alike everywhere: -m/--model, -f/--format
// (text or json), --no-color and --full.
CLI::Option* add_model_option(CLI::App& sub, std::string& model, const std::string& help = "");
CLI::Option* add_format_option(CLI::App& sub, std::string& format, const std::string& help = "Output format");
void add_view_flags(CLI::App& sub, bool& no_color, bool& full);

// --backend cpu|cuda, shared by the model commands (train, eval, translate, attend, generate, bench).
void add_backend_option(CLI::App& sub, std::string& name);
// The backend named by --backend (backend/registry.hpp: exit 2 when it cannot be had). When it is the
// CUDA emulator, says so on stderr: its speed is a CPU's running every GPU thread in turn.
backend::Ops<float>& open_backend(const std::string& name);
// --precision fp32|tf32|bf16 (train, bench): how the backend's matrix products compute.
void add_precision_option(CLI::App& sub, std::string& name);
// Sets the precision on `be`; exit 2 (InputError) when the backend has no tensor cores (the CPU).
// On a real GPU, bf16 also prints a note while its kernels have not been tested on one.
void apply_precision(backend::Ops<float>& be, const std::string& name);

}  // namespace attnlab::cli
