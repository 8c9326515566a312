// The `bubble` command: runs, explores and replays scenario suites, simulates and sizes pools.
#include <bubble/version.hpp>

#include <fmt/core.h>

#include <string>

#include "commands.hpp"
#include "option_error.hpp"

namespace {

// "bubble limiter replay": the command and the deepest subcommand given on the command line.
std::string command_name(const CLI::App& app) {
  std::string name = "bubble";
  const CLI::App* at = &app;
  for (;;) {
    const auto parsed = at->get_subcommands();
    if (parsed.empty()) return name;
    at = parsed.front();
    name += " " + at->get_name();
  }
}

// Reports bad usage: the error in one line, then where the command's usage is described.
int usage_error(const CLI::App& app, const std::string& what) {
  const std::string name = command_name(app);
  fmt::print(stderr, "{}: {}\nRun `{} --help` for its options and examples.\n", name, what, name);
  return 2;
}

}  // namespace

// Exit status: 0 when everything held, 1 when a property (or a replayed failure) failed, 2 for
// every kind of bad usage, reported in one line that names the option and its value, followed by
// a line that points to the command's --help.
int main(int argc, char** argv) {
  CLI::App app{"bubble: deterministic testing of concurrent C++ code, in virtual time"};
  app.set_version_flag("--version", std::string(bubble::kVersion));
  app.require_subcommand(0, 1);
  app.footer(R"(Examples:
  bubble list
  bubble run
  bubble run exhibits && bubble replay bubble-failure-exhibits.json
  bubble sim --workers 4 --job-time exp:100ms --arrivals poisson:30/s
  bubble size --rate 300/s --latency 80ms
  bubble certificate merge shard-*.log

`bubble <command> --help` describes each command. Exit status: 0 when everything held, 1 when a
property failed, 2 for bad usage.)");
  int exit_code = 0;
  bubble::cli::add_list_command(app, exit_code);
  bubble::cli::add_run_command(app, exit_code);
  bubble::cli::add_replay_command(app, exit_code);
  bubble::cli::add_limiter_command(app, exit_code);
  bubble::cli::add_sim_command(app, exit_code);
  bubble::cli::add_size_command(app, exit_code);
  bubble::cli::add_certificate_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end the parse with status 0; CLI11 prints them.
    if (e.get_exit_code() == 0) return app.exit(e);
    return usage_error(app, e.what());
  } catch (const bubble::cli::OptionError& e) {
    return usage_error(app, e.what());
  }
  if (app.get_subcommands().empty()) {
    fmt::print("{}\n", app.help());
  }
  return exit_code;
}
