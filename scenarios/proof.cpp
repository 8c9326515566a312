#include <bubble/scenarios/proof.hpp>

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bubble::scenarios {

ProofOutcome prove(const Proof& proof, std::uint32_t bound, TreeShard shard,
                   const std::function<void(std::uint64_t)>& progress) {
  ProofOutcome outcome;
  outcome.bound = bound;
  std::vector<Decision> decisions;
  for (std::size_t w = 0; w < proof.workloads; ++w) {
    if (w % shard.total != shard.index) continue;
    ++outcome.workloads;
    ScheduleTree tree(bound);
    while (const std::optional<Strategy> strategy = tree.next()) {
      decisions.clear();
      Options options;
      options.strategy = *strategy;
      options.decisions = &decisions;
      ++outcome.schedules;
      try {
        proof.run(w, options);
        tree.record(decisions);
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
