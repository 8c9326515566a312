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
  bubble::cli::add_sim_command(app, exit_code);
  bubble::cli::add_size_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // `bubble sim` and `bubble size` report every kind of bad usage in one line, with status 2.
    for (const char* name : {"sim", "size"}) {
      if (e.get_exit_code() != 0 && app.got_subcommand(name)) {
        fmt::print(stderr, "bubble {}: {}\n", name, e.what());
        return 2;
      }
    }
    return app.exit(e);
  }
  if (app.get_subcommands().empty()) {
    fmt::print("{}\n", app.help());
  }
  return exit_code;
}
