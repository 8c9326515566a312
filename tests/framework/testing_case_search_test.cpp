// The exhaustive search of a property's cases: search_case() in this process, and BUBBLE_PROP /
// run_case under BUBBLE_EXHAUSTIVE end to end, in child processes of this test program that run
// the DISABLED_ properties below with the environment set.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <bubble/mutex.hpp>
#include <bubble/schedule_tree.hpp>
#include <bubble/testing/case_search.hpp>
#include <bubble/testing/property.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/child_process.hpp"
#include "racy_counter.hpp"

namespace bubble::testing {
namespace {

using test_programs::racy_counter;

// `threads` threads increment a shared counter with a read, a scheduling point and a write; with
// `locked`, under a Mutex. Returns the counter once every thread is joined: an update is lost
// (without the lock) only if a thread is preempted between its read and its write.
int count_increments(Runtime& rt, int threads, bool locked) {
  int x = 0;
  bubble::Mutex mutex(rt);
  std::vector<std::unique_ptr<ThreadHandle>> handles;
  handles.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    handles.push_back(rt.spawn("t" + std::to_string(i), [&] {
      std::optional<std::lock_guard<bubble::Mutex>> lock;
      if (locked) lock.emplace(mutex);
      const int read = x;
      rt.schedule_point({"counter.read", 0, SourceLocation::current()});
      x = read + 1;
    }));
  }
  for (auto& h : handles) h->join();
  return x;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- search_case ---------------------------------------------------------------------------------

// Within a bound too small for the lost update (it needs one preemption), the search runs every
// schedule of the tree and certifies them; with one preemption it fails the case at a schedule
// whose case schedule line replays the lost update.
TEST(TestingCaseSearch, CertifiesABoundWithoutTheBugAndFailsTheCaseWithinOneThatHasIt) {
  const auto body = [](Runtime& rt) { BUBBLE_ASSERT(racy_counter(rt) == 2); };
  std::uint64_t tree_schedules = 0;
  {
    ScheduleTree tree(0, {}, Reduction::dpor);
    std::vector<Decision> decisions;
    RunDependencies dependencies;
    while (const std::optional<Strategy> s = tree.next()) {
      decisions.clear();
      dependencies.clear();
      Options options;
      options.strategy = *s;
      options.decisions = &decisions;
      options.dependencies = &dependencies;
      (void)run(options, body);
      tree.record(decisions, &dependencies);
    }
    tree_schedules = tree.schedules();
  }
  const CaseSearch none = search_case(body, 0);
  EXPECT_EQ(none.schedules, tree_schedules);
  EXPECT_EQ(none.certificate, certificate_line({}, tree_schedules, 0, 0));

  try {
    (void)search_case(body, 1);
    FAIL() << "the lost update was not found within one preemption";
  } catch (const CaseFailure& failure) {
    const std::string message = failure.what();
    EXPECT_TRUE(contains(message,
                         "of the exhaustive search of every schedule with at most 1 "
                         "preemption failed:\n"))
        << message;
    EXPECT_TRUE(contains(message, "BUBBLE_ASSERT(racy_counter(rt) == 2)")) << message;
    const std::size_t at = message.rfind(kCaseScheduleLabel);
    ASSERT_NE(at, std::string::npos) << message;
    const std::string strategy = message.substr(at + kCaseScheduleLabel.size());
    ASSERT_EQ(strategy.rfind("choices:", 0), 0u) << strategy;
    EXPECT_EQ(test_programs::racy_counter_under(Strategy::parse(strategy)), 1) << strategy;
  }
}

// Without reduction the search runs every schedule within the bound: more of them than the
// reduced search, to the same verdict.
TEST(TestingCaseSearch, WithoutReductionRunsEveryScheduleToTheSameVerdict) {
  const auto body = [](Runtime& rt) { (void)count_increments(rt, 3, true); };
  const CaseSearch reduced = search_case(body, 1, {}, Reduction::dpor);
  const CaseSearch plain = search_case(body, 1, {}, Reduction::none);
  EXPECT_LT(reduced.schedules, plain.schedules);
  EXPECT_EQ(plain.certificate, certificate_line({}, plain.schedules, 1, 0));
}

// The shards of a case's search run disjoint parts of it: their certificates merge into the whole
// search's, and the lost update is found by a shard that owns a failing schedule.
TEST(TestingCaseSearch, ShardsOfACaseMergeIntoTheWholeSearch) {
  const auto passing = [](Runtime& rt) { (void)racy_counter(rt); };
  const CaseSearch whole = search_case(passing, 2);
  std::vector<std::string> certificates;
  int failing_shards = 0;
  for (std::uint32_t index = 0; index < 3; ++index) {
    certificates.push_back(search_case(passing, 2, {index, 3}).certificate);
    try {
      (void)search_case([](Runtime& rt) { BUBBLE_ASSERT(racy_counter(rt) == 2); }, 2, {index, 3});
    } catch (const CaseFailure& failure) {
      ++failing_shards;
      // The failing schedule it reports is its own, not one it ran to learn the tree's shape.
      const std::string message = failure.what();
      const std::size_t at = message.rfind(kCaseScheduleLabel);
      ASSERT_NE(at, std::string::npos) << message;
      std::vector<Decision> decisions;
      Options options;
      options.strategy = Strategy::parse(message.substr(at + kCaseScheduleLabel.size()));
      options.decisions = &decisions;
      (void)run(options, [](Runtime& rt) { (void)racy_counter(rt); });
      EXPECT_TRUE(ScheduleTree(2, {index, 3}, Reduction::dpor).owns(decisions)) << message;
    }
  }
  EXPECT_EQ(merge_certificates(certificates), whole.certificate);
  EXPECT_GE(failing_shards, 1);
}

// A body that does not do the same under the same picks (here: a thread of the second run
// takes one more step) ends the search with an error that says so, instead of a certificate.
TEST(TestingCaseSearch, ABodyThatIsNotDeterministicEndsTheSearchWithAnError) {
  int runs = 0;
  const auto body = [&runs](Runtime& rt) {
    ++runs;
    std::unique_ptr<ThreadHandle> extra = rt.spawn("extra", [&rt, &runs] {
      if (runs == 2) rt.schedule_point({"only.in.run.2", 0, SourceLocation::current()});
    });
    (void)racy_counter(rt);
    extra->join();
  };
  try {
    (void)search_case(body, 1);
    FAIL() << "the search did not notice";
  } catch (const std::logic_error& e) {
    EXPECT_TRUE(contains(e.what(), "not deterministic")) << e.what();
  }
}

// --- BUBBLE_PROP and run_case under BUBBLE_EXHAUSTIVE, run by the child processes below ----------

// Property: increments under a Mutex are never lost, whatever the number of threads (0 to 3) and
// the schedule.
BUBBLE_PROP(DISABLED_CaseSearchChild, IncrementsUnderAMutexAreNeverLost, (std::uint8_t threads)) {
  const int n = threads % 4;
  RC_ASSERT(count_increments(current_runtime(), n, true) == n);
}

// Property (false: the planted lost update): increments without a lock are never lost. It needs
// two threads and one preemption.
BUBBLE_PROP(DISABLED_CaseSearchChild, IncrementsWithoutALockAreNeverLost, (std::uint8_t threads)) {
  const int n = threads % 4;
  BUBBLE_ASSERT(count_increments(current_runtime(), n, false) == n);
}

// The same false property with RC_ASSERT, inputs drawn on the property's thread with a generator
// of their own, and the bubble run by run_case.
RC_GTEST_PROP(DISABLED_CaseSearchChild, RunCaseWithInputsDrawnBefore, ()) {
  const int n = *rc::gen::inRange(2, 4);
  run_case([n](Runtime& rt) { RC_ASSERT(count_increments(rt, n, false) == n); });
}

// Property: the counter counts every increment (inputs drawn inside the bubble: not searchable).
BUBBLE_PROP(DISABLED_CaseSearchChild, DrawsItsInputsInsideTheBubble) {
  const int n = *rc::gen::inRange(0, 4);
  RC_ASSERT(count_increments(current_runtime(), n, true) == n);
}

// Runs this test program in a child process with `env` (as `env` arguments) and the disabled
// test `name` of DISABLED_CaseSearchChild, and returns its standard output and error.
std::string run_child(const std::string& env, const std::string& name) {
  return test_support::output_of(
      "env -u BUBBLE_STRATEGY -u BUBBLE_SEED -u BUBBLE_SCHEDULES -u BUBBLE_SCHEDULE_SHARD_INDEX "
      "-u BUBBLE_SCHEDULE_TOTAL_SHARDS -u BUBBLE_SCHEDULE_SHARDS_FROM_GTEST -u GTEST_OUTPUT "
      "-u GTEST_SHARD_INDEX -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_STATUS_FILE -u BUBBLE_TRACE "
      "-u BUBBLE_EXHAUSTIVE -u BUBBLE_REDUCTION -u BUBBLE_CHECKPOINT -u RC_PARAMS " +
      env + " " + test_support::self_command() +
      " --gtest_also_run_disabled_tests --gtest_filter=DISABLED_CaseSearchChild." + name + " 2>&1");
}

// The line of `out` that starts with `start` (without its newline), or "" when there is none.
std::string line_starting(const std::string& out, const std::string& start) {
  const std::size_t at = out.find("\n" + start);
  if (at == std::string::npos) return "";
  const std::size_t end = out.find('\n', at + 1);
  return out.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
}

// A property with parameters is searched case by case: every case under every schedule within
// the bound, and one certificate for the test when every case passed. The variables that do not
// apply to properties are named once, not silently ignored.
TEST(TestingCaseSearch, PropertyWithParametersPrintsACertificateOfItsCases) {
  const std::string out = run_child(
      "BUBBLE_EXHAUSTIVE=1 BUBBLE_SCHEDULES=5 BUBBLE_CHECKPOINT=/nonexistent/checkpoint "
      "RC_PARAMS='seed=5 max_success=12'",
      "IncrementsUnderAMutexAreNeverLost");
  EXPECT_TRUE(contains(out,
                       "bubble: properties ignore BUBBLE_SCHEDULES=5: the schedule is part "
                       "of each case\n"))
      << out;
  EXPECT_TRUE(contains(out,
                       "bubble: properties ignore BUBBLE_CHECKPOINT=/nonexistent/checkpoint: "
                       "the search of each case starts over\n"))
      << out;
  EXPECT_EQ(out.find("bubble: properties ignore BUBBLE_SCHEDULES"),
            out.rfind("bubble: properties ignore BUBBLE_SCHEDULES"))
      << "printed once, not once per case:\n"
      << out;
  EXPECT_TRUE(contains(out, "[  PASSED  ] 1 test.")) << out;
  EXPECT_TRUE(contains(out,
                       "bubble: DISABLED_CaseSearchChild.IncrementsUnderAMutexAreNeverLost: "
                       "12 generated cases, each under every schedule with at most 1 "
                       "preemption\n"))
      << out;
  const std::string certificate = line_starting(out, "bubble: complete: ");
  EXPECT_TRUE(contains(certificate, " with at most 1 preemption, 0 failed")) << out;
}

// Without BUBBLE_EXHAUSTIVE each case runs under one generated schedule: schedule shards have
// nothing to split, and the note says so (not that BUBBLE_SCHEDULES, which properties ignore, is
// missing).
TEST(TestingCaseSearch, ShardsWithoutASearchAreNamedAsIgnoredByProperties) {
  const std::string out = run_child(
      "BUBBLE_SCHEDULE_SHARD_INDEX=1 BUBBLE_SCHEDULE_TOTAL_SHARDS=2 BUBBLE_SCHEDULES=3 "
      "RC_PARAMS='seed=5 max_success=3'",
      "IncrementsUnderAMutexAreNeverLost");
  EXPECT_TRUE(contains(out,
                       "bubble: properties ignore BUBBLE_SCHEDULE_SHARD_INDEX=1 and "
                       "BUBBLE_SCHEDULE_TOTAL_SHARDS=2 without BUBBLE_EXHAUSTIVE: each case runs "
                       "under one generated schedule\n"))
      << out;
  EXPECT_FALSE(contains(out, "because BUBBLE_SCHEDULES is not set")) << out;
  EXPECT_TRUE(contains(out, "[  PASSED  ] 1 test.")) << out;
}

// The planted lost update passes within no preemption, and fails within one: the counterexample
// is shrunk to two threads and shows the failing schedule.
TEST(TestingCaseSearch, PropertyWithParametersFindsTheBugAtItsBound) {
  const std::string none = run_child("BUBBLE_EXHAUSTIVE=0 RC_PARAMS='seed=5 max_success=12'",
                                     "IncrementsWithoutALockAreNeverLost");
  EXPECT_TRUE(contains(none, "[  PASSED  ] 1 test.")) << none;
  EXPECT_TRUE(contains(none, "bubble: complete: ")) << none;

  const std::string one = run_child("BUBBLE_EXHAUSTIVE=1 RC_PARAMS='seed=5 max_success=12'",
                                    "IncrementsWithoutALockAreNeverLost");
  EXPECT_TRUE(contains(one, "[  FAILED  ] DISABLED_CaseSearchChild.")) << one;
  EXPECT_TRUE(contains(one, "std::tuple<unsigned char>:\n(2)\n")) << one;
  EXPECT_TRUE(contains(one,
                       "of the exhaustive search of every schedule with at most 1 "
                       "preemption failed:"))
      << one;
  EXPECT_TRUE(contains(one, kCaseScheduleLabel + "choices:")) << one;
  EXPECT_FALSE(contains(one, "bubble: complete: ")) << one;
}

// With RC_ASSERT the failing schedule reaches the counterexample through the case's log.
TEST(TestingCaseSearch, RunCaseLogsTheFailingScheduleOfAnRcAssert) {
  const std::string out = run_child("BUBBLE_EXHAUSTIVE=1 RC_PARAMS='seed=5 max_success=12'",
                                    "RunCaseWithInputsDrawnBefore");
  EXPECT_TRUE(contains(out, "[  FAILED  ] DISABLED_CaseSearchChild.")) << out;
  EXPECT_TRUE(contains(out, "RC_ASSERT(count_increments(rt, n, false) == n)")) << out;
  EXPECT_TRUE(contains(out, kCaseScheduleLabel + "choices:")) << out;
}

// A property that draws inside the bubble cannot be searched: it is skipped with the reason,
// never passed; without BUBBLE_EXHAUSTIVE it runs.
TEST(TestingCaseSearch, PropertyThatDrawsInsideTheBubbleIsSkippedNotPassed) {
  const std::string searched =
      run_child("BUBBLE_EXHAUSTIVE=1 RC_PARAMS='max_success=12'", "DrawsItsInputsInsideTheBubble");
  EXPECT_TRUE(contains(searched, "[  SKIPPED ] 1 test")) << searched;
  EXPECT_TRUE(contains(searched,
                       "not searched: this BUBBLE_PROP draws its inputs inside the "
                       "bubble"))
      << searched;
  EXPECT_FALSE(contains(searched, "bubble: complete: ")) << searched;
  const std::string sampled =
      run_child("RC_PARAMS='max_success=12'", "DrawsItsInputsInsideTheBubble");
  EXPECT_TRUE(contains(sampled, "[  PASSED  ] 1 test.")) << sampled;
}

// The shards of a property's search, with the same RapidCheck seed, merge into the whole
// search's certificate (without reduction, whose shards keep every candidate of the first
// decisions, they add up to the same schedules); without a fixed seed a sharded search is
// refused with the reason.
TEST(TestingCaseSearch, ShardsOfAPropertySearchMergeWithAFixedSeed) {
  const std::string params = "BUBBLE_REDUCTION=none RC_PARAMS='seed=9 max_success=8'";
  const std::string whole =
      line_starting(run_child("BUBBLE_EXHAUSTIVE=2 " + params, "IncrementsUnderAMutexAreNeverLost"),
                    "bubble: complete: ");
  ASSERT_FALSE(whole.empty());
  std::vector<std::string> certificates;
  for (const char* index : {"0", "1"}) {
    const std::string out =
        run_child("BUBBLE_EXHAUSTIVE=2 BUBBLE_SCHEDULE_TOTAL_SHARDS=2 " +
                      std::string("BUBBLE_SCHEDULE_SHARD_INDEX=") + index + " " + params,
                  "IncrementsUnderAMutexAreNeverLost");
    certificates.push_back(line_starting(out, "bubble: complete: shard "));
    EXPECT_FALSE(certificates.back().empty()) << out;
  }
  EXPECT_EQ(merge_certificates(certificates), whole);

  const std::string unseeded =
      run_child("BUBBLE_EXHAUSTIVE=2 BUBBLE_SCHEDULE_TOTAL_SHARDS=2 BUBBLE_SCHEDULE_SHARD_INDEX=0",
                "IncrementsUnderAMutexAreNeverLost");
  EXPECT_TRUE(contains(unseeded, "[  FAILED  ]")) << unseeded;
  EXPECT_TRUE(contains(unseeded, "RC_PARAMS=\"seed=1\"")) << unseeded;
}

}  // namespace
}  // namespace bubble::testing
