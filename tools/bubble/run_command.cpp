// `bubble list` and `bubble run`: the scenario suites.
#include <bubble/scenarios/property.hpp>
#include <bubble/scenarios/registry.hpp>
#include <bubble/version.hpp>

#include <fmt/core.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"

namespace bubble::cli {
namespace {

const scenarios::ScenarioSuite* find_suite(const std::string& name) {
  for (const auto& suite : scenarios::all_suites()) {
    if (suite.name == name) return &suite;
  }
  return nullptr;
}

void print_suites() {
  const auto& suites = scenarios::all_suites();
  fmt::print("bubble {}\nscenario suites ({}):\n", kVersion, suites.size());
  for (const auto& suite : suites) fmt::print("  {:<24} {}\n", suite.name, suite.description);
}

}  // namespace

void add_list_command(CLI::App& app, int& exit_code) {
  auto* list = app.add_subcommand("list", "Print the version and the scenario suites");
  list->callback([&exit_code] {
    print_suites();
    exit_code = 0;
  });
}

void add_run_command(CLI::App& app, int& exit_code) {
  struct Args {
    std::vector<std::string> names;
    scenarios::SuiteOptions options;
  };
  auto args = std::make_shared<Args>();
  auto* run =
      app.add_subcommand("run", "Run scenario suites (all of them by default) and summarize");
  run->add_option("suites", args->names, "Suites to run, by name (see `bubble list`)");
  run->add_option("--cases", args->options.cases, "Generated cases per property")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run->add_option("--seed", args->options.seed, "RapidCheck seed (0: a fresh one, printed)");
  run->add_flag("--verbose", args->options.verbose, "Print every property's report");
  run->callback([args, &exit_code] {
    std::vector<const scenarios::ScenarioSuite*> selected;
    if (args->names.empty()) {
      for (const auto& suite : scenarios::all_suites()) selected.push_back(&suite);
    }
    for (const auto& name : args->names) {
      const auto* suite = find_suite(name);
      if (suite == nullptr) {
        fmt::print(stderr, "bubble run: unknown suite '{}' (see `bubble list`)\n", name);
        exit_code = 2;
        return;
      }
      selected.push_back(suite);
    }
    print_suites();
    // One seed for the whole run, printed, so that `--seed` reproduces any failure. RapidCheck
    // prints its own configuration when it starts; give it the same seed so the two agree.
    args->options.seed = scenarios::effective_seed(args->options);
    fmt::print("seed: {}\n", args->options.seed);
    if (std::getenv("RC_PARAMS") == nullptr) {
      ::setenv("RC_PARAMS", fmt::format("seed={}", args->options.seed).c_str(), 0);
    }
    int passed = 0;
    int failed = 0;
    for (const auto* suite : selected) {
      fmt::print("\n== {} ==\n", suite->name);
      std::cout.flush();
      const auto result = suite->run(args->options, std::cout);
      passed += result.properties_passed;
      failed += result.properties_failed;
      for (const auto& failure : result.failures) fmt::print("FAILED: {}\n", failure);
      fmt::print("{}: {} properties passed, {} failed\n", suite->name, result.properties_passed,
                 result.properties_failed);
    }
    fmt::print("\nsummary: {} suites, {} properties passed, {} failed\n", selected.size(), passed,
               failed);
    exit_code = failed == 0 ? 0 : 1;
  });
}

}  // namespace bubble::cli
