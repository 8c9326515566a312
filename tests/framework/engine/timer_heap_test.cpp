// The bubble's timer heap (framework/src/engine/timer_heap.hpp), on its own: runs of timers that
// share a deadline, in a 4-ary min-heap, that yield timers by deadline, and timers with the same
// deadline in creation order.

#include "engine/timer_heap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using bubble::engine::TimerEntry;
using bubble::engine::TimerHeap;

bubble::TimePoint at(std::int64_t ns) {
  return bubble::TimePoint{std::chrono::nanoseconds{ns}};
}

TimerEntry entry(std::int64_t ns, std::uint64_t seq, std::uint32_t slot) {
  return TimerEntry{at(ns), (seq << TimerEntry::kSlotBits) | slot};
}

// Pops every timer of `h`; returns their creation sequences in the order popped.
std::vector<std::uint64_t> popped(TimerHeap& h) {
  std::vector<std::uint64_t> order;
  while (!h.empty()) {
    order.push_back(h.top().seq());
    h.pop();
  }
  return order;
}

TEST(TimerEntry, KeyHoldsTheSequenceAndTheSlot) {
  const TimerEntry e = entry(5, 123456, 0xabcdef);
  EXPECT_EQ(e.seq(), 123456u);
  EXPECT_EQ(e.slot(), 0xabcdefu);
}

TEST(TimerHeap, PopsByDeadlineThenCreation) {
  TimerHeap h;
  EXPECT_TRUE(h.empty());
  h.push(entry(30, 1, 0));
  h.push(entry(10, 2, 1));
  h.push(entry(30, 3, 2));
  h.push(entry(10, 4, 3));
  h.push(entry(20, 5, 4));
  EXPECT_EQ(popped(h), (std::vector<std::uint64_t>{2, 4, 5, 1, 3}));
}

// Property: whatever the order of pushes and interleaved pops, every pop yields the least
// remaining (deadline, key), as a sorted reference list does. Run with deadlines drawn from 3
// values (long runs), 50 (ties common; some share a slot of the
// deadline cache), 1,000 (more deadlines than the cache holds: runs of one deadline split) and
// 10^12 (nearly every timer a run of its own).
class TimerHeapRandom : public testing::TestWithParam<std::uint64_t> {};

TEST_P(TimerHeapRandom, MatchesASortedListUnderRandomOperations) {
  const std::uint64_t deadlines = GetParam();
  for (unsigned seed = 0; seed < 50; ++seed) {
    std::mt19937_64 gen(seed);
    TimerHeap h;
    std::vector<TimerEntry> model;
    auto less = [](const TimerEntry& a, const TimerEntry& b) {
      return a.deadline != b.deadline ? a.deadline < b.deadline : a.key < b.key;
    };
    std::uint64_t seq = 0;
    for (int op = 0; op < 3000; ++op) {
      if (gen() % 3 != 0 || model.empty()) {
        const TimerEntry e = entry(static_cast<std::int64_t>(gen() % deadlines), ++seq,
                                   static_cast<std::uint32_t>(gen() % 1000));
        h.push(e);
        model.push_back(e);
      } else {
        const auto least = std::min_element(model.begin(), model.end(), less);
        ASSERT_EQ(h.top().key, least->key) << "seed " << seed << ", op " << op;
        ASSERT_EQ(h.top().deadline, least->deadline);
        h.pop();
        model.erase(least);
      }
      ASSERT_EQ(h.size(), model.size());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Deadlines, TimerHeapRandom,
                         testing::Values(3, 50, 1'000, 1'000'000'000'000));

// A run emptied by pops is forgotten: a later timer with its deadline starts a new run, which
// orders after timers of other deadlines pushed in between only by deadline.
TEST(TimerHeap, ARunEmptiedAndStartedAgainKeepsTheOrder) {
  TimerHeap h;
  h.push(entry(10, 1, 0));
  h.push(entry(20, 2, 1));
  EXPECT_EQ(h.top().seq(), 1u);
  h.pop();  // The run of deadline 10 is empty now.
  h.push(entry(10, 3, 2));
  h.push(entry(10, 4, 3));
  h.push(entry(5, 5, 4));
  EXPECT_EQ(popped(h), (std::vector<std::uint64_t>{5, 3, 4, 2}));
}

TEST(TimerHeap, ClearEmptiesIt) {
  TimerHeap h;
  h.push(entry(1, 1, 1));
  h.push(entry(2, 2, 2));
  h.push(entry(2, 3, 3));  // A run of deadline 2...
  h.push(entry(2, 4, 4));
  h.clear();
  EXPECT_TRUE(h.empty());
  h.push(entry(2, 1, 5));  // ...forgotten: timers of that deadline go into the heap again.
  h.push(entry(2, 2, 6));
  h.push(entry(2, 3, 7));
  EXPECT_EQ(h.size(), 3u);
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    ASSERT_FALSE(h.empty());
    EXPECT_EQ(h.top().seq(), seq);
    h.pop();
  }
  h.clear();
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.size(), 0u);
  // Keys start again after a clear (a new run numbers its timers from 1).
  h.push(entry(2, 1, 3));
  h.push(entry(1, 2, 4));
  EXPECT_EQ(h.size(), 2u);
  EXPECT_EQ(h.top().seq(), 2u);
  h.pop();
  EXPECT_EQ(h.top().seq(), 1u);
}

}  // namespace
