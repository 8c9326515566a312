// BUBBLE_CATCH_TEST_CASE and BUBBLE_STD_CATCH_TEST_CASE (bubble/testing/catch2.hpp): bodies in
// bubbles, on virtual time, explored by the environment; and, through run_catch2_test() inside a
// capture of the test's own, what a failing exploration reports to Catch2.
#define CATCH_CONFIG_MAIN
#include <bubble/testing/catch2.hpp>

#include <bubble/channel.hpp>
#include <bubble/interpose.hpp>
#include <bubble/mutex.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "planted_bugs.hpp"

using namespace std::chrono_literals;

namespace {

// An environment with BUBBLE_SCHEDULES=<schedules> only (nothing: a single fifo run).
bubble::testing::EnvLookup schedules(std::optional<std::string> schedules) {
  return [schedules](std::string_view name) -> std::optional<std::string> {
    if (name == "BUBBLE_SCHEDULES") return schedules;
    return std::nullopt;
  };
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

BUBBLE_CATCH_TEST_CASE("a timer fires after exactly its duration", "[bubble]") {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  bubble::Timer timer(2s, rt);
  const auto fired = timer.channel().receive();
  REQUIRE(fired.has_value());
  CHECK(*fired - start == 2s);
  CHECK(rt.now() - start == 2s);
}

BUBBLE_CATCH_TEST_CASE("bubble threads sleeping an hour each take three virtual hours in turn",
                       "[bubble]") {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  bubble::Mutex m(rt);
  {
    std::vector<bubble::Thread> sleepers;
    for (int i = 0; i < 3; ++i) {
      sleepers.emplace_back(
          "sleeper",
          [&] {
            const std::lock_guard<bubble::Mutex> lock(m);
            rt.sleep_for(1h);
            CHECK(bubble::in_bubble());  // an assertion on another bubble thread
          },
          rt);
    }
  }
  CHECK(rt.now() - start == 3h);
}

BUBBLE_STD_CATCH_TEST_CASE("std threads under one std mutex take turns in virtual time",
                           "[bubble][std]") {
  REQUIRE(bubble::interpose::active());  // else the sleeps below would be real ones
  std::mutex m;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      const std::lock_guard<std::mutex> lock(m);
      std::this_thread::sleep_for(1h);
    });
  }
  for (auto& w : workers) w.join();
  CHECK(std::chrono::steady_clock::now() - start == 3h);
}

BUBBLE_CATCH_TEST_CASE("a plain bubble test case does not intercept", "[bubble]") {
  CHECK_FALSE(bubble::interpose::active());
}

namespace {

int runs_of_passing_body = 0;
void passing_body() {
  ++runs_of_passing_body;
  bubble::current_runtime().sleep_for(1s);
  CHECK(bubble::in_bubble());
}

void sell_the_last_seat() {
  CHECK(glue_test::book_the_last_seat_twice() == 1);
}

bool ran_past_require = false;
void require_on_the_root() {
  REQUIRE(1 + 1 == 3);
  ran_past_require = true;
}

void receive_what_nobody_sends() {
  bubble::Channel<int> never(0);
  (void)never.receive();
}

void throw_from_a_thread() {
  bubble::Thread t("thrower", [] { throw std::runtime_error("the disk is full"); });
}

void require_on_another_thread() {
  bubble::Thread t("checker", [] { REQUIRE(2 + 2 == 5); });
}

}  // namespace

TEST_CASE("run_catch2_test runs every schedule of a passing exploration", "[bubble]") {
  runs_of_passing_body = 0;
  bubble::testing::detail::Catch2Capture outer;
  const auto outcome =
      bubble::testing::run_catch2_test(&passing_body, false, __FILE__, __LINE__, schedules("40"));
  outer.stop();
  CHECK(outcome.runs == 40);
  CHECK(runs_of_passing_body == 40);
  CHECK_FALSE(outcome.failed);
  CHECK(outer.size() == 0);
}

TEST_CASE("an exploration finds the planted check-then-act, replays it and shrinks it",
          "[bubble]") {
  bubble::testing::detail::Catch2Capture outer;  // takes what the exploration reports
  const auto under_fifo = bubble::testing::run_catch2_test(&sell_the_last_seat, false, __FILE__,
                                                           __LINE__, schedules(std::nullopt));
  const auto explored = bubble::testing::run_catch2_test(&sell_the_last_seat, false, __FILE__,
                                                         __LINE__, schedules("200"));
  outer.stop();
  CHECK_FALSE(under_fifo.failed);  // only exploration finds it
  REQUIRE(explored.failed);
  CHECK(contains(explored.assertion_failures,
                 "CHECK( glue_test::book_the_last_seat_twice() == 1 )\nwith expansion:\n  2 == 1"));
  CHECK(contains(explored.message, " failed with the Catch2 failures above\nreplay: "));
  CHECK(explored.replay_line.rfind(
            "replay: BUBBLE_STRATEGY=" + explored.failed_strategy.to_string() + " ", 0) == 0);
  // The replay command selects this test case by its name, as a Catch2 test spec (whose commas
  // are escaped).
  CHECK(contains(explored.replay_line,
                 " 'an exploration finds the planted check-then-act\\, "
                 "replays it and shrinks it'"));
  REQUIRE(explored.shrunk.has_value());
  CHECK(contains(explored.message, "\nshrunk to "));
  // Reported to Catch2: the run's held-back CHECK failure at its line, then the exploration's.
  REQUIRE(outer.size() == 2);
  CHECK(outer.at(0).failed());
  CHECK(contains(outer.at(0).message, "with expansion:\n  2 == 1"));
  CHECK(outer.at(1).failed());
  CHECK(contains(outer.at(1).message, explored.message));
}

TEST_CASE("REQUIRE on the root thread ends the body as a failed assertion", "[bubble]") {
  ran_past_require = false;
  bubble::testing::detail::Catch2Capture outer;
  const auto outcome = bubble::testing::run_catch2_test(&require_on_the_root, false, __FILE__,
                                                        __LINE__, schedules(std::nullopt));
  outer.stop();
  CHECK_FALSE(ran_past_require);
  REQUIRE(outcome.failed);
  CHECK(contains(outcome.message, "bubble: the run (fifo) failed with the Catch2 failures above"));
  CHECK_FALSE(contains(outcome.message, "escaped"));
  REQUIRE(outer.size() == 2);
  CHECK(outer.at(0).kind == bubble::testing::HostResult::Kind::failure);  // re-reported, not fatal
  CHECK(contains(outer.at(0).message, "REQUIRE( 1 + 1 == 3 )"));
}

TEST_CASE("REQUIRE on another bubble thread fails the run by its assertion", "[bubble]") {
  bubble::testing::detail::Catch2Capture outer;
  const auto outcome = bubble::testing::run_catch2_test(&require_on_another_thread, false, __FILE__,
                                                        __LINE__, schedules(std::nullopt));
  outer.stop();
  REQUIRE(outcome.failed);
  CHECK(contains(outcome.assertion_failures, "REQUIRE( 2 + 2 == 5 )"));
  CHECK(contains(outcome.message, "failed with the Catch2 failures above"));
}

TEST_CASE("a deadlock fails the test case with bubble's report and its replay line", "[bubble]") {
  bubble::testing::detail::Catch2Capture outer;
  const auto outcome = bubble::testing::run_catch2_test(&receive_what_nobody_sends, false, __FILE__,
                                                        __LINE__, schedules(std::nullopt));
  outer.stop();
  REQUIRE(outcome.failed);
  CHECK(contains(outcome.message, "deadlock: all threads are blocked"));
  CHECK(contains(outcome.message, "Channel::receive"));
  CHECK(contains(outcome.message, "\n" + outcome.replay_line));
  CHECK(outcome.assertion_failures.empty());
  REQUIRE(outer.size() == 1);
  CHECK(contains(outer.at(0).message, outcome.message));
}

TEST_CASE("an exception escaping a bubble thread fails the test case with its message",
          "[bubble]") {
  bubble::testing::detail::Catch2Capture outer;
  const auto outcome = bubble::testing::run_catch2_test(&throw_from_a_thread, false, __FILE__,
                                                        __LINE__, schedules(std::nullopt));
  outer.stop();
  REQUIRE(outcome.failed);
  CHECK(contains(outcome.message, "the disk is full"));
  CHECK(contains(outcome.message, "\nreplay: BUBBLE_STRATEGY=fifo "));
  CHECK(outer.size() == 1);
}
