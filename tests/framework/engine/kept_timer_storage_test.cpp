// The timer storage an OS thread keeps from one bubble run to the next
// (Bubble::borrow_timer_storage in framework/src/engine/bubble.hpp): the next run reuses it
// empty, and a big run's storage is returned after a smaller one.

#include "engine/bubble.hpp"

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "../../support/on_fresh_thread.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;
using bubble::engine::Bubble;

using bubble::test_support::on_fresh_thread;

// A run that schedules `n` callbacks, at distinct deadlines from 1 ms to n ms in reverse order
// of creation, and `pending` more at one hour that are still pending when the run ends; returns
// the order in which the first n fired (their numbers, 0 to n - 1).
std::vector<int> run_timers(int n, int pending = 0) {
  std::vector<int> fired;
  bubble::run([&](Runtime& rt) {
    for (int i = 0; i < n; ++i) {
      rt.schedule_at(rt.now() + std::chrono::milliseconds(n - i),
                     [&fired, i] { fired.push_back(i); });
    }
    for (int i = 0; i < pending; ++i) {
      rt.schedule_at(rt.now() + 1h, [&fired] { fired.push_back(-1); });
    }
    rt.sleep_for(std::chrono::milliseconds(n + 1));
  });
  return fired;
}

std::vector<int> reversed_numbers(int n) {
  std::vector<int> v;
  for (int i = n - 1; i >= 0; --i) v.push_back(i);
  return v;
}

TEST(KeptTimerStorage, TheNextRunOnTheThreadReusesItEmpty) {
  on_fresh_thread([] {
    EXPECT_EQ(Bubble::kept_timer_slots(), 0u);
    // 5,000 timers fire, 3,000 are still pending when the run ends: they must not fire later.
    EXPECT_EQ(run_timers(5'000, 3'000), reversed_numbers(5'000));
    const std::size_t kept = Bubble::kept_timer_slots();
    EXPECT_GE(kept, 8'000u);
    EXPECT_EQ(run_timers(4'000), reversed_numbers(4'000));
    EXPECT_EQ(Bubble::kept_timer_slots(), kept);  // The same storage, not grown.
    // The first run's pending timers at one hour were a run of one deadline in the heap; timers
    // at that same instant (every run starts at the same virtual time) must fire here.
    int at_one_hour = 0;
    bubble::run([&](Runtime& rt) {
      for (int i = 0; i < 3; ++i) rt.schedule_at(rt.now() + 1h, [&at_one_hour] { ++at_one_hour; });
      rt.sleep_for(2h);
    });
    EXPECT_EQ(at_one_hour, 3);
    // Threads sleeping the same periods (runs of one deadline in the heap), in a reused storage.
    std::vector<int> woke;
    bubble::run([&](Runtime& rt) {
      std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
      for (int i = 0; i < 3'000; ++i) {
        threads.push_back(rt.spawn("sleeper", [&rt, &woke, i] {
          rt.sleep_for(std::chrono::milliseconds(1 + i % 3));
          woke.push_back(i);
        }));
      }
      for (auto& t : threads) t->join();
    });
    std::vector<int> expected;
    for (int k = 0; k < 3; ++k) {
      for (int i = k; i < 3'000; i += 3) expected.push_back(i);
    }
    EXPECT_EQ(woke, expected);
  });
}

// A big run's memory is returned after the next run that used less than a quarter of it.
TEST(KeptTimerStorage, FollowsTheLastRun) {
  on_fresh_thread([] {
    EXPECT_EQ(run_timers(50'000), reversed_numbers(50'000));
    EXPECT_GE(Bubble::kept_timer_slots(), 50'000u);
    EXPECT_EQ(run_timers(20'000), reversed_numbers(20'000));  // Over a quarter: kept.
    EXPECT_GE(Bubble::kept_timer_slots(), 50'000u);
    EXPECT_EQ(run_timers(3), reversed_numbers(3));
    EXPECT_EQ(Bubble::kept_timer_slots(), 0u);
    EXPECT_EQ(run_timers(10), reversed_numbers(10));
    EXPECT_GE(Bubble::kept_timer_slots(), 10u);
  });
}

}  // namespace
