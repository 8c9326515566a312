// Which idle worker a queued job wakes, in a bubble with exact virtual times: the worker that went
// idle last (idle workers are woken last in, first out), every idle worker when enough jobs are
// queued for all of them, and a job queued while a worker is idle starts at once even when other
// workers are busy.

#include <chrono>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::Duration;
using bubble::Pool;
using bubble::TimePoint;

// What a job saw: the worker that ran it (its thread token) and when it started.
struct Ran {
  const void* worker = nullptr;
  TimePoint started{};
};

// A job that records its worker and start into `into`, then takes `d` of virtual time.
bubble::Job recording(Ran& into, Duration d) {
  return [&into, d] {
    bubble::Runtime& rt = bubble::current_runtime();
    into.worker = rt.current_thread_token();
    into.started = rt.now();
    bubble::sleep_for(d);
  };
}

// Two workers go idle one after the other (at 1 s and at 2 s); a job queued at 3 s goes to the
// one that went idle last, at 2 s.
BUBBLE_TEST(PoolWake, TheWorkerThatWentIdleLastTakesTheNextJob) {
  bubble::Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Pool pool({.workers = 2}, rt);
  Ran first, second, next;
  ASSERT_FALSE(pool.submit(Context::background(), recording(first, 1s)));
  ASSERT_FALSE(pool.submit(Context::background(), recording(second, 2s)));
  bubble::sleep_for(3s);
  ASSERT_NE(first.worker, second.worker);  // Both workers ran, side by side.
  EXPECT_EQ(first.started - start, Duration::zero());
  EXPECT_EQ(second.started - start, Duration::zero());
  ASSERT_FALSE(pool.submit(Context::background(), recording(next, 0s)));
  // Before shutdown, which wakes the other worker too: either might then take the job first.
  bubble::sleep_for(1s);
  EXPECT_EQ(next.worker, second.worker);
  EXPECT_EQ(next.started - start, Duration{3s});
  ASSERT_FALSE(pool.shutdown());
}

// The same, the other way round (the second job ends first): the order is the order of going
// idle, not of the workers' numbers or of the jobs.
BUBBLE_TEST(PoolWake, TheOrderIsTheOrderOfGoingIdle) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 2}, rt);
  Ran first, second, next;
  ASSERT_FALSE(pool.submit(Context::background(), recording(first, 2s)));
  ASSERT_FALSE(pool.submit(Context::background(), recording(second, 1s)));
  bubble::sleep_for(3s);
  ASSERT_NE(first.worker, second.worker);
  ASSERT_FALSE(pool.submit(Context::background(), recording(next, 0s)));
  bubble::sleep_for(1s);  // Before shutdown, as above.
  EXPECT_EQ(next.worker, first.worker);
  ASSERT_FALSE(pool.shutdown());
}

// Three idle workers and three jobs of 1 s queued at once: each wakes a worker of its own, so all
// three run side by side and end at 1 s.
BUBBLE_TEST(PoolWake, EnoughJobsWakeEveryIdleWorker) {
  bubble::Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Pool pool({.workers = 3}, rt);
  bubble::sleep_for(1s);  // Every worker is idle.
  std::vector<Ran> ran(3);
  for (Ran& r : ran) ASSERT_FALSE(pool.submit(Context::background(), recording(r, 1s)));
  bubble::sleep_for(500ms);  // Before shutdown, which wakes every idle worker anyway.
  for (const Ran& r : ran) EXPECT_EQ(r.started - start, Duration{1s});
  ASSERT_FALSE(pool.shutdown());
  EXPECT_EQ(rt.now() - start, Duration{2s});
  EXPECT_NE(ran[0].worker, ran[1].worker);
  EXPECT_NE(ran[0].worker, ran[2].worker);
  EXPECT_NE(ran[1].worker, ran[2].worker);
}

// One worker is busy for 10 s; a job queued at 1 s, while the other worker is idle, starts at
// 1 s, not when the busy worker is done.
BUBBLE_TEST(PoolWake, AJobQueuedWhileAWorkerIsIdleStartsAtOnce) {
  bubble::Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Pool pool({.workers = 2}, rt);
  Ran busy, next;
  ASSERT_FALSE(pool.submit(Context::background(), recording(busy, 10s)));
  bubble::sleep_for(1s);
  ASSERT_FALSE(pool.submit(Context::background(), recording(next, 0s)));
  bubble::sleep_for(1s);
  EXPECT_EQ(next.started - start, Duration{1s});
  EXPECT_NE(next.worker, busy.worker);
  ASSERT_FALSE(pool.shutdown());
}

// Workers that went idle in turn, many times over: after every round of two jobs, each round's
// jobs start when they are queued (no job waits for a worker while one is idle), and shutdown
// wakes the idle workers and ends.
BUBBLE_TEST(PoolWake, RoundsOfIdleAndBusyLoseNoWakeUp) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 2}, rt);
  for (int round = 0; round < 50; ++round) {
    Ran a, b;
    const TimePoint queued = rt.now();
    ASSERT_FALSE(pool.submit(Context::background(), recording(a, 1s + round * 1ms)));
    ASSERT_FALSE(pool.submit(Context::background(), recording(b, 2s - round * 1ms)));
    bubble::sleep_for(3s);
    EXPECT_EQ(a.started, queued) << "round " << round;
    EXPECT_EQ(b.started, queued) << "round " << round;
  }
  ASSERT_FALSE(pool.shutdown());
  EXPECT_EQ(pool.stats().completed, 100u);
}

}  // namespace
