#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <bubble/strategy.hpp>

namespace bubble {

// Schedule is what a bubble run recorded about its scheduling decisions: the index picked at
// every decision that had more than one candidate (see Strategy for how candidates are listed),
// in order. Trailing zeros are dropped, since a zero is what fifo picks once the picks run out:
// a fifo run records an empty schedule.
//
// Running the same program with Options::replay set to a recorded schedule (or with
// Strategy::choices(schedule.picks)) reproduces the recorded run exactly: the same interleaving,
// the same virtual times, the same trace.
struct Schedule {
  std::vector<std::uint32_t> picks{};
  // How many decisions with more than one candidate the run took (zeros included).
  std::uint64_t decisions = 0;

  // The picks as a comma-separated list, "0,2,1" ("" when empty).
  std::string to_string() const;
  // Parses a comma-separated list of picks (spaces allowed; "" is the empty schedule). Throws
  // std::invalid_argument naming the text on bad input.
  static Schedule parse(std::string_view text);
  // The strategy that replays this schedule: Strategy::choices(picks).
  Strategy to_strategy() const { return Strategy::choices(picks); }

  friend bool operator==(const Schedule&, const Schedule&) = default;
};

// One decision of a run among more than one candidate, as Options::decisions records it: what an
// exhaustive search (ScheduleTree) needs to enumerate a program's schedules.
struct Decision {
  // How many candidates there were (> 1), and which was taken (< candidates).
  std::uint32_t candidates = 0;
  std::uint32_t picked = 0;
  // True when the decision was taken at a scheduling point of a thread that could go on running:
  // candidate 0 is that thread, and any other pick preempts it. False at a thread's block, yield
  // or exit, and for decisions among due timers or ready select cases, whose picks are free.
  bool preemptive = false;

  friend bool operator==(const Decision&, const Decision&) = default;
};

}  // namespace bubble
