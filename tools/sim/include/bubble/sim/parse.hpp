#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <bubble/sim/model.hpp>
#include <bubble/time.hpp>

// Strict parsers for the values of `bubble sim` and `bubble size`. Every parser accepts the whole
// text or nothing: trailing characters, signs where none belong, values that overflow (1e400) and
// values outside the stated range are errors. Each throws UsageError with the text it was given
// and what it expected; the command prefixes the option name ("--workers 0: expected an integer
// >= 1").
namespace bubble::sim {

// A value on the command line that does not parse. what() is "<value>: expected <expected>".
class UsageError : public std::invalid_argument {
 public:
  UsageError(std::string value, std::string expected);
  const std::string& value() const noexcept { return value_; }
  const std::string& expected() const noexcept { return expected_; }

 private:
  std::string value_;
  std::string expected_;
};

// A decimal integer in [min, max], digits only after an optional '-' ("16", "-3"; not "+3",
// "0x10", "1e3", "16 ").
std::int64_t parse_integer(std::string_view text, std::int64_t min, std::int64_t max);

// A seed: a decimal integer in [0, 2^64 - 1]. Negative seeds are errors (they do not wrap).
std::uint64_t parse_seed(std::string_view text);

// A finite decimal number ("0.8", "1e-3"), in [min, max].
double parse_number(std::string_view text, double min, double max);

// A duration: a finite decimal number followed by one unit, ns, us, ms, s, m or h ("400ms",
// "1.5s", "5m", "1h"), rounded to the nearest nanosecond. Durations must be >= 0, and > 0 when
// `positive`; at most 100 years.
Duration parse_duration(std::string_view text, bool positive);

// A rate: a finite decimal number followed by /s, /m or /h ("9/s", "0.5/s", "600/m"), in events
// per second, in (0, 1e9] (or [0, 1e9] when `allow_zero`).
double parse_rate_per_second(std::string_view text, bool allow_zero = false);

// A load fraction for --sweep-load ("0.5"), or a percentage ("50%"), in (0, 1) exclusive of 1.
double parse_load(std::string_view text);

// "fixed:400ms", "exp:100ms", "lognormal:100ms:0.5": the distribution and its mean (> 0); for
// lognormal the sigma of the underlying normal, in (0, 10].
JobTime parse_job_time(std::string_view text);

// "poisson:9/s", "uniform:9/s".
Arrivals parse_arrivals(std::string_view text);

// "15/s@30s-40s": the arrival rate from 30 s to 40 s (start < end).
Spike parse_spike(std::string_view text);

// "fixed:10s@30s": jobs that start at or after 30 s take fixed:10s.
Slowdown parse_slowdown(std::string_view text);

// "50000@10s": 50,000 jobs submitted at once at 10 s (count >= 1).
Batch parse_batch(std::string_view text);

// "unbounded", "block", "reject".
QueuePolicy parse_policy(std::string_view text);

// "round-robin", "fifo".
Fairness parse_fairness(std::string_view text);

// "all", "main", "urgent", "batch".
StreamFilter parse_stream_filter(std::string_view text);

// "a:b:step" with 0 < a <= b < 1 and step > 0 (at most 1,000 points).
LoadSweep parse_sweep(std::string_view text);

}  // namespace bubble::sim
