// Priority and aging in a bubble (virtual time, exact): a flood of urgent jobs starves a less
// urgent one without aging, and delays it by a bounded, exact amount with aging (priority, and its
// trap: starvation).

#include <chrono>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/context.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::Pool;

BUBBLE_TEST(PoolPriority, HigherPriorityRunsFirstAndEqualPrioritiesInOrder) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 1, .queue_capacity = 8}, rt);
  bubble::Notification gate;
  std::vector<int> order;
  ASSERT_FALSE(pool.submit(Context::background(), [&] { gate.wait(); }));
  bubble::wait();  // The worker is held at the gate; everything below queues.
  const int priorities[] = {0, 2, 1, 2, 0};
  for (int i = 0; i < 5; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), [&order, i] { order.push_back(i); },
                             {.priority = priorities[i]}));
  }
  gate.notify();
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(order, (std::vector<int>{1, 3, 2, 0, 4}));
}

// One worker, 10 ms jobs, a queue of 4. At t = 0 the worker starts a job G, a low-priority job
// L is queued, and a flooder keeps the rest of the queue full of priority-1 jobs until the
// horizon (1 s). Returns when L started, relative to the start.
bubble::Duration low_job_start_under_flood(bubble::Duration aging_step) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  // Resumed at every freed slot (room_to_resume = 1), so that the flooder refills each one.
  Pool pool({.workers = 1, .queue_capacity = 4, .room_to_resume = 1, .aging_step = aging_step}, rt);
  auto ten_ms = [] { bubble::sleep_for(10ms); };
  EXPECT_FALSE(pool.submit(Context::background(), ten_ms, {.priority = 1}));  // G
  bubble::wait();
  bubble::Duration low_started{-1};
  EXPECT_FALSE(pool.submit(Context::background(), [&] { low_started = rt.now() - start; }));
  bubble::Thread flooder(
      "flooder",
      [&] {
        while (rt.now() - start < 1s) {
          EXPECT_FALSE(pool.submit(Context::background(), ten_ms, {.priority = 1}));
        }
      },
      rt);
  flooder.join();
  EXPECT_FALSE(pool.shutdown());
  return low_started;
}

BUBBLE_TEST(PoolPriority, WithoutAgingAFloodOfUrgentJobsStarvesALowPriorityJob) {
  // At 1 s the worker takes an urgent job (it runs until 1.01 s) and the flooder's last submit
  // fills the freed slot; the three urgent jobs then queued run first, and L starts only at
  // 1.04 s: it waited for the whole flood, however long the flood had lasted.
  EXPECT_EQ(low_job_start_under_flood(0ms), 1040ms);
}

BUBBLE_TEST(PoolPriority, WithAgingTheLowPriorityJobRunsWithinOneAgingStep) {
  // Urgent jobs are taken when 30 ms old (effective priority 1 + 0); L reaches effective
  // priority 0 + 1 after one 50 ms step, ties, and wins as the older job: it starts at 50 ms.
  EXPECT_EQ(low_job_start_under_flood(50ms), 50ms);
  // A longer step delays it accordingly (the first take at or after 200 ms).
  EXPECT_EQ(low_job_start_under_flood(200ms), 200ms);
}

}  // namespace
