#pragma once

#include <optional>
#include <string>
#include <vector>

#include <bubble/time.hpp>

// The worker-pool sizing rules of thumb, as functions: Little's law (in flight = rate x latency),
// headroom (workers = in flight / target utilization, rounded up), the ceiling a downstream
// concurrency quota puts on the rate (quota / latency), and Brian Goetz's rule for jobs that both
// wait and compute (workers = cores x (1 + wait / compute), "Java Concurrency in Practice").
namespace bubble::sim {

struct SizingInput {
  std::optional<double> rate_per_s{};
  std::optional<Duration> latency{};
  std::optional<double> downstream_concurrency{};
  std::optional<int> cores{};
  std::optional<Duration> wait{};
  std::optional<Duration> compute{};
  double target_utilization = 0.8;  // in (0, 1]
};

// One answer: a name ("in_flight", "workers", "ceiling_per_s", "goetz_workers"), its value and
// one line saying why.
struct SizingAnswer {
  std::string name;
  double value = 0;
  std::string why;
};

// Every answer the given inputs allow, in that order:
//   rate + latency                  -> in_flight, workers
//   downstream_concurrency + latency -> ceiling_per_s (and, with a rate above it, a warning in why)
//   cores + wait + compute          -> goetz_workers
// Throws std::invalid_argument naming what is missing if no rule applies.
std::vector<SizingAnswer> size_pool(const SizingInput& input);

}  // namespace bubble::sim
