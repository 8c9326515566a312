// The `bubble` command: runs, explores and replays scenario suites.
#include <bubble/version.hpp>

#include <fmt/core.h>

#include <string>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"bubble: deterministic testing of concurrent C++ code, in virtual time"};
  app.set_version_flag("--version", std::string(bubble::kVersion));
  app.require_subcommand(0, 1);
  int exit_code = 0;
  bubble::cli::add_list_command(app, exit_code);
  bubble::cli::add_run_command(app, exit_code);
  bubble::cli::add_limiter_command(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  if (app.get_subcommands().empty()) {
    fmt::print("{}\n", app.help());
  }
  return exit_code;
}
