// A first fake-clock test with doctest (docs/CATCH2-AND-DOCTEST.md): the body runs in a bubble,
// the timer fires after exactly two virtual seconds, and no real time passes. Link
// bubble::testing_doctest. Run it as any doctest program; explore 500 schedules of every bubble
// test case with
//   BUBBLE_SCHEDULES=500 ./examples_doctest_tests
// and a failing one prints the line that replays it:
//   replay: BUBBLE_STRATEGY=random:17 ./examples_doctest_tests '--test-case=a timer fires ...'
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <bubble/testing/doctest.hpp>
#include <bubble/timer.hpp>

using namespace std::chrono_literals;

BUBBLE_DOCTEST_TEST_CASE("a timer fires after exactly its duration") {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  bubble::Timer timer(2s, rt);
  const auto fired = timer.channel().receive();  // blocks until the timer fires
  REQUIRE(fired.has_value());
  CHECK(*fired - start == 2s);    // the time the timer fired at, exactly
  CHECK(rt.now() - start == 2s);  // and the clock did not move further
}
