#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <bubble/schedule_tree.hpp>
#include <bubble/strategy.hpp>

// The runs a BUBBLE_TEST performs, as configured by environment variables.
//
// Environment variables (read once per test, when it starts):
//
//   BUBBLE_STRATEGY=<strategy>   Run the body exactly once with this strategy, in the textual form
//                                of bubble::Strategy ("fifo", "random:42", "pct:7:3",
//                                "choices:0,2,1"). This is what replay lines set. It takes
//                                precedence over the variables below, which are then ignored
//                                (a note says so).
//   BUBBLE_SEED=<n>              Without BUBBLE_SCHEDULES: run once with random:<n>.
//                                With BUBBLE_SCHEDULES: the first seed explored (default 0).
//   BUBBLE_SCHEDULES=<N>         Explore N schedules (N >= 1): schedule k (0 <= k < N) uses seed
//                                s = BUBBLE_SEED + k and the strategy random:<s> when k is even,
//                                pct:<s>:3:<n> when k is odd, n being the number of steps the
//                                first run of the exploration took (PCT's estimate of a run's
//                                length; TestPlan says pct:<s>:3 and explore() fills in n). The
//                                test stops at the first failing schedule.
//   BUBBLE_SCHEDULE_SHARD_INDEX=<i>, BUBBLE_SCHEDULE_TOTAL_SHARDS=<t>
//                                Split the N schedules of every test over t machines: this process
//                                runs the schedules k with k % t == i. Both or neither must be set,
//                                with 0 <= i < t. A shard that gets no schedule (N <= i) skips the
//                                test visibly (GTEST_SKIP) instead of passing silently.
//   BUBBLE_EXHAUSTIVE=<k>        Run every schedule of the body with at most k preemptions
//                                (bubble::ScheduleTree: iterative context bounding), depth first,
//                                and stop at the first failing one, whose replay line is a
//                                choices strategy. A search that finishes prints its certificate,
//                                "bubble: complete: 1,234 schedules with at most 2 preemptions,
//                                0 failed". Takes precedence over BUBBLE_SCHEDULES and
//                                BUBBLE_SEED (a note says so). The shard variables below split
//                                it into disjoint parts (ScheduleTree's shards) whose
//                                certificates, "bubble: complete: shard 1/4: ...", merge into
//                                the whole one (`bubble certificate merge`). The body must be
//                                deterministic given the picks (see ScheduleTree). Properties
//                                read it through bubble::testing::run_case (case_search.hpp).
//   BUBBLE_REDUCTION=<dpor|none> With BUBBLE_EXHAUSTIVE: dpor (the default) prunes the schedules
//                                that only reorder steps on different objects (partial-order
//                                reduction, see bubble::Reduction); it assumes that threads share
//                                memory only through operations bubble sees (its primitives, the
//                                interposed standard ones, bubble::Atomic and atomics of code
//                                built with bubble::instrument). none runs every schedule within
//                                the bound: for code that shares memory otherwise (plain
//                                std::atomic in code that is not instrumented, data races).
//   BUBBLE_CHECKPOINT=<file>     With BUBBLE_EXHAUSTIVE: keep the search's state in <file>
//                                (ScheduleTree::checkpoint, with the test's name), written every
//                                1,000 schedules and when the search ends; a test whose name and
//                                bound match the file's resumes from it instead of starting over
//                                (a failing schedule is run again first). Meant for one long
//                                search: every test of the process writes the same file.
//   BUBBLE_TRACE=<file>          Record a trace of every run (Options::trace) and write the trace
//                                of the failing run (or, if none fails, of the last run) to <file>
//                                as text and to <file>.json in Chrome's trace format (Perfetto).
//                                Meant for replaying one test: every BUBBLE_TEST of the process
//                                writes to the same files.
//   BUBBLE_FAILURE_FILE=<file>   When a BUBBLE_TEST fails, write a failure file to <file> (JSON:
//                                the test, the failing strategy, the command that reproduces it
//                                and the message; see failure_file_json in explore.hpp), which
//                                `bubble replay <file>` reads. Like BUBBLE_TRACE, shared by every
//                                test of the process: the last failing test's file remains.
//
// With none of them set, the body runs once under fifo, the default strategy. A variable set to
// an empty or blank value counts as unset.
//
// GoogleTest's own GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS shard *tests*: each test runs on exactly
// one shard. Splitting that test's schedules by the same variables would run only 1/t of them and
// the rest on machines that never run the test, so they never split schedules by themselves. They
// are honoured in one of two ways:
//   - by default, gtest shards the tests and every test explores all of its N schedules on the
//     shard that runs it (nothing is lost; the work is spread by test);
//   - with BUBBLE_SCHEDULE_SHARDS_FROM_GTEST=1 (and BUBBLE_SCHEDULES set, BUBBLE_STRATEGY not),
//     the schedules are split by GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS instead, and
//     bubble::testing removes those two variables from the environment before GoogleTest reads
//     them (at static initialisation of a program that contains a BUBBLE_TEST), so that every
//     machine runs every test on its share of the schedules. Plain TEST()s then run on every
//     machine.
// Either way a test cannot silently run zero schedules.
namespace bubble::testing {

// Looks up an environment variable: its value, or nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// The lookup of the process environment (std::getenv), except that GTEST_SHARD_INDEX and
// GTEST_TOTAL_SHARDS, if bubble::testing took them out of the environment at start-up (see
// above), still have their original values. The lookup may be called from any thread.
EnvLookup process_environment();

// Which part of the explored schedules this process runs: schedule k runs here when
// k % total == index.
struct ScheduleShard {
  std::uint64_t index = 0;
  std::uint64_t total = 1;
  friend bool operator==(const ScheduleShard&, const ScheduleShard&) = default;
};

// Parses a decimal unsigned integer for environment variable `name` (surrounding blanks allowed).
// Throws std::invalid_argument naming the variable and the text on anything else.
std::uint64_t parse_env_uint(std::string_view name, std::string_view text);

// The strategy of schedule k of an exploration that starts at `base_seed`: random:<s> for even k,
// pct:<s>:3 for odd k, where s = base_seed + k (wrapping around 2^64).
Strategy exploration_strategy(std::uint64_t base_seed, std::uint64_t k);

// TestPlan is the list of runs one BUBBLE_TEST performs in this process: either one run with a
// given strategy, or this shard's part of an exploration of N schedules. A value type; cheap to
// copy (it does not materialise the list).
class TestPlan {
 public:
  // One run under fifo.
  TestPlan() = default;

  // One run with `strategy`.
  static TestPlan single(Strategy strategy);

  // Every schedule with at most `max_preemptions` preemptions (see ScheduleTree), or this
  // shard's part of them (shard.total <= 2^32 - 1). A shard that does not exist throws
  // std::invalid_argument.
  static TestPlan exhaustive(std::uint32_t max_preemptions, ScheduleShard shard = {});

  // This shard's part of an exploration of `schedules` schedules starting at `base_seed`.
  // schedules == 0, shard.total == 0 or shard.index >= shard.total throw std::invalid_argument.
  static TestPlan explore(std::uint64_t schedules, std::uint64_t base_seed,
                          ScheduleShard shard = {});

  // Reads the variables described above through `env`. Throws std::invalid_argument naming the
  // variable and its value when one is malformed or out of range, or when only one of the two
  // shard variables is set.
  static TestPlan from_environment(const EnvLookup& env);

  // True for an exploration (even of a single schedule) or an exhaustive search, false for a
  // single run.
  bool exploring() const noexcept { return exploring_; }
  // For an exhaustive search, its preemption bound; nullopt otherwise.
  const std::optional<std::uint32_t>& exhaustive_bound() const noexcept { return exhaustive_; }
  // For an exhaustive search, whether it prunes by partial-order reduction (BUBBLE_REDUCTION;
  // Reduction::dpor unless set to none).
  Reduction reduction() const noexcept { return reduction_; }
  void set_reduction(Reduction reduction) noexcept { reduction_ = reduction; }
  // How many runs this process performs (0 only for a shard that has no schedule). For an
  // exhaustive search, whose runs are known only as it goes, 1; strategy() and schedule_index()
  // do not apply to it.
  std::uint64_t size() const noexcept;
  // The index, among all N schedules, of this process's i-th run (i < size()).
  std::uint64_t schedule_index(std::uint64_t i) const;
  // The strategy of this process's i-th run (i < size()); throws std::out_of_range otherwise.
  Strategy strategy(std::uint64_t i) const;

  std::uint64_t schedules() const noexcept { return schedules_; }
  std::uint64_t base_seed() const noexcept { return base_seed_; }
  const ScheduleShard& shard() const noexcept { return shard_; }

  // BUBBLE_TRACE: where to write the trace of the failing (or last) run; nullopt: no trace.
  const std::optional<std::string>& trace_path() const noexcept { return trace_path_; }
  void set_trace_path(std::optional<std::string> path) { trace_path_ = std::move(path); }

  // BUBBLE_CHECKPOINT: where an exhaustive search keeps its state; nullopt: nowhere.
  const std::optional<std::string>& checkpoint_path() const noexcept { return checkpoint_path_; }
  void set_checkpoint_path(std::optional<std::string> path) { checkpoint_path_ = std::move(path); }

  // Remarks worth printing once: variables that were ignored and why.
  const std::vector<std::string>& notes() const noexcept { return notes_; }

  // For a single run, its strategy ("fifo", "random:42"); for an exploration, what this process
  // explores: "100 schedules, random/pct seeds 0..99" or
  // "25 of 100 schedules (shard 1/4), random/pct seeds 0..99"; for an exhaustive search, "every
  // schedule with at most 2 preemptions".
  std::string describe() const;

 private:
  static TestPlan parse_runs(const EnvLookup& env);

  bool exploring_ = false;
  std::optional<std::uint32_t> exhaustive_;
  Reduction reduction_ = Reduction::dpor;
  Strategy single_;
  std::uint64_t schedules_ = 1;
  std::uint64_t base_seed_ = 0;
  ScheduleShard shard_;
  std::optional<std::string> trace_path_;
  std::optional<std::string> checkpoint_path_;
  std::vector<std::string> notes_;
};

}  // namespace bubble::testing
