#include <bubble/sim/analytic.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace bubble::sim {

double erlang_c(int c, double a) {
  if (c < 1) throw std::invalid_argument("erlang_c: c must be >= 1, got " + std::to_string(c));
  if (!(a >= 0) || a >= c) {
    throw std::invalid_argument("erlang_c: offered traffic must be in [0, c), got " +
                                std::to_string(a));
  }
  double b = 1;  // Erlang B with 0 servers
  for (int k = 1; k <= c; ++k) b = a * b / (k + a * b);
  const double rho = a / c;
  return b / (1 - rho * (1 - b));
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// P(T > t) for the M/M/c latency (see the header).
double survival(double t, double mu, double theta, double p_wait) {
  const double es = std::exp(-mu * t);
  if (std::abs(theta - mu) < 1e-12 * mu) return es * (1 + p_wait * mu * t);
  return (1 - p_wait) * es + p_wait * (theta * es - mu * std::exp(-theta * t)) / (theta - mu);
}

double quantile(double q, double mu, double theta, double p_wait) {
  double lo = 0;
  double hi = 1 / mu;
  while (survival(hi, mu, theta, p_wait) > 1 - q) hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (survival(mid, mu, theta, p_wait) > 1 - q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

Prediction mmc(int c, double lambda, double mean_s) {
  const double mu = 1 / mean_s;
  const double a = lambda / mu;
  Prediction p;
  p.model = "M/M/c";
  p.load = a / c;
  p.p_wait = erlang_c(c, a);
  const double theta = c * mu - lambda;
  p.mean_ms = (mean_s + p.p_wait / theta) * 1e3;
  p.p50_ms = quantile(0.50, mu, theta, p.p_wait) * 1e3;
  p.p90_ms = quantile(0.90, mu, theta, p.p_wait) * 1e3;
  p.p99_ms = quantile(0.99, mu, theta, p.p_wait) * 1e3;
  return p;
}

std::optional<Prediction> predict(const SimConfig& config) {
  if (config.arrivals.kind != ArrivalKind::poisson || !config.spikes.empty() ||
      !config.slowdowns.empty() || config.urgent || config.batch || config.rate_limit ||
      config.concurrency_limit || config.client_timeout ||
      config.policy != QueuePolicy::unbounded) {
    return std::nullopt;
  }
  const double load = offered_load(config);
  if (!(load < 1)) return std::nullopt;
  const double mean_s = static_cast<double>(config.job_time.mean.count()) / 1e9;
  const double lambda = config.arrivals.per_second;
  if (config.job_time.kind == JobTimeKind::exponential) {
    return mmc(config.workers, lambda, mean_s);
  }
  if (config.workers != 1) return std::nullopt;
  // M/G/1, Pollaczek-Khinchine: E[S^2] = m^2 (fixed), m^2 e^{sigma^2} (lognormal).
  const double second_moment =
      config.job_time.kind == JobTimeKind::fixed
          ? mean_s * mean_s
          : mean_s * mean_s * std::exp(config.job_time.sigma * config.job_time.sigma);
  Prediction p;
  p.model = "M/G/1";
  p.load = load;
  p.p_wait = load;  // the probability that the one worker is busy (PASTA)
  p.mean_ms = (mean_s + lambda * second_moment / (2 * (1 - load))) * 1e3;
  p.p50_ms = p.p90_ms = p.p99_ms = kNaN;
  return p;
}

}  // namespace bubble::sim
