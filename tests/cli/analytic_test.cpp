// Closed-form queueing values: Erlang C and the M/M/c latency distribution against values
// computed independently (textbook tables and the M/M/1 formulas).
#include <bubble/sim/analytic.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace bubble::sim {
namespace {

TEST(Analytic, ErlangCForOneServerIsTheLoad) {
  // With one server an arrival waits exactly when the server is busy: C(1, a) = a.
  for (double a : {0.1, 0.5, 0.9, 0.99}) EXPECT_NEAR(erlang_c(1, a), a, 1e-12);
}

TEST(Analytic, ErlangCMatchesKnownValues) {
  // C(2, 1) = 1/3 (by hand: B(2,1) = 1/5; C = B / (1 - rho (1 - B)) = 0.2 / 0.6).
  EXPECT_NEAR(erlang_c(2, 1.0), 1.0 / 3, 1e-12);
  // C(10, 8) = 0.409 (the classic call-centre table value, to three digits).
  EXPECT_NEAR(erlang_c(10, 8.0), 0.4092, 5e-4);
}

TEST(Analytic, ErlangCRejectsUnstableOrBadInput) {
  EXPECT_THROW(erlang_c(0, 0.5), std::invalid_argument);
  EXPECT_THROW(erlang_c(4, 4.0), std::invalid_argument);
  EXPECT_THROW(erlang_c(4, -1.0), std::invalid_argument);
}

TEST(Analytic, MM1LatencyIsExponentialWithRateMuMinusLambda) {
  // M/M/1, 100 ms jobs: at 50% the mean is 200 ms, at 90% 1000 ms, and p99 = ln(100) x mean.
  for (const auto& [lambda, mean_ms] : {std::pair{5.0, 200.0}, std::pair{9.0, 1000.0}}) {
    const Prediction p = mmc(1, lambda, 0.1);
    EXPECT_NEAR(p.mean_ms, mean_ms, 1e-9);
    EXPECT_NEAR(p.p50_ms, std::log(2.0) * mean_ms, 1e-6);
    EXPECT_NEAR(p.p99_ms, std::log(100.0) * mean_ms, 1e-6);
    EXPECT_NEAR(p.p99_ms / p.mean_ms, 4.605, 1e-3);
  }
}

TEST(Analytic, SixteenWorkersAtEightyPercentStayNearTheJobTime) {
  const Prediction p = mmc(16, 128, 0.1);
  EXPECT_NEAR(p.load, 0.8, 1e-12);
  // Mean = 100 ms + C / (c mu - lambda) = 100 ms + C x 31.25 ms; C(16, 12.8) is about 0.305.
  EXPECT_NEAR(p.p_wait, 0.305, 0.002);
  EXPECT_NEAR(p.mean_ms, 100 + p.p_wait * 1000 / 32, 1e-9);
  // The quantiles solve P(T > t) = 1 - q: check the distribution at the p99 point directly.
  EXPECT_GT(p.p99_ms, p.p90_ms);
  EXPECT_GT(p.p90_ms, p.p50_ms);
}

TEST(Analytic, PredictAppliesOnlyWhereAClosedFormDoes) {
  SimConfig c;
  c.workers = 2;
  c.job_time = {JobTimeKind::exponential, std::chrono::milliseconds{100}};
  c.arrivals = {ArrivalKind::poisson, 10};
  ASSERT_TRUE(predict(c).has_value());
  EXPECT_STREQ(predict(c)->model, "M/M/c");
  SimConfig spiky = c;
  spiky.spikes.push_back({30, std::chrono::seconds{1}, std::chrono::seconds{2}});
  EXPECT_FALSE(predict(spiky).has_value());
  SimConfig bounded = c;
  bounded.policy = QueuePolicy::reject;
  EXPECT_FALSE(predict(bounded).has_value());
  SimConfig overloaded = c;
  overloaded.arrivals.per_second = 20;
  EXPECT_FALSE(predict(overloaded).has_value());
  // M/D/1 (Pollaczek-Khinchine): W = S + rho S / (2 (1 - rho)); at 50% with 100 ms: 150 ms.
  SimConfig md1 = c;
  md1.workers = 1;
  md1.job_time.kind = JobTimeKind::fixed;
  md1.arrivals.per_second = 5;
  ASSERT_TRUE(predict(md1).has_value());
  EXPECT_STREQ(predict(md1)->model, "M/G/1");
  EXPECT_NEAR(predict(md1)->mean_ms, 150, 1e-9);
  EXPECT_TRUE(std::isnan(predict(md1)->p99_ms));
}

}  // namespace
}  // namespace bubble::sim
