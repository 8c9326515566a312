#include <bubble/sim/plot.hpp>

#include <plplot.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace bubble::sim {

namespace {

// Draws the axes of the current panel: a box with major ticks only (no minor ticks, which
// PLplot writes as one SVG element each).
void frame(double x_max, double y_max) {
  pladv(0);
  plvsta();
  plwind(0, x_max, 0, y_max);
  plbox("bcnt", 0, 0, "bcntv", 0, 0);
}

// Colour map 0 indices set up by begin().
constexpr PLINT kBlack = 1;
constexpr PLINT kBlue = 2;
constexpr PLINT kRed = 3;
constexpr PLINT kGreen = 4;
constexpr PLINT kGrey = 5;

// Opens the svg device on `path` with a white background. PLplot exits the process when it
// cannot open its output, so the path is checked first.
void begin(const std::string& path, PLINT panels) {
  {
    std::ofstream probe(path, std::ios::trunc);
    if (!probe) throw std::runtime_error("cannot write " + path);
  }
  plsdev("svg");
  plsfnam(path.c_str());
  plspage(0, 0, 800, panels == 1 ? 500 : 720, 0, 0);
  plscol0(0, 255, 255, 255);
  plscol0(kBlack, 0, 0, 0);
  plscol0(kBlue, 31, 119, 180);
  plscol0(kRed, 214, 39, 40);
  plscol0(kGreen, 44, 160, 44);
  plscol0(kGrey, 150, 150, 150);
  plssub(1, panels);
  plinit();
  plschr(0, 0.8);
}

double top_of(const std::vector<double>& ys) {
  double top = 0;
  for (double y : ys) {
    if (std::isfinite(y)) top = std::max(top, y);
  }
  return top > 0 ? top * 1.08 : 1;
}

void panel(const std::vector<double>& x, const std::vector<double>& y, PLINT colour,
           const char* y_label, const char* title, const std::vector<double>* second = nullptr,
           PLINT second_colour = kGrey) {
  const double x_max = x.empty() ? 1 : std::max(1.0, x.back() + (x.size() > 1 ? x[1] - x[0] : 1));
  double y_max = top_of(y);
  if (second != nullptr) y_max = std::max(y_max, top_of(*second));
  plcol0(kBlack);
  frame(x_max, y_max);
  pllab("t (s)", y_label, title);
  if (second != nullptr && !second->empty()) {
    plcol0(second_colour);
    plline(static_cast<PLINT>(x.size()), x.data(), second->data());
  }
  if (!x.empty()) {
    plcol0(colour);
    plline(static_cast<PLINT>(x.size()), x.data(), y.data());
  }
}

std::vector<double> as_doubles(const auto& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Long series are drawn in buckets of `stride` seconds, so that a plot stays a few tens of KB:
// the bucket's start time, and the largest (peak) or mean value of its seconds.
std::vector<double> bucketed(const std::vector<double>& v, std::size_t stride, bool peak) {
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); i += stride) {
    const std::size_t end = std::min(v.size(), i + stride);
    double acc = peak ? v[i] : 0;
    for (std::size_t j = i; j < end; ++j) acc = peak ? std::max(acc, v[j]) : acc + v[j];
    out.push_back(peak ? acc : acc / static_cast<double>(end - i));
  }
  return out;
}

constexpr std::size_t kMaxPoints = 360;

}  // namespace

void plot_series(const std::string& path, const std::string& title, const Series& series) {
  const std::size_t stride = (series.t_s.size() + kMaxPoints - 1) / kMaxPoints;
  const std::size_t by = std::max<std::size_t>(1, stride);
  std::vector<double> t;
  for (std::size_t i = 0; i < series.t_s.size(); i += by) t.push_back(series.t_s[i]);
  const std::vector<double> depth = bucketed(as_doubles(series.queue_depth), by, true);
  const std::vector<double> in_flight = bucketed(as_doubles(series.in_flight), by, true);
  const std::vector<double> goodput = bucketed(as_doubles(series.goodput), by, false);
  const std::vector<double> p99 = bucketed(series.p99_ms, by, true);
  begin(path, 3);
  const std::string first = title + ": queue depth (blue), in flight (grey)";
  panel(t, depth, kBlue, "jobs", first.c_str(), &in_flight);
  panel(t, p99, kRed, "ms", "p99 latency of the jobs done each second");
  panel(t, goodput, kGreen, "jobs/s", "goodput: jobs done within the client timeout");
  plend();
}

void plot_sweep(const std::string& path, const std::string& title,
                const std::vector<SweepPoint>& points) {
  begin(path, 1);
  std::vector<double> load;
  std::vector<double> mean;
  std::vector<double> p99;
  std::vector<double> a_load;
  std::vector<double> a_mean;
  std::vector<double> a_p99;
  for (const SweepPoint& p : points) {
    load.push_back(p.load * 100);
    mean.push_back(p.mean_ms);
    p99.push_back(p.p99_ms);
    if (std::isfinite(p.analytic_mean_ms)) {
      a_load.push_back(p.load * 100);
      a_mean.push_back(p.analytic_mean_ms);
      a_p99.push_back(std::isfinite(p.analytic_p99_ms) ? p.analytic_p99_ms : p.analytic_mean_ms);
    }
  }
  const double y_max = std::max({top_of(p99), top_of(mean), top_of(a_p99)});
  plcol0(kBlack);
  frame(100, y_max);
  const std::string full = title + ": mean (blue), p99 (red); points simulated, lines analytic";
  pllab("load (% of capacity)", "latency (ms)", full.c_str());
  const auto n = static_cast<PLINT>(load.size());
  const auto an = static_cast<PLINT>(a_load.size());
  if (an > 0) {
    plcol0(kBlue);
    plline(an, a_load.data(), a_mean.data());
    plcol0(kRed);
    plline(an, a_load.data(), a_p99.data());
  }
  if (n > 0) {
    plcol0(kBlue);
    plpoin(n, load.data(), mean.data(), 4);
    plcol0(kRed);
    plpoin(n, load.data(), p99.data(), 4);
  }
  plend();
}

}  // namespace bubble::sim
