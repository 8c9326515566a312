// Smoke tests of bubble::Pool on the system runtime (real threads; run under ThreadSanitizer in
// CI). They assert ordering and counts only, never wall-clock bounds, and sequence threads with
// the primitives' own signals.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/latch.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/thread.hpp>

namespace {

using bubble::Context;
using bubble::errc;
using bubble::JobOutcome;
using bubble::JobStatus;
using bubble::Pool;

// Property: every job accepted by submit runs exactly once, whatever the interleaving of four
// submitters and two workers; the counters agree.
TEST(PoolSmoke, TenThousandJobsFromFourSubmittersRunExactlyOnce) {
  constexpr int kSubmitters = 4;
  constexpr int kPerSubmitter = 2500;
  std::vector<std::atomic<int>> runs(kSubmitters * kPerSubmitter);
  Pool pool({.workers = 2, .queue_capacity = 16, .name = "smoke"}, bubble::system_runtime());
  {
    std::vector<bubble::Thread> submitters;
    for (int s = 0; s < kSubmitters; ++s) {
      submitters.emplace_back(
          "submitter",
          [&, s] {
            for (int i = 0; i < kPerSubmitter; ++i) {
              const int id = s * kPerSubmitter + i;
              ASSERT_FALSE(
                  pool.submit(Context::background(), [&runs, id] { runs[id].fetch_add(1); }));
            }
          },
          bubble::system_runtime());
    }
  }  // Joins the submitters.
  EXPECT_FALSE(pool.shutdown());
  for (std::size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "job " << i;
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.submitted, 10'000u);
  EXPECT_EQ(s.completed, 10'000u);
  EXPECT_EQ(s.queue_wait.count, 10'000u);
  EXPECT_EQ(s.service_time.count, 10'000u);
  EXPECT_EQ(s.queue_depth, 0u);
  EXPECT_EQ(s.busy_workers, 0);
}

// The same property with priorities, aging, tenants and both tenant caps in play: jobs refused
// with errc::tenant_limit never run, every accepted one runs exactly once, and no tenant ever
// has more than max_running_per_tenant jobs running at once.
TEST(PoolSmoke, PrioritiesAndTenantsUnderContentionLoseNothing) {
  constexpr int kSubmitters = 3;
  constexpr int kPerSubmitter = 2000;
  constexpr int kTenants = 4;
  std::vector<std::atomic<int>> runs(kSubmitters * kPerSubmitter);
  std::vector<std::atomic<int>> running(kTenants);
  std::atomic<int> max_running{0};
  std::atomic<int> accepted{0};
  Pool pool({.workers = 3,
             .queue_capacity = 32,
             .aging_step = std::chrono::microseconds(50),
             .max_queued_per_tenant = 6,
             .max_running_per_tenant = 1},
            bubble::system_runtime());
  {
    std::vector<bubble::Thread> submitters;
    for (int s = 0; s < kSubmitters; ++s) {
      submitters.emplace_back(
          "submitter",
          [&, s] {
            for (int i = 0; i < kPerSubmitter; ++i) {
              const int id = s * kPerSubmitter + i;
              const int tenant = id % kTenants;
              const std::error_code ec =
                  pool.submit(Context::background(),
                              [&, id, tenant] {
                                const int now_running = running[tenant].fetch_add(1) + 1;
                                int seen = max_running.load();
                                while (now_running > seen &&
                                       !max_running.compare_exchange_weak(seen, now_running)) {
                                }
                                runs[id].fetch_add(1);
                                running[tenant].fetch_sub(1);
                              },
                              {.priority = i % 3, .tenant = "tenant-" + std::to_string(tenant)});
              if (!ec) {
                accepted.fetch_add(1);
              } else {
                ASSERT_EQ(ec, errc::tenant_limit);
                runs[id].fetch_add(100);  // Marks a refused job; it must not run as well.
              }
            }
          },
          bubble::system_runtime());
    }
  }
  EXPECT_FALSE(pool.shutdown());
  int ran = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const int r = runs[i].load();
    ASSERT_TRUE(r == 1 || r == 100) << "job " << i << " marked " << r;
    ran += r == 1 ? 1 : 0;
  }
  EXPECT_EQ(ran, accepted.load());
  EXPECT_EQ(max_running.load(), 1);
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.completed, static_cast<std::uint64_t>(accepted.load()));
  EXPECT_EQ(s.submitted + s.rejected_tenant_limit,
            static_cast<std::uint64_t>(kSubmitters * kPerSubmitter));
}

// Shutdown refuses new jobs at once, then drains every queued job before returning {}.
TEST(PoolSmoke, ShutdownRefusesNewJobsAndDrainsQueuedOnes) {
  constexpr int kQueued = 20;
  Pool pool({.workers = 1, .queue_capacity = kQueued}, bubble::system_runtime());
  bubble::Notification started(bubble::system_runtime());
  bubble::Notification gate(bubble::system_runtime());
  std::atomic<int> ran{0};
  ASSERT_FALSE(pool.submit(Context::background(), [&] {
    started.notify();
    gate.wait();
    ran.fetch_add(1);
  }));
  started.wait();  // The worker is busy: everything below stays queued.
  for (int i = 0; i < kQueued; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), [&] { ran.fetch_add(1); }));
  }
  std::error_code shutdown_result = errc::canceled;  // Overwritten by shutdown.
  bubble::Thread closer(
      "closer", [&] { shutdown_result = pool.shutdown(); }, bubble::system_runtime());
  // The queue is full, so until shutdown has begun try_submit says full; then closed. Nothing
  // is ever accepted.
  std::error_code ec;
  do {
    ec = pool.try_submit(Context::background(), [] { FAIL() << "a refused job ran"; });
    ASSERT_TRUE(ec == errc::full || ec == errc::closed) << ec.message();
    if (ec == errc::full) bubble::yield();
  } while (ec != errc::closed);
  EXPECT_EQ(ran.load(), 0);
  gate.notify();
  closer.join();
  EXPECT_FALSE(shutdown_result);
  EXPECT_EQ(ran.load(), kQueued + 1);
  EXPECT_EQ(pool.stats().completed, static_cast<std::uint64_t>(kQueued + 1));
  EXPECT_EQ(pool.submit(Context::background(), [] {}), errc::closed);
}

// A shutdown whose context has already ended cancels the pool: the running job's context ends,
// queued jobs run with a context that is already done, and every outcome is reported.
TEST(PoolSmoke, ShutdownPastItsDeadlineCancelsEveryJob) {
  Pool pool({.workers = 1, .queue_capacity = 8}, bubble::system_runtime());
  bubble::Notification started(bubble::system_runtime());
  std::atomic<int> canceled_outcomes{0};
  std::atomic<int> saw_done_at_start{0};
  auto count = [&](const JobOutcome& o) {
    if (o.status == JobStatus::canceled) canceled_outcomes.fetch_add(1);
  };
  ASSERT_FALSE(pool.submit(Context::background(),
                           [&](const Context& ctx) {
                             started.notify();
                             ctx.wait();  // Ends only when the pool is cancelled.
                           },
                           {.on_complete = count}));
  started.wait();
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(),
                             [&](const Context& ctx) {
                               if (ctx.done()) saw_done_at_start.fetch_add(1);
                             },
                             {.on_complete = count}));
  }
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel();
  EXPECT_EQ(pool.shutdown(ctx), errc::canceled);
  EXPECT_EQ(saw_done_at_start.load(), 3);
  EXPECT_EQ(canceled_outcomes.load(), 4);
  EXPECT_EQ(pool.stats().canceled, 4u);
  EXPECT_TRUE(pool.stats().cancelled);
}

// Submitters that outrun the workers wait for room and are resumed in batches
// (PoolOptions::room_to_resume): with every threshold, from one slot to the whole queue, every
// submit returns, every job runs exactly once and no submitter is left waiting. More threads
// than processors, so the system runtime's parkers sleep without spinning too.
TEST(PoolSmoke, SubmittersResumedInBatchesLoseNothing) {
  constexpr int kSubmitters = 4;
  constexpr int kPerSubmitter = 3000;
  for (std::ptrdiff_t room_to_resume : {0, 1, 7, 16}) {
    std::vector<std::atomic<int>> runs(kSubmitters * kPerSubmitter);
    Pool pool({.workers = 2, .queue_capacity = 16, .room_to_resume = room_to_resume},
              bubble::system_runtime());
    {
      std::vector<bubble::Thread> submitters;
      for (int s = 0; s < kSubmitters; ++s) {
        submitters.emplace_back(
            "submitter",
            [&, s] {
              for (int i = 0; i < kPerSubmitter; ++i) {
                const int id = s * kPerSubmitter + i;
                auto job = [&runs, id] { runs[id].fetch_add(1); };
                // A deadline that never comes in a test: the bounded wait's path, not its timeout.
                const std::error_code ec =
                    i % 2 == 0
                        ? pool.submit(Context::background(), job)
                        : pool.submit_within(Context::background(), job, std::chrono::hours(1));
                ASSERT_FALSE(ec) << ec.message();
              }
            },
            bubble::system_runtime());
      }
    }
    EXPECT_FALSE(pool.shutdown());
    for (std::size_t id = 0; id < runs.size(); ++id) ASSERT_EQ(runs[id].load(), 1) << id;
    const bubble::PoolStats st = pool.stats();
    EXPECT_EQ(st.completed, static_cast<std::uint64_t>(kSubmitters * kPerSubmitter));
    EXPECT_EQ(st.waiting_submitters, 0u);
    EXPECT_EQ(st.rejected_full, 0u);
  }
}

// Concurrent shutdowns and submits: every call returns, exactly the accepted jobs run.
TEST(PoolSmoke, ConcurrentShutdownsAndSubmitsLoseNothing) {
  Pool pool({.workers = 2, .queue_capacity = 4}, bubble::system_runtime());
  std::atomic<int> accepted{0};
  std::atomic<int> ran{0};
  {
    std::vector<bubble::Thread> threads;
    for (int s = 0; s < 3; ++s) {
      threads.emplace_back(
          "submitter",
          [&] {
            for (int i = 0; i < 2000; ++i) {
              const std::error_code ec =
                  pool.submit(Context::background(), [&] { ran.fetch_add(1); });
              if (ec) {
                ASSERT_EQ(ec, errc::closed);
                return;
              }
              accepted.fetch_add(1);
            }
          },
          bubble::system_runtime());
    }
    for (int s = 0; s < 2; ++s) {
      threads.emplace_back(
          "closer", [&] { EXPECT_FALSE(pool.shutdown()); }, bubble::system_runtime());
    }
  }
  EXPECT_EQ(ran.load(), accepted.load());
  EXPECT_EQ(pool.stats().completed, static_cast<std::uint64_t>(accepted.load()));
}

// Property: a job queued while workers are idle always runs, however the submitter's wake-ups
// (of the worker that went idle last) and the workers' idle waits interleave. 3,000 rounds of a
// burst of 1 to 4 jobs from one submitter, each round waiting until its jobs have run, so that
// the workers go idle between rounds and every round wakes some of them; a lost wake-up hangs
// the round (the test's timeout), a wrong count fails it.
TEST(PoolSmoke, BurstsAfterIdleWorkersAlwaysRun) {
  constexpr int kRounds = 3000;
  Pool pool({.workers = 3, .queue_capacity = 4, .name = "bursts"}, bubble::system_runtime());
  std::uint64_t jobs = 0;
  for (int round = 0; round < kRounds; ++round) {
    const int burst = 1 + round % 4;
    bubble::Latch ran(burst, bubble::system_runtime());
    for (int i = 0; i < burst; ++i) {
      ASSERT_FALSE(pool.submit(Context::background(), [&ran] { ran.count_down(); }));
    }
    ran.wait();
    jobs += static_cast<std::uint64_t>(burst);
  }
  EXPECT_FALSE(pool.shutdown());
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.completed, jobs);
  EXPECT_EQ(s.busy_workers, 0);
}

// Exceptions derived from std::exception are caught and reported; the worker keeps serving.
TEST(PoolSmoke, ThrowingJobsAreCountedAndTheWorkerKeepsServing) {
  Pool pool({.workers = 1}, bubble::system_runtime());
  std::atomic<int> failures{0};
  for (int i = 0; i < 10; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), [] { throw std::runtime_error("boom"); },
                             {.on_complete = [&](const JobOutcome& o) {
                               if (o.status == JobStatus::failed && o.error == errc::job_failed &&
                                   o.exception) {
                                 failures.fetch_add(1);
                               }
                             }}));
  }
  std::atomic<bool> after{false};
  ASSERT_FALSE(pool.submit(Context::background(), [&] { after = true; }));
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(failures.load(), 10);
  EXPECT_TRUE(after.load());
  EXPECT_EQ(pool.stats().failed, 10u);
}

TEST(PoolSmoke, InvalidOptionsThrowNamingTheField) {
  try {
    Pool pool({.workers = 0}, bubble::system_runtime());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bubble::Pool: options.workers must be >= 1, got 0");
  }
  EXPECT_THROW(Pool({.queue_capacity = -3}, bubble::system_runtime()), std::invalid_argument);
  EXPECT_THROW(Pool({.max_running_per_tenant = -1}, bubble::system_runtime()),
               std::invalid_argument);
  Pool pool({}, bubble::system_runtime());
  EXPECT_THROW((void)pool.submit(Context::background(), bubble::Job{}), std::invalid_argument);
}

}  // namespace
