#pragma once

#include <string>
#include <vector>

#include <bubble/sim/engine.hpp>

// SVG plots drawn with PLplot's svg device (no hand-written SVG). Both functions write `path`
// (replacing it) and throw std::runtime_error naming the path if it cannot be written. PLplot
// keeps global state, so these must not be called concurrently.
namespace bubble::sim {

// Three panels against time: queue depth (and in-flight), p99 latency, goodput per second. A
// series longer than 360 seconds is drawn in buckets of whole seconds (at most 360 points): the
// peak queue depth, in-flight and p99 of each bucket and its mean goodput.
void plot_series(const std::string& path, const std::string& title, const Series& series);

// One point of a load sweep.
struct SweepPoint {
  double load = 0;
  double mean_ms = 0;
  double p99_ms = 0;
  double analytic_mean_ms = 0;  // NaN when no closed form applies
  double analytic_p99_ms = 0;   // NaN when no closed form applies
};

// The hockey stick: mean and p99 latency against load, simulated (points) and analytic (lines).
void plot_sweep(const std::string& path, const std::string& title,
                const std::vector<SweepPoint>& points);

}  // namespace bubble::sim
