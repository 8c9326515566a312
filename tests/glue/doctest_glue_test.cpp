// BUBBLE_DOCTEST_TEST_CASE and BUBBLE_STD_DOCTEST_TEST_CASE (bubble/testing/doctest.hpp): bodies
// in bubbles, on virtual time, explored by the environment. What a failing exploration reports is
// checked on a program of its own (doctest_known_bad_program.cpp): doctest counts every failure it
// is shown, so a test here could not look at one and pass.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <bubble/testing/doctest.hpp>

#include <bubble/interpose.hpp>
#include <bubble/mutex.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

BUBBLE_DOCTEST_TEST_CASE("a timer fires after exactly its duration") {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  bubble::Timer timer(2s, rt);
  const auto fired = timer.channel().receive();
  REQUIRE(fired.has_value());
  CHECK(*fired - start == 2s);
  CHECK(rt.now() - start == 2s);
}

BUBBLE_DOCTEST_TEST_CASE("bubble threads sleeping an hour each take three virtual hours in turn") {
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

BUBBLE_STD_DOCTEST_TEST_CASE("std threads under one std mutex take turns in virtual time") {
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

BUBBLE_DOCTEST_TEST_CASE("a plain bubble test case does not intercept") {
  CHECK_FALSE(bubble::interpose::active());
}

namespace {

int runs_of_passing_body = 0;
void passing_body() {
  ++runs_of_passing_body;
  bubble::current_runtime().sleep_for(1s);
  CHECK(bubble::in_bubble());
}

}  // namespace

TEST_CASE("run_doctest_test runs every schedule of a passing exploration") {
  const auto env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "BUBBLE_SCHEDULES") return "40";
    return std::nullopt;
  };
  const auto outcome =
      bubble::testing::run_doctest_test(&passing_body, false, __FILE__, __LINE__, env);
  CHECK(outcome.runs == 40);
  CHECK(runs_of_passing_body == 40);
  CHECK_FALSE(outcome.failed);
}
