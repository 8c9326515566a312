// Tests of bubble::system_runtime(): the kernel operations on real threads.
//
// These tests only assert ordering and lower bounds on time; threads are sequenced with std::latch
// (the kernel under test is what the bubble primitives are built on, so the tests do not use them).

#include <bubble/runtime.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::ParkResult;
using bubble::Runtime;
using bubble::TimePoint;
using bubble::Waiter;

const bubble::WaitInfo kTestWait{"test", 0, bubble::SourceLocation::current()};

TEST(SystemRuntime, IsTheCurrentRuntimeOfPlainThreadsAndNotABubble) {
  Runtime& rt = bubble::system_runtime();
  EXPECT_EQ(&bubble::current_runtime(), &rt);
  EXPECT_FALSE(bubble::in_bubble());
  EXPECT_FALSE(rt.controlled());
  EXPECT_EQ(rt.name(), "system");

  Runtime* seen_in_thread = nullptr;
  bool in_bubble_in_thread = true;
  auto handle = rt.spawn("checker", [&] {
    seen_in_thread = &bubble::current_runtime();
    in_bubble_in_thread = bubble::in_bubble();
  });
  handle->join();
  EXPECT_EQ(seen_in_thread, &rt);
  EXPECT_FALSE(in_bubble_in_thread);
}

TEST(SystemRuntime, ClockNeverGoesBackwards) {
  Runtime& rt = bubble::system_runtime();
  TimePoint last = rt.now();
  for (int i = 0; i < 1000; ++i) {
    const TimePoint t = rt.now();
    ASSERT_GE(t, last);
    last = t;
  }
}

TEST(SystemRuntime, ClockNeverGoesBackwardsOnAnyThreadAcrossRefreshes) {
  // Property: on every thread, successive readings never decrease, also while other threads
  // read the same clock and its calibration is refreshed (every 10 ms of readings: each thread
  // reads until the clock has moved on by several refreshes).
  Runtime& rt = bubble::system_runtime();
  constexpr int kThreads = 3;
  std::atomic<int> backwards{0};
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        const TimePoint start = rt.now();
        TimePoint last = start;
        while (last - start < 50ms) {
          const TimePoint now = rt.now();
          if (now < last) backwards.fetch_add(1);
          last = now;
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  EXPECT_EQ(backwards.load(), 0);
}

TEST(SystemRuntime, ClockStaysWithinItsStatedBoundOfTheSteadyClock) {
  // Property: the system runtime's clock (a calibrated cycle counter where the processor's is
  // invariant) agrees with std::chrono::steady_clock to within its stated bound, 100 us, plus
  // as much again for the drift between refreshes. Each reading is bracketed by two steady_clock
  // readings, so a thread preempted between them only widens the bracket.
  Runtime& rt = bubble::system_runtime();
  constexpr auto kBound = 200us;
  const auto steady = [] {
    return TimePoint(std::chrono::duration_cast<bubble::Duration>(
        std::chrono::steady_clock::now().time_since_epoch()));
  };
  const TimePoint start = rt.now();
  for (TimePoint now = start; now - start < 50ms;) {
    const TimePoint before = steady();
    now = rt.now();
    const TimePoint after = steady();
    ASSERT_GE(now, before - kBound) << "behind steady_clock by " << (before - now).count() << " ns";
    ASSERT_LE(now, after + kBound) << "ahead of steady_clock by " << (now - after).count() << " ns";
  }
}

TEST(SystemRuntime, WallClockFollowsTheSystemClock) {
  Runtime& rt = bubble::system_runtime();
  const auto before = std::chrono::system_clock::now();
  const auto wall = rt.wall_now();
  const auto after = std::chrono::system_clock::now();
  EXPECT_GE(wall, before);
  EXPECT_LE(wall, after);
}

TEST(SystemRuntime, ObjectIdsAreUniqueAndNonZero) {
  Runtime& rt = bubble::system_runtime();
  std::set<std::uint64_t> ids;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t id = rt.new_object_id();
    EXPECT_NE(id, 0u);
    EXPECT_TRUE(ids.insert(id).second) << id;
  }
}

TEST(SystemRuntime, ParkReturnsAtOnceWhenAlreadyUnparked) {
  Runtime& rt = bubble::system_runtime();
  Waiter w;
  rt.prepare(w);
  rt.unpark(w);
  EXPECT_TRUE(w.notified());
  // Neither deadline matters: the unpark came first.
  EXPECT_EQ(rt.park(w, bubble::kNoDeadline, kTestWait), ParkResult::notified);
  EXPECT_EQ(rt.park(w, rt.now() - 1s, kTestWait), ParkResult::notified);
}

TEST(SystemRuntime, ParkBlocksUntilUnparkedAndNeverReturnsSpuriously) {
  Runtime& rt = bubble::system_runtime();
  for (int round = 0; round < 200; ++round) {
    Waiter w;
    std::atomic<bool> unparked{false};
    std::latch prepared(1);
    ParkResult result = ParkResult::timed_out;
    bool unparked_before_return = false;
    auto handle = rt.spawn("parker", [&] {
      rt.prepare(w);
      prepared.count_down();
      result = rt.park(w, bubble::kNoDeadline, kTestWait);
      unparked_before_return = unparked.load();
    });
    prepared.wait();
    unparked.store(true);
    rt.unpark(w);
    handle->join();
    ASSERT_EQ(result, ParkResult::notified);
    ASSERT_TRUE(unparked_before_return) << "park returned before unpark, round " << round;
  }
}

TEST(SystemRuntime, TimedParkTimesOutNoEarlierThanTheDeadline) {
  Runtime& rt = bubble::system_runtime();
  Waiter w;
  rt.prepare(w);
  const TimePoint deadline = rt.now() + 20ms;
  EXPECT_EQ(rt.park(w, deadline, kTestWait), ParkResult::timed_out);
  EXPECT_GE(rt.now(), deadline);
  EXPECT_FALSE(w.notified());
}

TEST(SystemRuntime, ParkWithAPastDeadlineTimesOutAtOnce) {
  Runtime& rt = bubble::system_runtime();
  Waiter w;
  rt.prepare(w);
  EXPECT_EQ(rt.park(w, rt.now() - 1ms, kTestWait), ParkResult::timed_out);
  EXPECT_EQ(rt.park(w, TimePoint::min(), kTestWait), ParkResult::timed_out);
}

TEST(SystemRuntime, TimedParkReturnsNotifiedWhenUnparkedBeforeTheDeadline) {
  Runtime& rt = bubble::system_runtime();
  Waiter w;
  std::latch prepared(1);
  ParkResult result = ParkResult::timed_out;
  auto handle = rt.spawn("parker", [&] {
    rt.prepare(w);
    prepared.count_down();
    result = rt.park(w, rt.now() + 1h, kTestWait);
  });
  prepared.wait();
  rt.unpark(w);
  handle->join();
  EXPECT_EQ(result, ParkResult::notified);
}

TEST(SystemRuntime, SleepForLastsAtLeastTheDuration) {
  Runtime& rt = bubble::system_runtime();
  const TimePoint start = rt.now();
  rt.sleep_for(15ms);
  EXPECT_GE(rt.now() - start, 15ms);
}

TEST(SystemRuntime, TimersFireInDeadlineOrderWithTiesInCreationOrder) {
  Runtime& rt = bubble::system_runtime();
  std::mutex mu;
  std::vector<int> order;
  std::vector<bool> on_time;
  std::latch fired(5);
  // The timer thread runs callbacks one at a time, so a first, already-due timer that waits for
  // `scheduled` holds every other timer back until all five are in the queue: the order below
  // then depends on the deadlines alone, not on how fast this thread schedules them (a slow
  // machine could otherwise fire the 10 ms timer before the already-due one is added).
  std::latch scheduled(1);
  const TimePoint base = rt.now();
  rt.schedule_at(base - 2s, [&] { scheduled.wait(); });
  auto add = [&](int label, TimePoint deadline) {
    rt.schedule_at(deadline, [&, label, deadline] {
      {
        std::lock_guard lock(mu);
        order.push_back(label);
        on_time.push_back(rt.now() >= deadline);
        EXPECT_EQ(&bubble::current_runtime(), &rt);
      }
      fired.count_down();
    });
  };
  add(30, base + 30ms);
  add(10, base + 10ms);
  add(21, base + 20ms);
  add(22, base + 20ms);
  add(0, base - 1s);  // Already due.
  scheduled.count_down();
  fired.wait();
  std::lock_guard lock(mu);
  EXPECT_EQ(order, (std::vector<int>{0, 10, 21, 22, 30}));
  for (std::size_t i = 0; i < on_time.size(); ++i) EXPECT_TRUE(on_time[i]) << order[i];
}

TEST(SystemRuntime, CancelledTimerNeverFires) {
  Runtime& rt = bubble::system_runtime();
  std::atomic<bool> cancelled_fired{false};
  std::latch later_fired(1);
  // A first, already-due timer holds the timer thread (it runs callbacks one at a time) until the
  // cancels below are done, so the 10 ms timer is still pending when it is cancelled, however
  // long this thread takes to get there (on a slow machine it could otherwise fire first).
  std::latch cancelled(1);
  const TimePoint base = rt.now();
  rt.schedule_at(base - 1s, [&] { cancelled.wait(); });
  const bubble::TimerId id = rt.schedule_at(base + 10ms, [&] { cancelled_fired = true; });
  EXPECT_NE(id, 0u);
  EXPECT_TRUE(rt.cancel_timer(id));
  EXPECT_FALSE(rt.cancel_timer(id)) << "a second cancel must report that nothing was cancelled";
  cancelled.count_down();
  // Timers fire in deadline order, so once this one has fired the cancelled one would have too.
  rt.schedule_at(base + 20ms, [&] { later_fired.count_down(); });
  later_fired.wait();
  EXPECT_FALSE(cancelled_fired.load());
}

TEST(SystemRuntime, CancelAfterFiringReturnsFalse) {
  Runtime& rt = bubble::system_runtime();
  std::latch fired(1);
  const bubble::TimerId id = rt.schedule_at(rt.now(), [&] { fired.count_down(); });
  fired.wait();
  EXPECT_FALSE(rt.cancel_timer(id));
  EXPECT_FALSE(rt.cancel_timer(0));
}

TEST(SystemRuntime, TimerCanScheduleAndCancelFromItsCallback) {
  Runtime& rt = bubble::system_runtime();
  std::latch done(1);
  const bubble::TimerId far = rt.schedule_at(rt.now() + 1h, [] {});
  bool cancelled = false;
  rt.schedule_at(rt.now(), [&] {
    cancelled = rt.cancel_timer(far);
    rt.schedule_at(rt.now(), [&] { done.count_down(); });
  });
  done.wait();
  EXPECT_TRUE(cancelled);
}

TEST(SystemRuntime, SpawnRunsTheBodyAndJoinWaitsForIt) {
  Runtime& rt = bubble::system_runtime();
  int value = 0;
  auto handle = rt.spawn("worker-7", [&] { value = 42; });
  EXPECT_EQ(handle->name(), "worker-7");
  handle->join();
  EXPECT_EQ(value, 42);
}

TEST(SystemRuntime, JoiningTwiceThrowsNamingTheThread) {
  Runtime& rt = bubble::system_runtime();
  auto handle = rt.spawn("twice", [] {});
  handle->join();
  try {
    handle->join();
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
  }
}

TEST(SystemRuntime, JoiningItselfThrows) {
  Runtime& rt = bubble::system_runtime();
  std::unique_ptr<bubble::ThreadHandle> handle;
  std::latch ready(1);
  bool threw = false;
  handle = rt.spawn("self", [&] {
    ready.wait();
    try {
      handle->join();
    } catch (const std::logic_error&) {
      threw = true;
    }
  });
  ready.count_down();
  handle->join();
  EXPECT_TRUE(threw);
}

TEST(SystemRuntime, DestroyingAnUnjoinedHandleDetachesTheThread) {
  Runtime& rt = bubble::system_runtime();
  std::latch go(1);
  std::latch finished(1);
  std::atomic<bool> ran{false};
  {
    auto handle = rt.spawn("detached", [&] {
      go.wait();
      ran = true;
      finished.count_down();
    });
  }  // Destroyed before the body could finish: the thread runs on.
  go.count_down();
  finished.wait();
  EXPECT_TRUE(ran.load());
}

TEST(SystemRuntimeDeathTest, ExceptionEscapingAThreadTerminatesNamingIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto handle = bubble::system_runtime().spawn("doomed-thread",
                                                     [] { throw std::runtime_error("boom"); });
        handle->join();
      },
      "doomed-thread.*boom");
}

}  // namespace
