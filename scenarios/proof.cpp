#include <bubble/scenarios/proof.hpp>

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bubble::scenarios {

ProofOutcome prove(const Proof& proof, std::uint32_t bound, TreeShard shard,
                   const std::function<void(std::uint64_t)>& progress, Reduction reduction) {
  ProofOutcome outcome;
  outcome.bound = bound;
  std::vector<Decision> decisions;
  RunDependencies dependencies;
  for (std::size_t w = 0; w < proof.workloads; ++w) {
    if (w % shard.total != shard.index) continue;
    ++outcome.workloads;
    ScheduleTree tree(bound, {}, reduction);
    while (const std::optional<Strategy> strategy = tree.next()) {
      decisions.clear();
      dependencies.clear();
      Options options;
      options.strategy = *strategy;
      options.decisions = &decisions;
      if (reduction == Reduction::dpor) options.dependencies = &dependencies;
      ++outcome.schedules;
      try {
        proof.run(w, options);
        tree.record(decisions, &dependencies);
      } catch (const std::exception& e) {
        outcome.failed = true;
        outcome.failed_workload = w;
        outcome.failed_strategy = strategy->to_string();
        outcome.message = e.what();
        return outcome;
      }
    }
    if (progress) progress(outcome.schedules);
  }
  outcome.certificate = certificate_line(shard, outcome.schedules, bound, 0);
  return outcome;
}

}  // namespace bubble::scenarios
