#include <bubble/scenarios/pool_burst.hpp>

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/scenarios/pool_properties.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace bubble::scenarios {

using namespace std::chrono_literals;

void showValue(const BurstJob& j, std::ostream& os) {
  os << to_string(j.kind) << " " << show_duration(j.work);
}

namespace {

void show_strategies(const std::vector<StrategyValue>& strategies, std::ostream& os) {
  os << "strategies=[";
  for (std::size_t i = 0; i < strategies.size(); ++i) {
    if (i > 0) os << ", ";
    showValue(strategies[i], os);
  }
  os << "]";
}

// Every run of a case stops a spin that never ends (a submit waiting for a slot that is never
// filled) and a workload that never settles within these budgets, as a failure of the run.
Options run_options(const StrategyValue& s) {
  Options o;
  o.strategy = s.value;
  o.max_steps = 200'000;
  o.max_virtual_time = 1h;
  return o;
}

[[noreturn]] void fail_burst(const std::string& what) {
  throw PropertyViolation(what);
}

std::string burst_job_name(std::size_t s, std::size_t j) {
  return "job " + std::to_string(j) + " of submitter " + std::to_string(s);
}

// Keeps the deepest queue a submit was told of.
struct DepthSink final : PoolMetricsSink {
  std::size_t deepest = 0;
  void job_submitted(std::size_t queue_depth) override { deepest = std::max(deepest, queue_depth); }
};

void burst_run(Runtime& rt, const BurstCase& c) {
  // Everything the jobs touch is declared before the pool, which outlives none of it: a failed
  // check unwinds through the pool's destructor, which still runs what it holds.
  DepthSink sink;
  const std::size_t n = c.submitters.size();
  std::vector<std::vector<int>> runs(n);
  std::vector<std::vector<bool>> ended(n);
  std::vector<std::vector<std::error_code>> results(n);
  std::vector<std::pair<std::size_t, std::size_t>> starts;  // (submitter, job) as they start
  Duration total_work{};
  for (std::size_t s = 0; s < n; ++s) {
    runs[s].assign(c.submitters[s].size(), 0);
    ended[s].assign(c.submitters[s].size(), false);
    results[s].resize(c.submitters[s].size());
    for (const BurstJob& j : c.submitters[s]) total_work += j.work.value;
  }
  PoolOptions options;
  options.workers = c.workers;
  options.queue_capacity = c.capacity;
  if (c.metrics) options.metrics_sink = &sink;
  Pool pool(options, rt);
  {
    std::vector<std::unique_ptr<ThreadHandle>> submitters;
    for (std::size_t s = 0; s < n; ++s) {
      submitters.push_back(rt.spawn("submitter-" + std::to_string(s), [&, s] {
        for (std::size_t j = 0; j < c.submitters[s].size(); ++j) {
          const BurstJob& spec = c.submitters[s][j];
          Job job = [&, s, j, work = spec.work.value](const Context&) {
            ++runs[s][j];
            starts.emplace_back(s, j);
            rt.sleep_for(work);
            ended[s][j] = true;
          };
          results[s][j] = spec.kind == SubmitKind::submit
                              ? pool.submit(Context::background(), std::move(job))
                              : pool.try_submit(Context::background(), std::move(job));
        }
      }));
    }
    for (auto& t : submitters) t->join();
  }
  // Every accepted job has had the time to run (condition 3).
  rt.sleep_for(total_work + 1ms);
  bubble::wait();
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t j = 0; j < c.submitters[s].size(); ++j) {
      const std::error_code ec = results[s][j];
      if (ec && ec != errc::full) {
        fail_burst(burst_job_name(s, j) + " was refused with " + ec.message() +
                   "; only full is possible");
      }
      if (ec == errc::full && c.submitters[s][j].kind == SubmitKind::submit) {
        fail_burst(burst_job_name(s, j) + ": submit returned full; it waits for room instead");
      }
      if (ec && runs[s][j] != 0) fail_burst(burst_job_name(s, j) + " was refused but ran");
      if (!ec && runs[s][j] != 1) {
        fail_burst(burst_job_name(s, j) + " was accepted and ran " + std::to_string(runs[s][j]) +
                   " times (every accepted job runs exactly once)");
      }
      if (!ec && !ended[s][j]) {
        fail_burst(burst_job_name(s, j) + " was accepted but had not ended " +
                   show_duration(total_work + 1ms) +
                   " after the last submit returned, with no other work left: it waited while a "
                   "worker was idle");
      }
    }
  }
  if (sink.deepest > static_cast<std::size_t>(c.capacity)) {
    fail_burst("a submit was told of a queue depth of " + std::to_string(sink.deepest) +
               ", above the capacity " + std::to_string(c.capacity));
  }
  if (c.workers == 1) {
    std::vector<std::size_t> last(n, 0);
    std::vector<bool> any(n, false);
    for (const auto& [s, j] : starts) {
      if (any[s] && j < last[s]) {
        fail_burst(burst_job_name(s, j) + " started after " + burst_job_name(s, last[s]) +
                   " (one worker: a submitter's jobs start in its order)");
      }
      any[s] = true;
      last[s] = j;
    }
  }
  if (const std::error_code ec = pool.shutdown(Context::background())) {
    fail_burst("shutdown returned " + ec.message() + " with no deadline");
  }
  if (pool.try_submit(Context::background(), [](const Context&) {}) != errc::closed) {
    fail_burst("a try_submit after shutdown was not refused with closed");
  }
}

void stall_run(Runtime& rt, const StallCase& c) {
  // The gate and the counts are declared before the pool, which outlives neither (see burst_run).
  Notification gate(rt);
  const std::size_t n = c.calls.size();
  std::vector<std::vector<int>> runs(n);
  std::vector<std::vector<std::error_code>> results(n);
  PoolOptions options;
  options.workers = c.workers;
  options.queue_capacity = c.capacity;
  Pool pool(options, rt);
  // Opens the gate on every way out, so that the workers can stop.
  struct OpenGate {
    Notification& gate;
    ~OpenGate() { gate.notify(); }
  } open_gate{gate};
  for (int w = 0; w < c.workers; ++w) {
    if (pool.submit(Context::background(), [&](const Context&) { gate.wait(); })) {
      fail_burst("a gate job was refused by an empty pool");
    }
    bubble::wait();  // A worker takes it: the queue is empty again.
  }
  {
    std::vector<std::unique_ptr<ThreadHandle>> submitters;
    for (std::size_t s = 0; s < n; ++s) {
      runs[s].assign(static_cast<std::size_t>(c.calls[s]), 0);
      results[s].resize(static_cast<std::size_t>(c.calls[s]));
      submitters.push_back(rt.spawn("submitter-" + std::to_string(s), [&, s] {
        for (std::size_t j = 0; j < runs[s].size(); ++j) {
          results[s][j] =
              pool.try_submit(Context::background(), [&, s, j](const Context&) { ++runs[s][j]; });
        }
      }));
    }
    for (auto& t : submitters) t->join();
  }
  std::size_t calls = 0;
  std::size_t accepted = 0;
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t j = 0; j < results[s].size(); ++j) {
      ++calls;
      if (!results[s][j]) {
        ++accepted;
      } else if (results[s][j] != errc::full) {
        fail_burst(burst_job_name(s, j) + " was refused with " + results[s][j].message());
      }
    }
  }
  const std::size_t expected = std::min(calls, static_cast<std::size_t>(c.capacity));
  if (accepted != expected) {
    fail_burst(std::to_string(accepted) + " of " + std::to_string(calls) +
               " try_submits were accepted while no job could be taken; a queue of capacity " +
               std::to_string(c.capacity) + " takes exactly " + std::to_string(expected));
  }
  gate.notify();
  if (pool.shutdown(Context::background())) fail_burst("shutdown failed with no deadline");
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t j = 0; j < runs[s].size(); ++j) {
      const int expected_runs = results[s][j] ? 0 : 1;
      if (runs[s][j] != expected_runs) {
        fail_burst(burst_job_name(s, j) + " ran " + std::to_string(runs[s][j]) +
                   " times; expected " + std::to_string(expected_runs));
      }
    }
  }
}

}  // namespace

void showValue(const BurstCase& c, std::ostream& os) {
  os << "BurstCase{workers=" << c.workers << ", capacity=" << c.capacity
     << ", metrics=" << (c.metrics ? "yes" : "no") << ", ";
  show_strategies(c.strategies, os);
  for (std::size_t s = 0; s < c.submitters.size(); ++s) {
    os << ",\n  submitter " << s << ": [";
    for (std::size_t j = 0; j < c.submitters[s].size(); ++j) {
      if (j > 0) os << ", ";
      showValue(c.submitters[s][j], os);
    }
    os << "]";
  }
  os << "}";
}

rc::Gen<BurstCase> burst_case() {
  return rc::gen::exec([] {
    BurstCase c;
    c.workers = *rc::gen::inRange(1, 4);
    c.capacity = *rc::gen::inRange(2, 17);
    c.metrics = *rc::gen::inRange(0, 2) == 0;
    const auto job = rc::gen::exec([] {
      BurstJob j;
      j.kind = *rc::gen::inRange(0, 3) == 0 ? SubmitKind::submit : SubmitKind::try_submit;
      j.work = *rc::gen::inRange(0, 2) == 0 ? DurationValue{} : *milliseconds_in(1, 3);
      return j;
    });
    const auto submitters = static_cast<std::size_t>(*rc::gen::inRange(2, 6));
    for (std::size_t s = 0; s < submitters; ++s) {
      c.submitters.push_back(
          *rc::gen::container<std::vector<BurstJob>>(*rc::gen::inRange<std::size_t>(1, 31), job));
    }
    c.strategies = *rc::gen::container<std::vector<StrategyValue>>(
        static_cast<std::size_t>(*rc::gen::inRange(1, 4)), case_strategy());
    return c;
  });
}

void check_burst_case(const BurstCase& c) {
  for (const StrategyValue& s : c.strategies) {
    testing::run_property(run_options(s), [&c](Runtime& rt) { burst_run(rt, c); });
  }
}

void showValue(const StallCase& c, std::ostream& os) {
  os << "StallCase{workers=" << c.workers << ", capacity=" << c.capacity << ", calls=[";
  for (std::size_t i = 0; i < c.calls.size(); ++i) os << (i > 0 ? ", " : "") << c.calls[i];
  os << "], ";
  show_strategies(c.strategies, os);
  os << "}";
}

rc::Gen<StallCase> stall_case() {
  return rc::gen::exec([] {
    StallCase c;
    c.workers = *rc::gen::inRange(1, 4);
    c.capacity = *rc::gen::inRange(2, 13);
    c.calls = *rc::gen::container<std::vector<int>>(
        static_cast<std::size_t>(*rc::gen::inRange(2, 6)), rc::gen::inRange(1, 13));
    c.strategies = *rc::gen::container<std::vector<StrategyValue>>(
        static_cast<std::size_t>(*rc::gen::inRange(1, 4)), case_strategy());
    return c;
  });
}

void check_stall_case(const StallCase& c) {
  for (const StrategyValue& s : c.strategies) {
    testing::run_property(run_options(s), [&c](Runtime& rt) { stall_run(rt, c); });
  }
}

}  // namespace bubble::scenarios
