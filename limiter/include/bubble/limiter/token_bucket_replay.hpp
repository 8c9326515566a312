#pragma once

#include <cstddef>
#include <iosfwd>
#include <string_view>

namespace bubble {

// Replays a log of token-bucket requests against a fresh TokenBucketCore(rate, burst) and writes
// one decision per request, for differential testing against other implementations of
// golang.org/x/time/rate's semantics (`bubble limiter replay`).
//
// Input, one request per line: `<t_ns> allow <n>` or `<t_ns> reserve <n>`, where t_ns is the
// request's time as a signed integer number of nanoseconds on any clock (times may go backwards)
// and n an integer >= 0; fields are separated by spaces or tabs. Empty lines and lines whose first
// non-blank character is '#' are skipped and produce no output.
//
// Output, one line per request, in order:
//   allow   -> `true` or `false` (AllowN(t, n));
//   reserve -> `<ok> <delay_ns>` (ReserveN(t, n), then DelayFrom(t)); a refused reservation's
//              delay is 9223372036854775807 (InfDuration), as upstream.
//
// Returns the number of requests replayed. Throws std::invalid_argument, after writing the
// decisions of the lines before it, on the first malformed line, with a message naming the line
// number and the bad field, e.g. `line 3: bad n "-1": expected an integer >= 0`; and for a
// negative or NaN rate or a negative burst (as TokenBucketCore).
std::size_t replay_decisions(std::istream& in, std::ostream& out, double rate, int burst);

// Parses a rate for the command line: a decimal number >= 0 ("10", "0.5", "1e-3") or "inf"
// (any case, optionally "+inf"), which gives kInfiniteRate. Throws std::invalid_argument naming
// the text otherwise.
double parse_rate(std::string_view text);

}  // namespace bubble
