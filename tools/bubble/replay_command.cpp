// `bubble replay FILE`: reproduces the failure a failure file describes.
#include <bubble/scenarios/registry.hpp>

#include <fmt/core.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "failure_file.hpp"
#include "option_error.hpp"

namespace bubble::cli {
namespace {

constexpr const char* kReplayFooter = R"(Examples:
  bubble run exhibits --failure-file f.json; bubble replay f.json
  bubble replay f.json --trace-text f.trace --trace-chrome f.trace.json

A property's failure file is replayed in this process: the shrunk case runs once, with the same
generated values and schedule, and prints the same message, byte for byte. Open the Chrome trace
in Perfetto (ui.perfetto.dev) or chrome://tracing. A BUBBLE_TEST's failure file (written when
BUBBLE_FAILURE_FILE is set) names a test program this command cannot run: it prints the command
that reproduces the failure instead. Exit status: 1 when the failure reproduced (or, for a test,
is only described), 0 when the property now holds, 2 for bad usage or an unreadable file.)";

struct ReplayArgs {
  std::string file;
  std::string trace_text;
  std::string trace_chrome;
};

void write_text(const std::string& option, const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw OptionError(fmt::format("{} {}: cannot write the file", option, path));
}

int replay_test(const FailureFile& file) {
  fmt::print("{}\n\n", file.message);
  fmt::print(
      "This failure is BUBBLE_TEST {}'s, in a test program that `bubble replay` does not know and "
      "cannot run. Reproduce it (strategy {}) with:\n  {}\n",
      file.test, file.strategy, file.command);
  fmt::print(
      "(with BUBBLE_TRACE=<file> in front, the test writes its trace to <file> and "
      "<file>.json)\n");
  return 1;
}

int replay_property(const ReplayArgs& args, const FailureFile& file) {
  const scenarios::PropertyFailure& recorded = file.property;
  const scenarios::ScenarioSuite* suite = nullptr;
  for (const auto& s : scenarios::all_suites()) {
    if (s.name == recorded.suite) suite = &s;
  }
  if (suite == nullptr) {
    throw OptionError(
        fmt::format("{}: suite \"{}\" is not one of this bubble's (see `bubble list`)", args.file,
                    recorded.suite));
  }
  scenarios::SuiteOptions options;
  options.cases = recorded.cases;
  options.seed = recorded.seed;
  options.replay = scenarios::CaseReplay{recorded.property, recorded.reproduce};
  options.trace = !args.trace_text.empty() || !args.trace_chrome.empty();
  std::ostringstream log;  // The report counts this process's tries; the message is kept.
  scenarios::SuiteResult result;
  try {
    result = suite->run(options, log);
  } catch (const std::invalid_argument& e) {
    throw OptionError(fmt::format("{}: {}", args.file, e.what()));
  }
  if (result.properties_passed + result.properties_failed == 0) {
    throw OptionError(fmt::format("{}: suite \"{}\" has no property \"{}\"", args.file,
                                  recorded.suite, recorded.property));
  }
  if (result.failed.empty()) {
    fmt::print("{}/{}: the recorded case now passes: the failure did not reproduce\n",
               recorded.suite, recorded.property);
    return 0;
  }
  const scenarios::PropertyFailure& again = result.failed.front();
  fmt::print("{}\n\n", again.message);
  if (again.message == recorded.message) {
    fmt::print("{}/{}: replayed the failure of {}: the same message, byte for byte\n",
               recorded.suite, recorded.property, args.file);
  } else {
    fmt::print(
        "{}/{}: the case failed again, but with a different message than {} recorded (the "
        "message depends on something outside the case)\n",
        recorded.suite, recorded.property, args.file);
  }
  if (options.trace) {
    if (again.trace_text.empty()) {
      fmt::print("no trace written: {}\n", again.trace_note);
    }
    if (!args.trace_text.empty() && !again.trace_text.empty()) {
      write_text("--trace-text", args.trace_text, again.trace_text);
      fmt::print("trace (text): {}\n", args.trace_text);
    }
    if (!args.trace_chrome.empty() && !again.trace_text.empty()) {
      write_text("--trace-chrome", args.trace_chrome, again.trace_chrome);
      fmt::print("trace (Chrome trace format; opens in Perfetto): {}\n", args.trace_chrome);
    }
  }
  return 1;
}

}  // namespace

void add_replay_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReplayArgs>();
  auto* replay =
      app.add_subcommand("replay", "Reproduce the failure a failure file describes, exactly");
  replay->footer(kReplayFooter);
  replay->add_option("file", args->file, "The failure file (written by `bubble run`)")->required();
  replay->add_option("--trace-text", args->trace_text,
                     "Write the failing bubble run's trace, one event per line, to this file");
  replay->add_option("--trace-chrome", args->trace_chrome,
                     "Write the trace in Chrome's trace-event JSON format (Perfetto) to this file");
  replay->callback([args, &exit_code] {
    const FailureFile file = read_failure_file(args->file);
    exit_code = file.kind == "test" ? replay_test(file) : replay_property(*args, file);
  });
}

}  // namespace bubble::cli
