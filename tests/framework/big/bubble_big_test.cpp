// Big bubbles: 100,000 threads in one run, and the failure message of a 100,000-thread deadlock
// stays a few lines long. Their own program, labelled `big`: seconds in a release build, tens of
// seconds under AddressSanitizer.

#include <bubble/bubble.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

constexpr int kThreads = 100'000;

// 100,000 threads alive at once, each sleeping 10 times: every sleep completes, at the virtual
// times it asked for.
TEST(BubbleBig, HundredThousandThreadsSleepTenTimesEach) {
  bubble::Options o;
  o.watchdog = std::chrono::milliseconds{0};
  std::int64_t sleeps = 0;
  int alive_at_once = 0;
  const bubble::RunResult result = bubble::run(o, [&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    threads.reserve(kThreads);
    int alive = 0;
    for (int i = 0; i < kThreads; ++i) {
      threads.push_back(rt.spawn("sleeper", [&rt, &sleeps, &alive, &alive_at_once, i] {
        ++alive;
        if (alive > alive_at_once) alive_at_once = alive;
        for (int k = 0; k < 10; ++k) {
          const bubble::TimePoint before = rt.now();
          rt.sleep_for(std::chrono::milliseconds(1 + (i + k) % 7));
          if (rt.now() - before == std::chrono::milliseconds(1 + (i + k) % 7)) ++sleeps;
        }
        --alive;
      }));
    }
    for (auto& t : threads) t->join();
  });
  EXPECT_EQ(sleeps, std::int64_t{kThreads} * 10);
  EXPECT_EQ(alive_at_once, kThreads);
  EXPECT_EQ(result.threads, std::uint64_t{kThreads} + 1);
}

// The deadlock of 100,001 threads: one line for the 100,000 blocked at the same place.
TEST(BubbleBig, HundredThousandThreadDeadlockIsReportedInAFewLines) {
  bubble::Options o;
  o.watchdog = std::chrono::milliseconds{0};
  std::string message;
  const bubble::SourceLocation root_at = bubble::SourceLocation::current();
  try {
    bubble::run(o, [&](Runtime& rt) {
      const std::uint64_t id = rt.new_object_id();
      for (int i = 0; i < kThreads; ++i) {
        rt.spawn("waiter", [&rt, id] {
            bubble::Waiter w;
            rt.prepare(w);
            rt.park(w, bubble::kNoDeadline, {"Forever::wait", id, bubble::SourceLocation{}});
          }).reset();
      }
      bubble::Waiter w;
      rt.prepare(w);
      rt.park(w, bubble::kNoDeadline, {"Forever::wait", id, root_at});
    });
  } catch (const bubble::DeadlockError& e) {
    message = e.what();
  }
  const std::string root_line = "\n  thread #1 \"root\": blocked on Forever::wait (object #1) at " +
                                std::string(root_at.file_name()) + ":" +
                                std::to_string(root_at.line()) + "\n";
  EXPECT_NE(
      message.find(root_line + "  100,000 threads blocked on Forever::wait (object #1) at (unknown "
                               "location): #2 \"waiter\", #3 \"waiter\", #4 \"waiter\" and 99,997 "
                               "more\nreplay: BUBBLE_STRATEGY=fifo"),
      std::string::npos)
      << message.substr(0, 2000);
  EXPECT_LT(message.size(), 1000u);
}

}  // namespace
