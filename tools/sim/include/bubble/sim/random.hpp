#pragma once

#include <cstdint>
#include <random>

#include <bubble/sim/model.hpp>
#include <bubble/time.hpp>

// Seeded draws whose values are the same on every platform. std::mt19937_64's output is fixed by
// the C++ standard, but std::exponential_distribution and friends are not (each standard library
// implements them its own way), so the draws are inverse-CDF transforms written here: a uniform
// from the engine's top 53 bits, then -log(u) for exponentials and Acklam's rational
// approximation of the normal quantile (relative error below 1.2e-9) for lognormals. The only
// platform dependence left is std::log / std::exp rounding in the last bit, which almost never
// changes a value rounded to whole nanoseconds.
namespace bubble::sim {

class Draws {
 public:
  // An engine seeded with `seed` mixed with `stream` (splitmix64), so that different streams of
  // one run draw independent sequences.
  Draws(std::uint64_t seed, std::uint64_t stream);

  // Uniform in (0, 1): never 0, never 1.
  double uniform();
  // Exponential with the given mean.
  double exponential(double mean);
  // Standard normal.
  double normal();
  // A job time drawn from `job_time`, in whole nanoseconds (at least 1 ns).
  Duration job_time(const JobTime& job_time);

  // The standard normal quantile (Acklam), for 0 < p < 1.
  static double normal_quantile(double p);

 private:
  std::mt19937_64 engine_;
};

}  // namespace bubble::sim
