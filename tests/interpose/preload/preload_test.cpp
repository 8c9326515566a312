// A program linked against bubble::framework but not against bubble::interpose: with
// libbubble_interpose.so preloaded (LD_PRELOAD), its intercepting bubbles see std::thread,
// std::mutex, steady_clock and sleep_for as their own; without it they would sleep for real, so
// the test then skips, saying how to run it, or fails when BUBBLE_REQUIRE_PRELOAD=1 says that the
// shared object is meant to be there (the ctest registration with LD_PRELOAD sets both).

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>

namespace {

using namespace std::chrono_literals;
using std::chrono::steady_clock;

bool preload_required() {
  const char* v = std::getenv("BUBBLE_REQUIRE_PRELOAD");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// Whether this run can intercept: the interposer is preloaded (or the test skips, or fails when
// BUBBLE_REQUIRE_PRELOAD says it must be).
bool preloaded() {
  return bubble::intercept_std_available();
}

TEST(InterposePreload, StdThreadsLocksAndSleepsRunInVirtualTimeWithThePreloadedInterposer) {
  if (!preloaded()) {
    if (preload_required()) FAIL() << "LD_PRELOAD did not make the bubble intercept std";
    GTEST_SKIP() << "libbubble_interpose.so is not preloaded: run with "
                    "LD_PRELOAD=/path/to/libbubble_interpose.so";
  }
  std::vector<std::chrono::nanoseconds> done;
  bubble::Options options;
  options.intercept_std = true;
  const auto result = bubble::run(options, [&](bubble::Runtime&) {
    const auto t0 = steady_clock::now();
    std::mutex m;
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([&] {
        std::lock_guard lock(m);
        std::this_thread::sleep_for(1h);
        done.push_back(steady_clock::now() - t0);
      });
    }
    for (auto& t : threads) t.join();
  });
  EXPECT_EQ(done, (std::vector<std::chrono::nanoseconds>{1h, 2h, 3h}));
  EXPECT_EQ(result.elapsed, 3h);
}

// Property: the replay line of a failed run of a preloaded program carries the LD_PRELOAD that
// loaded the interposer, so that run as printed it replays in the bubble, not on real threads.
TEST(InterposePreload, ReplayLinesCarryTheLdPreload) {
  if (!preloaded()) {
    if (preload_required()) FAIL() << "LD_PRELOAD did not make the bubble intercept std";
    GTEST_SKIP() << "libbubble_interpose.so is not preloaded";
  }
  const std::string preload = std::getenv("LD_PRELOAD");
  std::string message;
  try {
    bubble::run({.strategy = bubble::Strategy::random(3), .intercept_std = true},
                [](bubble::Runtime&) {
                  std::mutex m;
                  std::lock_guard hold(m);
                  std::thread t([&] { std::lock_guard lock(m); });  // Never: a deadlock.
                  t.join();
                });
  } catch (const bubble::RunFailure& failure) {
    message = failure.what();
  }
  EXPECT_EQ(message.substr(message.rfind('\n') + 1),
            "replay: LD_PRELOAD=" + preload + " BUBBLE_STRATEGY=random:3")
      << message;
  EXPECT_EQ(bubble::replay_line(bubble::Strategy::fifo()),
            "replay: LD_PRELOAD=" + preload + " BUBBLE_STRATEGY=fifo");
}

// Property: outside bubbles the preloaded interposer's functions are the real ones, reached
// through whatever comes after it: two std::threads add to a counter under a std::mutex and hand
// over through a std::condition_variable, on real threads. Under ThreadSanitizer (the tsan
// preset) the real ones are TSan's interceptors, which must see these threads and locks: a lock
// they missed would be reported as a data race on the counter, failing the test.
TEST(InterposePreload, OutsideBubblesThreadsAndLocksAreTheRealOnes) {
  constexpr int kAdds = 1000;
  std::mutex m;
  std::condition_variable cv;
  int counter = 0;
  bool first_done = false;
  std::thread first([&] {
    for (int i = 0; i < kAdds; ++i) {
      std::lock_guard lock(m);
      ++counter;
    }
    std::lock_guard lock(m);
    first_done = true;
    cv.notify_one();
  });
  std::thread second([&] {
    for (int i = 0; i < kAdds; ++i) {
      std::lock_guard lock(m);
      ++counter;
    }
  });
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return first_done; });
  }
  first.join();
  second.join();
  EXPECT_EQ(counter, 2 * kAdds);
}

// Without the interposer, a run that asks for interception fails at once, saying how to get it,
// instead of running the standard library's threads and clocks for real.
TEST(InterposePreload, InterceptingWithoutTheInterposerFailsAtOnce) {
  if (preloaded()) GTEST_SKIP() << "the interposer is preloaded";
  try {
    bubble::run({.intercept_std = true}, [](bubble::Runtime&) {});
    FAIL() << "the run started";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Options::intercept_std is true, but this program has no "
                        "bubble::interpose"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("LD_PRELOAD=<prefix>/lib/libbubble_interpose.so"), std::string::npos)
        << what;
  }
}

}  // namespace
