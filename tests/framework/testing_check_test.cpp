// Tests of bubble::testing::check, the property checker over RapidCheck's public generators:
// case counts, seeds, shrinking to a minimal case, reproduce strings, discards and bad input.
#include <bubble/testing/case.hpp>
#include <bubble/testing/check.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "../support/failure_text.hpp"

namespace bubble {
namespace {

using bubble::test_support::contains;

testing::CheckParams params_with(std::uint64_t seed, int cases) {
  testing::CheckParams p;
  p.seed = seed;
  p.cases = cases;
  return p;
}

// A property that holds runs exactly `cases` cases.
TEST(TestingCheck, APassingPropertyRunsExactlyTheCasesAsked) {
  int runs = 0;
  const testing::CheckResult r = testing::check(
      [&runs] {
        ++runs;
        const int x = *rc::gen::inRange(0, 100);
        BUBBLE_ASSERT(x < 100);
      },
      params_with(3, 137));
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.cases_passed, 137);
  EXPECT_EQ(runs, 137);
  EXPECT_EQ(r.report(), "OK, passed 137 tests");
}

// Property of the checker: the same seed generates the same cases; another seed others.
TEST(TestingCheck, TheSeedDeterminesTheCases) {
  auto drawn = [](std::uint64_t seed) {
    std::vector<int> values;
    (void)testing::check([&values] { values.push_back(*rc::gen::arbitrary<int>()); },
                         params_with(seed, 50));
    return values;
  };
  EXPECT_EQ(drawn(9), drawn(9));
  EXPECT_NE(drawn(9), drawn(10));
}

// A failing case shrinks to the minimal one: x >= 1000 fails first at some large x, and the
// minimal failing value is exactly 1000.
TEST(TestingCheck, AFailureShrinksToTheMinimalCase) {
  const testing::CheckResult r = testing::check(
      [] {
        const int x = testing::draw(rc::gen::inRange(0, 1'000'000));
        if (x >= 1000) BUBBLE_FAIL("too big: " + std::to_string(x));
      },
      params_with(1, 100));
  ASSERT_EQ(r.verdict, testing::CheckResult::Verdict::failed);
  ASSERT_EQ(r.counterexample.size(), 1U);
  EXPECT_EQ(r.counterexample[0], "int:\n1000");
  EXPECT_TRUE(contains(r.description, "too big: 1000")) << r.description;
  EXPECT_TRUE(contains(r.description, "testing_check_test.cpp:")) << r.description;
  EXPECT_GT(r.shrinks, 0);
  EXPECT_TRUE(contains(r.report(), "Falsifiable after ")) << r.report();
  EXPECT_TRUE(contains(r.report(), "int:\n1000\n\n")) << r.report();
}

// The reproduce string runs the minimal case alone, at once, to the same message.
TEST(TestingCheck, TheReproduceStringReplaysTheMinimalCaseAlone) {
  auto property = [](int& runs) {
    return [&runs] {
      ++runs;
      const std::vector<int> v =
          testing::draw(rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 50)));
      int sum = 0;
      for (const int x : v) sum += x;
      BUBBLE_ASSERT(sum < 60);
    };
  };
  int runs = 0;
  const testing::CheckResult found = testing::check(property(runs), params_with(4, 200));
  ASSERT_EQ(found.verdict, testing::CheckResult::Verdict::failed);
  testing::CheckParams replay = params_with(999, 1);  // Seed and cases are not used.
  replay.reproduce = found.reproduce;
  int replay_runs = 0;
  const testing::CheckResult again = testing::check(property(replay_runs), replay);
  ASSERT_EQ(again.verdict, testing::CheckResult::Verdict::failed);
  EXPECT_EQ(again.case_message(), found.case_message());
  EXPECT_EQ(again.reproduce, found.reproduce);
  EXPECT_LE(replay_runs, 2 + static_cast<int>(found.shrinks));  // No search, only the path.
  EXPECT_LT(replay_runs, runs);
}

TEST(TestingCheck, BadReproduceStringsAndParamsAreRejected) {
  auto property = [] { (void)*rc::gen::arbitrary<int>(); };
  testing::CheckParams p;
  p.reproduce = "not-a-case";
  try {
    (void)testing::check(property, p);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "\"not-a-case\"")) << e.what();
  }
  p.reproduce = "1:2:3:4.x";
  EXPECT_THROW((void)testing::check(property, p), std::invalid_argument);
  try {
    (void)testing::check(property, params_with(1, 0));
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "cases")) << e.what();
    EXPECT_TRUE(contains(e.what(), "0")) << e.what();
  }
}

// A generator that cannot produce a value discards the case; too many discards give up.
TEST(TestingCheck, DiscardedCasesGiveUp) {
  const testing::CheckResult r = testing::check(
      [] { (void)*rc::gen::suchThat(rc::gen::inRange(0, 10), [](int x) { return x > 20; }); },
      params_with(2, 10));
  EXPECT_EQ(r.verdict, testing::CheckResult::Verdict::gave_up);
  EXPECT_EQ(r.discarded, 101);
  EXPECT_TRUE(contains(r.report(), "Gave up after 0 tests")) << r.report();
}

// Other exceptions fail the case; one that is not a std::exception says what to use instead.
TEST(TestingCheck, AnyExceptionFailsTheCase) {
  const testing::CheckResult a =
      testing::check([] { throw std::runtime_error("boom"); }, params_with(1, 10));
  ASSERT_EQ(a.verdict, testing::CheckResult::Verdict::failed);
  EXPECT_TRUE(contains(a.description, "boom")) << a.description;
  const testing::CheckResult b = testing::check([] { RC_ASSERT(false); }, params_with(1, 10));
  ASSERT_EQ(b.verdict, testing::CheckResult::Verdict::failed);
  EXPECT_TRUE(contains(b.description, "BUBBLE_ASSERT")) << b.description;
}

TEST(TestingCheck, ProgressSeesEveryCaseAndShrink) {
  int last_cases = 0;
  int last_shrinks = 0;
  testing::CheckParams p = params_with(5, 40);
  p.progress = [&](int cases, int shrinks) {
    last_cases = cases;
    last_shrinks = shrinks;
  };
  const testing::CheckResult r =
      testing::check([] { BUBBLE_ASSERT(*rc::gen::inRange(0, 1000) < 500); }, p);
  ASSERT_EQ(r.verdict, testing::CheckResult::Verdict::failed);
  EXPECT_EQ(last_cases, r.cases_passed + 1);
  EXPECT_EQ(last_shrinks, r.shrinks_tried);
}

}  // namespace
}  // namespace bubble
