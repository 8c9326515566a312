#include <bubble/sim/random.hpp>

#include <cmath>

namespace bubble::sim {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Draws::Draws(std::uint64_t seed, std::uint64_t stream)
    : engine_(splitmix64(seed ^ splitmix64(stream + 1))) {}

double Draws::uniform() {
  // The top 53 bits, centred in their interval: (k + 0.5) / 2^53, in (0, 1).
  const auto k = engine_() >> 11;
  return (static_cast<double>(k) + 0.5) * 0x1.0p-53;
}

double Draws::exponential(double mean) {
  return -mean * std::log(uniform());
}

double Draws::normal() {
  return normal_quantile(uniform());
}

double Draws::normal_quantile(double p) {
  // Peter J. Acklam's algorithm: rational approximations in a central region and two tails.
  static constexpr double kA[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                  -2.759285104469687e+02, 1.383577518672690e+02,
                                  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double kB[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                  -1.556989798598866e+02, 6.680131188771972e+01,
                                  -1.328068155288572e+01};
  static constexpr double kC[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                  -2.400758277161838e+00, -2.549732539343734e+00,
                                  4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double kD[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                  2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((kC[0] * q + kC[1]) * q + kC[2]) * q + kC[3]) * q + kC[4]) * q + kC[5]) /
           ((((kD[0] * q + kD[1]) * q + kD[2]) * q + kD[3]) * q + 1);
  }
  if (p > 1 - kLow) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((kC[0] * q + kC[1]) * q + kC[2]) * q + kC[3]) * q + kC[4]) * q + kC[5]) /
           ((((kD[0] * q + kD[1]) * q + kD[2]) * q + kD[3]) * q + 1);
  }
  const double q = p - 0.5;
  const double r = q * q;
  return (((((kA[0] * r + kA[1]) * r + kA[2]) * r + kA[3]) * r + kA[4]) * r + kA[5]) * q /
         (((((kB[0] * r + kB[1]) * r + kB[2]) * r + kB[3]) * r + kB[4]) * r + 1);
}

Duration Draws::job_time(const JobTime& jt) {
  const auto mean = static_cast<double>(jt.mean.count());
  double ns = mean;
  switch (jt.kind) {
    case JobTimeKind::fixed:
      return jt.mean;
    case JobTimeKind::exponential:
      ns = exponential(mean);
      break;
    case JobTimeKind::lognormal: {
      // mean = exp(mu + sigma^2 / 2)
      const double mu = std::log(mean) - jt.sigma * jt.sigma / 2;
      ns = std::exp(mu + jt.sigma * normal());
      break;
    }
  }
  const auto rounded = static_cast<std::int64_t>(std::llround(std::min(ns, 9e18)));
  return Duration{rounded < 1 ? 1 : rounded};
}

}  // namespace bubble::sim
