// The bubble's basic behaviour: run, threads, the virtual clock, timers, wait(), end of run.
// Uses only the Runtime kernel, so that these tests do not depend
// on the primitives.

#include <bubble/bubble.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Duration;
using bubble::Runtime;
using bubble::TimePoint;

// A thread blocked until another thread calls wake(): the parking protocol with no primitive.
class Gate {
 public:
  void wait(Runtime& rt) {
    if (open_) return;
    bubble::Waiter w;
    rt.prepare(w);
    waiter_ = &w;
    rt.park(w, bubble::kNoDeadline, {"Gate::wait", 42, bubble::SourceLocation::current()});
    waiter_ = nullptr;
  }
  void open(Runtime& rt) {
    open_ = true;
    if (waiter_ != nullptr) rt.unpark(*waiter_);
  }

 private:
  bool open_ = false;
  bubble::Waiter* waiter_ = nullptr;
};

// Point 1: the root runs inside the bubble; so do spawned threads and timer callbacks; run()
// returns once all have exited.
TEST(BubbleRun, RootAndThreadsAndTimersBelongToTheBubble) {
  bool root_in = false, child_in = false, timer_in = false, child_done = false;
  Runtime* seen = nullptr;
  const bubble::RunResult r = bubble::run([&](Runtime& rt) {
    root_in = bubble::in_bubble() && &bubble::current_runtime() == &rt;
    seen = &rt;
    auto h = rt.spawn("child", [&] {
      child_in = bubble::in_bubble() && &bubble::current_runtime() == &rt;
      bubble::sleep_for(1s);
      child_done = true;
    });
    rt.schedule_at(rt.now() + 1ms, [&] { timer_in = &bubble::current_runtime() == &rt; });
    h.reset();  // Detached: it runs on.
    rt.sleep_for(1s);
  });
  EXPECT_TRUE(root_in);
  EXPECT_TRUE(child_in);
  EXPECT_TRUE(timer_in);
  EXPECT_TRUE(child_done);
  EXPECT_EQ(r.threads, 2u);
  EXPECT_EQ(r.elapsed, 1s);
  EXPECT_FALSE(bubble::in_bubble());
  EXPECT_NE(&bubble::current_runtime(), seen);
}

TEST(BubbleRun, NestedRunIsALogicError) {
  std::string message;
  bubble::run([&](Runtime&) {
    try {
      bubble::run([](Runtime&) {});
    } catch (const std::logic_error& e) {
      message = e.what();
    }
  });
  EXPECT_NE(message.find("cannot be nested"), std::string::npos) << message;
}

TEST(BubbleRun, JoinWaitsForTheThread) {
  bubble::run([](Runtime& rt) {
    int value = 0;
    auto h = rt.spawn("worker", [&] {
      rt.sleep_for(3s);
      value = 7;
    });
    h->join();
    EXPECT_EQ(value, 7);
    EXPECT_EQ(rt.now(), bubble::kStart + 3s);
    EXPECT_THROW(h->join(), std::logic_error);
  });
}

// yield() under fifo lets the other runnable threads go first: round robin.
TEST(BubbleRun, YieldIsRoundRobinUnderFifo) {
  std::string log;
  bubble::run([&](Runtime& rt) {
    auto body = [&](char c) {
      for (int i = 0; i < 3; ++i) {
        log += c;
        rt.yield();
      }
    };
    auto a = rt.spawn("a", [&] { body('a'); });
    auto b = rt.spawn("b", [&] { body('b'); });
    a->join();
    b->join();
  });
  EXPECT_EQ(log, "ababab");
}

// A handle that outlives its run still answers: the thread has exited.
TEST(BubbleRun, HandlesOutlivingTheRunAreSafe) {
  std::unique_ptr<bubble::ThreadHandle> kept;
  bubble::run([&](Runtime& rt) {
    kept = rt.spawn("short", [] {});
    rt.yield();
  });
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->name(), "short");
  kept->join();  // Returns at once.
  EXPECT_THROW(kept->join(), std::logic_error);
  kept.reset();
}

// Point 2: the clock starts at 2000-01-01T00:00:00Z, moves only by sleeping, exactly.
TEST(BubbleClock, StartsAtTheEpochAndSleepIsExact) {
  bubble::run([](Runtime& rt) {
    EXPECT_EQ(bubble::format_wall_time(rt.wall_now()), "2000-01-01T00:00:00Z");
    const TimePoint t0 = rt.now();
    EXPECT_EQ(t0, bubble::kStart);
    volatile long sum = 0;
    for (long i = 0; i < 1000000; ++i) sum = sum + i;  // Computation takes no virtual time.
    EXPECT_EQ(rt.now(), t0);
    rt.sleep_for(1s);
    EXPECT_EQ(rt.now() - t0, 1s);
    EXPECT_EQ(bubble::format_wall_time(rt.wall_now()), "2000-01-01T00:00:01Z");
    bubble::sleep_for(1500ms);
    EXPECT_EQ(bubble::Clock::now() - t0, 2500ms);
  });
}

TEST(BubbleClock, StartIsConfigurable) {
  bubble::Options o;
  o.start = bubble::WallTime{std::chrono::sys_days{std::chrono::year{2024} / 2 / 29}} + 12h;
  bubble::run(o, [](Runtime& rt) {
    EXPECT_EQ(bubble::format_wall_time(rt.wall_now()), "2024-02-29T12:00:00Z");
    rt.sleep_for(12h);
    EXPECT_EQ(bubble::format_wall_time(rt.wall_now()), "2024-03-01T00:00:00Z");
  });
}

// Conformance: sleep 1s in root and child, both see exactly +1s.
TEST(BubbleClock, RootAndChildBothSeeOneSecond) {
  bubble::run([](Runtime& rt) {
    const TimePoint t0 = rt.now();
    Duration child_saw{};
    auto h = rt.spawn("child", [&] {
      rt.sleep_for(1s);
      child_saw = rt.now() - t0;
    });
    rt.sleep_for(1s);
    EXPECT_EQ(rt.now() - t0, 1s);
    h->join();
    EXPECT_EQ(child_saw, 1s);
    EXPECT_EQ(rt.now() - t0, 1s);
  });
}

// Point 3: time jumps to the earliest timer only when nothing can run; timers due at one instant
// fire in creation order under fifo.
TEST(BubbleTime, AdvancesOnlyWhenIdleToTheEarliestTimer) {
  bubble::run([](Runtime& rt) {
    const TimePoint t0 = rt.now();
    std::vector<std::string> log;
    rt.schedule_at(t0 + 2s, [&] { log.push_back("b@" + bubble::format_duration(rt.now() - t0)); });
    rt.schedule_at(t0 + 1s, [&] { log.push_back("a@" + bubble::format_duration(rt.now() - t0)); });
    rt.schedule_at(t0 + 2s, [&] { log.push_back("c@" + bubble::format_duration(rt.now() - t0)); });
    // A busy thread keeps time still: it yields many times, time does not move.
    for (int i = 0; i < 100; ++i) rt.yield();
    EXPECT_EQ(rt.now(), t0);
    EXPECT_TRUE(log.empty());
    rt.sleep_for(5s);
    EXPECT_EQ(log, (std::vector<std::string>{"a@1s", "b@2s", "c@2s"}));
  });
}

// Many threads sleeping random durations each wake at exactly their own deadline, and the run
// ends at the longest one (checked under fifo and under a random strategy).
TEST(BubbleTime, ThousandsOfSleepersWakeExactly) {
  for (const bubble::Strategy& s : {bubble::Strategy::fifo(), bubble::Strategy::random(5)}) {
    int wrong = 0;
    Duration longest{};
    const bubble::RunResult r = bubble::run({.strategy = s}, [&](Runtime& rt) {
      const TimePoint t0 = rt.now();
      std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
      std::uint64_t x = 12345;
      for (int i = 0; i < 3000; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const Duration d = std::chrono::milliseconds((x >> 33) % 100'000);
        longest = std::max(longest, d);
        threads.push_back(rt.spawn("sleeper", [&rt, &wrong, t0, d] {
          rt.sleep_for(d);
          if (rt.now() - t0 != d) ++wrong;
        }));
      }
      for (auto& t : threads) t->join();
    });
    EXPECT_EQ(wrong, 0) << s.to_string();
    EXPECT_EQ(r.elapsed, longest) << s.to_string();
    EXPECT_EQ(r.threads, 3001u);
  }
}

TEST(BubbleTime, ATimerAlreadyDueFiresWithoutWaitingForIdleness) {
  bubble::run([](Runtime& rt) {
    bool fired = false;
    rt.schedule_at(rt.now(), [&] { fired = true; });
    rt.yield();  // The next scheduling decision fires it; no thread had to block.
    EXPECT_TRUE(fired);
    bool fired_past = false;
    rt.schedule_at(rt.now() - 1h, [&] { fired_past = true; });
    rt.yield();
    EXPECT_TRUE(fired_past);
  });
}

TEST(BubbleTime, CancelledTimersNeverFire) {
  bubble::run([](Runtime& rt) {
    int fired = 0;
    const bubble::TimerId a = rt.schedule_at(rt.now() + 1s, [&] { ++fired; });
    rt.schedule_at(rt.now() + 2s, [&] { ++fired; });
    EXPECT_TRUE(rt.cancel_timer(a));
    EXPECT_FALSE(rt.cancel_timer(a));
    rt.sleep_for(3s);
    EXPECT_EQ(fired, 1);
  });
}

TEST(BubbleTime, ParkDeadlineTimesOut) {
  bubble::run([](Runtime& rt) {
    bubble::Waiter w;
    rt.prepare(w);
    const TimePoint t0 = rt.now();
    EXPECT_EQ(rt.park(w, t0 + 250ms, {"test", 0, {}}), bubble::ParkResult::timed_out);
    EXPECT_EQ(rt.now() - t0, 250ms);
    bubble::Waiter w2;
    rt.prepare(w2);
    rt.schedule_at(t0 + 300ms, [&] { rt.unpark(w2); });
    EXPECT_EQ(rt.park(w2, t0 + 1s, {"test", 0, {}}), bubble::ParkResult::notified);
    EXPECT_EQ(rt.now() - t0, 300ms);
    // The cancelled deadline does not hold time back or fire later.
    rt.sleep_for(2s);
    EXPECT_EQ(rt.now() - t0, 2300ms);
  });
}

TEST(BubbleTime, TimerCallbacksCannotBlock) {
  std::string message;
  bubble::run([&](Runtime& rt) {
    rt.schedule_at(rt.now() + 1s, [&] {
      bubble::Waiter w;
      rt.prepare(w);
      try {
        rt.park(w, bubble::kNoDeadline, {"test", 0, {}});
      } catch (const std::logic_error& e) {
        message = e.what();
      }
      rt.schedule_point({"test", 0, {}});  // A no-op here, never a switch.
    });
    rt.sleep_for(2s);
  });
  EXPECT_NE(message.find("timer callback"), std::string::npos) << message;
}

// Point 5: wait() returns when every other thread is blocked or has exited; it does not move time.
TEST(BubbleWait, ReturnsWhenOthersAreBlockedWithoutMovingTime) {
  bubble::run([](Runtime& rt) {
    const TimePoint t0 = rt.now();
    int progress = 0;
    Gate gate;
    auto a = rt.spawn("a", [&] {
      for (int i = 0; i < 10; ++i) {
        ++progress;
        rt.yield();
      }
      gate.wait(rt);
      ++progress;
    });
    auto b = rt.spawn("b", [&] { rt.sleep_for(1h); });
    bubble::wait();
    EXPECT_EQ(progress, 10);
    EXPECT_EQ(rt.now(), t0);
    gate.open(rt);
    bubble::wait();
    EXPECT_EQ(progress, 11);
    EXPECT_EQ(rt.now(), t0);
    bubble::sleep_and_wait(1h);
    EXPECT_EQ(rt.now() - t0, 1h);
  });
}

TEST(BubbleWait, OutsideABubbleThrows) {
  EXPECT_THROW(bubble::wait(), std::logic_error);
}

TEST(BubbleWait, TwoConcurrentWaitsAreAnError) {
  std::string message;
  bubble::run([&](Runtime& rt) {
    Gate gate;
    auto h = rt.spawn("second", [&] {
      try {
        bubble::wait();
      } catch (const std::logic_error& e) {
        message = e.what();
      }
      gate.open(rt);
    });
    detach(rt.spawn("blocker", [&] { rt.sleep_for(1s); }));
    bubble::wait();  // "second" runs while root waits.
    gate.wait(rt);
    rt.sleep_for(1s);
  });
  EXPECT_NE(message.find("already waiting"), std::string::npos) << message;
}

// Point 6: when the root returns, time stops; threads may still run and exit; timers due later
// never fire.
TEST(BubbleEnd, ThreadsMayFinishAfterRootButTimersDueLaterNeverFire) {
  bool late_timer = false, finisher_done = false;
  bubble::run([&](Runtime& rt) {
    rt.schedule_at(rt.now() + 1s, [&] { late_timer = true; });
    detach(rt.spawn("finisher", [&] {
      for (int i = 0; i < 5; ++i) rt.yield();
      finisher_done = true;
    }));
  });
  EXPECT_TRUE(finisher_done);
  EXPECT_FALSE(late_timer);
}

TEST(BubbleEnd, ChildBlockedAfterRootReturnsIsADeadlock) {
  try {
    bubble::run([](Runtime& rt) { detach(rt.spawn("sleeper", [&] { rt.sleep_for(1s); })); });
    FAIL() << "expected a DeadlockError";
  } catch (const bubble::DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("root has returned but blocked threads remain"), std::string::npos) << m;
    EXPECT_NE(m.find("\"sleeper\": blocked on sleep"), std::string::npos) << m;
  }
}

}  // namespace
