#include "limiter_input.hpp"

#include <bubble/limiter/token_bucket_replay.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "option_error.hpp"

namespace bubble::cli {

double strict_rate(const std::string& text) {
  double rate = 0;
  try {
    rate = parse_rate(text);
  } catch (const std::invalid_argument&) {
    rate = std::nan("");
  }
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool spelled_inf = lower.find("inf") != std::string::npos;
  if (std::isnan(rate) || (std::isinf(rate) && !spelled_inf)) {
    throw OptionError(
        fmt::format("--rate {}: expected a finite number of tokens per second >= 0, or inf", text));
  }
  return rate;
}

void check_times(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  std::int64_t previous = 0;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string first;
    if (!(fields >> first) || first.front() == '#') continue;
    std::int64_t t = 0;
    const char* begin = first.data() + (first.front() == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(begin, first.data() + first.size(), t);
    if (ec != std::errc{} || end != first.data() + first.size()) continue;
    if (t < 0) {
      throw OptionError(
          fmt::format("stdin line {}: time {}: expected nanoseconds >= 0", number, first));
    }
    if (t < previous) {
      throw OptionError(fmt::format(
          "stdin line {}: time {}: expected times that never decrease (the line before is at {})",
          number, first, previous));
    }
    previous = t;
  }
}

}  // namespace bubble::cli
