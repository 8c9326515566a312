// A Catch2 program whose BUBBLE_CATCH_TEST_CASE has a planted bug that only some schedules show (a
// check-then-act: the seat is checked and booked under two separate locks). Not a test of its own:
// testing_glue.catch2_replay (tests/cli/replay_check.py catch2) explores it, checks the report,
// runs the printed replay and shrunk lines and compares their failures.
#define CATCH_CONFIG_MAIN
#include <bubble/testing/catch2.hpp>

#include "planted_bugs.hpp"

BUBBLE_CATCH_TEST_CASE("two clients book the last seat", "[known-bad]") {
  CHECK(glue_test::book_the_last_seat_twice() == 1);
}
