// The strict parsers accept the documented forms and nothing else.
#include <bubble/sim/parse.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace bubble::sim {
namespace {

using namespace std::chrono_literals;

TEST(Parse, Durations) {
  EXPECT_EQ(parse_duration("400ms", true), 400ms);
  EXPECT_EQ(parse_duration("1.5s", true), 1500ms);
  EXPECT_EQ(parse_duration("5m", true), 5min);
  EXPECT_EQ(parse_duration("1h", true), 1h);
  EXPECT_EQ(parse_duration("250us", true), 250us);
  EXPECT_EQ(parse_duration("0s", false), 0s);
  for (const char* bad :
       {"", "400", "ms", "-1s", "+1s", "1e400s", "1 s", "1sec", "nans", "infs", "1s ", "200y"}) {
    EXPECT_THROW(parse_duration(bad, false), UsageError) << bad;
  }
  EXPECT_THROW(parse_duration("0s", true), UsageError);
  EXPECT_THROW(parse_duration("0.1ns", true), UsageError);  // rounds to zero
}

TEST(Parse, Rates) {
  EXPECT_DOUBLE_EQ(parse_rate_per_second("9/s"), 9);
  EXPECT_DOUBLE_EQ(parse_rate_per_second("600/m"), 10);
  EXPECT_DOUBLE_EQ(parse_rate_per_second("3600/h"), 1);
  EXPECT_DOUBLE_EQ(parse_rate_per_second("0/s", true), 0);
  for (const char* bad : {"9", "9/x", "/s", "1e400/s", "-1/s", "inf/s", "nan/s", "0/s", "2e9/s"}) {
    EXPECT_THROW(parse_rate_per_second(bad), UsageError) << bad;
  }
}

TEST(Parse, IntegersAndSeeds) {
  EXPECT_EQ(parse_integer("16", 1, 100), 16);
  for (const char* bad : {"0", "101", "1.5", "+3", "0x10", "1e3", " 5", "5 ", ""}) {
    EXPECT_THROW(parse_integer(bad, 1, 100), UsageError) << bad;
  }
  EXPECT_EQ(parse_seed("18446744073709551615"), 18446744073709551615ULL);
  EXPECT_THROW(parse_seed("-1"), UsageError);  // no silent wrap to 2^64 - 1
  EXPECT_THROW(parse_seed("18446744073709551616"), UsageError);
}

TEST(Parse, ErrorsSayWhatWasExpected) {
  try {
    parse_integer("0", 1, 100);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(e.value(), "0");
    EXPECT_EQ(e.expected(), "an integer from 1 to 100");
    EXPECT_STREQ(e.what(), "0: expected an integer from 1 to 100");
  }
}

TEST(Parse, JobTimesArrivalsSpikesAndTheRest) {
  const JobTime f = parse_job_time("fixed:400ms");
  EXPECT_EQ(f.kind, JobTimeKind::fixed);
  EXPECT_EQ(f.mean, 400ms);
  EXPECT_EQ(parse_job_time("exp:100ms").kind, JobTimeKind::exponential);
  const JobTime l = parse_job_time("lognormal:100ms:0.5");
  EXPECT_EQ(l.kind, JobTimeKind::lognormal);
  EXPECT_DOUBLE_EQ(l.sigma, 0.5);
  for (const char* bad : {"fixed", "fixed:", "gamma:1s", "exp:0s", "lognormal:1s", "lognormal:1s:0",
                          "lognormal:1s:x"}) {
    EXPECT_THROW(parse_job_time(bad), UsageError) << bad;
  }
  EXPECT_EQ(parse_arrivals("uniform:9/s").kind, ArrivalKind::uniform);
  EXPECT_DOUBLE_EQ(parse_arrivals("poisson:9/s").per_second, 9);
  EXPECT_THROW(parse_arrivals("bursty:9/s"), UsageError);
  const Spike s = parse_spike("15/s@30s-40s");
  EXPECT_DOUBLE_EQ(s.per_second, 15);
  EXPECT_EQ(s.from, 30s);
  EXPECT_EQ(s.to, 40s);
  EXPECT_THROW(parse_spike("15/s@40s-30s"), UsageError);
  EXPECT_THROW(parse_spike("15/s@30s"), UsageError);
  const Slowdown d = parse_slowdown("fixed:10s@30s");
  EXPECT_EQ(d.job_time.mean, 10s);
  EXPECT_EQ(d.from, 30s);
  EXPECT_EQ(parse_batch("50000@10s").count, 50000);
  EXPECT_THROW(parse_batch("0@10s"), UsageError);
  EXPECT_EQ(parse_policy("reject"), QueuePolicy::reject);
  EXPECT_THROW(parse_policy("drop"), UsageError);
  EXPECT_EQ(parse_fairness("fifo"), Fairness::fifo);
  EXPECT_EQ(parse_stream_filter("urgent"), StreamFilter::urgent);
  EXPECT_DOUBLE_EQ(parse_load("80%"), 0.8);
  EXPECT_THROW(parse_load("1"), UsageError);
}

TEST(Parse, SweepPointsIncludeBothEnds) {
  const LoadSweep s = parse_sweep("0.1:0.95:0.05");
  const auto loads = s.loads();
  ASSERT_EQ(loads.size(), 18u);
  EXPECT_DOUBLE_EQ(loads.front(), 0.1);
  EXPECT_NEAR(loads.back(), 0.95, 1e-12);
  EXPECT_THROW(parse_sweep("0.5:0.4:0.1"), UsageError);
  EXPECT_THROW(parse_sweep("0.1:1:0.1"), UsageError);
  EXPECT_THROW(parse_sweep("0.1:0.9:0"), UsageError);
}

// A step too small to move a load in doubles (0.5 + 1e-300 == 0.5) made the points never pass
// `to`: loads() never returned, filling memory.
TEST(Parse, ASweepOfOneLoadHasOnePointWhateverItsStep) {
  for (const char* text : {"0.5:0.5:1e-300", "0.5:0.5:1e-17", "0.5:0.5:0.1"}) {
    const std::vector<double> loads = parse_sweep(text).loads();
    ASSERT_EQ(loads.size(), 1u) << text;
    EXPECT_EQ(loads.front(), 0.5) << text;
  }
}

}  // namespace
}  // namespace bubble::sim
