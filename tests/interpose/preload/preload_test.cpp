// A program linked against bubble::framework but not against bubble::interpose: with
// libbubble_interpose.so preloaded (LD_PRELOAD), its intercepting bubbles see std::thread,
// std::mutex, steady_clock and sleep_for as their own; without it they would sleep for real, so
// the test then skips, saying how to run it, or fails when BUBBLE_REQUIRE_PRELOAD=1 says that the
// shared object is meant to be there (the ctest registration with LD_PRELOAD sets both).

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
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

// Whether steady_clock reads the bubble's virtual clock inside an intercepting run, which only the
// interposer makes it do (no sleeping: the run only reads clocks).
bool intercepting() {
  bool virtual_clock = false;
  bubble::Options options;
  options.intercept_std = true;
  bubble::run(options, [&](bubble::Runtime& rt) {
    virtual_clock = steady_clock::now().time_since_epoch() == rt.now().time_since_epoch();
  });
  return virtual_clock;
}

TEST(InterposePreload, StdThreadsLocksAndSleepsRunInVirtualTimeWithThePreloadedInterposer) {
  if (!intercepting()) {
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

}  // namespace
