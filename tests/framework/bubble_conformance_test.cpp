// Conformance cases from Go's testing/synctest suite, in C++, on the real primitives; and point
// 4: every primitive is durable in a bubble (a thread blocked on one counts as blocked).

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/semaphore.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>
#include <bubble/wait_group.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;
using bubble::TimePoint;

// A 100-hop relay over unbuffered channels finishes before wait() returns.
TEST(BubbleConformance, RelayOf100HopsFinishesBeforeWaitReturns) {
  bubble::run([](Runtime& rt) {
    constexpr int kHops = 100;
    std::vector<std::unique_ptr<bubble::Channel<int>>> chans;
    for (int i = 0; i <= kHops; ++i) chans.push_back(std::make_unique<bubble::Channel<int>>(0, rt));
    std::vector<bubble::Thread> hops;
    for (int i = 0; i < kHops; ++i) {
      hops.emplace_back(
          "hop-" + std::to_string(i),
          [&, i] {
            auto v = chans[i]->receive();
            ASSERT_TRUE(v.has_value());
            ASSERT_FALSE(chans[i + 1]->send(*v + 1));
          },
          rt);
    }
    int result = -1;
    bubble::Thread sink(
        "sink", [&] { result = *chans[kHops]->receive(); }, rt);
    ASSERT_FALSE(chans[0]->send(0));
    bubble::wait();
    EXPECT_EQ(result, kHops);
    EXPECT_EQ(rt.now(), bubble::kStart);
  });
}

// A 1s timer read after sleeping 2s yields start + 1s (the scheduled time).
TEST(BubbleConformance, TimerDeliversItsScheduledTimeWhenReadLater) {
  bubble::run([](Runtime& rt) {
    bubble::Timer t(1s, rt);
    rt.sleep_for(2s);
    auto v = t.channel().receive();
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(*v, bubble::kStart + 1s);
    EXPECT_EQ(rt.now(), bubble::kStart + 2s);
  });
}

// Timer reset: fires at +1s; reset(2s) at +1s fires at +3s; then reset(4s) at +3s fires at +7s.
TEST(BubbleConformance, TimerResetCountsFromTheCurrentTime) {
  bubble::run([](Runtime& rt) {
    bubble::Timer t(1s, rt);
    EXPECT_EQ(*t.channel().receive(), bubble::kStart + 1s);
    EXPECT_EQ(rt.now(), bubble::kStart + 1s);
    EXPECT_FALSE(t.reset(2s));
    EXPECT_EQ(*t.channel().receive(), bubble::kStart + 3s);
    EXPECT_FALSE(t.reset(4s));
    EXPECT_EQ(*t.channel().receive(), bubble::kStart + 7s);
    EXPECT_EQ(rt.now(), bubble::kStart + 7s);
  });
}

// A zero-duration timer fires without waiting for idleness: a busy thread sees it at once.
TEST(BubbleConformance, ZeroDurationTimerFiresWithoutIdleness) {
  bubble::run([](Runtime& rt) {
    bubble::Timer t(0s, rt);
    bubble::Thread busy(
        "busy",
        [&] {
          for (int i = 0; i < 1000; ++i) rt.yield();
        },
        rt);
    auto v = t.channel().receive();
    EXPECT_EQ(*v, bubble::kStart);
  });
}

// after_func(1s) that spawns a thread sleeping 1s: after sleep_for(3s) + wait(), both have run.
TEST(BubbleConformance, AfterFuncThatSpawnsASleeper) {
  bubble::run([](Runtime& rt) {
    bool func_ran = false, sleeper_done = false;
    TimePoint sleeper_woke{};
    auto f = bubble::after_func(
        1s,
        [&] {
          func_ran = true;
          detach(rt.spawn("sleeper", [&] {
            rt.sleep_for(1s);
            sleeper_woke = rt.now();
            sleeper_done = true;
          }));
        },
        rt);
    rt.sleep_for(3s);
    bubble::wait();
    EXPECT_TRUE(func_ran);
    EXPECT_TRUE(sleeper_done);
    EXPECT_EQ(sleeper_woke, bubble::kStart + 2s);
  });
}

// after_func scheduled past the root's return never runs (and is not a deadlock).
TEST(BubbleConformance, AfterFuncPastTheRootsReturnNeverRuns) {
  bool ran = false;
  bubble::run([&](Runtime& rt) {
    auto f = bubble::after_func(
        1s, [&] { ran = true; }, rt);
    rt.sleep_for(500ms);
  });
  EXPECT_FALSE(ran);
}

// A ticker loop in a child after the root returns: deadlock, and the tick never fires.
TEST(BubbleConformance, TickerLoopAfterRootReturnsIsADeadlock) {
  int ticks = 0;
  try {
    bubble::run([&](Runtime& rt) {
      detach(rt.spawn("ticker-loop", [&] {
        bubble::Ticker tk(1s, rt);
        for (;;) {
          if (!tk.channel().receive()) return;
          ++ticks;
        }
      }));
      bubble::wait();
    });
    FAIL() << "expected a deadlock";
  } catch (const bubble::DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("root has returned but blocked threads remain"), std::string::npos) << m;
    EXPECT_NE(m.find("\"ticker-loop\": blocked on Channel::receive"), std::string::npos) << m;
  }
  EXPECT_EQ(ticks, 0);
}

// A context with a 5s timeout is not done at 5s - 1ns, and done at 5s.
TEST(BubbleConformance, ContextTimeoutIsExact) {
  bubble::run([](Runtime& rt) {
    auto [ctx, cancel] = bubble::Context::with_timeout(bubble::Context::background(), 5s, rt);
    rt.sleep_for(5s - 1ns);
    EXPECT_FALSE(ctx.done());
    rt.sleep_for(1ns);
    EXPECT_TRUE(ctx.done());
    EXPECT_EQ(ctx.err(), bubble::errc::deadline_exceeded);
    cancel();
  });
}

// CondVar: a signal at +1ms wakes the waiter at exactly +1ms; broadcast wakes two.
TEST(BubbleConformance, CondVarSignalAndBroadcast) {
  bubble::run([](Runtime& rt) {
    bubble::Mutex mu(rt);
    bubble::CondVar cv(rt);
    bool ready = false;
    TimePoint woke{};
    bubble::Thread waiter(
        "waiter",
        [&] {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return ready; });
          woke = rt.now();
        },
        rt);
    rt.sleep_for(1ms);
    {
      std::lock_guard lock(mu);
      ready = true;
    }
    cv.notify_one();
    waiter.join();
    EXPECT_EQ(woke, bubble::kStart + 1ms);

    int woken = 0;
    bool go = false;
    std::vector<bubble::Thread> two;
    for (int i = 0; i < 2; ++i) {
      two.emplace_back(
          "b" + std::to_string(i),
          [&] {
            std::unique_lock lock(mu);
            cv.wait(lock, [&] { return go; });
            ++woken;
          },
          rt);
    }
    bubble::wait();
    EXPECT_EQ(woken, 0);
    {
      std::lock_guard lock(mu);
      go = true;
    }
    cv.notify_all();
    bubble::wait();
    EXPECT_EQ(woken, 2);
  });
}

// WaitGroup: wait takes exactly the sleeping worker's 1s.
TEST(BubbleConformance, WaitGroupWaitTakesTheWorkersSecond) {
  bubble::run([](Runtime& rt) {
    bubble::WaitGroup wg(rt);
    wg.add(1);
    bubble::Thread worker(
        "worker",
        [&] {
          rt.sleep_for(1s);
          wg.done();
        },
        rt);
    wg.wait();
    EXPECT_EQ(rt.now(), bubble::kStart + 1s);
  });
}

// Point 4: a Mutex held across a sleep does not hang the test; a thread blocked on it counts as
// blocked (wait() returns; time advances).
TEST(BubbleConformance, MutexIsDurable) {
  bubble::run([](Runtime& rt) {
    bubble::Mutex mu(rt);
    TimePoint got{};
    std::unique_lock lock(mu);
    bubble::Thread t(
        "locker",
        [&] {
          std::lock_guard g(mu);
          got = rt.now();
        },
        rt);
    bubble::wait();  // "locker" is blocked on the mutex: durably.
    rt.sleep_for(1s);
    lock.unlock();
    t.join();
    EXPECT_EQ(got, bubble::kStart + 1s);
  });
}

// Point 4: a deadlock on mutexes is reported with the primitive's kind and id.
TEST(BubbleConformance, MutexDeadlockIsReported) {
  try {
    bubble::run([](Runtime& rt) {
      bubble::Mutex a(rt), b(rt);
      bubble::Thread t1(
          "t1",
          [&] {
            std::lock_guard ga(a);
            rt.sleep_for(1ms);
            std::lock_guard gb(b);
          },
          rt);
      bubble::Thread t2(
          "t2",
          [&] {
            std::lock_guard gb(b);
            rt.sleep_for(1ms);
            std::lock_guard ga(a);
          },
          rt);
    });
    FAIL();
  } catch (const bubble::DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("\"t1\": blocked on Mutex::lock (object #2)"), std::string::npos) << m;
    EXPECT_NE(m.find("\"t2\": blocked on Mutex::lock (object #1)"), std::string::npos) << m;
    EXPECT_NE(m.find("\"root\": blocked on Thread::join"), std::string::npos) << m;
  }
}

// Point 4: Semaphore and Channel waits are durable too: time advances past them.
TEST(BubbleConformance, SemaphoreAndChannelAreDurable) {
  bubble::run([](Runtime& rt) {
    bubble::Semaphore sem(0, rt);
    bubble::Channel<int> ch(0, rt);
    TimePoint acquired{}, received{};
    bubble::Thread a(
        "acquirer",
        [&] {
          sem.acquire();
          acquired = rt.now();
        },
        rt);
    bubble::Thread r(
        "receiver",
        [&] {
          (void)ch.receive();
          received = rt.now();
        },
        rt);
    rt.sleep_for(2s);
    sem.release();
    rt.sleep_for(1s);
    ASSERT_FALSE(ch.send(1));
    a.join();
    r.join();
    EXPECT_EQ(acquired, bubble::kStart + 2s);
    EXPECT_EQ(received, bubble::kStart + 3s);
  });
}

}  // namespace
