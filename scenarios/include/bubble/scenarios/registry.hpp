#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <bubble/schedule_tree.hpp>

namespace bubble::scenarios {

// One failed case to replay instead of running a suite: the property, by name, and RapidCheck's
// reproduce string of its shrunk case (PropertyFailure::reproduce).
struct CaseReplay {
  std::string property;
  std::string reproduce;
};

// How to run a scenario suite: how many generated cases, from which seed.
struct SuiteOptions {
  int cases = 1000;        // RapidCheck's max_success: generated cases per property.
  std::uint64_t seed = 0;  // RapidCheck's seed; 0: a fresh random one (bubble run prints it).
  bool verbose = false;    // Print each property's RapidCheck report, not only failures.
  // Show a progress line (rewritten in place with a carriage return) while a property runs; for
  // terminals only.
  bool progress = false;
  // If set, only this property runs, once, on the case the reproduce string describes; the other
  // properties of the suite are skipped (neither passed nor failed).
  std::optional<CaseReplay> replay{};
  // Record the trace of a failed case's bubble run (PropertyFailure::trace_text / trace_chrome).
  bool trace = false;
  // For the proofs suite: the preemption bound of every proof's search (nullopt: each proof's
  // own default) and the shard of their workloads to search (see prove() in proof.hpp).
  std::optional<std::uint32_t> exhaustive{};
  TreeShard shard{};
  // For the proofs suite: whether each search prunes by partial-order reduction.
  Reduction reduction = Reduction::dpor;
};

// How one property ended.
struct PropertyOutcome {
  std::string property;
  bool passed = false;
  int cases = 0;  // Generated cases that passed before the end (all of them on success); for a
                  // proof, the workloads searched.
  double seconds = 0.0;  // Wall time the check took, for reports only.
  // For a proof that held: its certificate ("bubble: complete: ..."); otherwise empty.
  std::string certificate{};
};

// A failed property, with everything needed to replay its shrunk case (`bubble replay`).
struct PropertyFailure {
  std::string suite;
  std::string property;
  std::uint64_t seed = 0;  // The RapidCheck seed of the run that found it.
  int cases = 0;           // SuiteOptions::cases of that run.
  // RapidCheck's reproduce string: RC_PARAMS="reproduce=<it>" replays the shrunk case.
  std::string reproduce;
  // The strategy that replays the failing bubble run inside the case ("choices:0,1,0",
  // "random:7"); empty when the case failed outside any bubble run.
  std::string schedule;
  // The counterexample (each generated value, "<type>:\n<value>\n\n") and RapidCheck's
  // description of the failure. Nothing in it depends on the process: replaying the case gives
  // the same text, byte for byte.
  std::string message;
  // The trace of the failing bubble run, when SuiteOptions::trace was set and the run ended with
  // a bubble::RunFailure; otherwise empty, and trace_note says why.
  std::string trace_text;
  std::string trace_chrome;
  std::string trace_note;
};

// The outcome of one suite: how many properties held and failed, and a report for each failure
// that includes the line that reproduces it.
struct SuiteResult {
  int properties_passed = 0;
  int properties_failed = 0;
  std::vector<std::string> failures;
  std::vector<PropertyOutcome> properties;  // Every property checked, in order.
  std::vector<PropertyFailure> failed;      // Every failed property, in order.
};

// A named suite of properties, run by `bubble run <name>`.
struct ScenarioSuite {
  std::string name;
  std::string description;
  std::function<SuiteResult(const SuiteOptions&, std::ostream& log)> run;
  // False for suites that only `bubble run <name>` runs (the known-bad exhibits).
  bool in_default_run = true;
};

// Every scenario suite, in the order `bubble list` prints them: the default run's suites first,
// then the others.
const std::vector<ScenarioSuite>& all_suites();

}  // namespace bubble::scenarios
