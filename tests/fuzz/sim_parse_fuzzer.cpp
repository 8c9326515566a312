// Fuzzes the value parsers of `bubble sim` and `bubble size` (bubble::sim, parse.hpp): the input's
// first byte picks the parser, the rest is the value.
//
// Properties: a value either parses or is rejected with bubble::sim::UsageError quoting it (any
// other exception escapes and stops the fuzzer); what parses lies in the range the parser states:
// integers in [min, max], durations in [0, 100 years] (> 0 when positive), rates in (0, 1e9]
// events per second, loads in (0, 1), job times with a mean > 0 (and a lognormal sigma in
// (0, 10]), spikes with from < to, batches of >= 1 job, and sweeps of at most 1,001 loads in
// (0, 1). The names (policies, fairness, stream filters) only parse or not.
#include <bubble/sim/model.hpp>
#include <bubble/sim/parse.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"

namespace {

using bubble::fuzz::require;
namespace sim = bubble::sim;

constexpr std::int64_t kHundredYearsNs = 100LL * 365 * 24 * 3600 * 1'000'000'000LL;

void check_duration(bubble::Duration d, bool positive, std::string_view text) {
  require(d.count() >= (positive ? 1 : 0) && d.count() <= kHundredYearsNs,
          "a duration lies in [0, 100 years]", text);
}

void check_rate(double per_second, bool allow_zero, std::string_view text) {
  require((allow_zero ? per_second >= 0 : per_second > 0) && per_second <= 1e9,
          "a rate lies in (0, 1e9]", text);
}

void check_job_time(const sim::JobTime& jt, std::string_view text) {
  require(jt.mean.count() > 0, "a job time's mean is > 0", text);
  if (jt.kind == sim::JobTimeKind::lognormal) {
    require(jt.sigma > 0 && jt.sigma <= 10, "a lognormal sigma lies in (0, 10]", text);
  }
}

void parse(unsigned selector, std::string_view text) {
  switch (selector % 17) {
    case 0: {
      const std::int64_t v = sim::parse_integer(text, 1, 10000);
      require(v >= 1 && v <= 10000, "an integer lies in [min, max]", text);
      break;
    }
    case 1: {
      const std::int64_t v = sim::parse_integer(text, std::numeric_limits<std::int64_t>::min() + 1,
                                                std::numeric_limits<std::int64_t>::max());
      require(v > std::numeric_limits<std::int64_t>::min(), "an integer lies in [min, max]", text);
      break;
    }
    case 2:
      (void)sim::parse_seed(text);
      break;
    case 3: {
      const double v = sim::parse_number(text, 0, 1);
      require(v >= 0 && v <= 1, "a number lies in [min, max]", text);
      break;
    }
    case 4:
      check_duration(sim::parse_duration(text, true), true, text);
      break;
    case 5:
      check_duration(sim::parse_duration(text, false), false, text);
      break;
    case 6:
      check_rate(sim::parse_rate_per_second(text), false, text);
      break;
    case 7: {
      const double v = sim::parse_load(text);
      require(v > 0 && v < 1, "a load lies in (0, 1)", text);
      break;
    }
    case 8:
      check_job_time(sim::parse_job_time(text), text);
      break;
    case 9:
      check_rate(sim::parse_arrivals(text).per_second, false, text);
      break;
    case 10: {
      const sim::Spike s = sim::parse_spike(text);
      check_rate(s.per_second, true, text);
      check_duration(s.from, false, text);
      check_duration(s.to, true, text);
      require(s.from < s.to, "a spike's from < to", text);
      break;
    }
    case 11: {
      const sim::Slowdown s = sim::parse_slowdown(text);
      check_job_time(s.job_time, text);
      check_duration(s.from, false, text);
      break;
    }
    case 12: {
      const sim::Batch b = sim::parse_batch(text);
      require(b.count >= 1, "a batch has a job", text);
      check_duration(b.at, false, text);
      break;
    }
    case 13: {
      const sim::LoadSweep s = sim::parse_sweep(text);
      const std::vector<double> loads = s.loads();
      require(!loads.empty() && loads.size() <= 1001, "a sweep has 1 to 1,001 loads", text);
      for (const double load : loads) require(load > 0 && load < 1, "a load lies in (0, 1)", text);
      break;
    }
    case 14:
      (void)sim::parse_policy(text);
      break;
    case 15:
      (void)sim::parse_fairness(text);
      break;
    default:
      (void)sim::parse_stream_filter(text);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text = bubble::fuzz::text_of(data + 1, size - 1);
  try {
    parse(data[0], text);
  } catch (const sim::UsageError& e) {
    require(e.value() == text, "a rejection quotes the value", e.what());
  }
  return 0;
}
