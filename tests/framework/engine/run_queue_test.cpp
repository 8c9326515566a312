// The bubble's run queue (framework/src/engine/run_queue.hpp), on its own: a ring buffer of
// thread pointers, first in first out, with removal at any index keeping the others' order.

#include "engine/run_queue.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <deque>
#include <random>
#include <vector>

namespace {

using bubble::engine::RunQueue;

struct Item {
  int id;
};

std::vector<int> ids(const RunQueue<Item>& q) {
  std::vector<int> out;
  for (std::size_t i = 0; i < q.size(); ++i) out.push_back(q[i]->id);
  return out;
}

TEST(RunQueue, PushBackIsFirstInFirstOut) {
  std::vector<Item> items{{1}, {2}, {3}};
  RunQueue<Item> q;
  q.reserve(3);
  EXPECT_TRUE(q.empty());
  for (Item& i : items) q.push_back(&i);
  EXPECT_EQ(ids(q), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(q.take(0)->id, 1);
  EXPECT_EQ(q.take(0)->id, 2);
  EXPECT_EQ(q.take(0)->id, 3);
  EXPECT_TRUE(q.empty());
}

TEST(RunQueue, PushFrontGoesBeforeEveryOther) {
  std::vector<Item> items{{1}, {2}, {3}};
  RunQueue<Item> q;
  q.reserve(3);
  q.push_back(&items[0]);
  q.push_back(&items[1]);
  q.push_front(&items[2]);
  EXPECT_EQ(ids(q), (std::vector<int>{3, 1, 2}));
}

TEST(RunQueue, TakeFromTheMiddleKeepsTheOthersInOrder) {
  // Both halves: an index in the front half shifts the front, one in the back half the back.
  for (std::size_t taken = 0; taken < 7; ++taken) {
    std::vector<Item> items{{0}, {1}, {2}, {3}, {4}, {5}, {6}};
    RunQueue<Item> q;
    q.reserve(items.size());
    for (Item& i : items) q.push_back(&i);
    EXPECT_EQ(q.take(taken)->id, static_cast<int>(taken));
    std::vector<int> expected;
    for (int i = 0; i < 7; ++i) {
      if (i != static_cast<int>(taken)) expected.push_back(i);
    }
    EXPECT_EQ(ids(q), expected) << "taken " << taken;
  }
}

// exchange_single(t) with one thread queued is take(0) then push_back(t), wherever the ring's
// front is (every position of the ring, wrap-around included), and later operations see the
// queue exactly as they would after take and push_back.
TEST(RunQueue, ExchangeSingleIsTakeThenPushBackAtEveryPosition) {
  std::vector<Item> items{{1}, {2}, {3}};
  RunQueue<Item> q;
  q.reserve(3);
  const std::size_t capacity = q.capacity();
  for (std::size_t shift = 0; shift < capacity + 1; ++shift) {
    q.push_back(&items[0]);
    EXPECT_EQ(q.exchange_single(&items[1])->id, 1) << "shift " << shift;
    EXPECT_EQ(ids(q), (std::vector<int>{2})) << "shift " << shift;
    q.push_back(&items[2]);
    q.push_front(&items[0]);
    EXPECT_EQ(ids(q), (std::vector<int>{1, 2, 3})) << "shift " << shift;
    // Empty it, then move the front one slot on for the next round.
    while (!q.empty()) (void)q.take(0);
    for (std::size_t k = 0; k <= shift; ++k) {
      q.push_back(&items[0]);
      (void)q.take(0);
    }
  }
}

TEST(RunQueue, ReserveKeepsTheContentsAcrossGrowthAndWrapAround) {
  std::vector<Item> items(100);
  for (int i = 0; i < 100; ++i) items[i].id = i;
  RunQueue<Item> q;
  q.reserve(4);
  const std::size_t first = q.capacity();
  EXPECT_GE(first, 4u);
  // Wrap the ring around before growing it: push to the front of a small queue.
  q.push_back(&items[1]);
  q.push_front(&items[0]);
  q.reserve(50);
  EXPECT_GE(q.capacity(), 50u);
  EXPECT_EQ(ids(q), (std::vector<int>{0, 1}));
  for (int i = 2; i < 50; ++i) q.push_back(&items[i]);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(q[i]->id, i);
  q.reserve(10);  // Never shrinks.
  EXPECT_GE(q.capacity(), 50u);
}

// Property: under any sequence of push_back, push_front and take(i) within the reserved room, the
// queue holds exactly what a std::deque given the same operations holds, in the same order.
TEST(RunQueue, MatchesADequeUnderRandomOperations) {
  std::vector<Item> items(64);
  for (int i = 0; i < 64; ++i) items[i].id = i;
  for (unsigned seed = 0; seed < 50; ++seed) {
    std::mt19937 gen(seed);
    RunQueue<Item> q;
    q.reserve(items.size());
    std::deque<Item*> model;
    std::size_t next = 0;
    for (int op = 0; op < 2000; ++op) {
      const unsigned kind = gen() % 3;
      if (kind < 2 && model.size() < items.size()) {
        Item* it = &items[next++ % items.size()];
        if (kind == 0) {
          q.push_back(it);
          model.push_back(it);
        } else {
          q.push_front(it);
          model.push_front(it);
        }
      } else if (!model.empty()) {
        const std::size_t i = gen() % model.size();
        ASSERT_EQ(q.take(i), model[i]) << "seed " << seed << ", op " << op;
        model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
      }
      ASSERT_EQ(q.size(), model.size());
    }
    for (std::size_t i = 0; i < model.size(); ++i) ASSERT_EQ(q[i], model[i]);
  }
}

TEST(RunQueueDeathTest, PushingPastTheReservedRoomAborts) {
  Item a{1};
  Item b{2};
  EXPECT_DEATH(
      {
        RunQueue<Item> q;
        q.reserve(1);
        for (std::size_t i = 0; i <= q.capacity(); ++i) q.push_back(i % 2 == 0 ? &a : &b);
      },
      "internal error: the run queue holds more threads than exist");
}

}  // namespace
