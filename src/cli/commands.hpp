#pragma once
// Every subcommand lives in its own file as an options struct, setup_x(CLI::App&) which registers it,
// and run_x(const XOptions&) which does the work. Errors are thrown as attnlab::Error and reported
// once, in main().
#include <CLI/CLI.hpp>

namespace attnlab::cli {

void setup_attention(CLI::App& app);
void setup_doctor(CLI::App& app);
void setup_bench(CLI::App& app);
void setup_corpus(CLI::App& app);
void setup_train(CLI::App& app);
void setup_eval(CLI::App& app);
void setup_translate(CLI::App& app);
void setup_attend(CLI::App& app);
void setup_generate(CLI::App& app);
void setup_lessons(CLI::App& app);
void setup_lesson(CLI::App& app);
void setup_tour(CLI::App& app);

}  // namespace attnlab::cli
