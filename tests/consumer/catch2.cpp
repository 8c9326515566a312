// A Catch2 program with a bubble test case, built against bubble as an outside project does: the
// body runs in a bubble, so an hour of sleep takes no real time and is exactly an hour.
#define CATCH_CONFIG_MAIN
#include <bubble/testing/catch2.hpp>

#include <chrono>

using namespace std::chrono_literals;

BUBBLE_CATCH_TEST_CASE("an hour of virtual sleep", "[consumer]") {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  rt.sleep_for(1h);
  CHECK(rt.now() - start == 1h);
}
