#include <bubble/sim/parse.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <utility>

#include <fmt/core.h>

namespace bubble::sim {

UsageError::UsageError(std::string value, std::string expected)
    : std::invalid_argument(value + ": expected " + expected),
      value_(std::move(value)),
      expected_(std::move(expected)) {}

namespace {

[[noreturn]] void fail(std::string_view text, std::string expected) {
  throw UsageError(std::string(text), std::move(expected));
}

// A finite double made of the whole of `text` (std::from_chars: no leading '+', no spaces, no
// "inf"/"nan"); nullopt otherwise, including on overflow.
bool to_double(std::string_view text, double& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out, std::chars_format::general);
  return ec == std::errc{} && p == end && std::isfinite(out);
}

// Splits "a<sep>b" at the first `sep`; false if there is none.
bool split(std::string_view text, char sep, std::string_view& a, std::string_view& b) {
  const auto at = text.find(sep);
  if (at == std::string_view::npos) return false;
  a = text.substr(0, at);
  b = text.substr(at + 1);
  return true;
}

constexpr const char* kDurationExpected =
    "a duration such as 400ms, 1.5s, 5m or 1h (units ns, us, ms, s, m, h)";

}  // namespace

std::int64_t parse_integer(std::string_view text, std::int64_t min, std::int64_t max) {
  const std::string expected = max == std::numeric_limits<std::int64_t>::max()
                                   ? fmt::format("an integer >= {}", min)
                                   : fmt::format("an integer from {} to {}", min, max);
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || p != end || v < min || v > max) fail(text, expected);
  return v;
}

std::uint64_t parse_seed(std::string_view text) {
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || p != end) {
    fail(text, "an integer from 0 to 18446744073709551615");
  }
  return v;
}

double parse_number(std::string_view text, double min, double max) {
  double v = 0;
  if (!to_double(text, v) || v < min || v > max) {
    fail(text, fmt::format("a number from {} to {}", min, max));
  }
  return v;
}

Duration parse_duration(std::string_view text, bool positive) {
  std::size_t unit_at = text.size();
  while (unit_at > 0 && std::isalpha(static_cast<unsigned char>(text[unit_at - 1]))) --unit_at;
  const std::string_view number = text.substr(0, unit_at);
  const std::string_view unit = text.substr(unit_at);
  double scale = 0;
  if (unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = 1e3;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "s") {
    scale = 1e9;
  } else if (unit == "m") {
    scale = 60e9;
  } else if (unit == "h") {
    scale = 3600e9;
  } else {
    fail(text, kDurationExpected);
  }
  double v = 0;
  if (!to_double(number, v)) fail(text, kDurationExpected);
  const double ns = v * scale;
  constexpr double kMaxNs = 100.0 * 365 * 24 * 3600e9;
  if (ns < 0 || ns > kMaxNs) fail(text, "a duration from 0 to 100 years");
  const auto rounded = static_cast<std::int64_t>(std::llround(ns));
  if (positive && rounded <= 0) fail(text, "a duration > 0 (at least 1ns)");
  return Duration{rounded};
}

double parse_rate_per_second(std::string_view text, bool allow_zero) {
  constexpr const char* kExpected = "a rate such as 9/s, 0.5/s, 600/m or 100/h";
  std::string_view number;
  std::string_view unit;
  if (!split(text, '/', number, unit)) fail(text, kExpected);
  double per = 0;
  if (unit == "s") {
    per = 1;
  } else if (unit == "m") {
    per = 60;
  } else if (unit == "h") {
    per = 3600;
  } else {
    fail(text, kExpected);
  }
  double v = 0;
  if (!to_double(number, v)) fail(text, kExpected);
  const double rate = v / per;
  if (rate < 0 || (!allow_zero && rate == 0) || rate > 1e9) {
    fail(text, allow_zero ? "a rate from 0/s to 1e9/s" : "a rate > 0/s and at most 1e9/s");
  }
  return rate;
}

double parse_load(std::string_view text) {
  double v = 0;
  bool ok = false;
  if (!text.empty() && text.back() == '%') {
    ok = to_double(text.substr(0, text.size() - 1), v);
    v /= 100;
  } else {
    ok = to_double(text, v);
  }
  if (!ok || v <= 0 || v >= 1) fail(text, "a load > 0 and < 1 (0.8 or 80%)");
  return v;
}

JobTime parse_job_time(std::string_view text) {
  constexpr const char* kExpected = "fixed:<mean>, exp:<mean> or lognormal:<mean>:<sigma>";
  std::string_view kind;
  std::string_view rest;
  if (!split(text, ':', kind, rest)) fail(text, kExpected);
  JobTime jt;
  if (kind == "fixed" || kind == "exp") {
    jt.kind = kind == "fixed" ? JobTimeKind::fixed : JobTimeKind::exponential;
    try {
      jt.mean = parse_duration(rest, true);
    } catch (const UsageError&) {
      fail(text, kExpected);
    }
    return jt;
  }
  if (kind == "lognormal") {
    std::string_view mean;
    std::string_view sigma;
    if (!split(rest, ':', mean, sigma)) fail(text, kExpected);
    jt.kind = JobTimeKind::lognormal;
    try {
      jt.mean = parse_duration(mean, true);
    } catch (const UsageError&) {
      fail(text, kExpected);
    }
    if (!to_double(sigma, jt.sigma) || jt.sigma <= 0 || jt.sigma > 10) {
      fail(text, "lognormal:<mean>:<sigma> with sigma > 0 and <= 10");
    }
    return jt;
  }
  fail(text, kExpected);
}

Arrivals parse_arrivals(std::string_view text) {
  constexpr const char* kExpected = "poisson:<rate> or uniform:<rate>, such as poisson:9/s";
  std::string_view kind;
  std::string_view rate;
  if (!split(text, ':', kind, rate)) fail(text, kExpected);
  Arrivals a;
  if (kind == "poisson") {
    a.kind = ArrivalKind::poisson;
  } else if (kind == "uniform") {
    a.kind = ArrivalKind::uniform;
  } else {
    fail(text, kExpected);
  }
  try {
    a.per_second = parse_rate_per_second(rate);
  } catch (const UsageError& e) {
    fail(text, e.expected());
  }
  return a;
}

Spike parse_spike(std::string_view text) {
  constexpr const char* kExpected = "<rate>@<from>-<to>, such as 15/s@30s-40s";
  std::string_view rate;
  std::string_view window;
  std::string_view from;
  std::string_view to;
  if (!split(text, '@', rate, window) || !split(window, '-', from, to)) fail(text, kExpected);
  Spike s;
  try {
    s.per_second = parse_rate_per_second(rate, true);
    s.from = parse_duration(from, false);
    s.to = parse_duration(to, true);
  } catch (const UsageError& e) {
    fail(text, fmt::format("{} ({})", kExpected, e.what()));
  }
  if (s.to <= s.from) fail(text, "<rate>@<from>-<to> with from < to");
  return s;
}

Slowdown parse_slowdown(std::string_view text) {
  constexpr const char* kExpected = "<job time>@<from>, such as fixed:10s@30s";
  const auto at = text.rfind('@');
  if (at == std::string_view::npos) fail(text, kExpected);
  Slowdown s;
  try {
    s.job_time = parse_job_time(text.substr(0, at));
    s.from = parse_duration(text.substr(at + 1), false);
  } catch (const UsageError& e) {
    fail(text, fmt::format("{} ({})", kExpected, e.what()));
  }
  return s;
}

Batch parse_batch(std::string_view text) {
  constexpr const char* kExpected = "<count>@<time>, such as 50000@10s";
  std::string_view count;
  std::string_view at;
  if (!split(text, '@', count, at)) fail(text, kExpected);
  Batch b;
  try {
    b.count = parse_integer(count, 1, 100'000'000);
    b.at = parse_duration(at, false);
  } catch (const UsageError& e) {
    fail(text, fmt::format("{} ({})", kExpected, e.what()));
  }
  return b;
}

QueuePolicy parse_policy(std::string_view text) {
  if (text == "unbounded") return QueuePolicy::unbounded;
  if (text == "block") return QueuePolicy::block;
  if (text == "reject") return QueuePolicy::reject;
  fail(text, "unbounded, block or reject");
}

Fairness parse_fairness(std::string_view text) {
  if (text == "round-robin") return Fairness::round_robin;
  if (text == "fifo") return Fairness::fifo;
  fail(text, "round-robin or fifo");
}

StreamFilter parse_stream_filter(std::string_view text) {
  if (text == "all") return StreamFilter::all;
  if (text == "main") return StreamFilter::main;
  if (text == "urgent") return StreamFilter::urgent;
  if (text == "batch") return StreamFilter::batch;
  fail(text, "all, main, urgent or batch");
}

LoadSweep parse_sweep(std::string_view text) {
  constexpr const char* kExpected =
      "<from>:<to>:<step> with 0 < from <= to < 1, such as 0.1:0.95:0.05";
  std::string_view from;
  std::string_view rest;
  std::string_view to;
  std::string_view step;
  if (!split(text, ':', from, rest) || !split(rest, ':', to, step)) fail(text, kExpected);
  LoadSweep s;
  if (!to_double(from, s.from) || !to_double(to, s.to) || !to_double(step, s.step) || s.from <= 0 ||
      s.to >= 1 || s.from > s.to || s.step <= 0) {
    fail(text, kExpected);
  }
  if ((s.to - s.from) / s.step > 1000) fail(text, "a sweep of at most 1,000 points");
  return s;
}

}  // namespace bubble::sim
