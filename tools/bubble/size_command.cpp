// `bubble size`: the worker-pool sizing rules (Little's law, headroom, downstream ceiling, Goetz).
#include <bubble/sim/parse.hpp>
#include <bubble/sim/sizing.hpp>

#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "option_error.hpp"

namespace bubble::cli {
namespace {

using namespace bubble::sim;

struct SizeArgs {
  std::string rate;
  std::string latency;
  std::string downstream;
  std::string cores;
  std::string wait;
  std::string compute;
  std::string utilization = "0.8";
  bool json = false;
};

SizingInput to_input(const SizeArgs& a) {
  SizingInput in;
  auto positive_duration = [](auto v) { return parse_duration(v, true); };
  if (!a.rate.empty()) {
    in.rate_per_s = parse_option("--rate", a.rate, [](auto v) { return parse_rate_per_second(v); });
  }
  if (!a.latency.empty()) in.latency = parse_option("--latency", a.latency, positive_duration);
  if (!a.downstream.empty()) {
    in.downstream_concurrency =
        static_cast<double>(parse_option("--downstream-concurrency", a.downstream, [](auto v) {
          return parse_integer(v, 1, 1'000'000'000);
        }));
  }
  if (!a.cores.empty()) {
    in.cores = static_cast<int>(
        parse_option("--cores", a.cores, [](auto v) { return parse_integer(v, 1, 1'000'000); }));
  }
  if (!a.wait.empty())
    in.wait = parse_option("--wait", a.wait, [](auto v) { return parse_duration(v, false); });
  if (!a.compute.empty()) in.compute = parse_option("--compute", a.compute, positive_duration);
  in.target_utilization = parse_option("--utilization", a.utilization, [](auto v) {
    double u = 0;
    try {
      u = parse_load(v);
    } catch (const UsageError&) {
      if (v == "1" || v == "100%") return 1.0;
      throw UsageError(std::string(v), "a target utilization > 0 and <= 1 (0.8 or 80%)");
    }
    return u;
  });
  // Say which rule is incomplete, naming the option that is missing.
  if (in.rate_per_s && !in.latency) throw OptionError("--rate " + a.rate + ": needs --latency");
  if (in.downstream_concurrency && !in.latency) {
    throw OptionError("--downstream-concurrency " + a.downstream + ": needs --latency");
  }
  if (in.cores || in.wait || in.compute) {
    if (!in.cores) throw OptionError("--wait/--compute: need --cores");
    if (!in.wait) throw OptionError("--cores " + a.cores + ": needs --wait");
    if (!in.compute) throw OptionError("--cores " + a.cores + ": needs --compute");
  }
  if (in.latency && !in.rate_per_s && !in.downstream_concurrency) {
    throw OptionError("--latency " + a.latency + ": needs --rate or --downstream-concurrency");
  }
  return in;
}

constexpr const char* kSizeFooter = R"(Examples:
  bubble size --rate 300/s --latency 80ms            # 24 in flight, 30 workers at 80% busy
  bubble size --downstream-concurrency 20 --latency 80ms --rate 300/s   # ceiling 250/s
  bubble size --cores 8 --wait 90ms --compute 10ms    # 80 workers (Goetz)

Exit status: 0 with answers, 2 for bad usage (including nothing to size).)";

}  // namespace

void add_size_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<SizeArgs>();
  auto* size = app.add_subcommand("size",
                                  "Size a worker pool with the rules of thumb: Little's "
                                  "law, headroom, downstream ceilings, Goetz");
  size->footer(kSizeFooter);
  size->add_option("--rate", a->rate, "Arrival rate, e.g. 300/s");
  size->add_option("--latency", a->latency, "Time per job, e.g. 80ms");
  size->add_option("--downstream-concurrency", a->downstream,
                   "Concurrent calls the dependency allows, e.g. 20");
  size->add_option("--cores", a->cores, "CPU cores, for jobs that wait and compute");
  size->add_option("--wait", a->wait, "Time a job waits (I/O), e.g. 90ms");
  size->add_option("--compute", a->compute, "Time a job computes, e.g. 10ms");
  size->add_option("--utilization", a->utilization, "Target busy fraction (default 0.8)");
  size->add_flag("--json", a->json, "Print one JSON object: {name: {value, why}}");
  size->callback([a, &exit_code] {
    try {
      const auto answers = size_pool(to_input(*a));
      if (a->json) {
        nlohmann::json j = nlohmann::json::object();
        for (const auto& ans : answers) j[ans.name] = {{"value", ans.value}, {"why", ans.why}};
        fmt::print("{}\n", j.dump());
      } else {
        for (const auto& ans : answers) {
          fmt::print("{:<14} {:>10.6g}   {}\n", ans.name, ans.value, ans.why);
        }
      }
      exit_code = 0;
    } catch (const std::invalid_argument& e) {
      throw OptionError(e.what());  // Reported by main() as every usage error.
    }
  });
}

}  // namespace bubble::cli
