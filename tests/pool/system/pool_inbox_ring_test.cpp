// Tests of the pool's inbox ring itself (pool/src/pool_inbox.hpp, private to bubble::pool): the
// order of takes, a full ring, closing, and pushers racing a consumer on real threads (run under
// ThreadSanitizer in CI). The pool-level behaviour of the inbox is tested in pool_inbox_test.cpp.

#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "pool_inbox.hpp"

namespace {

using bubble::detail::PoolInbox;
using bubble::detail::PoolNode;

// Pushes a node marked `id` (in its priority field, which the ring never reads).
bool push_id(PoolInbox& inbox, int id) {
  PoolNode* node = inbox.allocate();
  node->priority = id;
  if (inbox.push(node)) return true;
  inbox.recycle(node, node);
  return false;
}

// Takes every pushed node, recycles it, and returns the ids in the order of the take.
std::vector<int> take_ids(PoolInbox& inbox, bool close = false) {
  std::vector<int> ids;
  auto visit = [&](PoolNode* node) {
    ids.push_back(node->priority);
    inbox.recycle(node, node);
  };
  if (close) {
    inbox.close(visit);
  } else {
    inbox.take_all(visit);
  }
  return ids;
}

// Property: takes return the pushed nodes in the order of their pushes, lap after lap of a small
// ring (8 slots, 5 nodes per round, so that rounds start at every offset of the ring).
TEST(PoolInboxRing, TakesReturnPushesInOrderAcrossLaps) {
  PoolInbox inbox(8);
  int next = 0;
  for (int round = 0; round < 40; ++round) {
    std::vector<int> expected;
    for (int i = 0; i < 5; ++i) {
      expected.push_back(next);
      ASSERT_TRUE(push_id(inbox, next++)) << "round " << round;
    }
    EXPECT_TRUE(inbox.has_pushes());
    EXPECT_EQ(take_ids(inbox), expected) << "round " << round;
    EXPECT_FALSE(inbox.has_pushes());
  }
}

// Property: a ring smaller than the pool's capacity (which is capped at kMaxSlots) refuses the
// push that would overwrite a slot not yet taken, and accepts pushes again once a take has freed
// the slots; nothing pushed is lost or taken twice.
TEST(PoolInboxRing, AFullRingRefusesPushesUntilATake) {
  PoolInbox inbox(PoolInbox::kMaxSlots * 3);
  const int slots = static_cast<int>(PoolInbox::kMaxSlots);
  for (int i = 0; i < slots; ++i) ASSERT_TRUE(push_id(inbox, i)) << i;
  EXPECT_FALSE(push_id(inbox, slots));
  const std::vector<int> taken = take_ids(inbox);
  ASSERT_EQ(taken.size(), PoolInbox::kMaxSlots);
  for (int i = 0; i < slots; ++i) ASSERT_EQ(taken[static_cast<std::size_t>(i)], i);
  EXPECT_TRUE(push_id(inbox, slots));
  EXPECT_EQ(take_ids(inbox), std::vector<int>{slots});
}

// Property: a ring as large as the capacity rounded up to a power of two takes that many pushes.
TEST(PoolInboxRing, ARingHoldsItsCapacityRoundedUpToAPowerOfTwo) {
  PoolInbox inbox(5);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(push_id(inbox, i)) << i;
  EXPECT_FALSE(push_id(inbox, 8));
  EXPECT_EQ(take_ids(inbox).size(), 8U);
}

// Property: close() hands over every node pushed before it, in order; every later push fails;
// a second close() and a take after closing find nothing.
TEST(PoolInboxRing, CloseHandsOverThePushesAndRefusesLaterOnes) {
  PoolInbox inbox(16);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(push_id(inbox, i));
  EXPECT_EQ(take_ids(inbox, /*close=*/true), (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(inbox.has_pushes());
  EXPECT_FALSE(push_id(inbox, 3));
  EXPECT_TRUE(take_ids(inbox, /*close=*/true).empty());
  EXPECT_TRUE(take_ids(inbox).empty());
}

// Property: with four threads pushing while a consumer takes (under a mutex, as the pool's
// workers do), every node is taken exactly once and each pusher's nodes come out in its order,
// across thousands of laps of a 64-slot ring; pushes that find the ring full are retried. The
// consumer often reads a tail whose last positions are claimed but not yet filled, and must wait
// for them rather than skip or reorder them.
TEST(PoolInboxRing, ConcurrentPushesAreTakenOnceInEachPushersOrder) {
  constexpr int kPushers = 4;
  constexpr int kPerPusher = 20000;
  PoolInbox inbox(64);
  std::mutex mu;  // The consumer's lock, as the pool's mutex.
  std::vector<std::vector<int>> seen(kPushers);
  std::atomic<int> done{0};
  auto take = [&] {
    std::lock_guard<std::mutex> lk(mu);
    inbox.take_all([&](PoolNode* node) {
      seen[static_cast<std::size_t>(node->priority / kPerPusher)].push_back(node->priority %
                                                                            kPerPusher);
      inbox.recycle(node, node);
    });
  };
  std::thread consumer([&] {
    while (done.load(std::memory_order_acquire) < kPushers) take();
    take();
  });
  std::vector<std::thread> pushers;
  for (int p = 0; p < kPushers; ++p) {
    pushers.emplace_back([&, p] {
      for (int i = 0; i < kPerPusher; ++i) {
        while (!push_id(inbox, p * kPerPusher + i)) std::this_thread::yield();
      }
      done.fetch_add(1, std::memory_order_release);
    });
  }
  for (auto& t : pushers) t.join();
  consumer.join();
  for (int p = 0; p < kPushers; ++p) {
    const auto& ids = seen[static_cast<std::size_t>(p)];
    ASSERT_EQ(ids.size(), static_cast<std::size_t>(kPerPusher)) << "pusher " << p;
    for (int i = 0; i < kPerPusher; ++i) {
      ASSERT_EQ(ids[static_cast<std::size_t>(i)], i) << "pusher " << p;
    }
  }
}

}  // namespace
