// A crash in a bubble ends the process, as without bubble, but never without a report: the thread
// that crashed, the signal, the step and virtual time, every thread's state and the replay line
// (or, for a crash while a failed run is torn down, the failure's report) come first.

#include <bubble/bubble.hpp>
#include <bubble/mutex.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>

// Under AddressSanitizer, whose own handler reports a stack overflow, the bubble's report comes
// after it and says less.
#if defined(__SANITIZE_ADDRESS__)
#define BUBBLE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUBBLE_TEST_ASAN 1
#endif
#endif

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

// Writes through an address no program maps, in a way the compiler cannot see as undefined.
[[gnu::noinline]] void write_to(std::uintptr_t address) {
  *reinterpret_cast<volatile int*>(address) = 1;
}

void crash_in_a_thread(const bubble::Options& options) {
  bubble::run(options, [](Runtime& rt) {
    bubble::Thread sleeper(
        "sleeper", [&rt] { rt.sleep_for(1s); }, rt);
    bubble::Thread crasher(
        "crasher",
        [&rt] {
          rt.sleep_for(5ms);
          write_to(0x10);
        },
        rt);
  });
}

TEST(BubbleCrashDeathTest, ASegfaultOnABubbleThreadIsReportedBeforeTheProcessEnds) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(crash_in_a_thread({.strategy = bubble::Strategy::random(7)}),
               "bubble: crash: thread #3 \"crasher\" of bubble received SIGSEGV \\(invalid memory "
               "access at 0x10\\) at step [0-9]+, virtual time \\+5ms\n"
               ".*thread #1 \"root\": blocked on Thread::join.*"
               "thread #2 \"sleeper\": blocked on sleep.*"
               "thread #3 \"crasher\": running.*"
               "replay: BUBBLE_STRATEGY=random:7\n"
               "bubble: the process ends with the signal");
}

TEST(BubbleCrashDeathTest, AnAbortOnABubbleThreadIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(bubble::run({},
                           [](Runtime& rt) {
                             bubble::Thread quitter(
                                 "quitter", [] { std::abort(); }, rt);
                           }),
               "bubble: crash: thread #2 \"quitter\" of bubble received SIGABRT \\(abort\\(\\).*"
               "replay: BUBBLE_STRATEGY=fifo");
}

// Recurses until the stack ends (the bound is out of reach, and out of the compiler's sight).
volatile int g_depth_limit = 1 << 30;
[[gnu::noinline]] int recurse(int depth) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth >= g_depth_limit) return frame[0];
  return recurse(depth + 1) + frame[0];
}

// A fiber's stack overflows into its guard page: reported on the alternate signal stack.
constexpr const char* kOverflowReport =
    "bubble: crash: thread #2 \"deep\" of bubble .*"
#ifndef BUBBLE_TEST_ASAN
    "it overflowed its stack of 65536 bytes: raise Options::stack_size.*"
#endif
    "replay: BUBBLE_STRATEGY=fifo";

TEST(BubbleCrashDeathTest, AStackOverflowIntoTheGuardPageIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(bubble::run({.stack_size = 64 * 1024},
                           [](Runtime& rt) {
                             bubble::Thread deep(
                                 "deep", [] { (void)recurse(0); }, rt);
                           }),
               kOverflowReport);
}

// A crash while a failed run is torn down: the failure's report, written when it was decided,
// comes with the crash's.
TEST(BubbleCrashDeathTest, ACrashDuringTheTeardownShowsTheFailuresReport) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  struct CrashesWhenDestroyed {
    ~CrashesWhenDestroyed() { write_to(0x20); }
  };
  EXPECT_DEATH(bubble::run({},
                           [](Runtime& rt) {
                             bubble::Mutex m(rt);
                             std::unique_lock hold(m);
                             bubble::Thread stuck(
                                 "stuck",
                                 [&] {
                                   CrashesWhenDestroyed crash;
                                   std::lock_guard lock(
                                       m);  // Never: a deadlock, torn down by unwinding this frame.
                                 },
                                 rt);
                           }),
               "bubble: crash: thread #2 \"stuck\" of bubble received SIGSEGV .*"
               "the run had failed before the crash; its report:\n"
               "bubble: deadlock: all threads are blocked.*"
               "replay: BUBBLE_STRATEGY=fifo");
}

}  // namespace
