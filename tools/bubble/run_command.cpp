// `bubble list` and `bubble run`: the scenario suites.
#include <bubble/scenarios/property.hpp>
#include <bubble/scenarios/registry.hpp>
#include <bubble/sim/parse.hpp>
#include <bubble/version.hpp>

#include <fmt/core.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "failure_file.hpp"
#include "option_error.hpp"

namespace bubble::cli {
namespace {

void print_suites() {
  const auto& suites = scenarios::all_suites();
  fmt::print("bubble {}\nscenario suites ({}):\n", kVersion, suites.size());
  for (const auto& suite : suites) {
    fmt::print("  {:<24} {}\n", suite.name, suite.description);
  }
}

constexpr const char* kRunFooter = R"(Examples:
  bubble run                              every suite of the default run, fresh seed
  bubble run pool --cases 200 --seed 42   one suite, reproducibly
  bubble run exhibits                     the known-bad exhibits: every property fails
  bubble run exhibits --failure-file f.json && bubble replay f.json
  bubble run --json                       one JSON object per property, then a summary
  bubble run --exhaustive 2               the proofs suite, every schedule with <= 2 preemptions
  bubble run --exhaustive 2 --shard 0/4   one of 4 disjoint parts of it (merge the certificates
                                          with `bubble certificate merge`)

A failed property writes a failure file (default bubble-failure-<suite>.json in the working
directory; the suite's first failure) that `bubble replay` reproduces exactly. Exit status: 0 when
every property held, 1 when one failed, 2 for bad usage.)";

struct RunArgs {
  std::vector<std::string> names;
  std::string cases = "1000";
  std::string seed = "0";
  bool verbose = false;
  bool json = false;
  std::string failure_file;
  std::string exhaustive;
  std::string shard;
  std::string reduction;
};

// Parses --shard's "i/n" (0 <= i < n).
TreeShard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const auto bad = [&text] {
    return OptionError(fmt::format(
        "--shard: \"{}\" is not a shard: expected i/n with 0 <= i < n, e.g. 0/4", text));
  };
  if (slash == std::string::npos) throw bad();
  TreeShard shard;
  try {
    shard.index = static_cast<std::uint32_t>(sim::parse_integer(text.substr(0, slash), 0, 1 << 20));
    shard.total =
        static_cast<std::uint32_t>(sim::parse_integer(text.substr(slash + 1), 1, 1 << 20));
  } catch (const sim::UsageError&) {
    throw bad();
  }
  if (shard.index >= shard.total) throw bad();
  return shard;
}

// Runs the selected suites; returns the exit status.
int run_suites(const RunArgs& args) {
  scenarios::SuiteOptions options;
  options.cases = static_cast<int>(parse_option(
      "--cases", args.cases, [](auto v) { return sim::parse_integer(v, 1, 1'000'000'000); }));
  options.seed = parse_option("--seed", args.seed, sim::parse_seed);
  options.verbose = args.verbose;
  options.progress = !args.json && ::isatty(STDOUT_FILENO) == 1;
  if (!args.exhaustive.empty()) {
    options.exhaustive = static_cast<std::uint32_t>(parse_option(
        "--exhaustive", args.exhaustive, [](auto v) { return sim::parse_integer(v, 0, 100); }));
  }
  if (!args.shard.empty()) options.shard = parse_shard(args.shard);
  if (!args.reduction.empty()) {
    if (args.reduction == "none") {
      options.reduction = Reduction::none;
    } else if (args.reduction != "dpor") {
      throw OptionError(fmt::format("--reduction: \"{}\" is not a reduction: expected dpor or none",
                                    args.reduction));
    }
  }
  // --exhaustive, --shard and --reduction are the proofs suite's: alone they select it, and they
  // refuse any other suite, whose properties sample.
  const bool exhaustive =
      options.exhaustive.has_value() || !args.shard.empty() || !args.reduction.empty();
  for (const auto& name : args.names) {
    if (exhaustive && name != "proofs") {
      throw OptionError(
          fmt::format("{}: --exhaustive, --shard and --reduction apply to the proofs suite only "
                      "(`bubble run proofs "
                      "--exhaustive K`); the other suites sample workloads and schedules",
                      name));
    }
  }
  std::vector<const scenarios::ScenarioSuite*> selected;
  for (const auto& suite : scenarios::all_suites()) {
    if (!args.names.empty()) break;
    if (exhaustive ? suite.name == "proofs" : suite.in_default_run) selected.push_back(&suite);
  }
  for (const auto& name : args.names) {
    const scenarios::ScenarioSuite* found = nullptr;
    for (const auto& suite : scenarios::all_suites()) {
      if (suite.name == name) found = &suite;
    }
    if (found == nullptr)
      throw OptionError(fmt::format("{}: no such suite (see `bubble list`)", name));
    selected.push_back(found);
  }
  // One seed for the whole run, printed, so that `--seed` reproduces any failure.
  options.seed = scenarios::effective_seed(options);
  // RapidCheck prints its own configuration when it starts; give it the same seed so the two
  // agree.
  if (std::getenv("RC_PARAMS") == nullptr) {
    ::setenv("RC_PARAMS", fmt::format("seed={}", options.seed).c_str(), 0);
  }
  // In --json mode the human report is not printed (standard output holds only JSON lines).
  std::ostringstream discarded;
  std::ostream& log = args.json ? static_cast<std::ostream&>(discarded) : std::cout;
  if (!args.json) {
    print_suites();
    fmt::print("seed: {}\n", options.seed);
  }
  int passed = 0;
  int failed = 0;
  bool wrote_explicit_file = false;
  for (const auto* suite : selected) {
    if (!args.json) fmt::print("\n== {} ==\n", suite->name);
    std::cout.flush();
    const scenarios::SuiteResult result = suite->run(options, log);
    passed += result.properties_passed;
    failed += result.properties_failed;
    std::string file;
    if (!result.failed.empty()) {
      // The suite's first failure goes to its failure file (with --failure-file: the run's first).
      if (args.failure_file.empty()) {
        file = "bubble-failure-" + suite->name + ".json";
        write_failure_file("--failure-file", file, result.failed.front());
      } else if (!wrote_explicit_file) {
        file = args.failure_file;
        write_failure_file("--failure-file", file, result.failed.front());
        wrote_explicit_file = true;
      }
    }
    if (args.json) {
      for (const auto& p : result.properties) {
        nlohmann::ordered_json j = {{"suite", suite->name},
                                    {"property", p.property},
                                    {"passed", p.passed},
                                    {"cases", p.cases},
                                    {"seconds", p.seconds}};
        if (!p.certificate.empty()) j["certificate"] = p.certificate;
        for (const auto& f : result.failed) {
          if (f.property != p.property) continue;
          j["message"] = f.message;
          j["reproduce"] = f.reproduce;
          j["schedule"] = f.schedule;
          if (&f == &result.failed.front() && !file.empty()) j["failure_file"] = file;
        }
        fmt::print("{}\n", j.dump());
      }
      continue;
    }
    for (const auto& failure : result.failures) fmt::print("FAILED: {}\n", failure);
    if (!file.empty()) {
      fmt::print("failure file: {} (replay it with `bubble replay {}`)\n", file, file);
    }
    fmt::print("{}: {} properties passed, {} failed\n", suite->name, result.properties_passed,
               result.properties_failed);
  }
  if (args.json) {
    const nlohmann::ordered_json summary = {{"summary",
                                             {{"suites", selected.size()},
                                              {"passed", passed},
                                              {"failed", failed},
                                              {"seed", options.seed}}}};
    fmt::print("{}\n", summary.dump());
  } else {
    fmt::print("\nsummary: {} suites, {} properties passed, {} failed\n", selected.size(), passed,
               failed);
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_list_command(CLI::App& app, int& exit_code) {
  auto* list = app.add_subcommand("list", "Print the version and the scenario suites");
  list->footer(R"(Examples:
  bubble list

Suites marked "not in the default run" run only when named (`bubble run exhibits`). Exit status:
0, or 2 for bad usage.)");
  list->callback([&exit_code] {
    print_suites();
    exit_code = 0;
  });
}

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand(
      "run", "Run scenario suites (those of the default run unless named) and summarize");
  run->footer(kRunFooter);
  run->add_option("suites", args->names, "Suites to run, by name (see `bubble list`)");
  run->add_option("--cases", args->cases, "Generated cases per property (default 1000)");
  run->add_option("--seed", args->seed, "RapidCheck seed, 0 to 2^64-1 (0: a fresh one, printed)");
  run->add_flag("--verbose", args->verbose, "Print every property's report");
  run->add_flag("--json", args->json,
                "Print one JSON object per line instead of the report: one per property (suite, "
                "property, passed, cases, seconds; a failure adds message, reproduce, schedule "
                "and failure_file), then {\"summary\": {suites, passed, failed, seed}}");
  run->add_option("--failure-file", args->failure_file,
                  "Where to write the run's first failure (default: bubble-failure-<suite>.json "
                  "for each failing suite)");
  run->add_option("--exhaustive", args->exhaustive,
                  "Run the proofs suite: every workload of each proof under every schedule with "
                  "at most K preemptions, 0 to 100 (default: each proof's own bound)");
  run->add_option("--shard", args->shard,
                  "With the proofs suite: search only shard i of n (i/n), whose certificate "
                  "merges with the others' (`bubble certificate merge`)");
  run->add_option("--reduction", args->reduction,
                  "With the proofs suite: dpor (default) prunes schedules that only reorder "
                  "steps on different objects (partial-order reduction); none runs every "
                  "schedule within the bound");
  run->callback([args, &exit_code] { exit_code = run_suites(*args); });
}

}  // namespace bubble::cli
