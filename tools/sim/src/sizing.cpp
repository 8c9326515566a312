#include <bubble/sim/sizing.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

namespace bubble::sim {

namespace {

double seconds(Duration d) {
  return static_cast<double>(d.count()) / 1e9;
}

// ceil(x), forgiving the last bits of rounding: 300/s x 80ms is 24.000000000000004 in binary.
double ceil_tolerant(double x) {
  return std::ceil(x - 1e-9 * std::max(1.0, std::abs(x)));
}

// "24", "2.5": a figure without trailing zeros.
std::string figure(double x) {
  return fmt::format("{:.6g}", x);
}

}  // namespace

std::vector<SizingAnswer> size_pool(const SizingInput& in) {
  if (!(in.target_utilization > 0) || in.target_utilization > 1) {
    throw std::invalid_argument(
        fmt::format("target utilization must be > 0 and <= 1, got {}", in.target_utilization));
  }
  std::vector<SizingAnswer> out;
  if (in.rate_per_s && in.latency) {
    const double in_flight = *in.rate_per_s * seconds(*in.latency);
    const double workers = ceil_tolerant(in_flight / in.target_utilization);
    out.push_back(
        {"in_flight", in_flight,
         fmt::format("Little's law: {}/s x {} = {} jobs in flight on average",
                     figure(*in.rate_per_s), format_duration(*in.latency), figure(in_flight))});
    out.push_back(
        {"workers", workers,
         fmt::format("{} in flight / {}% busy = {} workers: headroom so bursts clear",
                     figure(in_flight), figure(in.target_utilization * 100), figure(workers))});
  }
  if (in.downstream_concurrency && in.latency) {
    const double ceiling = *in.downstream_concurrency / seconds(*in.latency);
    std::string why = fmt::format("Little's law backwards: {} concurrent / {} = {}/s at most",
                                  figure(*in.downstream_concurrency), format_duration(*in.latency),
                                  figure(ceiling));
    if (in.rate_per_s && *in.rate_per_s > ceiling * (1 + 1e-9)) {
      why += fmt::format("; {}/s is above it: you need a bigger quota, not more workers",
                         figure(*in.rate_per_s));
    }
    out.push_back({"ceiling_per_s", ceiling, why});
  }
  if (in.cores && in.wait && in.compute) {
    const double ratio = seconds(*in.wait) / seconds(*in.compute);
    const double workers = ceil_tolerant(*in.cores * (1 + ratio));
    out.push_back({"goetz_workers", workers,
                   fmt::format("Goetz: {} cores x (1 + {} wait / {} compute) = {} workers, a "
                               "starting point",
                               *in.cores, format_duration(*in.wait), format_duration(*in.compute),
                               figure(workers))});
  }
  if (out.empty()) {
    throw std::invalid_argument(
        "nothing to size: give --rate and --latency, --downstream-concurrency and --latency, or "
        "--cores, --wait and --compute");
  }
  return out;
}

}  // namespace bubble::sim
