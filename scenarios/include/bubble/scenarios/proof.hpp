#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <bubble/bubble.hpp>
#include <bubble/schedule_tree.hpp>

// Proofs within a bound: a claim checked on every workload of a small configuration, each under
// every schedule with at most k preemptions (bubble::ScheduleTree), instead of on sampled ones.
namespace bubble::scenarios {

// One claim and the finite set of workloads it is proven on.
struct Proof {
  // The claim, as the report names it ("the rate limiter admits at most n per window").
  std::string name;
  // What "every workload" means here, in a sentence, for the report.
  std::string configuration;
  // How many workloads the configuration has; they are numbered 0 .. workloads - 1.
  std::size_t workloads = 0;
  // The bound of `bubble run proofs` when no --exhaustive is given.
  std::uint32_t default_bound = 2;
  // Workload i, as a line of text (for a failure report).
  std::function<std::string(std::size_t)> describe;
  // Runs workload i once in a bubble with `options` (its strategy and decisions are the search's)
  // and throws a std::exception whose message says what broke when the claim does not hold in
  // that run (a failed run of the bubble included).
  std::function<void(std::size_t, const Options&)> run;
};

// What a search found.
struct ProofOutcome {
  std::size_t workloads = 0;    // The workloads searched (the shard's).
  std::uint64_t schedules = 0;  // The runs of those workloads' searches, the failing one included.
  std::uint32_t bound = 0;
  bool failed = false;
  // For a failure: the workload, the strategy that replays its failing run, and what broke.
  std::size_t failed_workload = 0;
  std::string failed_strategy;
  std::string message;
  // Without a failure: the certificate (bubble::certificate_line of the schedules run).
  std::string certificate;
};

// Runs every workload of `proof` that belongs to `shard` (workload i belongs to shard i % total)
// under every schedule with at most `bound` preemptions, in order, and stops at the first run that
// fails, pruning by partial-order reduction unless `reduction` is Reduction::none. `progress`, if
// set, is called after each workload with the schedules run so far. A
// workload whose body is not deterministic ends the search with a failure saying so.
ProofOutcome prove(const Proof& proof, std::uint32_t bound, TreeShard shard,
                   const std::function<void(std::uint64_t schedules)>& progress = {},
                   Reduction reduction = Reduction::dpor);

}  // namespace bubble::scenarios
