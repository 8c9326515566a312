// Fuzzes bubble::Schedule::parse, the parser of saved schedules (comma-separated picks).
//
// Properties: a text either parses or is rejected with std::invalid_argument; a parsed schedule
// has no trailing zero and counts its picks as decisions; it prints (to_string) to a text that
// parses to the same schedule; its strategy (to_strategy) prints as "choices:" and the schedule's
// text, and parses back to itself.
#include <bubble/schedule.hpp>
#include <bubble/strategy.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using bubble::Schedule;
  using bubble::fuzz::require;
  const std::string text = bubble::fuzz::text_of(data, size);
  Schedule schedule;
  try {
    schedule = Schedule::parse(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  require(schedule.picks.empty() || schedule.picks.back() != 0, "no trailing zero", text);
  require(schedule.decisions == schedule.picks.size(), "decisions == picks", text);
  const std::string printed = schedule.to_string();
  Schedule again;
  try {
    again = Schedule::parse(printed);
  } catch (const std::invalid_argument& e) {
    require(false, "to_string() of a parsed schedule parses", printed + ": " + e.what());
  }
  require(again == schedule, "parse(to_string(s)) == s", text + " -> " + printed);
  const bubble::Strategy strategy = schedule.to_strategy();
  require(strategy.to_string() == "choices:" + printed, "to_strategy prints as choices", printed);
  require(bubble::Strategy::parse(strategy.to_string()) == strategy, "its strategy round-trips",
          printed);
  return 0;
}
