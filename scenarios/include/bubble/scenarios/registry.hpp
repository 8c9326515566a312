#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace bubble::scenarios {

// How to run a scenario suite: how many generated cases, from which seed.
struct SuiteOptions {
  int cases = 1000;        // RapidCheck's max_success: generated cases per property.
  std::uint64_t seed = 0;  // RapidCheck's seed; 0: a fresh random one (bubble run prints it).
  bool verbose = false;    // Print each property's RapidCheck report, not only failures.
};

// The outcome of one suite: how many properties held and failed, and a report for each failure
// that includes the line that reproduces it.
struct SuiteResult {
  int properties_passed = 0;
  int properties_failed = 0;
  std::vector<std::string> failures;
};

// A named suite of properties, run by `bubble run <name>`.
struct ScenarioSuite {
  std::string name;
  std::string description;
  std::function<SuiteResult(const SuiteOptions&, std::ostream& log)> run;
};

// Every scenario suite, in the order `bubble list` prints them.
const std::vector<ScenarioSuite>& all_suites();

}  // namespace bubble::scenarios
