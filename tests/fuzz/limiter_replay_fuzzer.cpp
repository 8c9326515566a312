// Fuzzes the input of `bubble limiter replay`: its --rate and --burst values and the request log
// it reads on standard input. The input's first line is "<rate> <burst>", the rest the log.
//
// Properties: a bad --rate is rejected with bubble::cli::OptionError, a bad --burst with
// bubble::sim::UsageError, a log with negative or decreasing times with OptionError, and a
// malformed request line with std::invalid_argument (any other exception escapes and stops the
// fuzzer); replay_decisions writes one decision per request it counts, each "true" or "false",
// or for a reservation "<true|false> <delay_ns>" with a delay >= 0.
#include <bubble/limiter/token_bucket_replay.hpp>
#include <bubble/sim/parse.hpp>

#include <charconv>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "limiter_input.hpp"
#include "option_error.hpp"

namespace {

using bubble::fuzz::require;

bool is_decision(std::string_view line) {
  if (line == "true" || line == "false") return true;
  std::string_view rest = line;
  const std::string_view ok = bubble::fuzz::next_part(rest, ' ');
  if (ok != "true" && ok != "false") return false;
  std::int64_t delay = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), delay);
  return ec == std::errc{} && end == rest.data() + rest.size() && !rest.empty() && delay >= 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = bubble::fuzz::text_of(data, size);
  std::string_view rest = text;
  std::string_view options = bubble::fuzz::next_part(rest, '\n');
  const std::string rate_text(bubble::fuzz::next_part(options, ' '));
  const std::string log(rest);
  double rate = 0;
  int burst = 0;
  try {
    rate = bubble::cli::strict_rate(rate_text);
  } catch (const bubble::cli::OptionError&) {
    return 0;
  }
  try {
    burst = static_cast<int>(bubble::sim::parse_integer(options, 0, INT_MAX));
  } catch (const bubble::sim::UsageError&) {
    return 0;
  }
  require(rate >= 0 && burst >= 0, "accepted options are >= 0", text);
  try {
    bubble::cli::check_times(log);
  } catch (const bubble::cli::OptionError&) {
    return 0;
  }
  std::istringstream in(log);
  std::ostringstream out;
  std::size_t requests = 0;
  try {
    requests = bubble::replay_decisions(in, out, rate, burst);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  std::string_view decisions = out.view();
  std::size_t lines = 0;
  while (!decisions.empty()) {
    const std::string_view line = bubble::fuzz::next_part(decisions, '\n');
    require(is_decision(line), "each output line is a decision", std::string(line));
    ++lines;
  }
  require(lines == requests, "one decision per request", text);
  return 0;
}
