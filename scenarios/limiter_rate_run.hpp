#pragma once

// Runs a RateWorkload in a bubble against a rate limiter implementation (the library's
// RateLimiter, or one of the known-bad variants of limiter_exhibits.hpp). Private to the
// scenarios library.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/thread.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "limiter_gen.hpp"
#include "limiter_rate_workload.hpp"

namespace bubble::scenarios {

// Works for `work` of virtual time in 5 ms steps, returning early once `ctx` is done.
inline void work_until_done(Runtime& rt, const Context& ctx, Duration work) {
  const TimePoint end = rt.now() + work;
  while (!ctx.done() && rt.now() < end) {
    rt.sleep_for(std::min<Duration>(std::chrono::milliseconds(5), end - rt.now()));
  }
}

// Runs `w` in a bubble with `options` (its strategy is w.schedule unless options.replay is set)
// through testing::run_property, so a deadlock or an exception fails the current RapidCheck case.
// Limiter is constructible as Limiter(Pool&, int n, Duration interval) and has RateLimiter's
// submit, try_submit, stop and available(). Stores what the calls observed in `obs`; returns the
// run's result.
template <class Limiter>
RunResult run_rate_workload(const RateWorkload& w, Options options, RateObservations& obs) {
  using std::chrono::milliseconds;
  options.strategy = w.schedule.to_strategy();
  options.max_steps = kCaseSteps;
  options.max_virtual_time = kCaseVirtualTime;
  obs = RateObservations{};
  return testing::run_property(options, [&](Runtime& rt) {
    PoolOptions pool_options;
    pool_options.workers = w.workers;
    pool_options.queue_capacity = w.queue_capacity;
    pool_options.max_queued_per_tenant = w.tenant_cap;
    pool_options.max_running_per_tenant = w.running_cap;
    pool_options.name = "pool";
    Pool pool(pool_options, rt);
    const TimePoint start = rt.now();
    std::vector<std::unique_ptr<Limiter>> limiters;
    for (const RateLimiterSpec& l : w.limiters) {
      limiters.push_back(std::make_unique<Limiter>(pool, l.n, milliseconds(l.interval_ms)));
    }
    std::vector<std::vector<CallRecord>> records(w.submitters.size());
    obs.stopped_at.assign(w.limiters.size(), std::nullopt);
    int returns = 0;
    {
      std::vector<Thread> threads;
      for (std::size_t l = 0; l < w.limiters.size(); ++l) {
        if (w.limiters[l].stop_at_ms < 0) continue;
        threads.emplace_back(
            "stopper",
            [&, l] {
              rt.sleep_until(start + milliseconds(w.limiters[l].stop_at_ms));
              obs.stopped_at[l] = rt.now() - start;
              limiters[l]->stop();
            },
            rt);
      }
      if (w.shutdown_at_ms >= 0) {
        threads.emplace_back(
            "shutdown",
            [&] {
              rt.sleep_until(start + milliseconds(w.shutdown_at_ms));
              obs.shutdown_at = rt.now() - start;
              (void)pool.shutdown(Context::background());
            },
            rt);
      }
      for (std::size_t s = 0; s < w.submitters.size(); ++s) {
        records[s].resize(w.submitters[s].size());
        threads.emplace_back(
            "submitter",
            [&, s] {
              std::vector<CancelFunc> cancels;  // Deadlines run their course; released at the end.
              for (std::size_t i = 0; i < w.submitters[s].size(); ++i) {
                const RateCall& call = w.submitters[s][i];
                CallRecord& record = records[s][i];
                record.submitter = static_cast<int>(s);
                record.index = static_cast<int>(i);
                record.call = call;
                rt.sleep_for(milliseconds(call.gap_ms));
                Job job = [&rt, &record, work = milliseconds(call.work_ms)](const Context& ctx) {
                  ++record.ran;
                  work_until_done(rt, ctx, work);
                };
                JobOptions opts;
                opts.tenant = "t" + std::to_string(call.tenant);
                opts.on_complete = [&record](const JobOutcome&) { ++record.outcomes; };
                Limiter& limiter = *limiters[static_cast<std::size_t>(call.limiter)];
                record.called = rt.now() - start;
                if (call.try_submit) {
                  record.result = limiter.try_submit(std::move(job), std::move(opts));
                } else if (call.deadline_ms >= 0) {
                  auto [ctx, cancel] = Context::with_timeout(Context::background(),
                                                             milliseconds(call.deadline_ms), rt);
                  cancels.push_back(std::move(cancel));
                  record.result = limiter.submit(ctx, std::move(job), std::move(opts));
                } else {
                  record.result =
                      limiter.submit(Context::background(), std::move(job), std::move(opts));
                }
                record.returned = rt.now() - start;
                // No scheduling point between the return and these reads: a consistent snapshot.
                record.return_seq = ++returns;
                for (const auto& l : limiters) record.available_after.push_back(l->available());
                record.finished = true;
              }
            },
            rt);
      }
    }  // every thread joined
    for (auto& limiter : limiters) limiter->stop();
    (void)pool.shutdown(Context::background());
    for (auto& list : records) {
      for (CallRecord& r : list) obs.calls.push_back(r);
    }
  });
}

}  // namespace bubble::scenarios
