#include <bubble/sim/model.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

namespace bubble::sim {

std::vector<double> LoadSweep::loads() const {
  std::vector<double> out;
  // Points are computed from their index (not accumulated) so that 0.1 + 17 * 0.05 is 0.95 up to
  // rounding; a point within a millionth of a step past `to` still counts. Their number is counted
  // first, not found by comparing loads with `to`: a step too small to move a load (0.5 + 1e-300
  // is 0.5) would never pass it.
  const double span = (to - from) / step;
  const int last = span >= 0 && span <= 1000 ? static_cast<int>(std::floor(span + 1e-6)) : 0;
  for (int i = 0; i <= last; ++i) out.push_back(std::min(from + i * step, to));
  return out;
}

const JobTime& job_time_at(const SimConfig& config, Duration t) {
  const JobTime* in_force = &config.job_time;
  Duration latest = Duration::min();
  for (const Slowdown& s : config.slowdowns) {
    if (s.from <= t && s.from >= latest) {
      latest = s.from;
      in_force = &s.job_time;
    }
  }
  return *in_force;
}

double capacity_per_second(const SimConfig& config) {
  return config.workers / (static_cast<double>(config.job_time.mean.count()) / 1e9);
}

double offered_load(const SimConfig& config) {
  double rate = config.arrivals.per_second;
  if (config.urgent) rate += config.urgent->per_second;
  return rate / capacity_per_second(config);
}

namespace {

[[noreturn]] void invalid(const std::string& what) {
  throw std::invalid_argument("bubble::sim::SimConfig: " + what);
}

}  // namespace

void validate(const SimConfig& c) {
  if (c.workers < 1 || c.workers > 10'000) {
    invalid(fmt::format("workers must be from 1 to 10000, got {}", c.workers));
  }
  if (c.policy != QueuePolicy::unbounded && c.queue < 1) {
    invalid(fmt::format("queue must be >= 1, got {}", c.queue));
  }
  if (c.job_time.mean <= Duration::zero()) invalid("job_time.mean must be > 0");
  for (const Slowdown& s : c.slowdowns) {
    if (s.job_time.mean <= Duration::zero()) invalid("a slowdown's job time must be > 0");
  }
  if (!(c.arrivals.per_second > 0) || !std::isfinite(c.arrivals.per_second)) {
    invalid(fmt::format("arrivals.per_second must be > 0, got {}", c.arrivals.per_second));
  }
  if (c.urgent && !(c.urgent->per_second > 0)) invalid("urgent.per_second must be > 0");
  for (const Spike& s : c.spikes) {
    if (s.to <= s.from) invalid("a spike must end after it starts");
    if (!(s.per_second >= 0)) invalid("a spike's rate must be >= 0");
  }
  if (c.batch && c.batch->count < 1) invalid("batch.count must be >= 1");
  if (c.duration <= Duration::zero()) invalid("duration must be > 0");
  if (c.warmup < Duration::zero() || c.warmup >= c.duration) {
    invalid(fmt::format("warmup ({}) must be >= 0 and shorter than duration ({})",
                        format_duration(c.warmup), format_duration(c.duration)));
  }
  if (c.aging_step < Duration::zero()) invalid("aging_step must be >= 0");
  if (c.tenant_queue < 0) invalid("tenant_queue must be >= 0");
  if (c.client_timeout && *c.client_timeout <= Duration::zero()) {
    invalid("client_timeout must be > 0");
  }
  if (c.deadline_skip && !c.client_timeout) invalid("deadline_skip needs a client_timeout");
  if (c.rate_limit) {
    if (!(*c.rate_limit > 0) || *c.rate_limit > 1e9) invalid("rate_limit must be > 0");
    if (c.policy == QueuePolicy::block) {
      invalid(
          "rate_limit refuses arrivals without a token; it cannot be combined with the block "
          "policy");
    }
    if (c.deadline_skip) invalid("rate_limit cannot be combined with deadline_skip");
  }
  if (c.concurrency_limit && *c.concurrency_limit < 1) invalid("concurrency_limit must be >= 1");
}

}  // namespace bubble::sim
