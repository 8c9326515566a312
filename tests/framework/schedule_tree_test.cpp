// Exhaustive search: bubble::ScheduleTree enumerates every schedule within a preemption bound
// exactly once, counts preemptions as CHESS does (free decisions cost none), and refuses a
// program that is not deterministic; Options::decisions records what it needs.

#include <bubble/bubble.hpp>
#include <bubble/schedule_tree.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using bubble::Decision;
using bubble::Options;
using bubble::Runtime;
using bubble::ScheduleTree;
using bubble::Strategy;

// What an exhaustive search saw: every schedule's strategy, the outcomes (a body's result or its
// failure's first line), and the most preemptions any run took.
struct Search {
  std::vector<std::string> strategies;
  std::multiset<std::string> outcomes;
  std::uint32_t most_preemptions = 0;
  std::uint64_t failures = 0;
  std::uint64_t transit_runs = 0;
  std::string certificate;
  // The first failing schedule's strategy and whole message.
  std::optional<Strategy> first_failing;
  std::string first_failure;
};

std::uint32_t preemptions_of(const std::vector<Decision>& decisions) {
  return static_cast<std::uint32_t>(
      std::count_if(decisions.begin(), decisions.end(),
                    [](const Decision& d) { return d.preemptive && d.picked != 0; }));
}

// Runs every schedule of `body` within `bound`, going on past failures (as `bubble run` counts
// them), and records what each run did; `after_each`, if given, sees the tree after each run.
Search search(std::uint32_t bound, const std::function<std::string(Runtime&)>& body,
              bubble::TreeShard shard = {},
              const std::function<void(const ScheduleTree&)>& after_each = {}) {
  Search out;
  ScheduleTree tree(bound, shard);
  std::vector<Decision> decisions;
  Options options;
  options.decisions = &decisions;
  while (std::optional<Strategy> s = tree.next()) {
    decisions.clear();
    options.strategy = *s;
    std::string outcome;
    std::string failure;
    try {
      (void)bubble::run(options, [&](Runtime& rt) { outcome = body(rt); });
    } catch (const bubble::RunFailure& e) {
      failure = e.what();
      outcome = failure.substr(0, failure.find('\n'));
    }
    out.most_preemptions = std::max(out.most_preemptions, preemptions_of(decisions));
    if (tree.owns(decisions)) {  // Another shard's schedule is only passed through.
      out.strategies.push_back(s->to_string());
      out.outcomes.insert(outcome);
      if (!failure.empty()) {
        ++out.failures;
        if (!out.first_failing) {
          out.first_failing = *s;
          out.first_failure = failure;
        }
      }
    }
    tree.record(decisions);
    if (after_each) after_each(tree);
  }
  out.certificate = tree.certificate(out.failures);
  out.transit_runs = tree.transit_runs();
  EXPECT_EQ(out.strategies.size(), tree.schedules());
  return out;
}

std::set<std::string> distinct(const std::multiset<std::string>& m) {
  return {m.begin(), m.end()};
}

TEST(ScheduleTree, FreeDecisionsAreAllExploredWithinABoundOfZero) {
  // Two choices of a select among three ready cases each: nine schedules, no preemption.
  const Search s = search(0, [](Runtime& rt) {
    const std::size_t first = rt.choose(3, {"first", 0, {}});
    const std::size_t second = rt.choose(3, {"second", 0, {}});
    return std::to_string(first) + std::to_string(second);
  });
  EXPECT_EQ(s.strategies.size(), 9u);
  EXPECT_EQ(distinct(s.outcomes),
            (std::set<std::string>{"00", "01", "02", "10", "11", "12", "20", "21", "22"}));
  EXPECT_EQ(s.outcomes.size(), 9u);  // Each once.
  EXPECT_EQ(s.certificate, "bubble: complete: 9 schedules with at most 0 preemptions, 0 failed");
}

// Threads named by `names` take `steps` steps each, with a scheduling point after each step.
// Returns the order of the steps, as a string of thread names.
std::string steps_of(Runtime& rt, std::string_view names, int steps) {
  std::string order;
  std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
  for (const char name : names) {
    threads.push_back(rt.spawn(std::string(1, name), [&rt, &order, name, steps] {
      for (int i = 0; i < steps; ++i) {
        order += name;
        rt.schedule_point({"step", 0, {}});
      }
    }));
  }
  for (auto& t : threads) t->join();
  return order;
}

std::string two_threads_three_steps(Runtime& rt) {
  return steps_of(rt, "ab", 3);
}

// Deep enough (dozens of decisions) that shards skip subtrees.
std::string three_threads_five_steps(Runtime& rt) {
  return steps_of(rt, "abc", 5);
}

TEST(ScheduleTree, WithoutABoundEveryInterleavingIsReachedAndNoScheduleRunsTwice) {
  const Search s = search(1'000, two_threads_three_steps);
  std::set<std::string> all;
  std::string order = "aaabbb";
  do {
    all.insert(order);
  } while (std::next_permutation(order.begin(), order.end()));
  ASSERT_EQ(all.size(), 20u);
  EXPECT_EQ(distinct(s.outcomes), all);
  const std::set<std::string> strategies(s.strategies.begin(), s.strategies.end());
  EXPECT_EQ(strategies.size(), s.strategies.size()) << "a schedule ran twice";
}

TEST(ScheduleTree, EveryRunStaysWithinTheBoundAndLargerBoundsReachMore) {
  std::size_t previous = 0;
  for (std::uint32_t bound = 0; bound <= 3; ++bound) {
    const Search s = search(bound, two_threads_three_steps);
    EXPECT_LE(s.most_preemptions, bound);
    EXPECT_GT(distinct(s.outcomes).size(), previous) << "bound " << bound;
    previous = distinct(s.outcomes).size();
  }
}

// Threads "a" and "b" take two steps each, with a scheduling point between them, and "c" looks
// at both once. A thread is halfway only while it is stopped at its point, and only a preemption
// stops it there (a switch is free only where a thread blocks or exits). So "b" sees "a" halfway
// after one preemption, and "c" sees both halfway only after two.
std::string one_or_two_preemptions(Runtime& rt) {
  int a_steps = 0;
  int b_steps = 0;
  auto a = rt.spawn("a", [&rt, &a_steps] {
    a_steps = 1;
    rt.schedule_point({"a halfway", 0, {}});
    a_steps = 2;
  });
  auto b = rt.spawn("b", [&rt, &a_steps, &b_steps] {
    b_steps = 1;
    rt.schedule_point({"b halfway", 0, {}});
    if (a_steps == 1) throw std::runtime_error("b saw a halfway");
    b_steps = 2;
  });
  auto c = rt.spawn("c", [&a_steps, &b_steps] {
    if (a_steps == 1 && b_steps == 1) throw std::logic_error("c saw a and b halfway");
  });
  a->join();
  b->join();
  c->join();
  return "passed";
}

bool saw(const Search& s, const std::string& text) {
  return std::any_of(s.outcomes.begin(), s.outcomes.end(), [&](const std::string& outcome) {
    return outcome.find(text) != std::string::npos;
  });
}

TEST(ScheduleTree, ABugIsFoundExactlyFromThePreemptionsItNeeds) {
  const Search zero = search(0, one_or_two_preemptions);
  EXPECT_EQ(zero.failures, 0u);
  EXPECT_EQ(zero.certificate.rfind("bubble: complete: ", 0), 0u);
  EXPECT_NE(zero.certificate.find("with at most 0 preemptions, 0 failed"), std::string::npos);

  const Search one = search(1, one_or_two_preemptions);
  EXPECT_TRUE(saw(one, "b saw a halfway"));
  EXPECT_FALSE(saw(one, "c saw a and b halfway"));
  EXPECT_NE(one.certificate.find("with at most 1 preemption, " + std::to_string(one.failures) +
                                 " failed"),
            std::string::npos)
      << one.certificate;

  const Search two = search(2, one_or_two_preemptions);
  EXPECT_TRUE(saw(two, "b saw a halfway"));
  EXPECT_TRUE(saw(two, "c saw a and b halfway"));
}

TEST(ScheduleTree, AFailingScheduleReplaysFromItsStrategy) {
  const Search s = search(1, one_or_two_preemptions);
  ASSERT_TRUE(s.first_failing.has_value());
  Options replay;
  replay.strategy = *s.first_failing;
  for (int i = 0; i < 3; ++i) {
    try {
      (void)bubble::run(replay, [](Runtime& rt) { (void)one_or_two_preemptions(rt); });
      ADD_FAILURE() << "the replay of " << s.first_failing->to_string() << " passed";
    } catch (const bubble::RunFailure& again) {
      EXPECT_EQ(again.what(), s.first_failure);
    }
  }
}

TEST(ScheduleTree, DecisionsAreRecordedUnderEveryStrategyWithoutChangingTheRun) {
  for (const Strategy& strategy : {Strategy::fifo(), Strategy::random(3), Strategy::pct(5, 3)}) {
    Options plain;
    plain.strategy = strategy;
    std::string plain_order;
    const bubble::RunResult before =
        bubble::run(plain, [&](Runtime& rt) { plain_order = two_threads_three_steps(rt); });
    std::vector<Decision> decisions;
    Options recorded = plain;
    recorded.decisions = &decisions;
    std::string recorded_order;
    const bubble::RunResult after =
        bubble::run(recorded, [&](Runtime& rt) { recorded_order = two_threads_three_steps(rt); });
    EXPECT_EQ(recorded_order, plain_order) << strategy.to_string();
    EXPECT_EQ(after.schedule, before.schedule) << strategy.to_string();
    EXPECT_EQ(decisions.size(), before.schedule.decisions) << strategy.to_string();
    for (const Decision& d : decisions) {
      EXPECT_GT(d.candidates, 1u);
      EXPECT_LT(d.picked, d.candidates);
    }
  }
}

TEST(ScheduleTree, AProgramThatIsNotDeterministicIsRefused) {
  ScheduleTree tree(2);
  std::vector<Decision> decisions;
  Options options;
  options.decisions = &decisions;
  int runs = 0;
  const auto body = [&runs](Runtime& rt) {
    // Takes a decision in its first run only: the next run cannot retrace the first's prefix.
    if (runs++ == 0) (void)rt.choose(2, {"first run only", 0, {}});
  };
  options.strategy = *tree.next();
  (void)bubble::run(options, body);
  tree.record(decisions);
  ASSERT_FALSE(tree.done());
  decisions.clear();
  options.strategy = *tree.next();
  (void)bubble::run(options, body);
  try {
    tree.record(decisions);
    ADD_FAILURE() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("not deterministic"), std::string::npos) << e.what();
  }
}

TEST(ScheduleTree, AStoppedSearchResumesFromItsCheckpointWhereItStopped) {
  const Search whole = search(2, two_threads_three_steps);
  ASSERT_GT(whole.strategies.size(), 10u);
  // The same search, stopped after 7 schedules and resumed from its checkpoint in a new tree.
  std::vector<std::string> strategies;
  std::vector<Decision> decisions;
  Options options;
  options.decisions = &decisions;
  const auto run_one = [&](ScheduleTree& tree) {
    decisions.clear();
    options.strategy = *tree.next();
    strategies.push_back(options.strategy.to_string());
    (void)bubble::run(options, [](Runtime& rt) { (void)two_threads_three_steps(rt); });
    tree.record(decisions);
  };
  ScheduleTree first(2);
  for (int i = 0; i < 7; ++i) run_one(first);
  const std::string checkpoint = first.checkpoint();
  EXPECT_EQ(
      checkpoint.rfind("bubble-schedule-tree-1 bound=2 shard=0/1 schedules=7 transit=0 path=", 0),
      0u)
      << checkpoint;
  ScheduleTree resumed = ScheduleTree::resume(checkpoint);
  EXPECT_EQ(resumed.checkpoint(), checkpoint);
  while (!resumed.done()) run_one(resumed);
  EXPECT_EQ(strategies, whole.strategies);
  EXPECT_EQ(resumed.certificate(0), whole.certificate);
  const ScheduleTree finished = ScheduleTree::resume(resumed.checkpoint());
  EXPECT_TRUE(finished.done());
  EXPECT_FALSE(finished.next().has_value());
  EXPECT_EQ(finished.schedules(), whole.strategies.size());
}

TEST(ScheduleTree, BadCheckpointsAreRejectedQuotingTheText) {
  for (const std::string text :
       {"", "bubble-schedule-tree-2 bound=1 shard=0/1 schedules=0 transit=0 path=",
        "bubble-schedule-tree-1 bound=x shard=0/1 schedules=0 transit=0 path=",
        "bubble-schedule-tree-1 bound=1 shard=2/2 schedules=0 transit=0 path=",
        "bubble-schedule-tree-1 bound=1 schedules=0 path=",
        "bubble-schedule-tree-1 bound=1 shard=0/1 schedules=0 transit=0 path=3:3",
        "bubble-schedule-tree-1 bound=1 shard=0/1 schedules=0 transit=0 path=1:0",
        "bubble-schedule-tree-1 bound=1 shard=0/1 schedules=0 transit=0 path=2:1p,2:1p",
        "bubble-schedule-tree-1 bound=1 shard=0/1 schedules=0 transit=0 path=2:1 extra"}) {
    try {
      (void)ScheduleTree::resume(text);
      ADD_FAILURE() << "accepted \"" << text << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("\"" + text + "\" is not a checkpoint"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ScheduleTree, ShardsTogetherRunEveryScheduleExactlyOnce) {
  for (const auto& body : {std::function<std::string(Runtime&)>(two_threads_three_steps),
                           std::function<std::string(Runtime&)>(three_threads_five_steps)}) {
    const Search whole = search(2, body);
    std::vector<std::string> wanted = whole.strategies;
    std::sort(wanted.begin(), wanted.end());
    for (const std::uint32_t total : {2U, 3U, 7U}) {
      std::vector<std::string> got;
      std::vector<std::string> certificates;
      for (std::uint32_t index = 0; index < total; ++index) {
        const Search part = search(2, body, {index, total});
        got.insert(got.end(), part.strategies.begin(), part.strategies.end());
        certificates.push_back(part.certificate);
        EXPECT_EQ(part.certificate.rfind("bubble: complete: shard " + std::to_string(index) + "/" +
                                             std::to_string(total) + ": ",
                                         0),
                  0u)
            << part.certificate;
      }
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, wanted) << total << " shards";
      EXPECT_EQ(bubble::merge_certificates(certificates), whole.certificate);
    }
  }
}

TEST(ScheduleTree, ShardsSkipOtherShardsSubtreesWhole) {
  const Search whole = search(2, three_threads_five_steps);
  const Search shard = search(2, three_threads_five_steps, {0, 4});
  // A quarter of the schedules, and far fewer runs of other shards' than there are.
  EXPECT_LT(shard.strategies.size(), whole.strategies.size() / 2);
  EXPECT_LT(shard.transit_runs, whole.strategies.size() / 4) << shard.strategies.size();
}

TEST(ScheduleTree, CertificatesMergeOnlyIntoACompleteSearch) {
  const std::string a =
      "bubble: complete: shard 0/2: 1,000 schedules with at most 2 preemptions, "
      "0 failed";
  const std::string b =
      "bubble: complete: shard 1/2: 234 schedules with at most 2 preemptions, "
      "1 failed";
  EXPECT_EQ(bubble::merge_certificates({b, a}),
            "bubble: complete: 1,234 schedules with at most 2 preemptions, 1 failed");
  const auto rejected = [](const std::vector<std::string>& lines, const std::string& why) {
    try {
      (void)bubble::merge_certificates(lines);
      ADD_FAILURE() << "merged";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  rejected({a}, "shard 1/2 is missing");
  rejected({a, a, b}, "shard 0/2 is given twice");
  rejected({a, "bubble: complete: shard 1/2: 3 schedules with at most 1 preemption, 0 failed"},
           "not of the same search");
  rejected({a, "bubble: explored 100 schedules"}, "is not a certificate");
  rejected({}, "no certificate");
}

// Found by tests/fuzz/certificate_fuzzer.cpp: the sums wrapped around 2^64, and the merge
// certified 0 schedules for a search whose shards ran 2^64 of them.
TEST(ScheduleTree, CertificatesWhoseSumsPassTwoToTheSixtyFourAreRejected) {
  const std::string most =
      "bubble: complete: shard 0/2: 18,446,744,073,709,551,615 schedules with at most 2 "
      "preemptions, 0 failed";
  const std::string one =
      "bubble: complete: shard 1/2: 1 schedule with at most 2 preemptions, 0 failed";
  const auto rejected = [](const std::vector<std::string>& lines) {
    try {
      const std::string merged = bubble::merge_certificates(lines);
      ADD_FAILURE() << "merged into " << merged;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("more than 18446744073709551615"), std::string::npos)
          << e.what();
    }
  };
  rejected({most, one});
  rejected({one, most});
  const std::string failed_most =
      "bubble: complete: shard 0/2: 1 schedule with at most 2 preemptions, "
      "18,446,744,073,709,551,615 failed";
  const std::string failed_one =
      "bubble: complete: shard 1/2: 1 schedule with at most 2 preemptions, 1 failed";
  rejected({failed_most, failed_one});
  // Up to 2^64 - 1 the sums are exact.
  EXPECT_EQ(bubble::merge_certificates(
                {"bubble: complete: shard 0/2: 18,446,744,073,709,551,614 schedules with at most 2 "
                 "preemptions, 0 failed",
                 one}),
            "bubble: complete: 18,446,744,073,709,551,615 schedules with at most 2 preemptions, "
            "0 failed");
}

TEST(ScheduleTree, TheEstimatedPartDoneGrowsFromZeroToOne) {
  EXPECT_EQ(ScheduleTree(1).estimated_done(), 0.0);
  for (const std::uint32_t bound : {1U, 2U, 3U}) {
    double last = 0.0;
    (void)search(bound, three_threads_five_steps, {}, [&](const ScheduleTree& tree) {
      const double now = tree.estimated_done();
      EXPECT_GE(now, last) << "bound " << bound << " after " << tree.schedules();
      EXPECT_LE(now, 1.0);
      last = now;
    });
    EXPECT_EQ(last, 1.0);
  }
}

TEST(ScheduleTree, ASingleScheduleProgramIsOneSchedule) {
  const Search s = search(2, [](Runtime&) { return std::string("alone"); });
  EXPECT_EQ(s.strategies, std::vector<std::string>{"choices:"});
  EXPECT_EQ(s.certificate, "bubble: complete: 1 schedule with at most 2 preemptions, 0 failed");
}

}  // namespace
