#pragma once

#include <optional>

#include <bubble/sim/model.hpp>

// Closed-form queueing results to set beside simulated ones.
//
// M/M/c (Poisson arrivals at rate lambda, exponential service of mean 1/mu, c workers, one
// unbounded FIFO queue), load rho = lambda / (c mu) < 1:
//   - Erlang C, the probability that an arrival waits: C = B / (1 - rho (1 - B)), with Erlang B
//     computed by the stable recursion B_0 = 1, B_k = A B_{k-1} / (k + A B_{k-1}), A = lambda/mu;
//   - mean latency W = 1/mu + C / (c mu - lambda);
//   - the latency distribution: service S ~ Exp(mu) plus a wait that is 0 with probability 1 - C
//     and Exp(theta = c mu - lambda) with probability C, so
//     P(T > t) = (1 - C) e^{-mu t} + C (theta e^{-mu t} - mu e^{-theta t}) / (theta - mu)
//     (and e^{-mu t} (1 + C mu t) when theta = mu); quantiles by bisection. For c = 1 latency is
//     Exp(mu - lambda), so p99 = ln(100) x mean, about 4.6 x mean.
// M/G/1 (one worker, any job-time distribution): the Pollaczek-Khinchine mean only,
//   W = E[S] + lambda E[S^2] / (2 (1 - rho)).
namespace bubble::sim {

struct Prediction {
  const char* model = "";  // "M/M/c" or "M/G/1"
  double load = 0;         // rho
  double p_wait = 0;       // probability an arrival waits (M/M/c only; NaN otherwise)
  double mean_ms = 0;      // mean latency
  double p50_ms = 0;       // latency quantiles (M/M/c only; NaN otherwise)
  double p90_ms = 0;
  double p99_ms = 0;
};

// Erlang C for c servers and offered traffic a = lambda / mu (a < c). Throws
// std::invalid_argument if c < 1 or a is not in [0, c).
double erlang_c(int c, double a);

// M/M/c with arrival rate lambda (per second) and mean service time `mean_s` (seconds).
Prediction mmc(int c, double lambda, double mean_s);

// The prediction for `config` if a closed form applies: Poisson arrivals of one stream without
// spikes, slowdowns, limits, client timeouts or batches, an unbounded queue and load < 1; M/M/c
// for exponential job times, M/G/1 for other job times with one worker. nullopt otherwise.
std::optional<Prediction> predict(const SimConfig& config);

}  // namespace bubble::sim
