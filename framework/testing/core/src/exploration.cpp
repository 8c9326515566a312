#include <bubble/detail/failure_observer.hpp>
#include <bubble/testing/exploration.hpp>

#include <bubble/testing/stacks.hpp>

#include <bubble/schedule_tree.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "search_state.hpp"

namespace bubble::testing {
namespace {

// How often (in schedules) an exhaustive search writes its checkpoint file, besides at its end,
// and looks at the clock for its progress line.
constexpr std::uint64_t kCheckpointEvery = 1'000;
constexpr std::uint64_t kProgressEvery = 64;

void report_failure(TestHost& host, const ExploreOptions& options, const std::string& message) {
  host.report_failure(options.report_file, options.report_line, message);
}

// `body` as a run's root: an exception by which the host ends the body after a fatal assertion
// (REQUIRE) ends the root thread, as ASSERT_* returns from a GoogleTest body; the captured
// failure says why.
std::function<void(Runtime&)> root_of(const TestHost& host,
                                      const std::function<void(Runtime&)>& body) {
  return [&host, &body](Runtime& rt) {
    try {
      body(rt);
    } catch (...) {
      if (!host.is_fatal_assertion(std::current_exception())) throw;
    }
  };
}

std::string with_command(std::string line, const std::string& command) {
  if (!command.empty()) line += " " + command;
  return line;
}

// The last line of `message` that starts with "replay: ", or "".
std::string find_replay_line(const std::string& message) {
  const std::size_t at = message.rfind("replay: ");
  if (at == std::string::npos || (at != 0 && message[at - 1] != '\n')) return {};
  return message.substr(at, message.find('\n', at) - at);
}

// Writes `text` to `path`; returns false if it could not.
bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

// Writes the trace of run `which` to options.trace_path (text) and "<path>.json".
void write_trace(TestHost& host, const ExploreOptions& options, const Trace* trace,
                 const std::string& which) {
  const std::string& path = *options.trace_path;
  if (trace == nullptr) {
    std::cout << "bubble: no trace of " << which
              << " to write: it ended with an exception that carries none\n"
              << std::flush;
    return;
  }
  const std::string json = path + ".json";
  if (!write_file(path, trace->text()) || !write_file(json, trace->chrome_json())) {
    report_failure(host, options, "bubble: cannot write the trace to " + path + " or " + json);
    return;
  }
  std::cout << "bubble: trace of " << which << " written to " << path << " (text) and " << json
            << " (Chrome trace format: Perfetto, chrome://tracing)\n"
            << std::flush;
}

std::string describe_exception(const TestHost& host, std::exception_ptr e) {
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    // RapidCheck's RC_ASSERT and RC_FAIL throw a type RapidCheck does not publish.
    if (host.name() == "GoogleTest") {
      return "an exception of an unknown type escaped (a RapidCheck assertion, RC_ASSERT or "
             "RC_FAIL, outside a RapidCheck property? BUBBLE_TEST reads EXPECT_* and ASSERT_*, "
             "and BUBBLE_ASSERT)";
    }
    return "an exception of an unknown type escaped";
  }
}

// The kind of a run's failure, for shrinking: the RunFailure's (see bubble::failure_kind), or,
// for a run that failed only assertions of the host, the place of the first: "GoogleTest failure
// at <file>:<line>" (the host's name first).
std::string host_failure_kind(const TestHost& host, const HostCapture& parts, std::size_t from) {
  for (std::size_t p = from; p < parts.size(); ++p) {
    const HostResult r = parts.at(p);
    if (!r.failed()) continue;
    return std::string(host.name()) + " failure at " + (r.file.empty() ? "unknown file" : r.file) +
           ":" + std::to_string(r.line);
  }
  return {};
}

// Shrinks the failing schedule `failing` of `body`, accepting the schedules whose runs fail with
// the same `kind`. The runs' assertion results are captured and dropped.
ShrinkResult shrink_failed_run(TestHost& host, const Options& run_options,
                               const std::function<void(Runtime&)>& body, const Schedule& failing,
                               const std::string& kind, const ShrinkOptions& limits) {
  const std::unique_ptr<HostCapture> capture = host.capture();
  const HostCapture& parts = *capture;
  const std::function<void(Runtime&)> root = root_of(host, body);
  Options options = run_options;
  options.trace = false;
  options.rethrow_original = false;
  const FailureCheck same_failure = [&](const Schedule& candidate) -> std::optional<Schedule> {
    options.replay = candidate;
    const std::size_t before = parts.size();
    Schedule recorded;
    std::string failed_with;
    try {
      recorded = bubble::run(options, root).schedule;
    } catch (const RunFailure& e) {
      failed_with = failure_kind(std::current_exception());
      recorded = e.schedule();
    } catch (...) {
      return std::nullopt;  // Carries no schedule to shrink further.
    }
    if (failed_with.empty()) failed_with = host_failure_kind(host, parts, before);
    if (failed_with != kind) return std::nullopt;
    return recorded;
  };
  return shrink_schedule(failing, same_failure, limits);
}

// The report of the failing run's RunFailure once more, replayed with stack capture on
// (Options::symbolize_stacks), without its replay line; "" if the replay does not fail with the
// same `kind` (a body that depends on something outside the bubble). The run's assertion results
// are captured and dropped.
std::string report_with_stacks(TestHost& host, const Options& run_options,
                               const std::function<void(Runtime&)>& body, const Schedule& failing,
                               const std::string& kind) {
  const std::unique_ptr<HostCapture> capture = host.capture();
  Options options = run_options;
  options.replay = failing;
  options.trace = false;
  options.rethrow_original = false;
  options.symbolize_stacks = stack_symbolizer();
  try {
    (void)bubble::run(options, root_of(host, body));
  } catch (const RunFailure& e) {
    if (failure_kind(std::current_exception()) != kind) return {};
    std::string text = e.what();
    const std::size_t at = text.rfind("\nreplay: ");
    if (at != std::string::npos) text.resize(at + 1);
    return text;
  } catch (...) {
  }
  return {};
}

// The line that follows the replay line in the message of a failed exploration whose failing run
// (with `had` preemptions) was shrunk to `r`.
std::string shrunk_line(const ShrinkResult& r, std::size_t had, const std::string& command) {
  std::string line = "shrunk to " + std::to_string(r.preemptions) +
                     (r.preemptions == 1 ? " preemption" : " preemptions") +
                     " (the failing run had " + std::to_string(had) + "; " +
                     std::to_string(r.runs) + " runs" +
                     (r.budget_exhausted ? ", stopped at the search's budget" : "") + "): " +
                     // replay_line without its "replay: ": the environment that replays it.
                     bubble::replay_line(r.schedule.to_strategy()).substr(8);
  return with_command(std::move(line), command);
}

// The length of the UTF-8 sequence (RFC 3629) that starts at text[i], or 0 when no valid sequence
// starts there (a byte that is never in UTF-8, a continuation byte, a sequence cut short, an
// overlong form, a UTF-16 surrogate or a code point past U+10FFFF).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) -> unsigned {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0U;
  };
  const auto in = [](unsigned byte, unsigned low, unsigned high) {
    return byte >= low && byte <= high;
  };
  const unsigned lead = at(0);
  if (lead < 0x80U) return 1;
  if (in(lead, 0xC2U, 0xDFU)) return in(at(1), 0x80U, 0xBFU) ? 2 : 0;
  if (in(lead, 0xE0U, 0xEFU)) {
    const unsigned low = lead == 0xE0U ? 0xA0U : 0x80U;
    const unsigned high = lead == 0xEDU ? 0x9FU : 0xBFU;
    return in(at(1), low, high) && in(at(2), 0x80U, 0xBFU) ? 3 : 0;
  }
  if (in(lead, 0xF0U, 0xF4U)) {
    const unsigned low = lead == 0xF0U ? 0x90U : 0x80U;
    const unsigned high = lead == 0xF4U ? 0x8FU : 0xBFU;
    return in(at(1), low, high) && in(at(2), 0x80U, 0xBFU) && in(at(3), 0x80U, 0xBFU) ? 4 : 0;
  }
  return 0;
}

}  // namespace

std::string failure_file_json(const std::string& test, const ExploreOutcome& outcome) {
  // JSON string escaping (RFC 8259): quote, backslash and control characters; JSON text is
  // UTF-8, so each byte of an invalid sequence becomes U+FFFD, the replacement character.
  auto quoted = [](const std::string& text) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size();) {
      const std::size_t length = utf8_length(text, i);
      if (length == 0) {
        out += "\xef\xbf\xbd";
        ++i;
        continue;
      }
      if (length > 1) {
        out.append(text, i, length);
        i += length;
        continue;
      }
      const char c = text[i++];
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (u < 0x20) {
        constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[u >> 4U];
        out += kHex[u & 0xFU];
      } else {
        out += c;
      }
    }
    return out + "\"";
  };
  const std::string prefix = "replay: ";
  std::string command = outcome.replay_line;
  if (command.rfind(prefix, 0) == 0) command.erase(0, prefix.size());
  return "{\n  \"format\": \"bubble-failure-1\",\n  \"kind\": \"test\",\n  \"test\": " +
         quoted(test) + ",\n  \"strategy\": " + quoted(outcome.failed_strategy.to_string()) +
         ",\n  \"command\": " + quoted(command) +
         ",\n  \"message\": " + quoted(outcome.assertion_failures + outcome.message) + "\n}\n";
}

ExploreOutcome explore(TestHost& host, const TestPlan& plan,
                       const std::function<void(Runtime&)>& body, const ExploreOptions& options) {
  ExploreOutcome outcome;
  const std::function<void(Runtime&)> root = root_of(host, body);
  Options run_options = options.options;
  run_options.replay.reset();
  run_options.replay_command = options.replay_command;
  if (options.trace_path) run_options.trace = true;
  std::optional<RunResult> traced;            // The run whose trace BUBBLE_TRACE writes.
  std::string failed_which;                   // "schedule 3 of 100 (random:3)".
  std::shared_ptr<const RunFailure> failure;  // The failing run's RunFailure, if it threw one.
  const std::uint64_t runs = plan.size();
  std::optional<std::uint64_t> observed_steps;  // Steps of the exploration's first run.
  std::optional<Schedule> failed_recorded;      // What the failing run recorded, to shrink.
  std::string failed_kind;                      // How it failed (see host_failure_kind).
  bool failed_with_run_failure = false;         // It threw a RunFailure (its report has threads).

  // The assertion results of every run, held back while the runs go on (one capture for the whole
  // exploration: installing a reporter per run costs more than a small run).
  std::unique_ptr<HostCapture> capture = host.capture();
  const HostCapture& parts = *capture;
  // The results the failing run's threads reported after its failure was decided, while it was
  // torn down (code that ran on until its next blocking call, such as a test body whose join
  // returned): [teardown_from, teardown_to), not reported (the failure is what happened first).
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  struct TeardownParts {
    const HostCapture* parts = nullptr;
    std::size_t from = static_cast<std::size_t>(-1);
  } teardown{&parts};
  std::size_t teardown_to = kNone;
  ::bubble::detail::set_failure_observer(
      [](void* context) noexcept {
        auto* t = static_cast<TeardownParts*>(context);
        if (t->from == static_cast<std::size_t>(-1)) t->from = t->parts->size();
      },
      &teardown);
  struct ClearObserver {
    ~ClearObserver() { ::bubble::detail::set_failure_observer(nullptr, nullptr); }
  } clear_observer;
  // The results of runs of other shards' schedules (an exhaustive search's transit runs).
  std::vector<std::pair<std::size_t, std::size_t>> dropped;
  auto rereport_all = [&] {
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (teardown.from != kNone && p >= teardown.from && teardown_to != kNone && p < teardown_to) {
        continue;
      }
      if (std::any_of(dropped.begin(), dropped.end(),
                      [p](const std::pair<std::size_t, std::size_t>& r) {
                        return p >= r.first && p < r.second;
                      })) {
        continue;
      }
      host.rereport(parts.at(p));
    }
  };
  // An exhaustive search's runs come from its tree, one after the other, until it is done.
  std::optional<ScheduleTree> tree;
  std::vector<Decision> decisions;
  RunDependencies dependencies;
  if (plan.exhaustive_bound()) {
    const TreeShard shard{static_cast<std::uint32_t>(plan.shard().index),
                          static_cast<std::uint32_t>(plan.shard().total)};
    if (options.checkpoint_path) {
      tree = detail::read_checkpoint(*options.checkpoint_path, options.checkpoint_key,
                                     *plan.exhaustive_bound(), shard, plan.reduction());
    }
    if (!tree) tree.emplace(*plan.exhaustive_bound(), shard, plan.reduction());
    run_options.decisions = &decisions;
    if (plan.reduction() == Reduction::dpor) run_options.dependencies = &dependencies;
  }
  // On a terminal, a line that shows how a long search goes.
  std::optional<detail::SearchProgress> progress;
  if (tree && ::isatty(STDERR_FILENO) == 1) progress.emplace(tree->schedules());
  // Keeps the search's state in the checkpoint file, if there is one.
  bool checkpoint_failed = false;
  const auto save_checkpoint = [&] {
    if (!tree || !options.checkpoint_path || checkpoint_failed) return;
    if (!detail::write_checkpoint(*options.checkpoint_path, options.checkpoint_key, *tree)) {
      checkpoint_failed = true;
    }
  };
  std::exception_ptr pending;
  {
    try {
      for (std::uint64_t i = 0; tree ? !tree->done() : i < runs; ++i) {
        const std::uint64_t k = tree ? tree->schedules() : plan.schedule_index(i);
        run_options.strategy = tree ? *tree->next() : plan.strategy(i);
        decisions.clear();
        dependencies.clear();
        const Strategy& s = run_options.strategy;
        if (plan.exploring() && observed_steps && s.kind() == Strategy::Kind::pct &&
            s.steps() == Strategy::kDefaultPctSteps) {
          // PCT draws its priority change points from [1, steps]: estimate the run's length by
          // the first run's, so that they fall inside the run.
          run_options.strategy =
              Strategy::pct(s.seed(), s.depth(), std::max<std::uint64_t>(1, *observed_steps));
        }
        ++outcome.runs;

        const std::size_t before = parts.size();
        teardown.from = kNone;
        std::optional<RunResult> result;
        std::string error;        // Why the run failed, when bubble::run threw.
        std::string replay_line;  // The engine's replay line, when its message has one.
        try {
          result = bubble::run(run_options, root);
        } catch (const RunFailure& e) {
          error = e.what();
          replay_line = find_replay_line(error);
          failed_recorded = e.schedule();
          failed_kind = failure_kind(std::current_exception());
          failed_with_run_failure = true;
          if (options.trace_path) failure = std::make_shared<const RunFailure>(e);
        } catch (...) {
          // A fatal assertion of the host on another thread than the root: the captured failure
          // says why the run failed.
          if (!host.is_fatal_assertion(std::current_exception())) {
            error = describe_exception(host, std::current_exception());
          }
        }

        // Only a run that failed has a teardown.
        const std::size_t reported_end = teardown.from != kNone ? teardown.from : parts.size();
        if (teardown.from != kNone) teardown_to = parts.size();
        bool assertion_failed = false;
        bool skipped = false;
        for (std::size_t p = before; p < reported_end; ++p) {
          const HostResult r = parts.at(p);
          assertion_failed = assertion_failed || r.failed();
          skipped = skipped || r.skipped();
        }

        if ((!error.empty() || assertion_failed) && tree && !tree->owns(decisions)) {
          // Another shard's schedule, run only to learn the tree's shape: its failure is that
          // shard's to report.
          dropped.emplace_back(before, parts.size());
          teardown_to = kNone;
          failed_recorded.reset();
          failed_kind.clear();
          failed_with_run_failure = false;
          failure.reset();
          tree->record(decisions, &dependencies);
          continue;
        }
        if (error.empty() && !assertion_failed) {
          if (tree) {
            tree->record(decisions, &dependencies);
            if (tree->schedules() % kCheckpointEvery == 0) save_checkpoint();
            if (progress && tree->schedules() % kProgressEvery == 0) progress->show(*tree);
          }
          if (result && !observed_steps) observed_steps = result->steps;
          if (options.on_success && result) options.on_success(k, *result);
          if (options.trace_path && result) traced = std::move(result);
          if (skipped) {
            outcome.skipped = true;
            break;
          }
          continue;
        }

        outcome.failed = true;
        if (failed_kind.empty() && result) {
          failed_recorded = result->schedule;
          failed_kind = host_failure_kind(host, parts, before);
        }
        int torn_down_failures = 0;
        for (std::size_t p = reported_end; p < parts.size(); ++p) {
          torn_down_failures += parts.at(p).failed() ? 1 : 0;
        }
        for (std::size_t p = before; p < reported_end; ++p) {
          const HostResult r = parts.at(p);
          if (r.failed()) outcome.assertion_failures += r.describe();
        }
        outcome.failed_schedule = k;
        outcome.failed_strategy = run_options.strategy;
        const std::string which =
            tree ? "schedule " + std::to_string(k) + " of the exhaustive search of " +
                       plan.describe() + " (" + run_options.strategy.to_string() + ")"
            : plan.exploring()
                ? "schedule " + std::to_string(k) + " of " + std::to_string(plan.schedules()) +
                      " (" + run_options.strategy.to_string() + ")"
                : "the run (" + run_options.strategy.to_string() + ")";
        std::string message = "bubble: " + which + " failed";
        if (!error.empty()) {
          message += ":\n" + error;
        } else {
          message += " with the " + std::string(host.name()) + " failures above";
        }
        if (torn_down_failures > 0) {
          // Before the replay line, which stays last.
          const std::size_t last_line = message.rfind("\nreplay: ");
          message.insert(last_line == std::string::npos ? message.size() : last_line + 1,
                         "(" + std::to_string(torn_down_failures) + " " + std::string(host.name()) +
                             " failure(s) raised after the run had failed, while it was torn "
                             "down, are not reported)\n");
        }
        if (replay_line.empty()) {
          // The run ended without a RunFailure (failed assertions, or an exception the engine
          // passes through unchanged): build the same line the engine would have.
          replay_line = with_command(
              result ? result->replay_line() : bubble::replay_line(run_options.strategy),
              options.replay_command);
          message += "\n" + replay_line;
        }
        outcome.replay_line = replay_line;
        outcome.message = message;
        if (options.trace_path) {
          traced.reset();  // A successful earlier run's trace is not this run's.
          if (result) traced = std::move(result);
        }
        failed_which = which;
        break;
      }
    } catch (...) {
      // An exception from on_success or from the plan: report what was captured (once the
      // capture is uninstalled), then let it go.
      pending = std::current_exception();
    }
  }
  if (progress) progress->clear();
  capture->stop();
  rereport_all();
  save_checkpoint();
  if (checkpoint_failed) {
    report_failure(host, options,
                   "bubble: cannot write the checkpoint to " + *options.checkpoint_path);
  }
  if (pending) std::rethrow_exception(pending);
  if (tree && tree->done()) outcome.certificate = tree->certificate(0);
  if (outcome.failed && options.stacks && failed_with_run_failure && failed_recorded) {
    run_options.strategy = outcome.failed_strategy;
    const std::string report =
        report_with_stacks(host, run_options, body, *failed_recorded, failed_kind);
    if (!report.empty()) {
      outcome.message = "bubble: " + failed_which + " failed:\n" + report + outcome.replay_line;
    }
  }
  if (outcome.failed && plan.exploring() && options.shrink && failed_recorded &&
      preemptions(*failed_recorded) > 0) {
    run_options.strategy = outcome.failed_strategy;
    outcome.shrunk =
        shrink_failed_run(host, run_options, body, *failed_recorded, failed_kind, *options.shrink);
    outcome.shrunk->kind = failed_kind;
    outcome.message +=
        "\n" + shrunk_line(*outcome.shrunk, preemptions(*failed_recorded), options.replay_command);
  }
  if (outcome.failed) report_failure(host, options, outcome.message);
  if (options.trace_path && outcome.runs > 0) {
    const Trace* trace = failure ? &failure->trace() : traced ? &traced->trace : nullptr;
    write_trace(host, options, trace, outcome.failed ? failed_which : "the last run");
  }
  return outcome;
}

}  // namespace bubble::testing
