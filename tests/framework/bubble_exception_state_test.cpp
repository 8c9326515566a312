// Each bubble thread has the exception state of a thread of its own (the exceptions it has caught,
// the count of those in flight), as it would on an OS thread, although every bubble thread runs on
// the same OS thread: the engine saves and restores that state at every switch.

#include <bubble/bubble.hpp>

#include <gtest/gtest.h>

#include <exception>
#include <stdexcept>
#include <string>

namespace {

using bubble::Runtime;

// What a thread saw of its own exception state.
struct Seen {
  int uncaught = -1;
  bool has_current = true;
  std::string current;  // The what() of std::current_exception(), if any.
};

Seen look() {
  Seen s;
  s.uncaught = std::uncaught_exceptions();
  const std::exception_ptr e = std::current_exception();
  s.has_current = e != nullptr;
  if (e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      s.current = ex.what();
    }
  }
  return s;
}

// Yields from its destructor, which runs while the exception that unwinds its scope is in flight.
struct YieldsInItsDestructor {
  Runtime& rt;
  Seen& before;
  Seen& after;
  ~YieldsInItsDestructor() {
    before = look();
    rt.yield();
    after = look();
  }
};

// A thread that yields while an exception is in flight (in a destructor the unwinding runs) and
// while it handles one (in a catch block) finds its own state again after each yield; the thread
// that ran in between saw none of it.
TEST(BubbleExceptionState, EachThreadKeepsItsOwnExceptionsAcrossSwitches) {
  Seen in_flight_before, in_flight_after, caught_before, caught_after, other_first, other_second;
  bubble::run([&](Runtime& rt) {
    auto thrower = rt.spawn("thrower", [&] {
      try {
        YieldsInItsDestructor guard{rt, in_flight_before, in_flight_after};
        throw std::runtime_error("in flight");
      } catch (const std::runtime_error&) {
        caught_before = look();
        rt.yield();
        caught_after = look();
      }
    });
    auto other = rt.spawn("other", [&] {
      other_first = look();
      rt.yield();
      other_second = look();
    });
    thrower->join();
    other->join();
  });
  EXPECT_EQ(in_flight_before.uncaught, 1);
  EXPECT_EQ(in_flight_after.uncaught, 1);
  EXPECT_EQ(caught_before.uncaught, 0);
  EXPECT_EQ(caught_before.current, "in flight");
  EXPECT_EQ(caught_after.uncaught, 0);
  EXPECT_EQ(caught_after.current, "in flight");
  // fifo: "other" ran during the first yield and again during the second.
  EXPECT_EQ(other_first.uncaught, 0);
  EXPECT_FALSE(other_first.has_current);
  EXPECT_EQ(other_second.uncaught, 0);
  EXPECT_FALSE(other_second.has_current);
}

}  // namespace
