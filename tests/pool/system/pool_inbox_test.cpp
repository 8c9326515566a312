// Tests of bubble::Pool's inbox on the system runtime (real threads; run under ThreadSanitizer
// in CI): the submits that leave their job without taking the pool's mutex, and the workers that
// move those jobs into the queue (pool_impl.hpp, "The inbox"). In a bubble the inbox is off, so
// these races exist only here. Every test loops on events (latches, notifications, counts), never
// on time, and asserts counts and orders only.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
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
using bubble::Pool;

bubble::Runtime& sys() {
  return bubble::system_runtime();
}

// Opens a gate when it goes out of scope, so that a failed assertion does not leave the pool's
// workers waiting (and the test hanging in the pool's destructor).
struct OpenOnExit {
  bubble::Notification& gate;
  ~OpenOnExit() {
    gate.notify();  // Idempotent.
  }
};

// Occupies every worker of `pool` with a job that waits for `gate`; returns once all of them run.
void occupy_workers(Pool& pool, int workers, bubble::Notification& gate) {
  bubble::Latch started(workers, sys());
  for (int i = 0; i < workers; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), [&] {
      started.count_down();
      gate.wait();
    }));
  }
  started.wait();
}

// Property: while shutdown races four submitters (submit and try_submit), every submit either is
// refused (errc::closed, or errc::full for a try_submit that found the queue full), and its job
// never runs, or is accepted, and its job runs exactly once and is reported exactly once
// (on_complete and the counters). Shutdown begins once the submitters have had a given number of
// jobs accepted, a different number in each of the 40 pools, so that it lands at many points of the
// pushes.
TEST(PoolInbox, SubmittersRacingShutdownReportEveryAcceptedJobOnce) {
  constexpr int kSubmitters = 4;
  constexpr int kPerSubmitter = 1500;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<std::atomic<int>> runs(kSubmitters * kPerSubmitter);
    std::vector<std::atomic<int>> reports(kSubmitters * kPerSubmitter);
    std::vector<std::atomic<bool>> accepted(kSubmitters * kPerSubmitter);
    std::atomic<int> accepted_count{0};
    std::atomic<int> refused_count{0};
    std::atomic<int> refused_full{0};  // try_submit only, when the workers fall behind.
    const int close_after = 1 + trial * 97;
    bubble::Notification close_now(sys());
    Pool pool({.workers = 2, .queue_capacity = 4096, .name = "race"}, sys());
    {
      std::vector<bubble::Thread> threads;
      threads.emplace_back(
          "closer",
          [&] {
            close_now.wait();
            EXPECT_FALSE(pool.shutdown());
          },
          sys());
      for (int s = 0; s < kSubmitters; ++s) {
        threads.emplace_back(
            "submitter",
            [&, s] {
              for (int i = 0; i < kPerSubmitter; ++i) {
                const int id = s * kPerSubmitter + i;
                auto job = [&runs, id] { runs[id].fetch_add(1); };
                bubble::JobOptions opts{
                    .on_complete = [&reports, id](const JobOutcome&) { reports[id].fetch_add(1); }};
                const std::error_code ec =
                    i % 2 == 0 ? pool.submit(Context::background(), job, std::move(opts))
                               : pool.try_submit(Context::background(), job, std::move(opts));
                if (ec) {
                  if (ec == errc::full && i % 2 == 1) {
                    refused_full.fetch_add(1);
                    continue;
                  }
                  ASSERT_EQ(ec, errc::closed) << ec.message();
                  refused_count.fetch_add(1);
                  continue;
                }
                accepted[id].store(true);
                if (accepted_count.fetch_add(1) + 1 == close_after) close_now.notify();
              }
            },
            sys());
      }
    }                    // Joins every thread.
    close_now.notify();  // In case fewer jobs were accepted than close_after (never, here).
    for (std::size_t id = 0; id < runs.size(); ++id) {
      const int expected = accepted[id].load() ? 1 : 0;
      ASSERT_EQ(runs[id].load(), expected) << "trial " << trial << ", job " << id;
      ASSERT_EQ(reports[id].load(), expected) << "trial " << trial << ", job " << id;
    }
    const bubble::PoolStats st = pool.stats();
    EXPECT_EQ(st.submitted, static_cast<std::uint64_t>(accepted_count.load()));
    EXPECT_EQ(st.completed, static_cast<std::uint64_t>(accepted_count.load()));
    EXPECT_EQ(st.rejected_closed, static_cast<std::uint64_t>(refused_count.load()));
    EXPECT_EQ(st.rejected_full, static_cast<std::uint64_t>(refused_full.load()));
    EXPECT_EQ(st.queue_depth, 0u);
  }
}

// Property: with every worker busy, submitters that try_submit until refused fill the queue to
// exactly its capacity, no more and no fewer, however their reservations and pushes interleave;
// the snapshot counts every accepted job as queued; then each runs exactly once.
TEST(PoolInbox, TryingSubmittersFillTheQueueExactlyToItsCapacity) {
  constexpr int kWorkers = 2;
  constexpr int kSubmitters = 4;
  for (std::ptrdiff_t capacity : {2, 3, 5, 64, 1000}) {
    for (int trial = 0; trial < 10; ++trial) {
      Pool pool({.workers = kWorkers, .queue_capacity = capacity, .name = "fill"}, sys());
      bubble::Notification gate(sys());
      const OpenOnExit open{gate};
      occupy_workers(pool, kWorkers, gate);
      std::atomic<int> accepted{0};
      std::atomic<int> ran{0};
      {
        std::vector<bubble::Thread> submitters;
        for (int s = 0; s < kSubmitters; ++s) {
          submitters.emplace_back(
              "submitter",
              [&] {
                for (;;) {
                  const std::error_code ec =
                      pool.try_submit(Context::background(), [&ran] { ran.fetch_add(1); });
                  if (ec) {
                    ASSERT_EQ(ec, errc::full) << ec.message();
                    return;
                  }
                  accepted.fetch_add(1);
                }
              },
              sys());
        }
      }
      ASSERT_EQ(accepted.load(), capacity) << "capacity " << capacity << ", trial " << trial;
      const bubble::PoolStats st = pool.stats();
      EXPECT_EQ(st.queue_depth, static_cast<std::size_t>(capacity));
      EXPECT_EQ(st.submitted, static_cast<std::uint64_t>(capacity + kWorkers));
      EXPECT_EQ(st.rejected_full, static_cast<std::uint64_t>(kSubmitters));
      gate.notify();
      EXPECT_FALSE(pool.shutdown());
      EXPECT_EQ(ran.load(), capacity);
      EXPECT_EQ(pool.stats().completed, static_cast<std::uint64_t>(capacity + kWorkers));
    }
  }
}

// Every submit that has returned is in the next snapshot: with the workers busy, after the k-th
// accepted submit stats() counts k more jobs submitted and k queued.
TEST(PoolInbox, EveryReturnedSubmitIsInTheNextSnapshot) {
  constexpr int kWorkers = 2;
  constexpr int kJobs = 200;
  Pool pool({.workers = kWorkers, .queue_capacity = 1024, .name = "snapshot"}, sys());
  bubble::Notification gate(sys());
  const OpenOnExit open{gate};
  occupy_workers(pool, kWorkers, gate);
  for (int k = 1; k <= kJobs; ++k) {
    ASSERT_FALSE(pool.submit(Context::background(), [] {}));
    const bubble::PoolStats st = pool.stats();
    ASSERT_EQ(st.submitted, static_cast<std::uint64_t>(k + kWorkers)) << k;
    ASSERT_EQ(st.queue_depth, static_cast<std::size_t>(k)) << k;
    ASSERT_EQ(st.busy_workers, kWorkers);
  }
  gate.notify();
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(pool.stats().completed, static_cast<std::uint64_t>(kJobs + kWorkers));
}

// Property: a pool whose capacity is larger than the inbox's ring (4,096 slots) accepts every
// job up to its capacity while its worker is busy (the submits past the ring's size take the
// locked path, which empties the ring into the queue), and runs each exactly once, in order.
TEST(PoolInbox, APoolLargerThanTheRingAcceptsAndRunsEveryJobInOrder) {
  constexpr int kJobs = 10000;
  Pool pool({.workers = 1, .queue_capacity = kJobs + 1, .name = "deep"}, sys());
  bubble::Notification gate(sys());
  const OpenOnExit open{gate};
  occupy_workers(pool, 1, gate);
  std::vector<int> ran;  // Written only by the one worker.
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_FALSE(pool.try_submit(Context::background(), [&ran, i] { ran.push_back(i); })) << i;
  }
  EXPECT_EQ(pool.stats().queue_depth, static_cast<std::size_t>(kJobs));
  gate.notify();
  EXPECT_FALSE(pool.shutdown());
  ASSERT_EQ(ran.size(), static_cast<std::size_t>(kJobs));
  for (int i = 0; i < kJobs; ++i) ASSERT_EQ(ran[static_cast<std::size_t>(i)], i);
}

// Jobs submitted while the only worker is busy are taken exactly as if each had been queued at
// its submit: highest priority first, tenants round robin within a priority, first in, first out
// within a tenant.
TEST(PoolInbox, JobsSubmittedMeanwhileAreTakenByPriorityTenantAndOrder) {
  Pool pool({.workers = 1, .queue_capacity = 1024, .name = "order"}, sys());
  bubble::Notification gate(sys());
  const OpenOnExit open{gate};
  occupy_workers(pool, 1, gate);
  std::mutex mu;
  std::vector<int> order;  // Written by the one worker, read after shutdown.
  struct Spec {
    int id;
    int priority;
    const char* tenant;
  };
  // Expected: priority 2 (a1 b1 a2), then priority 1 (a3 b2 b3: a's lane empties first), then 0.
  const std::vector<Spec> specs = {
      {0, 0, "a"}, {1, 2, "a"}, {2, 1, "a"}, {3, 2, "b"}, {4, 1, "b"},
      {5, 2, "a"}, {6, 0, "b"}, {7, 1, "b"}, {8, 0, "a"},
  };
  for (const Spec& s : specs) {
    ASSERT_FALSE(pool.submit(Context::background(),
                             [&, id = s.id] {
                               std::lock_guard lk(mu);
                               order.push_back(id);
                             },
                             {.priority = s.priority, .tenant = s.tenant}));
  }
  gate.notify();
  EXPECT_FALSE(pool.shutdown());
  // Priority 2: a(1) b(3) a(5); priority 1: a(2) b(4) b(7); priority 0: a(0) b(6) a(8).
  EXPECT_EQ(order, (std::vector<int>{1, 3, 5, 2, 4, 7, 0, 6, 8}));
}

// Property: the jobs of each submitter start in the order it submitted them, whichever path each
// submit took (the inbox while the worker is busy and the queue has room; the mutex when the
// worker is idle or the queue is nearly full: capacity 8, so both happen all the time).
TEST(PoolInbox, EachSubmittersJobsStartInItsOrder) {
  constexpr int kSubmitters = 3;
  constexpr int kPerSubmitter = 5000;
  Pool pool({.workers = 1, .queue_capacity = 8, .name = "fifo"}, sys());
  std::vector<std::vector<int>> started(kSubmitters);  // Written only by the one worker.
  {
    std::vector<bubble::Thread> submitters;
    for (int s = 0; s < kSubmitters; ++s) {
      submitters.emplace_back(
          "submitter",
          [&, s] {
            for (int i = 0; i < kPerSubmitter; ++i) {
              ASSERT_FALSE(pool.submit(Context::background(),
                                       [&started, s, i] { started[s].push_back(i); }));
            }
          },
          sys());
    }
  }
  EXPECT_FALSE(pool.shutdown());
  for (int s = 0; s < kSubmitters; ++s) {
    ASSERT_EQ(started[s].size(), static_cast<std::size_t>(kPerSubmitter)) << s;
    EXPECT_TRUE(std::is_sorted(started[s].begin(), started[s].end())) << "submitter " << s;
  }
}

// Property: a job submitted just as the last busy worker finishes and goes idle always runs:
// either the worker, counted idle, sees the job in the inbox on its last look, or the submitter,
// after its push, sees the idle worker and wakes it. In each round the submitter sends the second
// job as soon as the first has started, so that its push lands while the worker is between the
// first job and its idle wait. A lost wake-up hangs a round (the test's timeout).
TEST(PoolInbox, AJobPushedAsTheWorkerGoesIdleAlwaysRuns) {
  constexpr int kRounds = 20000;
  Pool pool({.workers = 1, .queue_capacity = 64, .name = "idle"}, sys());
  std::atomic<int> spins{0};
  for (int round = 0; round < kRounds; ++round) {
    bubble::Notification first_running(sys());
    bubble::Notification second_ran(sys());
    ASSERT_FALSE(pool.submit(Context::background(), [&] { first_running.notify(); }));
    first_running.wait();  // The worker is finishing the first job, or already idle.
    // A different amount of work before the push in each round, so that over the rounds the
    // push lands at every point of the worker's way from the first job to its idle wait.
    for (int i = 0; i < round % 512; ++i) spins.fetch_add(1, std::memory_order_relaxed);
    ASSERT_FALSE(pool.submit(Context::background(), [&] { second_ran.notify(); }));
    second_ran.wait();
  }
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(pool.stats().completed, static_cast<std::uint64_t>(2 * kRounds));
}

}  // namespace
