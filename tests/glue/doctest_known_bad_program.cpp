// A doctest program whose BUBBLE_STD_DOCTEST_TEST_CASE has a planted bug that only some schedules
// show, in unmodified standard C++ (a check-then-act: the seat is checked and booked under two
// separate std::mutex locks). Not a test of its own: testing_glue.doctest_replay
// (tests/cli/replay_check.py doctest) explores it, checks the report, runs the printed replay and
// shrunk lines and compares their failures.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <bubble/testing/doctest.hpp>

#include "planted_bugs.hpp"

BUBBLE_STD_DOCTEST_TEST_CASE("two clients book the last seat") {
  CHECK(glue_test::book_the_last_seat_twice_std() == 1);
}
