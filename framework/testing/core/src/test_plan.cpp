#include <bubble/testing/test_plan.hpp>

#include <charconv>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace bubble::testing {
namespace {

// The largest preemption bound BUBBLE_EXHAUSTIVE accepts (ScheduleTree counts in 32 bits).
constexpr std::uint64_t kMaxPreemptionBound = std::numeric_limits<std::uint32_t>::max();

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

// Set and non-empty.
std::optional<std::string> get(const EnvLookup& env, std::string_view name) {
  std::optional<std::string> v = env(name);
  if (v && trim(*v).empty()) return std::nullopt;
  return v;
}

// The GoogleTest shard variables taken out of the environment when
// BUBBLE_SCHEDULE_SHARDS_FROM_GTEST=1 (see test_plan.hpp), so that gtest does not shard tests.
struct StolenGtestShards {
  std::optional<std::string> index;
  std::optional<std::string> total;
};

std::optional<std::string> getenv_string(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

const StolenGtestShards& stolen_gtest_shards() {
  // Runs during static initialisation (see kStealAtStartup below) or on first use, before
  // RUN_ALL_TESTS reads the variables, while the process still has a single thread.
  static const StolenGtestShards stolen = [] {
    StolenGtestShards s;
    const std::optional<std::string> opt_in = getenv_string("BUBBLE_SCHEDULE_SHARDS_FROM_GTEST");
    if (!opt_in || trim(*opt_in) != "1") return s;
    // Only an exploration or an exhaustive search splits schedules; otherwise gtest keeps
    // sharding the tests.
    const std::optional<std::string> schedules = getenv_string("BUBBLE_SCHEDULES");
    const std::optional<std::string> exhaustive = getenv_string("BUBBLE_EXHAUSTIVE");
    const std::optional<std::string> strategy = getenv_string("BUBBLE_STRATEGY");
    const bool searching =
        (schedules && !trim(*schedules).empty()) || (exhaustive && !trim(*exhaustive).empty());
    if (!searching || (strategy && !trim(*strategy).empty())) return s;
    s.index = getenv_string("GTEST_SHARD_INDEX");
    s.total = getenv_string("GTEST_TOTAL_SHARDS");
    ::unsetenv("GTEST_SHARD_INDEX");
    ::unsetenv("GTEST_TOTAL_SHARDS");
    return s;
  }();
  return stolen;
}

[[maybe_unused]] const bool kStealAtStartup = (stolen_gtest_shards(), true);

}  // namespace

EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const StolenGtestShards& stolen = stolen_gtest_shards();
    if (name == "GTEST_SHARD_INDEX" && stolen.index) return stolen.index;
    if (name == "GTEST_TOTAL_SHARDS" && stolen.total) return stolen.total;
    return getenv_string(std::string(name).c_str());
  };
}

std::uint64_t parse_env_uint(std::string_view name, std::string_view text) {
  const std::string_view t = trim(text);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc{} || end != t.data() + t.size()) {
    throw std::invalid_argument("bubble::testing: " + std::string(name) +
                                " must be an unsigned decimal integer, got " + quoted(text));
  }
  return value;
}

Strategy exploration_strategy(std::uint64_t base_seed, std::uint64_t k) {
  const std::uint64_t seed = base_seed + k;  // Unsigned: wraps around.
  return k % 2 == 0 ? Strategy::random(seed) : Strategy::pct(seed, 3);
}

TestPlan TestPlan::single(Strategy strategy) {
  TestPlan plan;
  plan.single_ = std::move(strategy);
  return plan;
}

TestPlan TestPlan::explore(std::uint64_t schedules, std::uint64_t base_seed, ScheduleShard shard) {
  if (schedules == 0) {
    throw std::invalid_argument("bubble::testing: the number of schedules must be >= 1, got 0");
  }
  if (shard.total == 0) {
    throw std::invalid_argument("bubble::testing: the total number of shards must be >= 1, got 0");
  }
  if (shard.index >= shard.total) {
    throw std::invalid_argument("bubble::testing: the shard index must be < the total number of " +
                                std::string("shards (") + std::to_string(shard.total) + "), got " +
                                std::to_string(shard.index));
  }
  TestPlan plan;
  plan.exploring_ = true;
  plan.schedules_ = schedules;
  plan.base_seed_ = base_seed;
  plan.shard_ = shard;
  return plan;
}

namespace {

// The schedule shard the variables ask for (see test_plan.hpp), for a search of `what` ("100
// schedules"); notes go to `notes`. Throws std::invalid_argument as from_environment does.
ScheduleShard parse_shard(const EnvLookup& env, bool shards_from_gtest, const std::string& what,
                          std::vector<std::string>& notes) {
  const std::optional<std::string> shard_index = get(env, "BUBBLE_SCHEDULE_SHARD_INDEX");
  const std::optional<std::string> shard_total = get(env, "BUBBLE_SCHEDULE_TOTAL_SHARDS");
  const std::optional<std::string> gtest_index = get(env, "GTEST_SHARD_INDEX");
  const std::optional<std::string> gtest_total = get(env, "GTEST_TOTAL_SHARDS");
  ScheduleShard shard;
  if (shard_index || shard_total) {
    if (!shard_index || !shard_total) {
      throw std::invalid_argument(
          "bubble::testing: BUBBLE_SCHEDULE_SHARD_INDEX and BUBBLE_SCHEDULE_TOTAL_SHARDS must be "
          "set together, got only " +
          std::string(shard_index ? "BUBBLE_SCHEDULE_SHARD_INDEX=" + *shard_index
                                  : "BUBBLE_SCHEDULE_TOTAL_SHARDS=" + *shard_total));
    }
    shard.index = parse_env_uint("BUBBLE_SCHEDULE_SHARD_INDEX", *shard_index);
    shard.total = parse_env_uint("BUBBLE_SCHEDULE_TOTAL_SHARDS", *shard_total);
    if (shard.total == 0) {
      throw std::invalid_argument(
          "bubble::testing: BUBBLE_SCHEDULE_TOTAL_SHARDS must be >= 1, got " +
          quoted(*shard_total));
    }
    if (shard.index >= shard.total) {
      throw std::invalid_argument(
          "bubble::testing: BUBBLE_SCHEDULE_SHARD_INDEX must be < "
          "BUBBLE_SCHEDULE_TOTAL_SHARDS=" +
          std::to_string(shard.total) + ", got " + quoted(*shard_index));
    }
    if (shards_from_gtest) {
      notes.push_back(
          "bubble: BUBBLE_SCHEDULE_SHARD_INDEX/TOTAL_SHARDS are set: they split the schedules, "
          "not GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS");
    }
  } else if (shards_from_gtest && (gtest_index || gtest_total)) {
    if (!gtest_index || !gtest_total) {
      throw std::invalid_argument(
          "bubble::testing: with BUBBLE_SCHEDULE_SHARDS_FROM_GTEST=1, GTEST_SHARD_INDEX and "
          "GTEST_TOTAL_SHARDS must be set together");
    }
    shard.index = parse_env_uint("GTEST_SHARD_INDEX", *gtest_index);
    shard.total = parse_env_uint("GTEST_TOTAL_SHARDS", *gtest_total);
    if (shard.total == 0 || shard.index >= shard.total) {
      throw std::invalid_argument("bubble::testing: GTEST_SHARD_INDEX=" + quoted(*gtest_index) +
                                  " must be < GTEST_TOTAL_SHARDS=" + quoted(*gtest_total));
    }
  } else if (gtest_index || gtest_total) {
    notes.push_back(
        "bubble: GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS shard the tests; each test explores all of "
        "its " +
        what +
        " (set BUBBLE_SCHEDULE_SHARD_INDEX/BUBBLE_SCHEDULE_TOTAL_SHARDS, or "
        "BUBBLE_SCHEDULE_SHARDS_FROM_GTEST=1, to split the schedules instead)");
  }

  return shard;
}

}  // namespace

TestPlan TestPlan::exhaustive(std::uint32_t max_preemptions, ScheduleShard shard) {
  if (shard.total == 0 || shard.index >= shard.total) {
    throw std::invalid_argument("bubble::testing: shard " + std::to_string(shard.index) + "/" +
                                std::to_string(shard.total) + " does not exist");
  }
  TestPlan plan;
  plan.exploring_ = true;
  plan.exhaustive_ = max_preemptions;
  plan.shard_ = shard;
  return plan;
}

TestPlan TestPlan::from_environment(const EnvLookup& env) {
  TestPlan plan = parse_runs(env);
  if (const std::optional<std::string> reduction = get(env, "BUBBLE_REDUCTION");
      reduction && !plan.exhaustive_) {
    plan.notes_.push_back("bubble: ignoring BUBBLE_REDUCTION=" + *reduction +
                          " because BUBBLE_EXHAUSTIVE is not set");
  }
  plan.set_trace_path(get(env, "BUBBLE_TRACE"));
  plan.set_checkpoint_path(get(env, "BUBBLE_CHECKPOINT"));
  return plan;
}

TestPlan TestPlan::parse_runs(const EnvLookup& env) {
  const std::optional<std::string> strategy = get(env, "BUBBLE_STRATEGY");
  const std::optional<std::string> seed = get(env, "BUBBLE_SEED");
  const std::optional<std::string> schedules = get(env, "BUBBLE_SCHEDULES");
  const std::optional<std::string> shard_index = get(env, "BUBBLE_SCHEDULE_SHARD_INDEX");
  const std::optional<std::string> shard_total = get(env, "BUBBLE_SCHEDULE_TOTAL_SHARDS");
  const std::optional<std::string> from_gtest = get(env, "BUBBLE_SCHEDULE_SHARDS_FROM_GTEST");
  const std::optional<std::string> gtest_index = get(env, "GTEST_SHARD_INDEX");
  const std::optional<std::string> gtest_total = get(env, "GTEST_TOTAL_SHARDS");
  const std::optional<std::string> exhaustive = get(env, "BUBBLE_EXHAUSTIVE");

  if (from_gtest && trim(*from_gtest) != "1" && trim(*from_gtest) != "0") {
    throw std::invalid_argument(
        "bubble::testing: BUBBLE_SCHEDULE_SHARDS_FROM_GTEST must be 0 or 1, got " +
        quoted(*from_gtest));
  }
  const bool shards_from_gtest = from_gtest && trim(*from_gtest) == "1";

  if (strategy) {
    TestPlan plan;
    try {
      plan = single(Strategy::parse(*strategy));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("bubble::testing: BUBBLE_STRATEGY=" + quoted(*strategy) +
                                  " is not a strategy: " + e.what());
    }
    for (const auto& [name, value] :
         {std::pair{"BUBBLE_SEED", seed}, std::pair{"BUBBLE_SCHEDULES", schedules},
          std::pair{"BUBBLE_EXHAUSTIVE", exhaustive},
          std::pair{"BUBBLE_SCHEDULE_SHARD_INDEX", shard_index},
          std::pair{"BUBBLE_SCHEDULE_TOTAL_SHARDS", shard_total}}) {
      if (value) {
        plan.notes_.push_back(std::string("bubble: ignoring ") + name + "=" + *value +
                              " because BUBBLE_STRATEGY=" + *strategy + " is set");
      }
    }
    return plan;
  }

  if (exhaustive) {
    const std::uint64_t bound = parse_env_uint("BUBBLE_EXHAUSTIVE", *exhaustive);
    if (bound > kMaxPreemptionBound) {
      throw std::invalid_argument(
          "bubble::testing: BUBBLE_EXHAUSTIVE must be a preemption bound "
          "<= " +
          std::to_string(kMaxPreemptionBound) + ", got " + quoted(*exhaustive));
    }
    std::vector<std::string> notes;
    const ScheduleShard shard = parse_shard(env, shards_from_gtest, "schedules", notes);
    if (shard.total > kMaxPreemptionBound) {
      throw std::invalid_argument("bubble::testing: an exhaustive search has at most " +
                                  std::to_string(kMaxPreemptionBound) + " shards, got " +
                                  std::to_string(shard.total));
    }
    TestPlan plan = TestPlan::exhaustive(static_cast<std::uint32_t>(bound), shard);
    plan.notes_ = std::move(notes);
    if (const std::optional<std::string> reduction = get(env, "BUBBLE_REDUCTION")) {
      const std::string_view value = trim(*reduction);
      if (value == "none") {
        plan.reduction_ = Reduction::none;
      } else if (value != "dpor") {
        throw std::invalid_argument("bubble::testing: BUBBLE_REDUCTION must be dpor or none, got " +
                                    quoted(*reduction));
      }
    }
    for (const auto& [name, value] :
         {std::pair{"BUBBLE_SEED", seed}, std::pair{"BUBBLE_SCHEDULES", schedules}}) {
      if (value) {
        plan.notes_.push_back(std::string("bubble: ignoring ") + name + "=" + *value +
                              " because BUBBLE_EXHAUSTIVE=" + *exhaustive + " is set");
      }
    }
    return plan;
  }

  std::optional<std::uint64_t> seed_value;
  if (seed) seed_value = parse_env_uint("BUBBLE_SEED", *seed);

  if (!schedules) {
    TestPlan plan = seed_value ? single(Strategy::random(*seed_value)) : TestPlan{};
    if (shard_index || shard_total) {
      plan.notes_.push_back(
          "bubble: ignoring BUBBLE_SCHEDULE_SHARD_INDEX/BUBBLE_SCHEDULE_TOTAL_SHARDS because "
          "BUBBLE_SCHEDULES is not set");
    }
    return plan;
  }

  const std::uint64_t n = parse_env_uint("BUBBLE_SCHEDULES", *schedules);
  if (n == 0) {
    throw std::invalid_argument("bubble::testing: BUBBLE_SCHEDULES must be >= 1, got " +
                                quoted(*schedules));
  }

  std::vector<std::string> notes;
  const ScheduleShard shard =
      parse_shard(env, shards_from_gtest, std::to_string(n) + " schedules", notes);
  TestPlan plan = explore(n, seed_value.value_or(0), shard);
  plan.notes_ = std::move(notes);
  return plan;
}

std::uint64_t TestPlan::size() const noexcept {
  if (!exploring_ || exhaustive_) return 1;
  if (schedules_ <= shard_.index) return 0;
  // The k < schedules_ with k % total == index: index, index + total, ..., without rounding up
  // by adding total - 1, which would wrap around 2^64.
  return (schedules_ - 1 - shard_.index) / shard_.total + 1;
}

std::uint64_t TestPlan::schedule_index(std::uint64_t i) const {
  if (i >= size()) {
    throw std::out_of_range("bubble::testing::TestPlan: run index must be < " +
                            std::to_string(size()) + ", got " + std::to_string(i));
  }
  return exploring_ ? shard_.index + i * shard_.total : 0;
}

Strategy TestPlan::strategy(std::uint64_t i) const {
  const std::uint64_t k = schedule_index(i);
  return exploring_ ? exploration_strategy(base_seed_, k) : single_;
}

std::string TestPlan::describe() const {
  if (!exploring_) return single_.to_string();
  if (exhaustive_) {
    std::string out = "every schedule with at most " + std::to_string(*exhaustive_) +
                      (*exhaustive_ == 1 ? " preemption" : " preemptions");
    if (shard_.total > 1) {
      out += " (shard " + std::to_string(shard_.index) + "/" + std::to_string(shard_.total) + ")";
    }
    return out;
  }
  std::string out;
  if (shard_.total > 1) {
    out = std::to_string(size()) + " of " + std::to_string(schedules_) + " schedules (shard " +
          std::to_string(shard_.index) + "/" + std::to_string(shard_.total) + ")";
  } else {
    out = std::to_string(schedules_) + (schedules_ == 1 ? " schedule" : " schedules");
  }
  return out + ", random/pct seeds " + std::to_string(base_seed_) + ".." +
         std::to_string(base_seed_ + schedules_ - 1);
}

}  // namespace bubble::testing
