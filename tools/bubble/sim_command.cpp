// `bubble sim`: open-loop arrivals into a real bubble::Pool in a bubble (virtual time).
#include <bubble/sim/analytic.hpp>
#include <bubble/sim/engine.hpp>
#include <bubble/sim/model.hpp>
#include <bubble/sim/parse.hpp>
#include <bubble/sim/plot.hpp>

#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "option_error.hpp"

namespace bubble::cli {
namespace {

using nlohmann::json;
using namespace bubble::sim;

struct SimArgs {
  std::string workers = "4";
  std::string queue = "64";
  std::string policy = "unbounded";
  std::string job_time = "fixed:400ms";
  std::string arrivals = "poisson:9/s";
  std::vector<std::string> spikes;
  std::vector<std::string> slowdowns;
  std::string client_timeout;
  bool deadline_skip = false;
  std::string rate_limit;
  std::string concurrency_limit;
  std::string urgent;
  std::string aging;
  std::string tenant_queue;
  std::string batch;
  std::string fairness = "round-robin";
  std::string measure = "all";
  std::string duration = "60s";
  std::string warmup = "0s";
  std::string seed = "1";
  bool json = false;
  bool analytic = false;
  std::string svg;
  std::string csv;
  std::string sweep;
};

SimConfig to_config(const SimArgs& a) {
  SimConfig c;
  c.workers = static_cast<int>(
      parse_option("--workers", a.workers, [](auto v) { return parse_integer(v, 1, 10000); }));
  c.queue =
      parse_option("--queue", a.queue, [](auto v) { return parse_integer(v, 1, 1'000'000'000); });
  c.policy = parse_option("--policy", a.policy, parse_policy);
  c.job_time = parse_option("--job-time", a.job_time, parse_job_time);
  c.arrivals = parse_option("--arrivals", a.arrivals, parse_arrivals);
  for (const auto& s : a.spikes) c.spikes.push_back(parse_option("--spike", s, parse_spike));
  for (const auto& s : a.slowdowns) {
    c.slowdowns.push_back(parse_option("--slowdown", s, parse_slowdown));
  }
  if (!a.client_timeout.empty()) {
    c.client_timeout = parse_option("--client-timeout", a.client_timeout,
                                    [](auto v) { return parse_duration(v, true); });
  }
  c.deadline_skip = a.deadline_skip;
  if (c.deadline_skip && !c.client_timeout) {
    throw OptionError("--deadline-skip: needs --client-timeout (the deadline to check)");
  }
  if (!a.rate_limit.empty()) {
    c.rate_limit =
        parse_option("--rate-limit", a.rate_limit, [](auto v) { return parse_rate_per_second(v); });
    if (c.policy == QueuePolicy::block) {
      throw OptionError(
          fmt::format("--rate-limit {}: cannot be combined with --policy block "
                      "(the limiter refuses arrivals without a token)",
                      a.rate_limit));
    }
    if (c.deadline_skip) {
      throw OptionError(
          fmt::format("--rate-limit {}: cannot be combined with --deadline-skip", a.rate_limit));
    }
  }
  if (!a.concurrency_limit.empty()) {
    c.concurrency_limit = parse_option("--concurrency-limit", a.concurrency_limit,
                                       [](auto v) { return parse_integer(v, 1, 1'000'000'000); });
  }
  if (!a.urgent.empty()) c.urgent = parse_option("--urgent", a.urgent, parse_arrivals);
  if (!a.aging.empty()) {
    c.aging_step = parse_option("--aging", a.aging, [](auto v) { return parse_duration(v, true); });
  }
  if (!a.tenant_queue.empty()) {
    c.tenant_queue = parse_option("--tenant-queue", a.tenant_queue,
                                  [](auto v) { return parse_integer(v, 1, 1'000'000'000); });
  }
  if (!a.batch.empty()) c.batch = parse_option("--batch", a.batch, parse_batch);
  c.fairness = parse_option("--fairness", a.fairness, parse_fairness);
  c.measure = parse_option("--measure", a.measure, parse_stream_filter);
  c.duration =
      parse_option("--duration", a.duration, [](auto v) { return parse_duration(v, true); });
  c.warmup = parse_option("--warmup", a.warmup, [](auto v) { return parse_duration(v, false); });
  if (c.warmup >= c.duration) {
    throw OptionError(fmt::format("--warmup {}: expected a warmup shorter than --duration ({})",
                                  a.warmup, a.duration));
  }
  c.seed = parse_option("--seed", a.seed, parse_seed);
  if (!a.sweep.empty()) (void)parse_option("--sweep-load", a.sweep, parse_sweep);
  validate(c);  // combinations the checks above do not name (they throw std::invalid_argument)
  return c;
}

json summary_json(const MillisecondSummary& s) {
  return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

// NaN is not JSON: unknown analytic quantiles are null.
json number_or_null(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}

json prediction_json(const std::optional<Prediction>& p) {
  if (!p) return nullptr;
  return {{"model", p->model},
          {"load", p->load},
          {"p_wait", number_or_null(p->p_wait)},
          {"latency_ms",
           {{"mean", p->mean_ms},
            {"p50", number_or_null(p->p50_ms)},
            {"p90", number_or_null(p->p90_ms)},
            {"p99", number_or_null(p->p99_ms)}}}};
}

json result_json(const SimResult& r) {
  return {{"completed", r.completed},
          {"rejected", r.rejected},
          {"timed_out", r.timed_out},
          {"skipped", r.skipped},
          {"throughput_per_s", r.throughput_per_s},
          {"goodput_per_s", r.goodput_per_s},
          {"utilization", r.utilization},
          {"max_queue", r.max_queue},
          {"latency_ms", summary_json(r.latency_ms)},
          {"wait_ms", summary_json(r.wait_ms)},
          {"series",
           {{"t_s", r.series.t_s},
            {"queue_depth", r.series.queue_depth},
            {"in_flight", r.series.in_flight},
            {"goodput", r.series.goodput},
            {"p99_ms", r.series.p99_ms}}}};
}

std::string describe(const SimConfig& c, const SimArgs& a) {
  std::string queue = c.policy == QueuePolicy::unbounded
                          ? std::string("unbounded queue")
                          : fmt::format("queue {} ({})", c.queue, a.policy);
  return fmt::format("{} workers, {}, {} jobs, {} arrivals (load {:.0f}%), {} (warmup {}), seed {}",
                     c.workers, queue, a.job_time, a.arrivals, offered_load(c) * 100, a.duration,
                     a.warmup, c.seed);
}

void print_summary(const SimConfig& c, const SimArgs& a, const SimResult& r,
                   const std::optional<Prediction>& p, bool analytic) {
  fmt::print("bubble sim: {}\n", describe(c, a));
  fmt::print("arrived {}  completed {}  rejected {}  timed out {}  skipped {}\n", r.arrived,
             r.completed, r.rejected, r.timed_out, r.skipped);
  fmt::print(
      "throughput {:.2f}/s  goodput {:.2f}/s  utilization {:.1f}%  max queue {}  max in "
      "flight {}\n",
      r.throughput_per_s, r.goodput_per_s, r.utilization * 100, r.max_queue, r.max_in_flight);
  const auto& l = r.latency_ms;
  const auto& w = r.wait_ms;
  fmt::print("latency ms: mean {:.1f}  p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  max {:.1f}\n", l.mean,
             l.p50, l.p90, l.p99, l.max);
  fmt::print("wait ms:    mean {:.1f}  p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  max {:.1f}\n", w.mean,
             w.p50, w.p90, w.p99, w.max);
  if (!analytic) return;
  if (!p) {
    fmt::print(
        "analytic: no closed form (needs Poisson arrivals of one stream, an unbounded "
        "queue, no limits, timeouts or spikes, load < 1, and exponential jobs or one "
        "worker)\n");
    return;
  }
  auto ms = [](double x) { return std::isfinite(x) ? fmt::format("{:.1f}", x) : std::string("-"); };
  fmt::print(
      "analytic ({}): load {:.1f}%  P(wait) {:.3f}  latency ms: mean {:.1f}  p50 {}  p90 {}  "
      "p99 {}\n",
      p->model, p->load * 100, p->p_wait, p->mean_ms, ms(p->p50_ms), ms(p->p90_ms), ms(p->p99_ms));
}

void write_file(const std::string& option, const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out.flush()) throw OptionError(fmt::format("{} {}: cannot write the file", option, path));
}

// A progress line on stderr when it is a terminal, at most five times a second of wall time.
std::function<void(Duration, Duration)> progress_line(const std::string& what) {
  if (::isatty(STDERR_FILENO) == 0) return {};
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last, what](Duration elapsed, Duration total) {
    const auto now = std::chrono::steady_clock::now();
    if (elapsed < total && now - *last < std::chrono::milliseconds{200}) return;
    *last = now;
    fmt::print(stderr, "\r{}{} of {} simulated\x1b[K{}", what, format_duration(elapsed),
               format_duration(total), elapsed >= total ? "\r\x1b[K" : "");
  };
}

void run_single(SimConfig c, const SimArgs& a) {
  c.progress = progress_line("bubble sim: ");
  const SimResult r = simulate(c);
  const std::optional<Prediction> p = predict(c);
  if (a.json) {
    json j = result_json(r);
    if (a.analytic) j["analytic"] = prediction_json(p);
    fmt::print("{}\n", j.dump());
  } else {
    print_summary(c, a, r, p, a.analytic);
  }
  if (!a.csv.empty()) {
    std::string text = "t_s,queue_depth,in_flight,goodput,p99_ms\n";
    const Series& s = r.series;
    for (std::size_t i = 0; i < s.t_s.size(); ++i) {
      text += fmt::format("{},{},{},{},{}\n", s.t_s[i], s.queue_depth[i], s.in_flight[i],
                          s.goodput[i], s.p99_ms[i]);
    }
    write_file("--csv", a.csv, text);
  }
  if (!a.svg.empty()) {
    try {
      plot_series(a.svg, describe(c, a), r.series);
    } catch (const std::runtime_error&) {
      throw OptionError(fmt::format("--svg {}: cannot write the file", a.svg));
    }
  }
}

void run_sweep(const SimConfig& base, const SimArgs& a) {
  const LoadSweep sweep = parse_sweep(a.sweep);
  std::vector<SweepPoint> points;
  for (double load : sweep.loads()) {
    SimConfig c = base;
    c.arrivals.per_second = load * capacity_per_second(base);
    c.progress = progress_line(fmt::format("bubble sim: load {:.0f}%: ", load * 100));
    const SimResult r = simulate(c);
    const std::optional<Prediction> p = predict(c);
    const double nan = std::nan("");
    points.push_back(
        {load, r.latency_ms.mean, r.latency_ms.p99, p ? p->mean_ms : nan, p ? p->p99_ms : nan});
  }
  if (a.json) {
    json rows = json::array();
    for (const SweepPoint& p : points) {
      rows.push_back({{"load", p.load},
                      {"mean_ms", p.mean_ms},
                      {"p99_ms", p.p99_ms},
                      {"analytic_mean_ms", number_or_null(p.analytic_mean_ms)},
                      {"analytic_p99_ms", number_or_null(p.analytic_p99_ms)}});
    }
    fmt::print("{}\n", json{{"sweep", rows}}.dump());
  } else {
    fmt::print("bubble sim --sweep-load {}: {} workers, {} jobs, {}\n", a.sweep, base.workers,
               a.job_time, a.duration);
    fmt::print("{:>6} {:>12} {:>12} {:>14} {:>14}\n", "load", "mean ms", "p99 ms", "analytic mean",
               "analytic p99");
    for (const SweepPoint& p : points) {
      auto ms = [](double x) {
        return std::isfinite(x) ? fmt::format("{:.1f}", x) : std::string("-");
      };
      fmt::print("{:>5.0f}% {:>12.1f} {:>12.1f} {:>14} {:>14}\n", p.load * 100, p.mean_ms, p.p99_ms,
                 ms(p.analytic_mean_ms), ms(p.analytic_p99_ms));
    }
  }
  if (!a.csv.empty()) {
    std::string text = "load,mean_ms,p99_ms,analytic_mean_ms,analytic_p99_ms\n";
    for (const SweepPoint& p : points) {
      text += fmt::format("{},{},{},{},{}\n", p.load, p.mean_ms, p.p99_ms, p.analytic_mean_ms,
                          p.analytic_p99_ms);
    }
    write_file("--csv", a.csv, text);
  }
  if (!a.svg.empty()) {
    try {
      plot_sweep(a.svg, fmt::format("{} workers, {} jobs", base.workers, a.job_time), points);
    } catch (const std::runtime_error&) {
      throw OptionError(fmt::format("--svg {}: cannot write the file", a.svg));
    }
  }
}

constexpr const char* kSimFooter = R"(Examples:
  bubble sim --workers 1 --job-time exp:100ms --arrivals poisson:9/s --duration 1h --analytic
  bubble sim --workers 16 --job-time exp:100ms --arrivals poisson:128/s --duration 1h --json
  bubble sim --workers 4 --job-time fixed:400ms --arrivals poisson:8/s --spike 15/s@30s-40s \
             --client-timeout 2s --duration 150s --svg collapse.svg
  bubble sim --workers 1 --job-time exp:100ms --sweep-load 0.1:0.95:0.05 --svg hockey.svg

Counting: latency runs from arrival to done (queue wait plus service); only events in
[--warmup, --duration) count. completed counts every job a worker finished; those finished after
--client-timeout count in timed_out too (as do clients that gave up waiting for room), and goodput
counts only jobs done in time. Exit status: 0 after a run, 2 for bad usage.)";

}  // namespace

void add_sim_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<SimArgs>();
  auto* sim = app.add_subcommand(
      "sim",
      "Simulate a worker pool: open-loop arrivals into a real bubble::Pool, in virtual time");
  sim->footer(kSimFooter);
  sim->add_option("--workers", a->workers, "Worker threads (default 4)");
  sim->add_option("--queue", a->queue, "Queue capacity for block and reject (default 64)");
  sim->add_option("--policy", a->policy,
                  "unbounded | block (the arrival waits for room) | reject (refused when full)");
  sim->add_option("--job-time", a->job_time,
                  "fixed:400ms | exp:100ms | lognormal:100ms:0.5 (mean; lognormal's sigma)");
  sim->add_option("--arrivals", a->arrivals, "poisson:9/s | uniform:9/s (the main stream)");
  sim->add_option("--spike", a->spikes, "RATE@FROM-TO, e.g. 15/s@30s-40s (repeatable)");
  sim->add_option("--slowdown", a->slowdowns,
                  "JOBTIME@FROM: jobs starting from then take JOBTIME, e.g. fixed:10s@30s "
                  "(a dependency slowing down; repeatable)");
  sim->add_option("--client-timeout", a->client_timeout,
                  "Clients give up after this; goodput counts only jobs done within it");
  sim->add_flag("--deadline-skip", a->deadline_skip,
                "Workers skip a job that cannot finish (in its mean job time) before its client "
                "gives up");
  sim->add_option("--rate-limit", a->rate_limit,
                  "A RateLimiter in front, e.g. 50/s: arrivals without a token are refused");
  sim->add_option("--concurrency-limit", a->concurrency_limit,
                  "A ConcurrencyLimiter in front: arrivals over N in flight are refused");
  sim->add_option("--urgent", a->urgent,
                  "A second stream of priority 1 (tenant urgent), e.g. poisson:40/s; the main "
                  "stream has priority 0");
  sim->add_option("--aging", a->aging,
                  "The pool's aging step: a queued job gains one priority per step waited");
  sim->add_option("--tenant-queue", a->tenant_queue,
                  "At most N jobs queued per tenant; more are refused");
  sim->add_option("--batch", a->batch,
                  "COUNT@TIME: a tenant batch submitted at once, e.g. "
                  "50000@10s");
  sim->add_option("--fairness", a->fairness,
                  "round-robin (each stream its own tenant, served in turn; default) | fifo "
                  "(one tenant)");
  sim->add_option("--measure", a->measure,
                  "Which stream the statistics describe: all (default) | main | urgent | batch");
  sim->add_option("--duration", a->duration, "Virtual time to simulate (default 60s)");
  sim->add_option("--warmup", a->warmup, "Excluded from statistics (default 0s)");
  sim->add_option("--seed", a->seed, "Seed of the arrival and job-time draws (default 1)");
  sim->add_flag("--json", a->json,
                "Print one JSON object instead of the summary: completed, rejected, timed_out, "
                "skipped, throughput_per_s, goodput_per_s, utilization, max_queue, latency_ms, "
                "wait_ms, series (with --analytic also analytic; with --sweep-load: sweep)");
  sim->add_flag("--analytic", a->analytic,
                "Also print the closed-form values (M/M/c Erlang C, M/G/1) when they apply");
  sim->add_option("--svg", a->svg,
                  "Plot queue depth, p99 latency and goodput over time (with --sweep-load: the "
                  "hockey stick)");
  sim->add_option("--csv", a->csv, "Write the per-second series (with --sweep-load: the table)");
  sim->add_option("--sweep-load", a->sweep,
                  "FROM:TO:STEP, e.g. 0.1:0.95:0.05: one run per load (the arrival rate is "
                  "load x capacity), mean and p99 latency against load");
  sim->callback([a, &exit_code] {
    try {
      const SimConfig c = to_config(*a);
      if (a->sweep.empty()) {
        run_single(c, *a);
      } else {
        run_sweep(c, *a);
      }
      exit_code = 0;
    } catch (const std::invalid_argument& e) {
      throw OptionError(e.what());  // Reported by main() as every usage error.
    }
  });
}

}  // namespace bubble::cli
