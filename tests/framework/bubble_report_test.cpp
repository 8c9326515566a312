// The thread listing of failure messages, whole: one line per thread in small runs; past 20
// threads at the same state and place, one summary line for them.

#include <bubble/bubble.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/block_forever.hpp"

namespace {

using bubble::Runtime;
using bubble::SourceLocation;
using bubble::test_support::block_forever;

// A scheduling point, then a park on `*parked` (which another thread unparks), each with a
// WaitInfo of its own in this frame, which is gone once this returns.
[[gnu::noinline]] void point_then_park(Runtime& rt, bubble::Waiter*& parked,
                                       SourceLocation point_at, SourceLocation park_at) {
  rt.schedule_point({"Custom::point", 0, point_at});
  bubble::Waiter w;
  rt.prepare(w);
  parked = &w;
  rt.park(w, bubble::kNoDeadline, {"Custom::park", 7, park_at});
  parked = nullptr;
}

// Overwrites the stack below the caller's frame, where the frames of the calls it made were.
[[gnu::noinline]] void overwrite_stack() {
  volatile char junk[8192];
  for (volatile char& c : junk) c = 0;
}

std::string at(const SourceLocation& where) {
  return std::string(where.file_name()) + ":" + std::to_string(where.line());
}

// The message of the run's failure without its first line (which says when it failed).
std::string listing(const std::function<void(Runtime&)>& program) {
  try {
    bubble::run(program);
  } catch (const bubble::RunFailure& e) {
    const std::string m = e.what();
    return m.substr(m.find('\n') + 1);
  }
  return "(no failure)";
}

// Spawns `n` threads named `name` that block forever on object `object_id(i)` at `where`.
template <typename ObjectId>
void spawn_blocked(Runtime& rt, int n, const std::string& name, ObjectId object_id,
                   SourceLocation where) {
  for (int i = 0; i < n; ++i) {
    rt.spawn(name, [&rt, id = object_id(i), where] { block_forever(rt, id, where); }).reset();
  }
}

// A small run lists every thread on a line of its own, in creation order.
TEST(BubbleReport, ASmallDeadlockListsEveryThread) {
  SourceLocation root_at, a_at, b_at;
  const std::string m = listing([&](Runtime& rt) {
    const std::uint64_t id = rt.new_object_id();
    a_at = SourceLocation::current();
    rt.spawn("a", [&rt, id, a_at] { block_forever(rt, id, a_at); }).reset();
    b_at = SourceLocation::current();
    rt.spawn("b", [&rt, b_at] { block_forever(rt, 0, b_at); }).reset();
    root_at = SourceLocation::current();
    block_forever(rt, id, root_at);
  });
  EXPECT_EQ(m, "  thread #1 \"root\": blocked on Forever::wait (object #1) at " + at(root_at) +
                   "\n"
                   "  thread #2 \"a\": blocked on Forever::wait (object #1) at " +
                   at(a_at) +
                   "\n"
                   "  thread #3 \"b\": blocked on Forever::wait at " +
                   at(b_at) +
                   "\n"
                   "replay: BUBBLE_STRATEGY=fifo");
}

// 20 threads at the same place are still listed one by one; 21 are one line.
TEST(BubbleReport, GroupsStartAboveTwentyThreadsAtTheSamePlace) {
  SourceLocation root_at, twenty_at, more_at;
  const std::string m = listing([&](Runtime& rt) {
    twenty_at = SourceLocation::current();
    spawn_blocked(
        rt, 20, "x", [](int) { return 7; }, twenty_at);
    more_at = SourceLocation::current();
    spawn_blocked(
        rt, 21, "y", [](int) { return 8; }, more_at);
    root_at = SourceLocation::current();
    block_forever(rt, 9, root_at);
  });
  std::string expected =
      "  thread #1 \"root\": blocked on Forever::wait (object #9) at " + at(root_at) + "\n";
  for (int id = 2; id <= 21; ++id) {
    expected += "  thread #" + std::to_string(id) +
                " \"x\": blocked on Forever::wait (object #7) at " + at(twenty_at) + "\n";
  }
  expected += "  21 threads blocked on Forever::wait (object #8) at " + at(more_at) +
              ": #22 \"y\", #23 \"y\", #24 \"y\" and 18 more\n";
  expected += "replay: BUBBLE_STRATEGY=fifo";
  EXPECT_EQ(m, expected);
}

// Groups are by state, kind and place; a group on several objects counts them; a summary line
// stands where its first member would; threads elsewhere keep their own lines, in order.
TEST(BubbleReport, BigGroupsAreSummarisedInPlace) {
  SourceLocation root_at, same_at, many_at, lone_at;
  const std::string m = listing([&](Runtime& rt) {
    same_at = SourceLocation::current();
    spawn_blocked(
        rt, 25, "w", [](int) { return 5; }, same_at);
    lone_at = SourceLocation::current();
    spawn_blocked(
        rt, 1, "lone", [](int) { return 0; }, lone_at);
    many_at = SourceLocation::current();
    spawn_blocked(
        rt, 1'234, "s", [](int i) { return 100 + i % 40; }, many_at);
    root_at = SourceLocation::current();
    block_forever(rt, 5, root_at);
  });
  EXPECT_EQ(m, "  thread #1 \"root\": blocked on Forever::wait (object #5) at " + at(root_at) +
                   "\n"
                   "  25 threads blocked on Forever::wait (object #5) at " +
                   at(same_at) +
                   ": #2 \"w\", #3 \"w\", #4 \"w\" and 22 more\n"
                   "  thread #27 \"lone\": blocked on Forever::wait at " +
                   at(lone_at) +
                   "\n"
                   "  1,234 threads blocked on Forever::wait (on 40 objects) at " +
                   at(many_at) +
                   ": #28 \"s\", #29 \"s\", #30 \"s\" and 1,231 more\n"
                   "replay: BUBBLE_STRATEGY=fifo");
}

// Threads that never ran are grouped at their spawn; the failing thread keeps its own line.
TEST(BubbleReport, RunnableThreadsAreGroupedAtTheirLastSchedulingPoint) {
  SourceLocation spawned_at;
  const std::string m = listing([&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    for (int i = 0; i < 31'990; ++i) {
      spawned_at = SourceLocation::current();
      threads.push_back(rt.spawn(
          "sleeper", [] {}, spawned_at));
    }
    throw std::runtime_error("enough");
  });
  EXPECT_EQ(m, "  thread #1 \"root\": running, last at spawn " + at(spawned_at) +
                   "\n"
                   "  31,990 threads runnable, last at spawned " +
                   at(spawned_at) +
                   ": #2 \"sleeper\", #3 \"sleeper\", #4 \"sleeper\" and 31,987 more\n"
                   "replay: BUBBLE_STRATEGY=fifo");
}

// A thread that is not blocked is listed at its last scheduling point or park even once the call
// has returned and its frame (with the WaitInfo the call was given) is overwritten: here the
// failing thread, running, and a thread woken from its park that has not run yet.
TEST(BubbleReport, ThreadsNotBlockedAreListedAtTheirLastPointAfterItsFrameIsGone) {
  SourceLocation point_at, park_at, root_at;
  const std::string m = listing([&](Runtime& rt) {
    bubble::Waiter* failing_parked = nullptr;
    bubble::Waiter* woken_parked = nullptr;
    point_at = SourceLocation::current();
    park_at = SourceLocation::current();
    auto failing = rt.spawn("failing", [&] {
      point_then_park(rt, failing_parked, point_at, park_at);
      overwrite_stack();
      throw std::runtime_error("after its park");
    });
    auto woken = rt.spawn("woken", [&] { point_then_park(rt, woken_parked, point_at, park_at); });
    rt.yield();  // fifo: both run to their parks.
    ASSERT_NE(failing_parked, nullptr);
    ASSERT_NE(woken_parked, nullptr);
    rt.unpark(*failing_parked);
    rt.unpark(*woken_parked);
    root_at = SourceLocation::current();
    rt.yield(root_at);  // "failing" runs first and throws; "woken" is runnable.
  });
  EXPECT_EQ(m, "  thread #1 \"root\": runnable, last at yield " + at(root_at) +
                   "\n"
                   "  thread #2 \"failing\": running, last at Custom::park " +
                   at(park_at) +
                   "\n"
                   "  thread #3 \"woken\": runnable, last at Custom::park " +
                   at(park_at) +
                   "\n"
                   "replay: BUBBLE_STRATEGY=fifo");
}

}  // namespace
