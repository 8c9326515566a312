// Fuzzes bubble::testing::TestPlan::from_environment, the testing glue's reading of its
// environment variables (BUBBLE_STRATEGY, BUBBLE_SEED, BUBBLE_SCHEDULES, BUBBLE_EXHAUSTIVE, the
// shard variables, BUBBLE_CHECKPOINT, ...), through a fake EnvLookup. The input is a list of
// lines "NAME=value"; a name given twice keeps its last value.
//
// Properties: the variables either give a plan or are rejected with std::invalid_argument; a plan
// describes itself; an exploration's size() is the number of its schedules k < N with
// k % total == index, each run's schedule index is such a k, its strategy round-trips through its
// text, and a run index past size() throws std::out_of_range; a single run's strategy is
// BUBBLE_STRATEGY's (or random:BUBBLE_SEED, or fifo); an exhaustive search has one run, its bound
// and an existing shard; BUBBLE_CHECKPOINT and BUBBLE_TRACE pass through as given.
#include <bubble/strategy.hpp>
#include <bubble/testing/test_plan.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"

namespace {

using bubble::Strategy;
using bubble::fuzz::require;
using bubble::testing::TestPlan;

void check_run(const TestPlan& plan, std::uint64_t i, const std::string& text) {
  const std::uint64_t k = plan.schedule_index(i);
  require(k < plan.schedules() && k % plan.shard().total == plan.shard().index,
          "a run's schedule is one of the shard's", text);
  const Strategy s = plan.strategy(i);
  require(Strategy::parse(s.to_string()) == s, "a run's strategy round-trips", s.to_string());
  require(s == bubble::testing::exploration_strategy(plan.base_seed(), k),
          "a run's strategy is its schedule's", text);
}

void check_plan(const TestPlan& plan, const std::map<std::string, std::string, std::less<>>& env,
                const std::string& text) {
  (void)plan.describe();
  const auto set = [&env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end() || it->second.find_first_not_of(" \t\n") == std::string::npos) {
      return std::nullopt;
    }
    return it->second;
  };
  require(plan.checkpoint_path() == set("BUBBLE_CHECKPOINT"), "BUBBLE_CHECKPOINT passes through",
          text);
  require(plan.trace_path() == set("BUBBLE_TRACE"), "BUBBLE_TRACE passes through", text);
  const bubble::testing::ScheduleShard& shard = plan.shard();
  require(shard.total >= 1 && shard.index < shard.total, "the shard exists", text);
  if (plan.exhaustive_bound()) {
    require(plan.exploring() && plan.size() == 1, "an exhaustive search is one run", text);
    require(shard.total <= 0xffffffffULL, "an exhaustive search has at most 2^32 - 1 shards", text);
    return;
  }
  if (!plan.exploring()) {
    require(plan.size() == 1, "a single run is one run", text);
    const Strategy s = plan.strategy(0);
    if (set("BUBBLE_STRATEGY")) {
      require(s == Strategy::parse(*set("BUBBLE_STRATEGY")), "BUBBLE_STRATEGY is the strategy",
              text);
    } else if (set("BUBBLE_SEED")) {
      require(s.kind() == Strategy::Kind::random, "BUBBLE_SEED alone is random:<seed>", text);
    } else {
      require(s == Strategy::fifo(), "no variable: fifo", text);
    }
    return;
  }
  const std::uint64_t n = plan.schedules();
  require(n >= 1, "an exploration has a schedule", text);
  // The k < n with k % total == index: index, index + total, ...
  const std::uint64_t expected = n <= shard.index ? 0 : (n - 1 - shard.index) / shard.total + 1;
  require(plan.size() == expected, "size() counts the shard's schedules",
          text + ": size() = " + std::to_string(plan.size()) + ", expected " +
              std::to_string(expected));
  for (std::uint64_t i = 0; i < std::min<std::uint64_t>(plan.size(), 3); ++i) {
    check_run(plan, i, text);
  }
  if (plan.size() > 3) check_run(plan, plan.size() - 1, text);
  bool threw = false;
  try {
    (void)plan.strategy(plan.size());
  } catch (const std::out_of_range&) {
    threw = true;
  }
  require(threw, "a run index past size() throws std::out_of_range", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = bubble::fuzz::text_of(data, size);
  std::map<std::string, std::string, std::less<>> env;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::string_view value = bubble::fuzz::next_part(rest, '\n');
    const std::string_view name = bubble::fuzz::next_part(value, '=');
    env[std::string(name)] = std::string(value);
  }
  const bubble::testing::EnvLookup lookup =
      [&env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  TestPlan plan;
  try {
    plan = TestPlan::from_environment(lookup);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  check_plan(plan, env, text);
  return 0;
}
