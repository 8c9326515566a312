// Scenario suite "pool": properties of the worker pool over generated workloads, shutdown moments
// and schedules, each run in a bubble (exact virtual time).
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/gen/schedule.hpp>
#include <bubble/pool.hpp>
#include <bubble/scenarios/property.hpp>
#include <bubble/scenarios/suites.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/thread.hpp>

#include <rapidcheck.h>

#include <chrono>
#include <vector>

namespace bubble::scenarios {
namespace {

using namespace std::chrono_literals;

// One generated job: how long it works (it stops early when its context ends), and whether its
// submitter uses try_submit (reject when full) instead of submit (wait for room).
struct JobSpec {
  int work_ms = 0;
  bool try_submit = false;
};

// Works for `work` of virtual time in 1 ms steps, returning early once `ctx` is done: a job that
// watches its context, as source 002 asks of every job.
void work_until_done(Runtime& rt, const Context& ctx, Duration work) {
  const TimePoint end = rt.now() + work;
  while (!ctx.done() && rt.now() < end) rt.sleep_for(std::min<Duration>(1ms, end - rt.now()));
}

// Property: shutdown never loses an accepted job. Whatever the pool's size, the workload, the
// moment shutdown starts, its deadline and the interleaving: every job that submit or try_submit
// accepted reports exactly one outcome (done, or canceled when the deadline cut it short), every
// rejected job never runs, rejections are only errc::full (try_submit) or errc::closed, and the
// pool's counters agree with what the submitters saw.
void shutdown_never_loses_an_accepted_job(const Schedule& schedule) {
  const int workers = *rc::gen::inRange(1, 4);
  const int capacity = *rc::gen::inRange(1, 8);
  const auto submitters = *rc::gen::container<std::vector<std::vector<JobSpec>>>(
      *rc::gen::inRange<std::size_t>(1, 4),
      rc::gen::container<std::vector<JobSpec>>(
          rc::gen::build<JobSpec>(rc::gen::set(&JobSpec::work_ms, rc::gen::inRange(0, 50)),
                                  rc::gen::set(&JobSpec::try_submit, rc::gen::arbitrary<bool>()))));
  const auto shutdown_at = std::chrono::milliseconds(*rc::gen::inRange(0, 200));
  const auto grace = std::chrono::milliseconds(*rc::gen::inRange(0, 200));

  testing::run_property({.strategy = schedule.to_strategy()}, [&](Runtime& rt) {
    Pool pool(rt, {.workers = workers, .queue_capacity = capacity, .name = "pool"});
    // outcomes[s][j]: how many outcomes job j of submitter s reported; accepted[s][j]: whether
    // its submit call accepted it.
    std::vector<std::vector<int>> outcomes(submitters.size());
    std::vector<std::vector<bool>> accepted(submitters.size());
    int accepted_count = 0;
    int canceled = 0;
    {
      std::vector<Thread> threads;
      for (std::size_t s = 0; s < submitters.size(); ++s) {
        outcomes[s].assign(submitters[s].size(), 0);
        accepted[s].assign(submitters[s].size(), false);
        threads.emplace_back(rt, "submitter", [&, s] {
          for (std::size_t j = 0; j < submitters[s].size(); ++j) {
            const JobSpec spec = submitters[s][j];
            Job job = [&rt, spec](const Context& ctx) {
              work_until_done(rt, ctx, std::chrono::milliseconds(spec.work_ms));
            };
            JobOptions opts;
            opts.on_complete = [&, s, j](const JobOutcome& outcome) {
              ++outcomes[s][j];
              if (outcome.status == JobStatus::canceled) ++canceled;
              RC_ASSERT(outcome.status == JobStatus::done || outcome.status == JobStatus::canceled);
            };
            const std::error_code ec =
                spec.try_submit ? pool.try_submit(Context::background(), std::move(job), opts)
                                : pool.submit(Context::background(), std::move(job), opts);
            if (!ec) {
              accepted[s][j] = true;
              ++accepted_count;
            } else {
              RC_ASSERT(ec == errc::closed || (spec.try_submit && ec == errc::full));
            }
          }
        });
      }
      rt.sleep_for(shutdown_at);
      auto [deadline_ctx, cancel] = Context::with_timeout(Context::background(), grace, rt);
      const TimePoint shutdown_start = rt.now();
      const std::error_code ec = pool.shutdown(deadline_ctx);
      cancel();
      // Shutdown either drained everything or gave up exactly at its deadline.
      RC_ASSERT(!ec || (ec == errc::deadline_exceeded && rt.now() - shutdown_start >= grace));
    }
    for (std::size_t s = 0; s < submitters.size(); ++s) {
      for (std::size_t j = 0; j < submitters[s].size(); ++j) {
        RC_ASSERT(outcomes[s][j] == (accepted[s][j] ? 1 : 0));
      }
    }
    const PoolStats stats = pool.stats();
    RC_ASSERT(stats.completed + stats.canceled == static_cast<std::uint64_t>(accepted_count));
    RC_ASSERT(stats.canceled == static_cast<std::uint64_t>(canceled));
  });
}

// Property: backpressure holds — the queue never holds more than its capacity and never more
// than `workers` jobs run at once, observed by every job when it starts.
void queue_and_workers_stay_bounded(const Schedule& schedule) {
  const int workers = *rc::gen::inRange(1, 4);
  const int capacity = *rc::gen::inRange(1, 8);
  const int jobs = *rc::gen::inRange(0, 40);
  const int work_ms = *rc::gen::inRange(0, 20);
  testing::run_property({.strategy = schedule.to_strategy()}, [&](Runtime& rt) {
    Pool pool(rt, {.workers = workers, .queue_capacity = capacity, .name = "pool"});
    int running = 0;
    for (int i = 0; i < jobs; ++i) {
      const std::error_code ec = pool.submit(Context::background(), [&](const Context&) {
        ++running;
        RC_ASSERT(running <= workers);
        const PoolStats stats = pool.stats();
        RC_ASSERT(stats.queue_depth <= static_cast<std::size_t>(capacity));
        rt.sleep_for(std::chrono::milliseconds(work_ms));
        --running;
      });
      RC_ASSERT(!ec);
      RC_ASSERT(pool.stats().queue_depth <= static_cast<std::size_t>(capacity));
    }
    RC_ASSERT(!pool.shutdown(Context::background()));
    RC_ASSERT(pool.stats().completed == static_cast<std::uint64_t>(jobs));
  });
}

SuiteResult run_pool_suite(const SuiteOptions& options, std::ostream& log) {
  SuiteResult result;
  const std::string suite = "pool";
  check_property(suite, "shutdown never loses an accepted job", options, result, log,
                 [](const Schedule& s) { shutdown_never_loses_an_accepted_job(s); });
  check_property(suite, "queue depth and running jobs stay bounded", options, result, log,
                 [](const Schedule& s) { queue_and_workers_stay_bounded(s); });
  return result;
}

}  // namespace

ScenarioSuite pool_suite() {
  return {"pool", "graceful shutdown loses no accepted job; backpressure bounds the queue",
          run_pool_suite};
}

}  // namespace bubble::scenarios
