#include <bubble/testing/case.hpp>
#include <bubble/testing/case_search.hpp>
#include <bubble/testing/hosted_test.hpp>
#include <bubble/testing/property.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "googletest_host.hpp"

namespace bubble::testing {
namespace {

// "every schedule with at most 2 preemptions", as BUBBLE_TEST's messages say it.
std::string bound_text(std::uint32_t bound) {
  return TestPlan::exhaustive(bound).describe();
}

// The environment as properties read it, with its notes printed once per process.
// BUBBLE_STRATEGY, BUBBLE_SCHEDULES and BUBBLE_SEED choose the runs of a BUBBLE_TEST and do not
// apply to a property, whose schedule is part of its case; BUBBLE_CHECKPOINT keeps one search,
// and a property runs one per case; the schedule shards split a search, and apply only under
// BUBBLE_EXHAUSTIVE.
TestPlan property_plan() {
  const EnvLookup env = process_environment();
  std::vector<std::string> notes;
  // Schedule shards split a search; without one, each case runs under one generated schedule.
  const std::optional<std::string> exhaustive = env("BUBBLE_EXHAUSTIVE");
  const bool searching = exhaustive && !exhaustive->empty();
  const std::optional<std::string> shard_index = env("BUBBLE_SCHEDULE_SHARD_INDEX");
  const std::optional<std::string> shard_total = env("BUBBLE_SCHEDULE_TOTAL_SHARDS");
  if (!searching && (shard_index || shard_total)) {
    std::string set;
    if (shard_index) set = "BUBBLE_SCHEDULE_SHARD_INDEX=" + *shard_index;
    if (shard_total) {
      set += (set.empty() ? "" : " and ") + std::string("BUBBLE_SCHEDULE_TOTAL_SHARDS=") +
             *shard_total;
    }
    notes.push_back("bubble: properties ignore " + set +
                    " without BUBBLE_EXHAUSTIVE: each case runs under one generated schedule");
  }
  TestPlan plan =
      TestPlan::from_environment([&](std::string_view name) -> std::optional<std::string> {
        if (!searching &&
            (name == "BUBBLE_SCHEDULE_SHARD_INDEX" || name == "BUBBLE_SCHEDULE_TOTAL_SHARDS")) {
          return std::nullopt;
        }
        if (name == "BUBBLE_STRATEGY" || name == "BUBBLE_SCHEDULES" || name == "BUBBLE_SEED") {
          const std::optional<std::string> value = env(name);
          if (value && !value->empty()) {
            notes.push_back("bubble: properties ignore " + std::string(name) + "=" + *value +
                            ": the schedule is part of each case");
          }
          return std::nullopt;
        }
        return env(name);
      });
  notes.insert(notes.end(), plan.notes().begin(), plan.notes().end());
  if (plan.exhaustive_bound() && plan.checkpoint_path()) {
    notes.push_back("bubble: properties ignore BUBBLE_CHECKPOINT=" + *plan.checkpoint_path() +
                    ": the search of each case starts over");
  }
  print_notes(notes);
  return plan;
}

// True when RC_PARAMS fixes RapidCheck's seed, so that every process generates the same cases.
bool rapidcheck_seed_is_fixed() {
  const char* params = std::getenv("RC_PARAMS");
  if (params == nullptr) return false;
  const std::string_view text(params);
  for (std::size_t at = text.find("seed="); at != std::string_view::npos;
       at = text.find("seed=", at + 1)) {
    if (at == 0 || text[at - 1] == ' ') return true;
  }
  return false;
}

// The searches of the cases of each GoogleTest test that is running or ran, added up, and the
// listener that prints their certificate when the test ends without a failure.
struct Tally {
  std::string test;
  std::uint64_t cases = 0;
  std::uint64_t schedules = 0;
  std::uint32_t bound = 0;
  TreeShard shard;
};

std::mutex tally_mutex;
std::map<const ::testing::TestInfo*, Tally> tallies;

class CertificatePrinter final : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& info) override {
    std::optional<Tally> tally;
    {
      const std::lock_guard<std::mutex> lock(tally_mutex);
      const auto it = tallies.find(&info);
      if (it == tallies.end()) return;
      tally = it->second;
      tallies.erase(it);
    }
    const ::testing::TestResult* result = info.result();
    if (result == nullptr || result->Failed() || result->Skipped()) return;
    std::cout << "bubble: " << tally->test << ": " << tally->cases
              << (tally->cases == 1 ? " generated case" : " generated cases") << ", each under "
              << bound_text(tally->bound) << "\n"
              << certificate_line(tally->shard, tally->schedules, tally->bound, 0) << "\n"
              << std::flush;
  }
};

void add_to_tally(std::uint64_t schedules, std::uint32_t bound, TreeShard shard) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return;
  static const bool installed = [] {
    // The listeners take ownership.
    ::testing::UnitTest::GetInstance()->listeners().Append(new CertificatePrinter);
    return true;
  }();
  (void)installed;
  const std::lock_guard<std::mutex> lock(tally_mutex);
  Tally& tally = tallies[info];
  tally.test = std::string(info->test_suite_name()) + "." + info->name();
  ++tally.cases;
  tally.schedules += schedules;
  tally.bound = bound;
  tally.shard = shard;
}

// Skips the running GoogleTest test with `message`, reported at the test's file and line.
void skip_test(const std::string& message) {
  detail::GoogleTestHost host;
  host.report_skip(host.test_file(), host.test_line(), message);
}

// Called while the failure of schedule `index` of a search within `bound` (run with `strategy`)
// is being handled: throws it on, saying which schedule failed (see search_case).
[[noreturn]] void rethrow_schedule_failure(std::uint64_t index, std::uint32_t bound,
                                           const Strategy& strategy) {
  const std::string which = "bubble: schedule " + std::to_string(index) +
                            " of the exhaustive search of " + bound_text(bound) + " failed";
  try {
    throw;
  } catch (const CaseFailure& failure) {
    throw CaseFailure(which + ":\n" + failure.what());
  } catch (...) {
    RC_LOG() << which << "\n" << kCaseScheduleLabel << strategy.to_string() << "\n";
    throw;
  }
}

}  // namespace

CaseSearch search_case(const std::function<void(Runtime&)>& root, std::uint32_t bound,
                       TreeShard shard, Reduction reduction, const Options& options) {
  ScheduleTree tree(bound, shard, reduction);
  std::vector<Decision> decisions;
  RunDependencies dependencies;
  Options run_options = options;
  run_options.replay.reset();
  run_options.decisions = &decisions;
  run_options.dependencies = reduction == Reduction::dpor ? &dependencies : nullptr;
  while (const std::optional<Strategy> strategy = tree.next()) {
    decisions.clear();
    dependencies.clear();
    run_options.strategy = *strategy;
    try {
      (void)run_property(run_options, root);
    } catch (...) {
      // The failure of another shard's schedule, run only to learn the tree's shape, is that
      // shard's to report: the search goes on.
      if (tree.owns(decisions)) rethrow_schedule_failure(tree.schedules() + 1, bound, *strategy);
    }
    tree.record(decisions, &dependencies);
  }
  return {tree.schedules(), tree.certificate(0)};
}

void run_case(const std::function<void(Runtime&)>& root, const Options& options,
              gen::ScheduleShape shape) {
  const TestPlan plan = property_plan();
  if (!plan.exhaustive_bound()) {
    (void)run_with_generated_schedule(root, options, shape);
    return;
  }
  const TreeShard shard{static_cast<std::uint32_t>(plan.shard().index),
                        static_cast<std::uint32_t>(plan.shard().total)};
  if (shard.total > 1 && !rapidcheck_seed_is_fixed()) {
    throw std::invalid_argument(
        "bubble::testing: BUBBLE_SCHEDULE_TOTAL_SHARDS=" + std::to_string(shard.total) +
        " splits the search of each case of a property, so every shard must generate the same "
        "cases: fix RapidCheck's seed, e.g. RC_PARAMS=\"seed=1\", the same on every shard");
  }
  const CaseSearch search =
      search_case(root, *plan.exhaustive_bound(), shard, plan.reduction(), options);
  add_to_tally(search.schedules, *plan.exhaustive_bound(), shard);
}

namespace detail {

bool skip_unsearchable_property() {
  const TestPlan plan = property_plan();
  if (!plan.exhaustive_bound()) return false;
  if (!::testing::Test::IsSkipped()) {
    skip_test(
        "bubble: BUBBLE_EXHAUSTIVE=" + std::to_string(*plan.exhaustive_bound()) +
        ": not searched: this BUBBLE_PROP draws its inputs inside the bubble, where each run "
        "of a search would draw new ones. Declare them as parameters, "
        "BUBBLE_PROP(Suite, Name, (int n, std::vector<int> v)), or draw them before calling "
        "bubble::testing::run_case in a RapidCheck property, to search every schedule of each "
        "case.");
  }
  return true;
}

}  // namespace detail

}  // namespace bubble::testing
