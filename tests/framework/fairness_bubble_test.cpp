// Fair schedules and livelocks in a bubble (Options::fair_bound, Options::livelock_steps): a
// thread that makes nothing but operations that may not progress (Progress::none or maybe) for
// fair_bound operations in a row is descheduled under every strategy; when every runnable thread
// is so, time moves to the next timer; when no thread makes anything but Progress::none operations
// for livelock_steps steps, the run fails with a livelock report.

#include <bubble/atomic.hpp>
#include <bubble/bubble.hpp>
#include <bubble/mutex.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Atomic;
using bubble::Runtime;
using bubble::Strategy;

std::vector<Strategy> strategies() {
  std::vector<Strategy> all{Strategy::fifo()};
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    all.push_back(Strategy::random(seed));
    all.push_back(Strategy::pct(seed, 3));
  }
  return all;
}

std::string failure_of(const bubble::Options& options, const std::function<void(Runtime&)>& body) {
  try {
    bubble::run(options, body);
    return "";
  } catch (const bubble::RunFailure& failure) {
    return failure.what();
  }
}

// Property: under fifo, which never preempts, a thread spinning on a load is descheduled at the
// scheduling point of its fair_bound-th load in a row, and the thread it waits for runs then: that
// load sees the flag.
TEST(Fairness, ASpinningThreadIsDescheduledAfterExactlyFairBoundPolls) {
  for (const std::uint32_t bound : {1u, 10u, 1000u}) {
    int loads = 0;
    bubble::run({.fair_bound = bound}, [&](Runtime& rt) {
      Atomic<bool> ready("ready", false);
      bubble::Thread setter(
          "setter", [&] { ready.store(true); }, rt);
      for (;;) {
        ++loads;
        if (ready.load()) break;
      }
      setter.join();
    });
    EXPECT_EQ(loads, static_cast<int>(bound)) << "fair_bound " << bound;
  }
}

// Property: a spin on an Atomic for another thread's store ends under every strategy (PCT would
// otherwise keep running the spinner, were its priority the highest), and replays.
TEST(Fairness, AnAtomicSpinWaitEndsUnderEveryStrategyAndReplays) {
  auto program = [](Runtime& rt) {
    Atomic<int> stage("stage", 0);
    bubble::Thread a(
        "a",
        [&] {
          while (stage.load(std::memory_order_acquire) != 1) {
          }
          stage.store(2, std::memory_order_release);
        },
        rt);
    bubble::Thread b(
        "b",
        [&] {
          stage.store(1, std::memory_order_release);
          while (stage.load(std::memory_order_acquire) != 2) {
          }
        },
        rt);
  };
  for (const Strategy& strategy : strategies()) {
    SCOPED_TRACE(strategy.to_string());
    const bubble::RunResult r = bubble::run({.strategy = strategy}, program);
    EXPECT_LT(r.steps, 10'000u);
    EXPECT_EQ(bubble::run({.replay = r.schedule}, program).steps, r.steps);
  }
}

// Property: under PCT, threads descheduled for fairness stay below the threads they wait for,
// however many are descheduled: three spinners waiting for a writer that the root has still to
// start cost at most one fair bound each (PCT of depth 1: priorities alone decide).
TEST(Fairness, UnderPctSpinnersStayBelowTheThreadsTheyWaitFor) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    const bubble::RunResult r = bubble::run({.strategy = Strategy::pct(seed, 1)}, [](Runtime& rt) {
      Atomic<int> written("written", 0);
      auto spin = [&] {
        while (written.load() != 50) {
        }
      };
      bubble::Thread a("spinner a", spin, rt);
      bubble::Thread b("spinner b", spin, rt);
      bubble::Thread c("spinner c", spin, rt);
      bubble::Thread writer(
          "writer",
          [&] {
            for (int i = 1; i <= 50; ++i) written.store(i);
          },
          rt);
    });
    EXPECT_LE(r.steps, 3 * 1'000u + 100u);
  }
}

// Property: threads that only spin count as blocked for time: a spin on an Atomic for a thread that
// sleeps ends exactly at the sleeper's wake-up, under every strategy.
TEST(Fairness, SpinningThreadsLetTimeMoveToTheNextTimer) {
  for (const Strategy& strategy : strategies()) {
    SCOPED_TRACE(strategy.to_string());
    bubble::Duration seen{};
    const bubble::RunResult r = bubble::run({.strategy = strategy}, [&](Runtime& rt) {
      Atomic<bool> ready("ready", false);
      bubble::Thread sleeper(
          "sleeper",
          [&] {
            rt.sleep_for(10ms);
            ready.store(true);
          },
          rt);
      auto spin = [&] {
        while (!ready.load()) {
        }
      };
      bubble::Thread other("other spinner", spin, rt);
      const bubble::TimePoint start = rt.now();
      spin();
      seen = rt.now() - start;
    });
    EXPECT_EQ(seen, 10ms);
    EXPECT_EQ(r.elapsed, 10ms);
  }
}

// Two threads each spin until the other has stored: a livelock, reported as one.
void atomic_livelock(Runtime& rt) {
  Atomic<bool> a_done("a done", false);
  Atomic<bool> b_done("b done", false);
  bubble::Thread a(
      "a",
      [&] {
        while (!b_done.load()) {
        }
        a_done.store(true);
      },
      rt);
  bubble::Thread b(
      "b",
      [&] {
        while (!a_done.load()) {
        }
        b_done.store(true);
      },
      rt);
}

TEST(Fairness, ALivelockOfAtomicLoadsIsReportedAfterLivelockSteps) {
  const std::string m = failure_of({.livelock_steps = 10'000}, atomic_livelock);
  EXPECT_NE(m.find("bubble: livelock: thread #"), std::string::npos) << m;
  EXPECT_NE(m.find(" spun 10000 steps without progress at "), std::string::npos) << m;
  EXPECT_NE(m.find("fairness_bubble_test.cpp:"), std::string::npos) << m;
  EXPECT_NE(m.find("(Atomic::load(seq_cst))"), std::string::npos) << m;
  EXPECT_NE(m.find("(Options::livelock_steps = 10000)"), std::string::npos) << m;
  EXPECT_EQ(m.substr(m.rfind('\n') + 1), "replay: BUBBLE_STRATEGY=fifo") << m;
  // The same program with the check off ends in the step budget instead.
  const std::string budget =
      failure_of({.max_steps = 50'000, .livelock_steps = 0}, atomic_livelock);
  EXPECT_NE(budget.find("step budget exhausted"), std::string::npos) << budget;
}

// Property: a Mutex's lock and unlock count towards fairness but never towards a livelock (the
// bubble does not see whether the critical section writes): two threads doing real work under a
// mutex, more iterations than livelock_steps, pass.
TEST(Fairness, WorkUnderAMutexIsNotALivelock) {
  long total = 0;
  bubble::run({.livelock_steps = 1'000}, [&](Runtime& rt) {
    bubble::Mutex m(rt);
    long counter = 0;
    auto work = [&] {
      for (int i = 0; i < 5'000; ++i) {
        std::lock_guard lock(m);
        ++counter;
      }
    };
    bubble::Thread a("a", work, rt);
    bubble::Thread b("b", work, rt);
    a.join();
    b.join();
    total = counter;
  });
  EXPECT_EQ(total, 10'000);
}

}  // namespace
