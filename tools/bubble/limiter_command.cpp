// `bubble limiter replay`: token-bucket decisions for a log of requests read from stdin.
#include <bubble/limiter/token_bucket_replay.hpp>
#include <bubble/sim/parse.hpp>

#include <fmt/core.h>

#include <climits>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "limiter_input.hpp"
#include "option_error.hpp"

namespace bubble::cli {

void add_limiter_command(CLI::App& app, int& exit_code) {
  auto* limiter = app.add_subcommand("limiter", "Rate limiters: replay token-bucket decisions");
  limiter->require_subcommand(1);
  limiter->footer(R"(Examples:
  printf '0 allow 1\n0 reserve 2\n' | bubble limiter replay --rate 10 --burst 2)");

  struct Args {
    std::string rate;
    std::string burst;
  };
  auto args = std::make_shared<Args>();
  auto* replay = limiter->add_subcommand(
      "replay",
      "Read lines '<t_ns> allow|reserve <n>' on stdin and print one decision per line:\n"
      "'true'/'false' for allow, '<ok> <delay_ns>' for reserve (golang.org/x/time/rate "
      "semantics;\na refused reservation's delay is 9223372036854775807). Blank lines and "
      "'#' comments are skipped.");
  replay->footer(R"(Examples:
  printf '0 allow 1\n0 allow 2\n0 reserve 1\n300000000 allow 2\n' | \
    bubble limiter replay --rate 10 --burst 2
  # prints: true, false, true 0, true (one per line)

Times are nanoseconds >= 0 on one clock and never decrease. Exit status: 0 when every line was
decided, 2 for bad usage: a bad option, or a malformed, negative or decreasing line (the decisions
of the lines before a malformed one are printed first).)");
  replay->add_option("--rate", args->rate, "Refill rate in tokens per second (>= 0, or inf)")
      ->required();
  replay->add_option("--burst", args->burst, "Bucket size (>= 0); the bucket starts full")
      ->required();
  replay->callback([args, &exit_code] {
    const double rate = strict_rate(args->rate);
    const int burst = static_cast<int>(parse_option(
        "--burst", args->burst, [](auto v) { return sim::parse_integer(v, 0, INT_MAX); }));
    std::ios::sync_with_stdio(false);
    std::stringstream log;
    log << std::cin.rdbuf();
    check_times(log.str());
    try {
      replay_decisions(log, std::cout, rate, burst);
    } catch (const std::invalid_argument& e) {
      std::cout.flush();
      throw OptionError(fmt::format("stdin {}", e.what()));
    }
    std::cout.flush();
    exit_code = 0;
  });
}

}  // namespace bubble::cli
