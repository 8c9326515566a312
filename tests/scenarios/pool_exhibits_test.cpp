// The pool suite's workload property finds each known-bad pool exhibit: within a stated number of
// generated cases, with a counterexample that shrinks, and whose failing run replays to a
// byte-identical trace, twice. The flawless control passes the same property.
#include <bubble/bubble.hpp>
#include <bubble/scenarios/counterexample.hpp>
#include <bubble/scenarios/exhibit_pools.hpp>
#include <bubble/scenarios/pool_properties.hpp>
#include <bubble/scenarios/property.hpp>
#include <bubble/testing/property.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <optional>
#include <regex>
#include <sstream>
#include <string>

namespace bubble::scenarios {
namespace {

// Runs one case of the workload property; on failure returns the message and the failed run.
struct CaseRun {
  std::optional<std::string> failure;
  Schedule schedule;
  std::string trace;
};

CaseRun run_case(const PoolImplementation& impl, const PoolCase& c, const Options& base) {
  Options options = base;
  options.trace = true;
  CaseRun out;
  try {
    (void)bubble::run(options, pool_case_body(impl, c));
  } catch (const RunFailure& e) {
    out.failure = e.what();
    out.schedule = e.schedule();
    out.trace = e.trace().text();
  }
  return out;
}

// The first of the case's strategies under which the property fails, and its message.
std::optional<std::pair<Strategy, std::string>> first_failure(const PoolImplementation& impl,
                                                              const PoolCase& c) {
  for (const StrategyValue& s : c.strategies) {
    Options options;
    options.strategy = s.value;
    if (auto f = run_case(impl, c, options).failure) return std::make_pair(s.value, *f);
  }
  return std::nullopt;
}

std::optional<std::string> fails(const PoolImplementation& impl, const PoolCase& c) {
  if (auto f = first_failure(impl, c)) return f->second;
  return std::nullopt;
}

std::size_t jobs_in(const PoolCase& c) {
  std::size_t n = 0;
  for (const auto& s : c.submitters) n += s.size();
  return n;
}

void expect_found_shrunk_and_replayed(PoolFlaw flaw, int max_cases) {
  const PoolImplementation impl = exhibit_pool(flaw);
  for (std::uint64_t seed : {1U, 2U, 3U}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto found = find_counterexample<PoolCase>(
        pool_case(impl), seed, max_cases, [&](const PoolCase& c) { return fails(impl, c); });
    ASSERT_TRUE(found.has_value()) << impl.name << " passed " << max_cases << " cases";
    EXPECT_LE(found->cases, max_cases);
    EXPECT_TRUE(found->failure.find("pool property violated") != std::string::npos ||
                found->failure.find("deadlock") != std::string::npos)
        << found->failure;
    // Shrinking took at least one step and never grew the case. (How far it gets depends on the
    // strategy: a choices schedule's picks belong to decisions, and removing a job moves them.)
    EXPECT_GT(found->shrinks, 0);
    EXPECT_LE(jobs_in(found->minimal), jobs_in(found->original));
    EXPECT_LE(rc::toString(found->minimal).size(), rc::toString(found->original).size());
    // Replaying the failed run's recorded schedule twice gives the same failure and trace.
    const auto failing = first_failure(impl, found->minimal);
    ASSERT_TRUE(failing.has_value());
    Options first;
    first.strategy = failing->first;
    const CaseRun failed = run_case(impl, found->minimal, first);
    ASSERT_TRUE(failed.failure.has_value());
    Options replay;
    replay.replay = failed.schedule;
    const CaseRun again = run_case(impl, found->minimal, replay);
    const CaseRun third = run_case(impl, found->minimal, replay);
    ASSERT_TRUE(again.failure.has_value());
    ASSERT_TRUE(third.failure.has_value());
    EXPECT_FALSE(again.trace.empty());
    EXPECT_EQ(again.trace, failed.trace);
    EXPECT_EQ(third.trace, again.trace);
  }
}

TEST(PoolExhibits, APoolThatClosesItsQueueBeforeDrainingIsFoundWithin200Cases) {
  expect_found_shrunk_and_replayed(PoolFlaw::closes_before_draining, 200);
}

TEST(PoolExhibits, APoolWhoseSubmitReadsClosedOutsideItsLockIsFoundWithin500Cases) {
  expect_found_shrunk_and_replayed(PoolFlaw::reads_closed_outside_lock, 500);
}

// The control: the same small pool without a flaw passes the property (so the failures above
// are the flaws', not the exhibit's).
TEST(PoolExhibits, TheExhibitPoolWithoutAFlawPassesTheProperty) {
  const PoolImplementation impl = exhibit_pool(PoolFlaw::none);
  const auto found = find_counterexample<PoolCase>(
      pool_case(impl), 1, 1000, [&](const PoolCase& c) { return fails(impl, c); });
  EXPECT_FALSE(found.has_value()) << rc::toString(found->minimal) << "\n" << found->failure;
}

// bubble::Pool passes the same property, and its model-based test (the suite runs both).
TEST(PoolExhibits, BubblePoolPassesTheProperty) {
  const PoolImplementation impl = real_pool();
  const auto found = find_counterexample<PoolCase>(
      pool_case(impl), 1, 1000, [&](const PoolCase& c) { return fails(impl, c); });
  EXPECT_FALSE(found.has_value()) << rc::toString(found->minimal) << "\n" << found->failure;
}

}  // namespace
}  // namespace bubble::scenarios

namespace bubble::scenarios {
namespace {

// A failing suite property's report, as `bubble run` prints it: the counterexample names every
// generated value and prints durations with units (never RapidCheck's "<???>"), the bubble's
// schedule line says it replays the run only with the generated values (no bare replay line),
// and the failure entry names the commands that reproduce the whole case.
TEST(PoolExhibits, AFailingPropertyReportIsReadableAndSaysHowToReproduceTheCase) {
  const PoolImplementation impl = exhibit_pool(PoolFlaw::closes_before_draining);
  SuiteOptions options;
  options.seed = 5;
  options.cases = 300;
  SuiteResult result;
  std::ostringstream log;
  check_property("exhibits", "closes before draining", options, result, log, [impl] {
    const PoolCase c = testing::draw(pool_case(impl));
    for (const StrategyValue& s : c.strategies) {
      testing::run_property({.strategy = s.value}, pool_case_body(impl, c));
    }
  });
  const std::string report = log.str();
  ASSERT_EQ(result.properties_failed, 1) << report;
  EXPECT_NE(report.find("PoolCase{workers="), std::string::npos) << report;
  EXPECT_NE(report.find("JobSpec{"), std::string::npos) << report;
  EXPECT_NE(report.find("ShutdownSpec{at="), std::string::npos) << report;
  EXPECT_TRUE(
      std::regex_search(report, std::regex("gap=[0-9.]+(ns|us|ms|s), work=[0-9.]+(ns|us|ms|s)")))
      << report;
  EXPECT_EQ(report.find("<\?\?\?>"), std::string::npos) << report;
  EXPECT_NE(report.find("pool property violated"), std::string::npos) << report;
  EXPECT_NE(report.find(testing::kCaseScheduleLabel), std::string::npos) << report;
  EXPECT_EQ(report.find("\nreplay: BUBBLE_STRATEGY="), std::string::npos) << report;
  ASSERT_EQ(result.failures.size(), 1U);
  EXPECT_NE(result.failures[0].find("`bubble run exhibits --seed 5 --cases 300`"),
            std::string::npos)
      << result.failures[0];
  EXPECT_NE(result.failures[0].find("`bubble replay` on its failure file"), std::string::npos)
      << result.failures[0];
  // The reproduce string replays the shrunk case alone, to the same message.
  ASSERT_EQ(result.failed.size(), 1U);
  SuiteOptions again = options;
  again.replay = CaseReplay{"closes before draining", result.failed[0].reproduce};
  SuiteResult replayed;
  std::ostringstream replay_log;
  check_property("exhibits", "closes before draining", again, replayed, replay_log, [impl] {
    const PoolCase c = testing::draw(pool_case(impl));
    for (const StrategyValue& s : c.strategies) {
      testing::run_property({.strategy = s.value}, pool_case_body(impl, c));
    }
  });
  ASSERT_EQ(replayed.failed.size(), 1U) << replay_log.str();
  EXPECT_EQ(replayed.failed[0].message, result.failed[0].message);
  EXPECT_EQ(replayed.failed[0].schedule, result.failed[0].schedule);
}

}  // namespace
}  // namespace bubble::scenarios
