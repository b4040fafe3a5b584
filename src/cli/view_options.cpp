// The options every command that shows or scores a trained model declares (commands.hpp).
#include "cli/commands.hpp"

namespace attnlab::cli {

CLI::Option* add_model_option(CLI::App& sub, std::string& model, const std::string& help) {
  return sub.add_option("-m,--model", model, help.empty() ? "Model folder (or .ckpt file)" : help)->capture_default_str();
}

CLI::Option* add_format_option(CLI::App& sub, std::string& format, const std::string& help) {
  return sub.add_option("-f,--format", format, help)->check(CLI::IsMember({"text", "json"}))->capture_default_str();
}

void add_view_flags(CLI::App& sub, bool& no_color, bool& full) {
  sub.add_flag("--no-color", no_color, "Plain text without colour (also when NO_COLOR is set or stdout is not a terminal)");
  sub.add_flag("--full", full, "Print every column even when a matrix is wider than the terminal");
}

}  // namespace attnlab::cli
