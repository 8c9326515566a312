#include <bubble/sim/plot.hpp>

#include <plplot.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace bubble::sim {

namespace {

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
  const double x_max = x.empty() ? 1 : std::max(1.0, x.back() + 1);
  double y_max = top_of(y);
  if (second != nullptr) y_max = std::max(y_max, top_of(*second));
  plcol0(kBlack);
  plenv(0, x_max, 0, y_max, 0, 0);
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

}  // namespace

void plot_series(const std::string& path, const std::string& title, const Series& series) {
  begin(path, 3);
  const std::vector<double> depth = as_doubles(series.queue_depth);
  const std::vector<double> in_flight = as_doubles(series.in_flight);
  const std::vector<double> goodput = as_doubles(series.goodput);
  const std::string first = title + ": queue depth (blue), in flight (grey)";
  panel(series.t_s, depth, kBlue, "jobs", first.c_str(), &in_flight);
  panel(series.t_s, series.p99_ms, kRed, "ms", "p99 latency of the jobs done each second");
  panel(series.t_s, goodput, kGreen, "jobs/s", "goodput: jobs done within the client timeout");
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
  plenv(0, 100, 0, y_max, 0, 0);
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
