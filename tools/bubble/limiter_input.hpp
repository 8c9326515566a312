#pragma once

#include <string>

// The checks `bubble limiter replay` makes of its input before replaying it
// (bubble::replay_decisions parses the request lines themselves).
namespace bubble::cli {

// --rate: a finite number of tokens per second >= 0, or inf spelled out (a number too large for a
// double, 1e400, is an error, not infinity). Throws OptionError naming --rate and the text
// otherwise.
double strict_rate(const std::string& text);

// Checks that the request times of `log` (the first field of every request line) are >= 0 and
// never decrease; throws OptionError naming the line and the time otherwise. Malformed lines are
// left to replay_decisions.
void check_times(const std::string& log);

}  // namespace bubble::cli
