// The schedule a bubble run records (framework/src/engine/pick_record.hpp), on its own: picks after
// pending zeros, growth, and the vector the OS thread keeps from one run to the next.

#include "engine/pick_record.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "../../support/on_fresh_thread.hpp"

namespace {

using bubble::Schedule;
using bubble::engine::PickRecord;

using bubble::test_support::on_fresh_thread;

Schedule recorded(const std::vector<std::uint32_t>& decisions) {
  PickRecord r;
  for (std::uint32_t d : decisions) r.record(d);
  return r.schedule();
}

TEST(PickRecord, KeepsPicksUpToTheLastOtherThanZeroAndCountsEveryDecision) {
  on_fresh_thread([] {
    const Schedule s = recorded({0, 2, 0, 0, 1, 0, 0});
    EXPECT_EQ(s.picks, (std::vector<std::uint32_t>{0, 2, 0, 0, 1}));
    EXPECT_EQ(s.decisions, 7u);
    EXPECT_EQ(recorded({0, 0, 0}), (Schedule{{}, 3}));
    EXPECT_EQ(recorded({}), (Schedule{{}, 0}));
  });
}

TEST(PickRecord, GrowsPastItsFirstLength) {
  on_fresh_thread([] {
    std::vector<std::uint32_t> decisions;
    for (std::uint32_t i = 0; i < 10 * PickRecord::kFirstPicks; ++i) decisions.push_back(i % 3);
    const Schedule s = recorded(decisions);
    decisions.pop_back();  // 10 * 1024 - 1 is a multiple of 3: the last pick is 0.
    EXPECT_EQ(s.picks, decisions);
    EXPECT_EQ(s.decisions, 10 * PickRecord::kFirstPicks);
  });
}

// The next run on the thread reuses the vector: the picks of the last run must not show through
// as the zeros pending of the next.
TEST(PickRecord, TheNextRunOnTheThreadStartsFromNothing) {
  on_fresh_thread([] {
    EXPECT_EQ(PickRecord::kept_size(), 0u);
    recorded(std::vector<std::uint32_t>(5000, 1));
    const std::size_t kept = PickRecord::kept_size();
    EXPECT_GE(kept, 5000u);
    std::vector<std::uint32_t> zeros_then_one(4999, 0);
    zeros_then_one.push_back(1);
    EXPECT_EQ(recorded(zeros_then_one), (Schedule{zeros_then_one, 5000}));
    EXPECT_EQ(PickRecord::kept_size(), kept);  // The same vector, not grown.
    EXPECT_EQ(recorded({0, 0, 0, 2, 0}), (Schedule{{0, 0, 0, 2}, 5}));
  });
}

TEST(PickRecord, ARunNestedInAnotherRecordsApart) {
  on_fresh_thread([] {
    recorded(std::vector<std::uint32_t>(3000, 2));  // Leaves a kept vector.
    PickRecord outer;
    outer.record(1);
    EXPECT_EQ(recorded({0, 3}), (Schedule{{0, 3}, 2}));
    outer.record(0);
    outer.record(4);
    EXPECT_EQ(outer.schedule(), (Schedule{{1, 0, 4}, 3}));
  });
}

// A big run's memory is returned after the next, smaller run.
TEST(PickRecord, TheKeptVectorFollowsTheLastRun) {
  on_fresh_thread([] {
    recorded(std::vector<std::uint32_t>(100'000, 1));
    EXPECT_GE(PickRecord::kept_size(), 100'000u);
    recorded({1, 1, 1});
    EXPECT_EQ(PickRecord::kept_size(), PickRecord::kFirstPicks);
    EXPECT_EQ(recorded({0, 0, 0, 0, 1}), (Schedule{{0, 0, 0, 0, 1}, 5}));
  });
}

}  // namespace
