#include <bubble/gen/schedule.hpp>
#include <bubble/scenarios/show.hpp>

#include <chrono>
#include <stdexcept>

namespace bubble::scenarios {

std::string show_duration(Duration d) {
  return format_duration(d);
}

void showValue(const DurationValue& d, std::ostream& os) {
  os << show_duration(d.value);
}

rc::Gen<DurationValue> milliseconds_in(int lo_ms, int hi_ms) {
  if (lo_ms < 0 || lo_ms > hi_ms) {
    throw std::invalid_argument(
        "bubble::scenarios::milliseconds_in: need 0 <= lo_ms <= hi_ms, got " +
        std::to_string(lo_ms) + " and " + std::to_string(hi_ms));
  }
  return rc::gen::map(rc::gen::inRange(lo_ms, hi_ms + 1), [](int ms) {
    return DurationValue{std::chrono::duration_cast<Duration>(std::chrono::milliseconds(ms))};
  });
}

void showValue(const StrategyValue& s, std::ostream& os) {
  os << s.value.to_string();
}

rc::Gen<StrategyValue> case_strategy() {
  // Random twice as often: in the pool suite it finds the races that need several preemptions in
  // a row (shutdown between a submit's check and its queueing, then every worker exiting).
  return rc::gen::weightedOneOf<StrategyValue>(
      {{1, rc::gen::map(gen::schedule(),
                        [](const Schedule& s) { return StrategyValue{s.to_strategy()}; })},
       {2, rc::gen::map(rc::gen::inRange<std::uint64_t>(1, 1U << 30U),
                        [](std::uint64_t seed) { return StrategyValue{Strategy::random(seed)}; })},
       {1, rc::gen::map(
               rc::gen::pair(rc::gen::inRange<std::uint64_t>(1, 1U << 30U), rc::gen::inRange(2, 4)),
               [](const std::pair<std::uint64_t, int>& p) {
                 return StrategyValue{Strategy::pct(p.first, p.second)};
               })}});
}

}  // namespace bubble::scenarios
