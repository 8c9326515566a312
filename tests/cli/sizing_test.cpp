// The sizing rules of thumb give the worked examples' answers.
#include <bubble/sim/sizing.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

namespace bubble::sim {
namespace {

using std::chrono::milliseconds;

const SizingAnswer* find(const std::vector<SizingAnswer>& answers, const std::string& name) {
  for (const auto& a : answers) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

TEST(Sizing, LittlesLawAndHeadroom) {
  const auto answers = size_pool({.rate_per_s = 300, .latency = milliseconds{80}});
  ASSERT_NE(find(answers, "in_flight"), nullptr);
  EXPECT_NEAR(find(answers, "in_flight")->value, 24, 1e-9);
  EXPECT_EQ(find(answers, "workers")->value, 30);
  // Rounding up forgives the last bits of binary arithmetic: 24/s x 200 ms is 4.800000000000001
  // in doubles, and / 0.8 is 6.000000000000001, which is 6 workers, not 7.
  EXPECT_EQ(find(size_pool({.rate_per_s = 24, .latency = milliseconds{200}}), "workers")->value, 6);
  EXPECT_NE(find(answers, "workers")->why.find("80%"), std::string::npos);
  // Headroom rounds up: 25 in flight at 80% need 32 workers (31.25 rounded up).
  EXPECT_EQ(find(size_pool({.rate_per_s = 250, .latency = milliseconds{100}}), "workers")->value,
            32);
}

TEST(Sizing, DownstreamCeilingWarnsWhenTheRateIsAboveIt) {
  const auto answers =
      size_pool({.rate_per_s = 300, .latency = milliseconds{80}, .downstream_concurrency = 20});
  ASSERT_NE(find(answers, "ceiling_per_s"), nullptr);
  EXPECT_NEAR(find(answers, "ceiling_per_s")->value, 250, 1e-9);
  EXPECT_NE(find(answers, "ceiling_per_s")->why.find("bigger quota"), std::string::npos);
  const auto below =
      size_pool({.rate_per_s = 200, .latency = milliseconds{80}, .downstream_concurrency = 20});
  EXPECT_EQ(find(below, "ceiling_per_s")->why.find("bigger quota"), std::string::npos);
}

TEST(Sizing, Goetz) {
  const auto answers =
      size_pool({.cores = 8, .wait = milliseconds{90}, .compute = milliseconds{10}});
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].name, "goetz_workers");
  EXPECT_EQ(answers[0].value, 80);
}

TEST(Sizing, NothingToSizeIsAnError) {
  EXPECT_THROW(size_pool({}), std::invalid_argument);
  EXPECT_THROW(size_pool({.rate_per_s = 10}), std::invalid_argument);
  EXPECT_THROW(size_pool({.rate_per_s = 10, .latency = milliseconds{1}, .target_utilization = 0}),
               std::invalid_argument);
}

}  // namespace
}  // namespace bubble::sim
