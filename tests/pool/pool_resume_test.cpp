// When a submitter that waits for room is resumed (PoolOptions::room_to_resume), in a bubble:
// exact virtual times with the automatic threshold and with 1, several waiters, close while
// waiting, submit_within's timeout below the threshold, a submit that finds room while others
// wait, and the validation of the option.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

#include "../support/sleeper_job.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::Duration;
using bubble::errc;
using bubble::Pool;
using bubble::PoolOptions;

// A job that takes `d` of virtual time.
using bubble::test_support::sleeper;

// One worker, jobs of 10 ms: starts one job (running 0..10 ms) and fills the queue, so that from
// then on the worker frees one slot every 10 ms (at 10, 20, 30 ms ...).
void fill(Pool& pool) {
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(10ms)));
  bubble::wait();  // The worker takes it.
  for (std::size_t i = 0; i < pool.stats().queue_capacity; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), sleeper(10ms)));
  }
  ASSERT_EQ(pool.stats().queue_depth, pool.stats().queue_capacity);
}

// The moment a single submitter, waiting on a full queue of `capacity`, is resumed.
Duration resume_moment(std::ptrdiff_t capacity, std::ptrdiff_t room_to_resume) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = capacity, .room_to_resume = room_to_resume}, rt);
  fill(pool);
  EXPECT_FALSE(pool.submit(Context::background(), sleeper(10ms)));
  const Duration resumed = rt.now() - start;
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(pool.stats().completed, static_cast<std::uint64_t>(capacity) + 2);
  return resumed;
}

BUBBLE_TEST(PoolResume, DefaultResumesOnceAQuarterOfTheQueueIsFree) {
  // Capacity 8: the automatic threshold is 2 free slots, reached when the worker takes its
  // second queued job, at 20 ms (at 10 ms only one slot is free).
  EXPECT_EQ(resume_moment(8, 0), 20ms);
  // Capacity 16: 4 slots, at 40 ms.
  EXPECT_EQ(resume_moment(16, 0), 40ms);
  // Capacity 3: a quarter rounds down to 0, and the threshold is at least 1: at 10 ms.
  EXPECT_EQ(resume_moment(3, 0), 10ms);
}

BUBBLE_TEST(PoolResume, OneResumesAtTheFirstFreedSlot) {
  EXPECT_EQ(resume_moment(8, 1), 10ms);
  EXPECT_EQ(resume_moment(1, 1), 10ms);
}

BUBBLE_TEST(PoolResume, ExplicitThresholdsCountFreeSlots) {
  EXPECT_EQ(resume_moment(8, 3), 30ms);
  // The whole capacity: resumed when the worker takes the last queued job.
  EXPECT_EQ(resume_moment(8, 8), 80ms);
}

// Three submitters wait on a full queue of 8; each queues one job. Returns when each returned,
// sorted.
std::vector<Duration> waiters_resumed(std::ptrdiff_t room_to_resume) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 8, .room_to_resume = room_to_resume}, rt);
  fill(pool);
  std::vector<Duration> returned;
  std::vector<bubble::Thread> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back(
        "waiter-" + std::to_string(i),
        [&] {
          EXPECT_FALSE(pool.submit(Context::background(), sleeper(10ms)));
          returned.push_back(rt.now() - start);
        },
        rt);
  }
  bubble::sleep_for(1ms);
  EXPECT_EQ(pool.stats().waiting_submitters, 3u);
  for (auto& w : waiters) w.join();
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(pool.stats().completed, 12u);
  std::sort(returned.begin(), returned.end());
  return returned;
}

BUBBLE_TEST(PoolResume, AResumedWaiterResumesTheNextWhileRoomRemains) {
  // At 20 ms two slots are free: the first waiter is resumed, queues, and resumes the second,
  // which takes the last free slot. The third waits for the next two free slots: 40 ms.
  EXPECT_EQ(waiters_resumed(0), (std::vector<Duration>{20ms, 20ms, 40ms}));
  // With 1, one waiter per freed slot.
  EXPECT_EQ(waiters_resumed(1), (std::vector<Duration>{10ms, 20ms, 30ms}));
}

BUBBLE_TEST(PoolResume, AResumedWaiterThatIsRefusedResumesTheNext) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  // One worker, capacity 8 (threshold 2), at most 3 queued jobs per tenant. Urgent jobs of
  // tenants u1, u2 go first, so tenant a's jobs (priority 0) stay queued throughout.
  Pool pool({.workers = 1, .queue_capacity = 8, .max_queued_per_tenant = 3}, rt);
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(10ms), {.tenant = "u0"}));
  bubble::wait();
  for (const char* tenant : {"u1", "u2"}) {
    for (int i = 0; i < 3; ++i) {
      ASSERT_FALSE(
          pool.submit(Context::background(), sleeper(10ms), {.priority = 1, .tenant = tenant}));
    }
  }
  for (int i = 0; i < 2; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), sleeper(10ms), {.tenant = "a"}));
  }
  ASSERT_EQ(pool.stats().queue_depth, 8u);
  // The first waiter is of tenant a (2 queued, below its cap), the second of tenant c.
  std::error_code first_result, second_result;
  Duration first_returned{}, second_returned{};
  bubble::Thread first(
      "first",
      [&] {
        first_result = pool.submit(Context::background(), sleeper(10ms), {.tenant = "a"});
        first_returned = rt.now() - start;
      },
      rt);
  bubble::sleep_for(1ms);
  bubble::Thread second(
      "second",
      [&] {
        second_result = pool.submit(Context::background(), sleeper(10ms), {.tenant = "c"});
        second_returned = rt.now() - start;
      },
      rt);
  // At 10 ms one slot is free (below the threshold); at 15 ms a submit that finds it takes it
  // for tenant a, which reaches its cap.
  bubble::sleep_until(start + 15ms);
  EXPECT_EQ(pool.stats().waiting_submitters, 2u);
  ASSERT_FALSE(pool.try_submit(Context::background(), sleeper(10ms), {.tenant = "a"}));
  // At 30 ms two slots are free: the first waiter is resumed, finds tenant a at its cap and is
  // refused; it resumes the second at once, which queues.
  first.join();
  second.join();
  EXPECT_EQ(first_result, errc::tenant_limit);
  EXPECT_EQ(first_returned, 30ms);
  EXPECT_FALSE(second_result);
  EXPECT_EQ(second_returned, 30ms);
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(pool.stats().completed, 11u);
}

BUBBLE_TEST(PoolResume, CloseWakesEveryWaiterAtOnce) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 8}, rt);
  fill(pool);
  std::array<std::error_code, 3> results;
  std::array<Duration, 3> returned{};
  std::vector<bubble::Thread> waiters;
  for (std::size_t i = 0; i < results.size(); ++i) {
    waiters.emplace_back(
        "waiter-" + std::to_string(i),
        [&, i] {
          results[i] = pool.submit(Context::background(), sleeper(10ms));
          returned[i] = rt.now() - start;
        },
        rt);
  }
  // At 15 ms one slot is free, below the threshold of 2: all three still wait.
  bubble::sleep_for(15ms);
  EXPECT_EQ(pool.stats().waiting_submitters, 3u);
  EXPECT_EQ(pool.stats().queue_depth, 7u);
  EXPECT_FALSE(pool.shutdown());  // Closes at 15 ms, then drains the 8 jobs left.
  for (auto& w : waiters) w.join();
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i], errc::closed) << i;
    EXPECT_EQ(returned[i], 15ms) << i;
  }
  EXPECT_EQ(pool.stats().rejected_closed, 3u);
  EXPECT_EQ(pool.stats().completed, 9u);
}

BUBBLE_TEST(PoolResume, ContextEndsTheWaitAtOnceBelowTheThreshold) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 8}, rt);
  fill(pool);
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 15ms, rt);
  EXPECT_EQ(pool.submit(ctx, sleeper(10ms)), errc::deadline_exceeded);
  EXPECT_EQ(rt.now() - start, 15ms);
  EXPECT_FALSE(pool.shutdown());
}

BUBBLE_TEST(PoolResume, SubmitWithinTimesOutWhileRoomIsBelowTheThreshold) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 8}, rt);
  fill(pool);
  // One slot frees at 10 ms, below the threshold of 2: not resumed; full after exactly 15 ms.
  EXPECT_EQ(pool.submit_within(Context::background(), sleeper(10ms), 15ms), errc::full);
  EXPECT_EQ(rt.now() - start, 15ms);
  EXPECT_EQ(pool.stats().queue_depth, 7u);
  // A submit that finds room does not wait, whatever the threshold.
  EXPECT_FALSE(pool.try_submit(Context::background(), sleeper(10ms)));
  EXPECT_EQ(pool.stats().queue_depth, 8u);
  // Waiting again: two slots free at 30 ms (the worker takes jobs at 20 and 30 ms).
  EXPECT_FALSE(pool.submit_within(Context::background(), sleeper(10ms), 100ms));
  EXPECT_EQ(rt.now() - start, 30ms);
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(pool.stats().rejected_full, 1u);
  EXPECT_EQ(pool.stats().completed, 11u);
}

BUBBLE_TEST(PoolResume, SubmitWithinIsResumedAtTheFirstSlotWithOne) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 8, .room_to_resume = 1}, rt);
  fill(pool);
  EXPECT_FALSE(pool.submit_within(Context::background(), sleeper(10ms), 15ms));
  EXPECT_EQ(rt.now() - start, 10ms);
  EXPECT_FALSE(pool.shutdown());
}

// A job that waits for its submitter's next step: with room_to_resume = 1 it completes; with a
// threshold of 2 the worker, blocked in the job, frees one slot only and the submitter is never
// resumed (the bubble reports the deadlock).
void job_waiting_for_its_submitter(std::ptrdiff_t room_to_resume) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 1, .queue_capacity = 2, .room_to_resume = room_to_resume}, rt);
  bubble::Notification next_submitted(rt);
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(10ms)));
  bubble::wait();
  ASSERT_FALSE(pool.submit(Context::background(), [&] { next_submitted.wait(); }));
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(1ms)));
  // Full. The worker takes the waiting job at 10 ms, freeing one slot, and blocks in it.
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(1ms)));
  next_submitted.notify();
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(pool.stats().completed, 4u);
}

BUBBLE_TEST(PoolResume, AJobWaitingForItsSubmitterCompletesWithOne) {
  job_waiting_for_its_submitter(1);
}

TEST(PoolResume, AJobWaitingForItsSubmitterDeadlocksWithALargerThreshold) {
  EXPECT_THROW(bubble::run([](bubble::Runtime&) { job_waiting_for_its_submitter(2); }),
               bubble::DeadlockError);
}

// Property: with any capacity and threshold, several submitters that outrun the workers get every
// job queued and run (no waiter is left waiting while the queue has room and the workers idle:
// the bubble would report that as a deadlock), and the counters add up.
BUBBLE_TEST(PoolResume, EveryWaiterIsEventuallyResumed) {
  bubble::Runtime& rt = bubble::current_runtime();
  for (std::ptrdiff_t capacity : {1, 2, 5, 8}) {
    for (std::ptrdiff_t threshold = 0; threshold <= capacity; ++threshold) {
      Pool pool({.workers = 2, .queue_capacity = capacity, .room_to_resume = threshold}, rt);
      std::vector<bubble::Thread> submitters;
      for (int s = 0; s < 3; ++s) {
        submitters.emplace_back(
            "submitter-" + std::to_string(s),
            [&, s] {
              for (int j = 0; j < 6; ++j) {
                const Duration d = std::chrono::milliseconds((s + j) % 3);
                if (j % 3 == 2) {
                  EXPECT_FALSE(pool.submit_within(Context::background(), sleeper(d), 1h));
                } else {
                  EXPECT_FALSE(pool.submit(Context::background(), sleeper(d)));
                }
              }
            },
            rt);
      }
      for (auto& t : submitters) t.join();
      EXPECT_FALSE(pool.shutdown());
      EXPECT_EQ(pool.stats().completed, 18u) << capacity << " " << threshold;
      EXPECT_EQ(pool.stats().waiting_submitters, 0u);
    }
  }
}

TEST(PoolResume, RoomToResumeIsValidated) {
  auto message = [](std::ptrdiff_t capacity, std::ptrdiff_t room) -> std::string {
    try {
      Pool pool({.queue_capacity = capacity, .room_to_resume = room}, bubble::system_runtime());
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no exception";
  };
  EXPECT_EQ(message(8, -1),
            "bubble::Pool: options.room_to_resume must be >= 0 and <= queue_capacity (8), got -1");
  EXPECT_EQ(message(8, 9),
            "bubble::Pool: options.room_to_resume must be >= 0 and <= queue_capacity (8), got 9");
  EXPECT_EQ(message(8, 8), "no exception");
  EXPECT_EQ(message(8, 0), "no exception");
  EXPECT_EQ(message(1, 1), "no exception");
}

}  // namespace
