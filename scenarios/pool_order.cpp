#include <bubble/scenarios/pool_order.hpp>

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/scenarios/pool_under_test.hpp>
#include <bubble/scenarios/show.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>

#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

namespace bubble::scenarios {
namespace {

using namespace std::chrono_literals;

// ---- which job starts next ----

// Job i arrives at arrive_ms (whole milliseconds, strictly increasing) and works work_ms plus one
// microsecond, so that a job never ends at the instant another arrives: the order of a take and
// an arrival is never a tie.
struct OrderJob {
  int arrive_ms = 0;
  int tenant = 0;  // 0 is the default tenant ""
  int priority = 0;
  int work_ms = 0;
};

struct OrderCase {
  int aging_ms = 0;  // 0: aging off
  std::vector<OrderJob> jobs;
  StrategyValue strategy;
};

void showValue(const OrderCase& c, std::ostream& os) {
  os << "OrderCase{aging_step=" << c.aging_ms << "ms, jobs=[";
  for (std::size_t i = 0; i < c.jobs.size(); ++i) {
    const OrderJob& j = c.jobs[i];
    os << (i == 0 ? "" : ", ") << i << ":{at " << j.arrive_ms << "ms, tenant " << j.tenant
       << ", priority " << j.priority << ", work " << j.work_ms << "ms+1us}";
  }
  os << "], strategy=";
  showValue(c.strategy, os);
  os << "}";
}

rc::Gen<OrderCase> order_case() {
  return rc::gen::exec([] {
    OrderCase c;
    c.aging_ms =
        *rc::gen::weightedOneOf<int>({{1, rc::gen::just(0)}, {2, rc::gen::inRange(3, 21)}});
    const int n = *rc::gen::inRange(1, 13);
    int at = 0;
    for (int i = 0; i < n; ++i) {
      OrderJob j;
      at += *rc::gen::inRange(1, 7);
      j.arrive_ms = at;
      j.tenant = *rc::gen::inRange(0, 3);
      j.priority = *rc::gen::inRange(0, 3);
      j.work_ms = *rc::gen::inRange(0, 13);
      c.jobs.push_back(j);
    }
    c.strategy = *case_strategy();
    return c;
  });
}

Duration work_of(const OrderJob& j) {
  return std::chrono::milliseconds(j.work_ms) + 1us;
}

// The order in which one worker starts the jobs, by the header's rule.
std::vector<int> model_order(const OrderCase& c) {
  struct Level {
    std::deque<int> ring;                  // tenants in turn; front: the next one served
    std::map<int, std::deque<int>> lanes;  // tenant -> its jobs, oldest first
  };
  std::map<int, Level, std::greater<>> levels;  // by decreasing priority
  const std::size_t n = c.jobs.size();
  std::size_t next = 0;
  Duration t{};
  std::size_t queued = 0;
  std::vector<int> order;
  auto arrive = [&](std::size_t i) {
    const OrderJob& j = c.jobs[i];
    Level& level = levels[j.priority];
    std::deque<int>& lane = level.lanes[j.tenant];
    if (lane.empty()) level.ring.push_back(j.tenant);  // last in the current round
    lane.push_back(static_cast<int>(i));
    ++queued;
  };
  while (order.size() < n) {
    while (next < n && std::chrono::milliseconds(c.jobs[next].arrive_ms) <= t) arrive(next++);
    if (queued == 0) {
      t = std::chrono::milliseconds(c.jobs[next].arrive_ms);
      arrive(next++);
    }
    // The level of highest effective priority, ties to the one whose oldest job is older.
    Level* best = nullptr;
    std::int64_t best_eff = 0;
    int best_oldest = 0;
    for (auto& [priority, level] : levels) {
      if (level.ring.empty()) continue;
      int oldest = static_cast<int>(n);
      for (const auto& [tenant, lane] : level.lanes) {
        if (!lane.empty()) oldest = std::min(oldest, lane.front());
      }
      std::int64_t eff = priority;
      if (c.aging_ms > 0) {
        const Duration waited =
            t - std::chrono::milliseconds(c.jobs[static_cast<std::size_t>(oldest)].arrive_ms);
        eff += waited / std::chrono::milliseconds(c.aging_ms);
      }
      if (best == nullptr || eff > best_eff || (eff == best_eff && oldest < best_oldest)) {
        best = &level;
        best_eff = eff;
        best_oldest = oldest;
      }
    }
    const int tenant = best->ring.front();
    best->ring.pop_front();
    std::deque<int>& lane = best->lanes[tenant];
    const int job = lane.front();
    lane.pop_front();
    if (!lane.empty()) best->ring.push_back(tenant);
    --queued;
    order.push_back(job);
    t += work_of(c.jobs[static_cast<std::size_t>(job)]);
  }
  return order;
}

std::string show_order(const std::vector<int>& order) {
  std::string out = "[";
  for (std::size_t i = 0; i < order.size(); ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(order[i]);
  }
  return out + "]";
}

// ---- submit_within's bound ----

struct WithinCall {
  SubmitKind kind = SubmitKind::submit_within;
  int gap_ms = 0;   // before the call
  int wait_ms = 0;  // submit_within's max_wait
  int work_ms = 1;
};

struct WithinCase {
  int capacity = 1;
  bool resume_at_once = false;  // room_to_resume = 1 (otherwise automatic)
  std::vector<std::vector<WithinCall>> submitters;
  StrategyValue strategy;
};

void showValue(const WithinCase& c, std::ostream& os) {
  os << "WithinCase{capacity=" << c.capacity << ", room_to_resume=" << (c.resume_at_once ? 1 : 0)
     << ", submitters=[";
  for (std::size_t s = 0; s < c.submitters.size(); ++s) {
    os << (s == 0 ? "[" : ", [");
    for (std::size_t i = 0; i < c.submitters[s].size(); ++i) {
      const WithinCall& w = c.submitters[s][i];
      os << (i == 0 ? "" : ", ") << "after " << w.gap_ms << "ms " << to_string(w.kind);
      if (w.kind == SubmitKind::submit_within) os << "(" << w.wait_ms << "ms)";
      os << " work " << w.work_ms << "ms";
    }
    os << "]";
  }
  os << "], strategy=";
  showValue(c.strategy, os);
  os << "}";
}

rc::Gen<WithinCase> within_case() {
  return rc::gen::exec([] {
    WithinCase c;
    c.capacity = *rc::gen::inRange(1, 3);
    c.resume_at_once = *rc::gen::arbitrary<bool>();
    const int submitters = *rc::gen::inRange(2, 5);
    for (int s = 0; s < submitters; ++s) {
      std::vector<WithinCall> calls(static_cast<std::size_t>(*rc::gen::inRange(1, 5)));
      for (WithinCall& w : calls) {
        w.kind = *rc::gen::weightedOneOf<SubmitKind>({{3, rc::gen::just(SubmitKind::submit_within)},
                                                      {1, rc::gen::just(SubmitKind::submit)},
                                                      {1, rc::gen::just(SubmitKind::try_submit)}});
        w.gap_ms = *rc::gen::inRange(0, 11);
        w.wait_ms = *rc::gen::inRange(0, 31);
        w.work_ms = *rc::gen::inRange(1, 16);
      }
      c.submitters.push_back(std::move(calls));
    }
    c.strategy = *case_strategy();
    return c;
  });
}

// ---- a shutdown racing a burst ----

struct ShutdownRaceCase {
  int workers = 1;
  int capacity = 2;
  std::vector<std::vector<SubmitKind>> submitters;  // submit or try_submit, back to back
  int work_ms = 0;                                  // every job's work
  int shutdown_ms = 0;                              // when the shutdown starts
  StrategyValue strategy;
};

void showValue(const ShutdownRaceCase& c, std::ostream& os) {
  os << "ShutdownRaceCase{workers=" << c.workers << ", capacity=" << c.capacity << ", submitters=[";
  for (std::size_t s = 0; s < c.submitters.size(); ++s) {
    os << (s == 0 ? "[" : ", [");
    for (std::size_t i = 0; i < c.submitters[s].size(); ++i) {
      os << (i == 0 ? "" : ", ") << to_string(c.submitters[s][i]);
    }
    os << "]";
  }
  os << "], work=" << c.work_ms << "ms, shutdown at " << c.shutdown_ms << "ms, strategy=";
  showValue(c.strategy, os);
  os << "}";
}

rc::Gen<ShutdownRaceCase> shutdown_race_case() {
  return rc::gen::exec([] {
    ShutdownRaceCase c;
    c.workers = *rc::gen::inRange(1, 3);
    c.capacity = *rc::gen::inRange(2, 9);
    const int submitters = *rc::gen::inRange(1, 4);
    for (int s = 0; s < submitters; ++s) {
      c.submitters.push_back(*rc::gen::container<std::vector<SubmitKind>>(
          static_cast<std::size_t>(*rc::gen::inRange(1, 9)),
          rc::gen::weightedOneOf<SubmitKind>({{2, rc::gen::just(SubmitKind::try_submit)},
                                              {1, rc::gen::just(SubmitKind::submit)}})));
    }
    c.work_ms = *rc::gen::inRange(0, 4);
    c.shutdown_ms = *rc::gen::inRange(0, 4);
    c.strategy = *case_strategy();
    return c;
  });
}

Options order_run_options(const StrategyValue& s) {
  Options o;
  o.strategy = s.value;
  o.max_steps = 200'000;
  o.max_virtual_time = 1h;
  return o;
}

}  // namespace

void pool_starts_jobs_in_priority_and_tenant_order() {
  const OrderCase c = testing::draw(order_case());
  const std::vector<int> expected = model_order(c);
  testing::run_property(order_run_options(c.strategy), [&](Runtime& rt) {
    const TimePoint start = rt.now();
    std::vector<int> started;
    PoolOptions o;
    o.workers = 1;
    o.queue_capacity = 64;
    o.aging_step = std::chrono::milliseconds(c.aging_ms);
    Pool pool(o, rt);
    for (std::size_t i = 0; i < c.jobs.size(); ++i) {
      const OrderJob& j = c.jobs[i];
      rt.sleep_for(start + std::chrono::milliseconds(j.arrive_ms) - rt.now());
      JobOptions opts;
      opts.priority = j.priority;
      opts.tenant = j.tenant == 0 ? std::string() : "tenant-" + std::to_string(j.tenant);
      const std::error_code ec = pool.submit(
          Context::background(),
          [&started, &rt, i, work = work_of(j)] {
            started.push_back(static_cast<int>(i));
            rt.sleep_for(work);
          },
          std::move(opts));
      if (ec) BUBBLE_FAIL("job " + std::to_string(i) + " was refused: " + ec.message());
    }
    if (pool.shutdown()) BUBBLE_FAIL("shutdown without a deadline did not return {}");
    if (started != expected) {
      BUBBLE_FAIL("the worker started the jobs in the order " + show_order(started) +
                  ", the header's rule gives " + show_order(expected));
    }
  });
}

void submit_within_never_waits_past_its_bound() {
  const WithinCase c = testing::draw(within_case());
  testing::run_property(order_run_options(c.strategy), [&](Runtime& rt) {
    PoolOptions o;
    o.workers = 1;
    o.queue_capacity = c.capacity;
    o.room_to_resume = c.resume_at_once ? 1 : 0;
    Pool pool(o, rt);
    std::vector<std::unique_ptr<ThreadHandle>> threads;
    for (std::size_t s = 0; s < c.submitters.size(); ++s) {
      threads.push_back(rt.spawn("submitter-" + std::to_string(s), [&, s] {
        for (std::size_t i = 0; i < c.submitters[s].size(); ++i) {
          const WithinCall& w = c.submitters[s][i];
          rt.sleep_for(std::chrono::milliseconds(w.gap_ms));
          Job job = [&rt, work = std::chrono::milliseconds(w.work_ms)] { rt.sleep_for(work); };
          const TimePoint called = rt.now();
          const Duration max_wait = std::chrono::milliseconds(w.wait_ms);
          std::error_code ec;
          switch (w.kind) {
            case SubmitKind::submit:
              ec = pool.submit(Context::background(), std::move(job));
              break;
            case SubmitKind::try_submit:
              ec = pool.try_submit(Context::background(), std::move(job));
              break;
            case SubmitKind::submit_within:
              ec = pool.submit_within(Context::background(), std::move(job), max_wait);
              break;
          }
          const Duration waited = rt.now() - called;
          const std::string call = "call " + std::to_string(i) + " of submitter " +
                                   std::to_string(s) + " (" + to_string(w.kind) + ")";
          if (ec && (ec != errc::full || w.kind == SubmitKind::submit)) {
            BUBBLE_FAIL(call + " returned '" + ec.message() + "'");
          }
          if (w.kind == SubmitKind::try_submit && waited != Duration::zero()) {
            BUBBLE_FAIL(call + " waited " + show_duration(waited));
          }
          if (w.kind == SubmitKind::submit_within) {
            if (waited > max_wait) {
              BUBBLE_FAIL(call + " with max_wait " + show_duration(max_wait) + " returned '" +
                          (ec ? ec.message() : std::string("accepted")) + "' after " +
                          show_duration(waited));
            }
            if (ec == errc::full && waited != max_wait) {
              BUBBLE_FAIL(call + " with max_wait " + show_duration(max_wait) +
                          " returned full after " + show_duration(waited) +
                          ", not after exactly max_wait");
            }
          }
        }
      }));
    }
    for (auto& t : threads) t->join();
    if (pool.shutdown()) BUBBLE_FAIL("shutdown without a deadline did not return {}");
  });
}

void shutdown_racing_a_burst_runs_every_accepted_job() {
  const ShutdownRaceCase c = testing::draw(shutdown_race_case());
  testing::run_property(order_run_options(c.strategy), [&](Runtime& rt) {
    const std::size_t n = c.submitters.size();
    std::vector<std::vector<int>> runs(n);
    std::vector<std::vector<std::error_code>> results(n);
    for (std::size_t s = 0; s < n; ++s) {
      runs[s].assign(c.submitters[s].size(), 0);
      results[s].resize(c.submitters[s].size());
    }
    std::vector<std::vector<int>> runs_at_shutdown;
    std::error_code shut;
    PoolOptions o;
    o.workers = c.workers;
    o.queue_capacity = c.capacity;
    Pool pool(o, rt);
    std::vector<std::unique_ptr<ThreadHandle>> threads;
    for (std::size_t s = 0; s < n; ++s) {
      threads.push_back(rt.spawn("submitter-" + std::to_string(s), [&, s] {
        for (std::size_t j = 0; j < c.submitters[s].size(); ++j) {
          Job job = [&, s, j] {
            ++runs[s][j];
            rt.sleep_for(std::chrono::milliseconds(c.work_ms));
          };
          results[s][j] = c.submitters[s][j] == SubmitKind::submit
                              ? pool.submit(Context::background(), std::move(job))
                              : pool.try_submit(Context::background(), std::move(job));
        }
      }));
    }
    threads.push_back(rt.spawn("shutdown", [&] {
      rt.sleep_for(std::chrono::milliseconds(c.shutdown_ms));
      shut = pool.shutdown();
      runs_at_shutdown = runs;
    }));
    for (auto& t : threads) t->join();
    if (shut) BUBBLE_FAIL("shutdown without a deadline returned '" + shut.message() + "'");
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t j = 0; j < c.submitters[s].size(); ++j) {
        const std::error_code ec = results[s][j];
        const std::string job = "job " + std::to_string(j) + " of submitter " + std::to_string(s);
        if (ec && ec != errc::closed &&
            !(ec == errc::full && c.submitters[s][j] == SubmitKind::try_submit)) {
          BUBBLE_FAIL(job + " was refused with '" + ec.message() + "'");
        }
        if (ec && runs[s][j] != 0) BUBBLE_FAIL(job + " was refused but ran");
        if (!ec && runs_at_shutdown[s][j] != 1) {
          BUBBLE_FAIL(job + " was accepted but had run " + std::to_string(runs_at_shutdown[s][j]) +
                      " times when shutdown returned {} (every accepted job runs exactly once "
                      "before shutdown returns)");
        }
      }
    }
  });
}

}  // namespace bubble::scenarios
