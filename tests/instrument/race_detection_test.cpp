// Race detection on standard-library code compiled with bubble::instrument: every program of
// race_programs.hpp with a data race is reported under every schedule tried, with both accesses,
// and replays to the same report byte for byte; no program without one is reported.

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/testing/stacks.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "race_programs.hpp"

namespace {

using race_programs::Program;

std::vector<bubble::Strategy> strategies() {
  std::vector<bubble::Strategy> all{bubble::Strategy::fifo()};
  for (std::uint64_t seed = 1; seed <= 20; ++seed) all.push_back(bubble::Strategy::random(seed));
  return all;
}

// The failure message of one run of `program`, or "" if it passed.
std::string run_message(const Program& program, bubble::Options options) {
  options.intercept_std = true;
  try {
    bubble::run(options, [&](bubble::Runtime&) { program.body(); });
    return "";
  } catch (const bubble::RunFailure& failure) {
    return failure.what();
  }
}

class RaceDetection : public ::testing::TestWithParam<Program> {};

// Property: a program with a data race fails with a data-race report under every strategy tried,
// naming a write and another access of different threads; replaying the failing run's schedule
// reports the same race in the same words. A program without one passes under all of them.
TEST_P(RaceDetection, ReportsEveryRaceAndNothingElse) {
  const Program& program = GetParam();
  for (const bubble::Strategy& strategy : strategies()) {
    SCOPED_TRACE(strategy.to_string());
    bubble::Options options;
    options.strategy = strategy;
    const std::string message = run_message(program, options);
    if (!program.racy) {
      EXPECT_EQ(message, "") << program.name;
      continue;
    }
    ASSERT_NE(message.find("bubble: data race: "), std::string::npos) << message;
    EXPECT_NE(message.find("write of "), std::string::npos) << message;
    EXPECT_NE(message.find("  previous "), std::string::npos) << message;
    // The replay line's strategy reproduces the report exactly.
    const std::string replay_text = message.substr(message.rfind("BUBBLE_STRATEGY=") + 16);
    bubble::Options replay;
    replay.strategy =
        bubble::Strategy::parse(replay_text.substr(0, replay_text.find_first_of(" \n")));
    EXPECT_EQ(run_message(program, replay), message);
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, RaceDetection, ::testing::ValuesIn(race_programs::all()),
                         [](const ::testing::TestParamInfo<Program>& info) {
                           return std::string(info.param.name);
                         });

// With a symbolizer (as BUBBLE_TEST replays a failing run), the report gives each access at the
// user's file and line, with its thread and the stack above it, and says where the memory is.
TEST(RaceReport, NamesBothAccessesAtTheUsersLines) {
  const auto wrong_lock =
      std::find_if(race_programs::all().begin(), race_programs::all().end(),
                   [](const Program& p) { return std::string(p.name) == "wrong_lock"; });
  ASSERT_NE(wrong_lock, race_programs::all().end());
  bubble::Options options;
  options.symbolize_stacks = bubble::testing::stack_symbolizer();
  const std::string message = run_message(*wrong_lock, options);
  const std::string deposit =
      "race_programs.hpp:" + std::to_string(race_programs::kWrongLockDepositLine);
  const std::string withdrawal =
      "race_programs.hpp:" + std::to_string(race_programs::kWrongLockWithdrawalLine);
  // The withdrawal's read (the first half of -=) finds the deposit's write unordered with it.
  EXPECT_NE(message.find("bubble: data race: thread #3 \"std::thread\" reads 4 bytes on the "
                         "stack of thread #1 \"root\" that thread #2 \"std::thread\" wrote"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("  read of 4 bytes by thread #3 \"std::thread\" at "), std::string::npos)
      << message;
  EXPECT_NE(message.find(withdrawal + "\n    > race_programs::wrong_lock()"), std::string::npos)
      << message;
  EXPECT_NE(message.find("  previous write of 4 bytes by thread #2 \"std::thread\" at "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(deposit + "\n    > race_programs::wrong_lock()"), std::string::npos)
      << message;
  EXPECT_LT(message.find(withdrawal), message.find(deposit)) << message;
}

// The suite holds at least ten programs of each kind.
TEST(RaceDetectionSuite, HasTenRacyAndTenRaceFreePrograms) {
  int racy = 0;
  int free = 0;
  for (const Program& p : race_programs::all()) (p.racy ? racy : free) += 1;
  EXPECT_GE(racy, 10);
  EXPECT_GE(free, 10);
}

}  // namespace
