// How a bubble run fails: deadlock reports, unwinding, exceptions from bubble threads, budgets,
// the watchdog and foreign threads. Issue 4, points 7, 8 and 11.

#include <bubble/bubble.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Parks forever on an object that nobody signals.
void block_forever(Runtime& rt, std::uint64_t object_id,
                   bubble::SourceLocation where = bubble::SourceLocation::current()) {
  bubble::Waiter w;
  rt.prepare(w);
  rt.park(w, bubble::kNoDeadline, {"Forever::wait", object_id, where});
}

// Sets a flag when destroyed: tells whether an unwound stack ran its destructors.
struct Flag {
  bool* set;
  ~Flag() { *set = true; }
};

// Point 7: a deadlock names every thread, its state, what it waits on and where; the replay line
// ends the message.
TEST(BubbleDeadlock, ReportNamesEveryThreadWhatAndWhere) {
  try {
    bubble::run([](Runtime& rt) {
      const std::uint64_t id = rt.new_object_id();
      rt.spawn("waiter-a", [&rt, id] { block_forever(rt, id); }).reset();
      rt.spawn("waiter-b", [&rt] {
          rt.sleep_for(1s);
          block_forever(rt, 99);
        }).reset();
      block_forever(rt, id);
    });
    FAIL() << "expected a DeadlockError";
  } catch (const bubble::DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "deadlock: all threads are blocked and no timer is pending")) << m;
    EXPECT_TRUE(contains(m, "at 2000-01-01T00:00:01Z")) << m;
    EXPECT_TRUE(contains(m, "thread #1 \"root\": blocked on Forever::wait (object #1) at ")) << m;
    EXPECT_TRUE(contains(m, "thread #2 \"waiter-a\": blocked on Forever::wait (object #1)")) << m;
    EXPECT_TRUE(contains(m, "thread #3 \"waiter-b\": blocked on Forever::wait (object #99)")) << m;
    EXPECT_TRUE(contains(m, "bubble_failure_test.cpp:")) << m;
    const std::string last_line = m.substr(m.rfind('\n') + 1);
    EXPECT_EQ(last_line, "replay: BUBBLE_STRATEGY=fifo");
  }
}

// Conformance: root blocked forever -> deadlock.
TEST(BubbleDeadlock, RootBlockedForever) {
  EXPECT_THROW(bubble::run([](Runtime& rt) { block_forever(rt, 1); }), bubble::DeadlockError);
}

// Point 7: after a deadlock, blocked threads are unwound: their destructors run, nothing leaks
// (checked by LeakSanitizer in the ASan build).
TEST(BubbleDeadlock, BlockedThreadsAreUnwound) {
  bool root_unwound = false, child_unwound = false, never_started_ran = false;
  EXPECT_THROW(bubble::run([&](Runtime& rt) {
                 auto owned = std::make_unique<std::string>(1000, 'x');  // Leaks if not unwound.
                 Flag f{&root_unwound};
                 auto h = rt.spawn("child", [&] {
                   auto v = std::make_shared<int>(5);
                   Flag g{&child_unwound};
                   block_forever(rt, 2);
                 });
                 block_forever(rt, 1);
                 never_started_ran = true;
               }),
               bubble::DeadlockError);
  EXPECT_TRUE(root_unwound);
  EXPECT_TRUE(child_unwound);
  EXPECT_FALSE(never_started_ran);
}

// A thread that blocks again in a destructor while being unwound (joining another blocked
// thread) still completes: the joined thread is unwound too.
TEST(BubbleDeadlock, UnwindingThreadsMayBlockInDestructors) {
  bool joined = false;
  EXPECT_THROW(bubble::run([&](Runtime& rt) {
                 struct Joiner {
                   std::unique_ptr<bubble::ThreadHandle> h;
                   bool* joined;
                   ~Joiner() {
                     h->join();
                     *joined = true;
                   }
                 } j{rt.spawn("child", [&] { block_forever(rt, 2); }), &joined};
                 block_forever(rt, 1);
               }),
               bubble::DeadlockError);
  EXPECT_TRUE(joined);
}

// A thread that swallows the unwinding exception (catch (...) without rethrow) is unwound again
// at its next scheduling point.
TEST(BubbleDeadlock, SwallowedUnwindIsRepeated) {
  bool unwound = false;
  EXPECT_THROW(bubble::run([&](Runtime& rt) {
                 Flag f{&unwound};
                 try {
                   block_forever(rt, 1);
                 } catch (...) {  // Wrong, but survivable.
                 }
                 rt.yield();
                 ADD_FAILURE() << "not reached";
               }),
               bubble::DeadlockError);
  EXPECT_TRUE(unwound);
}

// The documented limit of unwinding: a destructor that was already blocked (reached by a normal
// return) when the teardown begins receives Unwind in a noexcept context; the process terminates,
// but only after printing the failure report.
TEST(BubbleDeadlockDeathTest, BlockedDestructorTerminatesAfterPrintingTheReport) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(bubble::run([](Runtime& rt) {
                 struct BlocksInDestructor {
                   Runtime& rt;
                   ~BlocksInDestructor() { block_forever(rt, 7); }
                 };
                 { BlocksInDestructor b{rt}; }
               }),
               "std::terminate was called while unwinding.*deadlock: all threads are blocked.*"
               "Forever::wait \\(object #7\\)");
}

// Point 8: an exception escaping a bubble thread fails the run; it is rethrown from run() as a
// RunFailure nested with the original, and the other threads are unwound.
TEST(BubbleFailure, ExceptionInAThreadFailsTheRun) {
  bool other_unwound = false;
  try {
    bubble::run({.strategy = bubble::Strategy::random(7)}, [&](Runtime& rt) {
      auto h = rt.spawn("thrower", [&] {
        rt.sleep_for(2s);
        throw std::out_of_range("index 12 is out of range");
      });
      Flag f{&other_unwound};
      block_forever(rt, 1);
    });
    FAIL() << "expected a RunFailure";
  } catch (const bubble::RunFailure& e) {
    const std::string m = e.what();
    EXPECT_TRUE(
        contains(m, "thread #2 \"thrower\" threw std::out_of_range: index 12 is out of range"))
        << m;
    EXPECT_TRUE(contains(m, "2000-01-01T00:00:02Z")) << m;
    EXPECT_EQ(m.substr(m.rfind('\n') + 1), "replay: BUBBLE_STRATEGY=random:7");
    EXPECT_THROW(std::rethrow_if_nested(e), std::out_of_range);
  }
  EXPECT_TRUE(other_unwound);
}

TEST(BubbleFailure, RootExceptionFailsTheRun) {
  EXPECT_THROW(bubble::run([](Runtime&) { throw std::invalid_argument("bad"); }),
               bubble::RunFailure);
}

TEST(BubbleFailure, TimerCallbackExceptionFailsTheRun) {
  try {
    bubble::run([](Runtime& rt) {
      rt.schedule_at(rt.now() + 1s, [] { throw std::runtime_error("from a timer"); });
      rt.sleep_for(2s);
    });
    FAIL();
  } catch (const bubble::RunFailure& e) {
    EXPECT_TRUE(contains(e.what(), "a timer callback threw std::runtime_error: from a timer"))
        << e.what();
  }
}

// Exceptions not derived from std::exception (RapidCheck's case results) are rethrown unchanged.
TEST(BubbleFailure, NonStdExceptionsAreRethrownUnchanged) {
  struct CaseResult {
    int code;
  };
  try {
    bubble::run([](Runtime& rt) {
      rt.spawn("t", [] { throw CaseResult{3}; }).reset();
      rt.sleep_for(1s);
    });
    FAIL();
  } catch (const CaseResult& r) {
    EXPECT_EQ(r.code, 3);
  }
}

// The first failure wins; later ones (while unwinding) do not replace it.
TEST(BubbleFailure, FirstFailureWins) {
  try {
    bubble::run([](Runtime& rt) {
      rt.spawn("first", [] { throw std::runtime_error("first"); }).reset();
      rt.spawn("second", [] { throw std::runtime_error("second"); }).reset();
      rt.sleep_for(1s);
    });
    FAIL();
  } catch (const bubble::RunFailure& e) {
    EXPECT_TRUE(contains(e.what(), "\"first\" threw")) << e.what();
  }
}

// gtest assertions work in bubble threads: a fatal failure returns from the thread's function.
TEST(BubbleFailure, GtestNonFatalFailuresAreRecorded) {
  // (Checked with EXPECT_NONFATAL_FAILURE, which needs a static body.)
  EXPECT_NONFATAL_FAILURE(
      bubble::run([](Runtime& rt) {
        rt.spawn("checker", [] { EXPECT_EQ(1, 2) << "inside a bubble thread"; }).reset();
        rt.sleep_for(1s);
      }),
      "inside a bubble thread");
}

// Point 11: budgets end livelocks with a message naming the budget.
TEST(BubbleBudget, MaxStepsEndsABusyLoop) {
  try {
    bubble::run({.max_steps = 1000}, [](Runtime& rt) {
      rt.spawn("spinner", [&] {
          for (;;) rt.yield();
        }).reset();
      for (;;) rt.yield();
    });
    FAIL();
  } catch (const bubble::RunFailure& e) {
    EXPECT_TRUE(contains(e.what(), "step budget exhausted: Options::max_steps = 1000")) << e.what();
    EXPECT_TRUE(contains(e.what(), "\"spinner\"")) << e.what();
  }
}

TEST(BubbleBudget, MaxVirtualTimeEndsATimeLivelock) {
  try {
    bubble::run({.max_virtual_time = 1h}, [](Runtime& rt) {
      for (;;) rt.sleep_for(1min);
    });
    FAIL();
  } catch (const bubble::RunFailure& e) {
    EXPECT_TRUE(
        contains(e.what(), "virtual time budget exhausted: Options::max_virtual_time = 1h0m0s"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "2000-01-01T01:00:00Z")) << e.what();
  }
}

// Point 11: using a bubble's runtime from an OS thread that is not running it is a logic_error.
TEST(BubbleGuard, ForeignThreadUseIsALogicError) {
  std::string message;
  bubble::run({.name = "guarded"}, [&](Runtime& rt) {
    std::thread t([&] {
      try {
        rt.schedule_point({"Mutex::lock", 1, {}});
      } catch (const std::logic_error& e) {
        message = e.what();
      }
    });
    t.join();  // A real join: fine for a test of this guard.
  });
  EXPECT_TRUE(contains(message, "schedule_point")) << message;
  EXPECT_TRUE(contains(message, "guarded")) << message;
}

TEST(BubbleGuard, BadOptionsAreRejected) {
  EXPECT_THROW(bubble::run({.stack_size = 0}, [](Runtime&) {}), std::invalid_argument);
  EXPECT_THROW(bubble::run(bubble::Options{}, nullptr), std::invalid_argument);
}

// Point 11: the watchdog aborts a thread stuck outside the bubble's control, naming it.
TEST(BubbleGuardDeathTest, WatchdogNamesAStuckThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(bubble::run({.watchdog = std::chrono::milliseconds{50}},
                           [](Runtime& rt) {
                             rt.spawn("stuck", [&] {
                                 rt.yield();
                                 volatile bool forever = true;
                                 while (forever) {
                                 }
                               }).reset();
                             rt.sleep_for(1s);
                           }),
               "watchdog: thread #2 \"stuck\" of bubble#[0-9]+ has run for more than 50 ms.*"
               "last scheduling point was yield at .*bubble_failure_test.cpp");
}

}  // namespace
