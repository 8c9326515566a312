// Unmodified standard-library components (components/) tested in intercepting bubbles: exact
// virtual times, and a lost-wakeup bug found by exploring schedules and replayed identically.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>

#include "components/bounded_queue.hpp"
#include "components/timer_service.hpp"
#include "intercepted_run.hpp"
#include "lost_wakeup_program.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::nanoseconds;
using std::chrono::steady_clock;

TEST(InterposeComponents, BoundedQueueBlocksAProducerOnAFullQueueUntilAConsumerTakesOne) {
  std::vector<nanoseconds> pushed;
  std::vector<std::pair<int, nanoseconds>> popped;
  run_std([&] {
    const auto t0 = steady_clock::now();
    components::BoundedQueue<int> queue(2);
    std::thread producer([&] {
      for (int i = 0; i < 4; ++i) {
        queue.push(i);
        pushed.push_back(steady_clock::now() - t0);
      }
    });
    std::thread consumer([&] {
      for (int i = 0; i < 4; ++i) {
        std::this_thread::sleep_for(100ms);
        popped.emplace_back(queue.pop(), steady_clock::now() - t0);
      }
    });
    producer.join();
    consumer.join();
  });
  // Two fit at once; each later push waits for the pop that makes room.
  EXPECT_EQ(pushed, (std::vector<nanoseconds>{0ms, 0ms, 100ms, 200ms}));
  EXPECT_EQ(popped, (std::vector<std::pair<int, nanoseconds>>{
                        {0, 100ms}, {1, 200ms}, {2, 300ms}, {3, 400ms}}));
}

TEST(InterposeComponents, BoundedQueuePopForGivesUpAfterItsTimeoutInVirtualTime) {
  run_std([] {
    components::BoundedQueue<int> queue(1);
    const auto t0 = steady_clock::now();
    EXPECT_EQ(queue.pop_for(2s), std::nullopt);
    EXPECT_EQ(steady_clock::now() - t0, 2s);
    std::thread late([&] {
      std::this_thread::sleep_for(500ms);
      queue.push(9);
    });
    EXPECT_EQ(queue.pop_for(1s), 9);
    EXPECT_EQ(steady_clock::now() - t0, 2500ms);
    late.join();
  });
}

TEST(InterposeComponents, TimerServiceRunsEachTaskAtItsDeadlineEarliestFirst) {
  std::vector<std::pair<std::string, nanoseconds>> ran;
  const auto result = run_std([&] {
    const auto t0 = steady_clock::now();
    components::TimerService timers;
    auto record = [&](std::string name) {
      return [&, name] { ran.emplace_back(name, steady_clock::now() - t0); };
    };
    timers.schedule(250ms, record("b"));
    timers.schedule(100ms, record("a"));
    std::this_thread::sleep_for(50ms);
    timers.schedule(50ms, record("a2"));  // due at 100 ms too: after "a", scheduled earlier
    timers.schedule(10s, record("never"));
    std::this_thread::sleep_for(1s);
  });  // ~TimerService stops the worker at 1.05 s: "never" does not run
  EXPECT_EQ(ran, (std::vector<std::pair<std::string, nanoseconds>>{
                     {"a", 100ms}, {"a2", 100ms}, {"b", 250ms}}));
  EXPECT_EQ(result.elapsed, 1050ms);
}

TEST(InterposeComponents, IntervalLimiterLetsOneCallerThroughPerInterval) {
  std::vector<nanoseconds> through;
  std::mutex through_lock;  // The callers append.
  run_std([&] {
    const auto t0 = steady_clock::now();
    components::IntervalLimiter limiter(200ms);
    std::vector<std::thread> callers;
    for (int i = 0; i < 3; ++i) {
      callers.emplace_back([&] {
        limiter.acquire();
        std::lock_guard lock(through_lock);
        through.push_back(steady_clock::now() - t0);
      });
    }
    for (auto& c : callers) c.join();
    std::this_thread::sleep_for(1s);  // idle: the next caller goes through at once
    limiter.acquire();
    through.push_back(steady_clock::now() - t0);
  });
  EXPECT_EQ(through, (std::vector<nanoseconds>{0ms, 200ms, 400ms, 1400ms}));
}

TEST(InterposeComponents, EagerQueuesLostWakeupIsFoundByExplorationAndReplaysIdentically) {
  // fifo runs the woken consumer at the producer's yield: the bug stays hidden.
  EXPECT_NO_THROW(run_std(two_consumers_two_items));

  constexpr std::uint64_t kSeeds = 100;
  std::uint64_t found = 0;
  std::optional<bubble::DeadlockError> first;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    bubble::Options options;
    options.strategy = bubble::Strategy::random(seed);
    try {
      run_std(two_consumers_two_items, options);
    } catch (const bubble::DeadlockError& e) {
      ++found;
      if (!first) first.emplace(e);
    }
  }
  std::printf("lost wakeup found in %llu of %llu random schedules\n",
              static_cast<unsigned long long>(found), static_cast<unsigned long long>(kSeeds));
  ASSERT_TRUE(first.has_value()) << "no schedule out of " << kSeeds << " showed the lost wakeup";
  EXPECT_GE(found, 10u);
  const std::string message = first->what();
  EXPECT_NE(message.find("\"std::thread\": blocked on CondVar::wait \"pthread_cond_t\""),
            std::string::npos)
      << message;

  // Replaying the recorded schedule reproduces the failure byte for byte.
  bubble::Options replay;
  replay.replay = first->schedule();
  try {
    run_std(two_consumers_two_items, replay);
    FAIL() << "the replay did not fail";
  } catch (const bubble::DeadlockError& e) {
    const std::string replayed = e.what();
    // The replay line names the recorded picks instead of the seed; everything before it is
    // the same.
    EXPECT_EQ(replayed.substr(0, replayed.find("replay:")),
              message.substr(0, message.find("replay:")));
  }
}

TEST(InterposeComponents, CorrectBoundedQueueHasNoLostWakeupInTheSameSchedules) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    bubble::Options options;
    options.strategy = bubble::Strategy::random(seed);
    EXPECT_NO_THROW(run_std(
        [] {
          components::BoundedQueue<int> queue(8);
          std::thread c1([&] { queue.pop(); });
          std::thread c2([&] { queue.pop(); });
          std::this_thread::sleep_for(1ms);
          queue.push(1);
          std::this_thread::yield();
          queue.push(2);
          c1.join();
          c2.join();
        },
        options))
        << "seed " << seed;
  }
}

}  // namespace
