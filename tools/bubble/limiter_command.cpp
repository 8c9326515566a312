// `bubble limiter replay`: token-bucket decisions for a log of requests read from stdin.
#include <bubble/token_bucket_replay.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "commands.hpp"

namespace bubble::cli {

void add_limiter_command(CLI::App& app, int& exit_code) {
  auto* limiter = app.add_subcommand("limiter", "Rate limiters: replay token-bucket decisions");
  limiter->require_subcommand(1);

  struct Args {
    std::string rate;
    int burst = 0;
  };
  auto args = std::make_shared<Args>();
  auto* replay = limiter->add_subcommand(
      "replay",
      "Read lines '<t_ns> allow|reserve <n>' on stdin and print one decision per line:\n"
      "'true'/'false' for allow, '<ok> <delay_ns>' for reserve (golang.org/x/time/rate "
      "semantics;\na refused reservation's delay is 9223372036854775807). Blank lines and "
      "'#' comments are skipped.");
  replay->add_option("--rate", args->rate, "Refill rate in tokens per second (>= 0, or inf)")
      ->required();
  replay->add_option("--burst", args->burst, "Bucket size (>= 0); the bucket starts full")
      ->required();
  replay->callback([args, &exit_code] {
    try {
      const double rate = parse_rate(args->rate);
      std::ios::sync_with_stdio(false);
      replay_decisions(std::cin, std::cout, rate, args->burst);
      std::cout.flush();
      exit_code = 0;
    } catch (const std::invalid_argument& e) {
      std::cout.flush();
      fmt::print(stderr, "bubble limiter replay: {}\n", e.what());
      exit_code = 1;
    }
  });
}

}  // namespace bubble::cli
