// A doctest program with a bubble test case, built against bubble as an outside project does: the
// body runs in a bubble, so an hour of sleep takes no real time and is exactly an hour.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <bubble/testing/doctest.hpp>

#include <chrono>

using namespace std::chrono_literals;

BUBBLE_DOCTEST_TEST_CASE("an hour of virtual sleep") {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  rt.sleep_for(1h);
  CHECK(rt.now() - start == 1h);
}
