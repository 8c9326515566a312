// How a bubble run fails: deadlock reports, unwinding, exceptions from bubble threads, budgets,
// the watchdog and foreign threads.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/notification.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "../support/block_forever.hpp"
#include "../support/child_process.hpp"
#include "../support/failure_text.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;
using bubble::test_support::block_forever;
using bubble::test_support::contains;

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
      detach(rt.spawn("waiter-a", [&rt, id] { block_forever(rt, id); }));
      detach(rt.spawn("waiter-b", [&rt] {
        rt.sleep_for(1s);
        block_forever(rt, 99);
      }));
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

// The one case the teardown cannot unwind: a destructor, reached by a normal return, that blocks
// on something no thread can ever signal (it is the last thread). It receives Unwind in a noexcept
// context, which calls std::terminate; on a bubble thread that abandons the thread instead of
// ending the process, and the run fails with its report, which says so. (A destructor that waits
// for other threads, ~Thread or ~Pool, is woken normally instead: see
// bubble_teardown_test.cpp.)
TEST(BubbleDeadlock, DestructorBlockedOnWhatNoThreadCanSignalIsAbandonedAfterTheReport) {
  try {
    bubble::run([](Runtime& rt) {
      struct BlocksInDestructor {
        Runtime& rt;
        ~BlocksInDestructor() { block_forever(rt, 7); }
      };
      { BlocksInDestructor b{rt}; }
    });
    FAIL() << "run() returned";
  } catch (const bubble::DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "deadlock: all threads are blocked")) << m;
    EXPECT_TRUE(contains(m, "Forever::wait (object #7)")) << m;
    EXPECT_TRUE(contains(m, "(1 thread(s) could not be unwound and were abandoned")) << m;
    EXPECT_EQ(m.substr(m.rfind('\n') + 1), "replay: BUBBLE_STRATEGY=fifo");
  }
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
      detach(rt.spawn("t", [] { throw CaseResult{3}; }));
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
      detach(rt.spawn("first", [] { throw std::runtime_error("first"); }));
      detach(rt.spawn("second", [] { throw std::runtime_error("second"); }));
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
        detach(rt.spawn("checker", [] { EXPECT_EQ(1, 2) << "inside a bubble thread"; }));
        rt.sleep_for(1s);
      }),
      "inside a bubble thread");
}

// Point 11: budgets end livelocks with a message naming the budget.
TEST(BubbleBudget, MaxStepsEndsABusyLoop) {
  try {
    bubble::run({.max_steps = 1000}, [](Runtime& rt) {
      detach(rt.spawn("spinner", [&] {
        for (;;) rt.yield();
      }));
      for (;;) rt.yield();
    });
    FAIL();
  } catch (const bubble::RunFailure& e) {
    EXPECT_TRUE(contains(e.what(), "step budget exhausted: Options::max_steps = 1000")) << e.what();
    EXPECT_TRUE(contains(e.what(), "\"spinner\"")) << e.what();
  }
}

// What a channel ping-pong (every send parks) did before its run failed: the operations the
// ping-pong completed (the teardown included), the failure message and the schedule the failure
// recorded.
struct PingPongFailure {
  int completed = 0;
  std::string message;
  bubble::Schedule schedule;
};

// Runs the ping-pong until the run fails: by its step budget (options.max_steps), or, when
// `thrower_yields` is not negative, by a third thread that throws after that many yields.
PingPongFailure ping_pong_until_the_run_fails(bubble::Options options, int thrower_yields = -1) {
  PingPongFailure out;
  try {
    bubble::run(options, [&](Runtime& rt) {
      bubble::Channel<int> ping(0, rt);
      bubble::Channel<int> pong(0, rt);
      auto echo = rt.spawn("echo", [&] {
        for (;;) {
          auto v = ping.receive();
          if (!v) return;
          ++out.completed;
          if (pong.send(*v)) return;
          ++out.completed;
        }
      });
      // The teardown unwinds root first: echo must be gone before the channels are.
      struct JoinAtExit {
        bubble::ThreadHandle& thread;
        ~JoinAtExit() { thread.join(); }
      } join_at_exit{*echo};
      if (thrower_yields >= 0) {
        detach(rt.spawn("thrower", [&rt, thrower_yields] {
          for (int i = 0; i < thrower_yields; ++i) rt.yield();
          throw std::runtime_error("thrown");
        }));
      }
      for (int i = 0;; ++i) {
        if (ping.send(i)) return;
        ++out.completed;
        if (!pong.receive()) return;
        ++out.completed;
      }
    });
  } catch (const bubble::RunFailure& e) {
    out.message = e.what();
    out.schedule = e.schedule();
    return out;
  }
  out.message = "no failure";
  return out;
}

// Property: a run stops where its step budget runs out, whether or not it is traced (a traced
// run takes the engine's general paths, an untraced one its fast paths, among them the direct
// hand-off in park): for every budget, every thread completes the same operations before the
// failure (the teardown included, which lets threads run on for a while before it unwinds them)
// and the failure reads the same. In this ping-pong every send parks, so the budget runs out in
// park as well as at scheduling points.
TEST(BubbleBudget, AStepBudgetStopsTheRunAtTheSameOperationTracedOrNot) {
  for (const bubble::Strategy& strategy : {bubble::Strategy::fifo(), bubble::Strategy::random(3)}) {
    for (std::uint64_t budget = 1; budget <= 10; ++budget) {
      bubble::Options options{.strategy = strategy, .max_steps = budget};
      const PingPongFailure untraced = ping_pong_until_the_run_fails(options);
      options.trace = true;
      const PingPongFailure traced = ping_pong_until_the_run_fails(options);
      EXPECT_TRUE(contains(untraced.message, "step budget exhausted")) << untraced.message;
      EXPECT_EQ(untraced.completed, traced.completed)
          << strategy.to_string() << ", budget " << budget;
      EXPECT_EQ(untraced.message, traced.message) << strategy.to_string() << ", budget " << budget;
    }
  }
}

// Property: after a thread's exception fails the run, the threads still running (here a
// ping-pong, whose every send parks) do the same, traced or not (a traced run takes the engine's
// general paths, an untraced one its fast paths until the failure turns them off): the same
// operations complete before the teardown unwinds them, the failure reads the same, and the
// failure's schedule is the same.
TEST(BubbleFailure, AfterAThreadThrowsTheRunGoesOnTheSameTracedOrNot) {
  for (const bubble::Strategy& strategy : {bubble::Strategy::fifo(), bubble::Strategy::random(3)}) {
    for (int yields = 0; yields <= 6; ++yields) {
      bubble::Options options{.strategy = strategy};
      const PingPongFailure untraced = ping_pong_until_the_run_fails(options, yields);
      options.trace = true;
      const PingPongFailure traced = ping_pong_until_the_run_fails(options, yields);
      EXPECT_TRUE(contains(untraced.message, "threw std::runtime_error: thrown"))
          << untraced.message;
      EXPECT_EQ(untraced.completed, traced.completed) << strategy.to_string() << ", " << yields;
      EXPECT_EQ(untraced.message, traced.message) << strategy.to_string() << ", " << yields;
      EXPECT_EQ(untraced.schedule, traced.schedule) << strategy.to_string() << ", " << yields;
    }
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
                             detach(rt.spawn("stuck", [&] {
                               rt.yield();
                               volatile bool forever = true;
                               while (forever) {
                               }
                             }));
                             rt.sleep_for(1s);
                           }),
               "watchdog: thread #2 \"stuck\" of bubble has run for more than 50 ms.*"
               "last scheduling point was yield at .*bubble_failure_test.cpp");
}

// Runs a bubble whose thread "stuck" spins without a scheduling point, under a `limit` watchdog.
void spin_in_a_bubble(std::chrono::milliseconds limit) {
  bubble::run({.watchdog = limit}, [](Runtime& rt) {
    detach(rt.spawn("stuck", [&] {
      rt.yield();
      volatile bool forever = true;
      while (forever) {
      }
    }));
    rt.sleep_for(1s);
  });
}

// The watchdog thread of a process does not survive fork(): a child forked after a bubble ran
// (GoogleTest's default "fast" death tests) gets a watchdog of its own when it runs a bubble.
TEST(BubbleGuardDeathTest, WatchdogWorksInAChildForkedAfterABubbleRan) {
  GTEST_FLAG_SET(death_test_style, "fast");
  // The parent's watchdog thread is running (it is started by the first run and never stops).
  bubble::run({.watchdog = std::chrono::milliseconds{50}}, [](Runtime& rt) { rt.yield(); });
  EXPECT_DEATH(spin_in_a_bubble(std::chrono::milliseconds{50}),
               "watchdog: thread #2 \"stuck\" of bubble has run for more than 50 ms");
}

// The same from a child forked while the parent had a bubble registered with the watchdog on
// another OS thread: that bubble's thread does not exist in the child, so the child's watchdog must
// not blame it; it watches the child's own bubble. The other bubble's limit is the shorter one,
// so a child watchdog that still watched it would abort first, blaming its thread #1 "root".
TEST(BubbleGuardDeathTest, ChildWatchdogIgnoresBubblesOfThreadsThatDidNotFork) {
  GTEST_FLAG_SET(death_test_style, "fast");
  bubble::Notification started;  // Of the system runtime: the parent's helper thread is running.
  std::atomic<bool> stop{false};
  std::thread other([&] {
    // It waits for a thread outside the bubble, which no livelock check can see: none.
    bubble::run({.livelock_steps = 0, .watchdog = std::chrono::milliseconds{100}},
                [&](Runtime& rt) {
                  started.notify();
                  while (!stop.load()) rt.yield();  // Scheduling points: never stuck in the parent.
                });
  });
  started.wait();
  EXPECT_DEATH(spin_in_a_bubble(std::chrono::milliseconds{300}),
               "watchdog: thread #2 \"stuck\" of bubble has run for more than 300 ms");
  stop.store(true);
  other.join();
}

// --- Failure messages are byte-identical --------------------------------------------------------

// A program that deadlocks under most schedules: three threads, objects, locations.
void deadlocking_program(Runtime& rt) {
  const std::uint64_t id = rt.new_object_id();
  detach(rt.spawn("a", [&rt, id] {
    rt.yield();
    block_forever(rt, id);
  }));
  detach(rt.spawn("b", [&rt] {
    rt.sleep_for(1s);
    block_forever(rt, 99);
  }));
  rt.yield();
  block_forever(rt, id);
}

// A program whose failure is an exception whose text names the runtime (a misuse of
// bubble::wait: two threads waiting at once).
void misusing_program(Runtime& rt) {
  detach(rt.spawn("first", [] { bubble::wait(); }));
  detach(rt.spawn("second", [] { bubble::wait(); }));
  rt.sleep_for(1s);
}

std::string failure_message(const bubble::Options& options, void (*program)(Runtime&)) {
  try {
    bubble::run(options, program);
  } catch (const bubble::RunFailure& e) {
    return e.what();
  }
  return "(no failure)";
}

// The strategy named by a failure's replay line.
bubble::Strategy replay_strategy(const std::string& message) {
  const std::string prefix = "replay: BUBBLE_STRATEGY=";
  const std::size_t at = message.rfind('\n' + prefix);
  if (at == std::string::npos) throw std::invalid_argument("no replay line in: " + message);
  return bubble::Strategy::parse(message.substr(at + 1 + prefix.size()));
}

constexpr const char* kPrintFailuresVariable = "BUBBLE_TEST_PRINT_FAILURE_MESSAGES";

std::string both_messages() {
  return failure_message({.strategy = bubble::Strategy::random(5)}, deadlocking_program) +
         "\n--\n" + failure_message({.strategy = bubble::Strategy::random(5)}, misusing_program);
}

// Runs this test in a fresh process, in which it prints both_messages() and returns.
std::string both_messages_of_a_fresh_process() {
  const ::testing::TestInfo& test = *::testing::UnitTest::GetInstance()->current_test_info();
  const std::string out = bubble::test_support::output_of(
      std::string("env ") + kPrintFailuresVariable + "=1 " + bubble::test_support::self_command() +
      " --gtest_filter=" + test.test_suite_name() + "." + test.name());
  const std::size_t begin = out.find("BEGIN\n");
  const std::size_t end = out.find("\nEND\n");
  if (begin == std::string::npos || end == std::string::npos) return "bad child output: " + out;
  return out.substr(begin + 6, end - begin - 6);
}

// The whole message of a failure is the same in every run of the same program and schedule: a
// later run in the same process, a replay from the replay line, a replay of the recorded
// schedule, and a fresh process (where the run is the first of the process). Nothing in it may
// depend on how many bubbles ran before, pointers or real time.
TEST(BubbleFailureMessage, IsByteIdenticalInReplaysAndInAFreshProcess) {
  if (std::getenv(kPrintFailuresVariable) != nullptr) {
    std::printf("BEGIN\n%s\nEND\n", both_messages().c_str());
    return;
  }
  for (void (*program)(Runtime&) : {deadlocking_program, misusing_program}) {
    const std::string first = failure_message({.strategy = bubble::Strategy::random(5)}, program);
    ASSERT_NE(first, "(no failure)");
    EXPECT_EQ(failure_message({.strategy = bubble::Strategy::random(5)}, program), first);
    EXPECT_EQ(failure_message({.strategy = replay_strategy(first)}, program), first);
  }
  // A recorded schedule: the run that recorded it and its replay print the same message.
  bubble::Schedule recorded;
  std::string with_choices;
  try {
    bubble::run({.strategy = bubble::Strategy::choices({1, 1, 2})}, deadlocking_program);
  } catch (const bubble::RunFailure& e) {
    recorded = e.schedule();
    with_choices = e.what();
  }
  ASSERT_FALSE(with_choices.empty());
  EXPECT_EQ(failure_message({.replay = recorded}, deadlocking_program), with_choices);
  EXPECT_EQ(failure_message({.strategy = replay_strategy(with_choices)}, deadlocking_program),
            with_choices);
  // A fresh process.
  EXPECT_EQ(both_messages_of_a_fresh_process(), both_messages());
}

}  // namespace
