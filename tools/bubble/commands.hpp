#pragma once

#include <CLI/CLI.hpp>

namespace bubble::cli {

// Each function adds one subcommand of the `bubble` command to `app`; the subcommand's callback
// does the work and sets `exit_code`: 0 on success, 1 when something it ran failed. Bad usage
// throws OptionError (option_error.hpp), which main() reports in one line with status 2.
void add_list_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_replay_command(CLI::App& app, int& exit_code);
void add_limiter_command(CLI::App& app, int& exit_code);
void add_sim_command(CLI::App& app, int& exit_code);
void add_size_command(CLI::App& app, int& exit_code);
void add_certificate_command(CLI::App& app, int& exit_code);

}  // namespace bubble::cli
