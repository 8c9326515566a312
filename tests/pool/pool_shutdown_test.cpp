// Graceful shutdown in a bubble (virtual time, exact): stop accepting, drain, cancel at the
// deadline, and the nested-submit deadlock.

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>
#include <bubble/wait_group.hpp>

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::errc;
using bubble::JobOutcome;
using bubble::JobStatus;
using bubble::Pool;

// Takes `d` of virtual time, or less if `ctx` ends first (a job that watches its context).
void work_for(const Context& ctx, bubble::Duration d) {
  auto [timed, cancel] = Context::with_timeout(ctx, d);
  timed.wait();
}

BUBBLE_TEST(PoolShutdown, DrainsEveryQueuedJobWhenThereIsTime) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 8}, rt);
  std::vector<JobStatus> outcomes;
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(
        pool.submit(Context::background(), [](const Context& ctx) { work_for(ctx, 10ms); },
                    {.on_complete = [&](const JobOutcome& o) { outcomes.push_back(o.status); }}));
  }
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 1s, rt);
  EXPECT_FALSE(pool.shutdown(ctx));
  EXPECT_EQ(rt.now() - start, 30ms);
  EXPECT_EQ(outcomes, (std::vector<JobStatus>{JobStatus::done, JobStatus::done, JobStatus::done}));
  EXPECT_TRUE(pool.stats().closed);
  EXPECT_FALSE(pool.stats().cancelled);
}

BUBBLE_TEST(PoolShutdown, CancelsAtTheDeadlineAndReturnsItsError) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 8}, rt);
  std::vector<JobStatus> outcomes;
  std::vector<bubble::Duration> started;
  std::vector<bool> done_at_start;
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(
        pool.submit(Context::background(),
                    [&](const Context& ctx) {
                      started.push_back(rt.now() - start);
                      done_at_start.push_back(ctx.done());
                      work_for(ctx, 10ms);
                    },
                    {.on_complete = [&](const JobOutcome& o) { outcomes.push_back(o.status); }}));
  }
  // The first job ends at 10 ms; the second is cancelled at 15 ms; the third then runs with a
  // context that is already done, and returns at once.
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 15ms, rt);
  EXPECT_EQ(pool.shutdown(ctx), errc::deadline_exceeded);
  EXPECT_EQ(rt.now() - start, 15ms);
  EXPECT_EQ(started, (std::vector<bubble::Duration>{0ms, 10ms, 15ms}));
  EXPECT_EQ(done_at_start, (std::vector<bool>{false, false, true}));
  EXPECT_EQ(outcomes,
            (std::vector<JobStatus>{JobStatus::done, JobStatus::canceled, JobStatus::canceled}));
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.completed, 1u);
  EXPECT_EQ(s.canceled, 2u);
  EXPECT_TRUE(s.cancelled);
}

BUBBLE_TEST(PoolShutdown, IsIdempotentAndSafeToCallConcurrently) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 2, .queue_capacity = 8}, rt);
  for (int i = 0; i < 4; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), [] { bubble::sleep_for(10ms); }));
  }
  std::error_code other_result = errc::canceled;
  bubble::TimePoint other_returned{};
  bubble::Thread other(
      "other-closer",
      [&] {
        other_result = pool.shutdown();
        other_returned = rt.now();
      },
      rt);
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(rt.now() - start, 20ms);
  other.join();
  EXPECT_FALSE(other_result);
  EXPECT_EQ(other_returned - start, 20ms);
  EXPECT_FALSE(pool.shutdown());  // Once more, after the workers stopped: at once.
  EXPECT_EQ(rt.now() - start, 20ms);
  EXPECT_EQ(pool.stats().completed, 4u);
}

BUBBLE_TEST(PoolShutdown, DestructorCancelsAtOnceAndStillRunsQueuedJobs) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  int canceled = 0;
  {
    Pool pool({.workers = 1, .queue_capacity = 8}, rt);
    for (int i = 0; i < 3; ++i) {
      ASSERT_FALSE(pool.submit(Context::background(), [](const Context& ctx) { work_for(ctx, 1h); },
                               {.on_complete = [&](const JobOutcome& o) {
                                 if (o.status == JobStatus::canceled && o.error == errc::canceled)
                                   ++canceled;
                               }}));
    }
    bubble::sleep_for(5ms);
  }
  EXPECT_EQ(rt.now() - start, 5ms);
  EXPECT_EQ(canceled, 3);
}

// The shutdown trap: a handler still running after the pool closed calls submit. It gets
// errc::closed (never a crash), while the pool drains.
BUBBLE_TEST(PoolShutdown, JobThatSubmitsDuringShutdownGetsClosed) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 1}, rt);
  std::error_code late;
  ASSERT_FALSE(pool.submit(Context::background(), [&] {
    bubble::sleep_for(10ms);
    late = pool.submit(Context::background(), [] {});
  }));
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(late, errc::closed);
}

// A job's context ends when its submitter's context ends, also while it runs.
BUBBLE_TEST(PoolShutdown, JobContextEndsWithItsSubmittersContext) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1}, rt);
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 7ms, rt);
  bubble::Duration ended{};
  std::error_code err;
  ASSERT_FALSE(pool.submit(ctx, [&](const Context& job_ctx) {
    work_for(job_ctx, 1h);
    ended = rt.now() - start;
    err = job_ctx.err();
  }));
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(ended, 7ms);
  EXPECT_EQ(err, errc::deadline_exceeded);
  EXPECT_EQ(pool.stats().canceled, 1u);
}

// The nested-submit deadlock: a job that submits into its own pool and waits for the inner job.
// With both workers running such jobs, the inner jobs never get a worker; the bubble reports the
// deadlock and names the pool's workers.
TEST(PoolDeadlock, NestedSubmitIntoTheSamePoolDeadlocks) {
  try {
    bubble::run([](bubble::Runtime& rt) {
      Pool pool({.workers = 2, .queue_capacity = 100, .name = "orders"}, rt);
      bubble::WaitGroup orders(rt);
      for (int order = 0; order < 2; ++order) {
        orders.add(1);
        ASSERT_FALSE(pool.submit(Context::background(), [&](const Context& ctx) {
          bubble::Notification charged;
          ASSERT_FALSE(pool.submit(ctx, [&charged] { charged.notify(); }));
          charged.wait();  // Both workers wait here; the inner jobs never get a worker.
          orders.done();
        }));
      }
      orders.wait();  // Forever.
    });
    FAIL() << "the run did not deadlock";
  } catch (const bubble::DeadlockError& e) {
    const std::string report = e.what();
    EXPECT_NE(report.find("orders/worker-0"), std::string::npos) << report;
    EXPECT_NE(report.find("orders/worker-1"), std::string::npos) << report;
    EXPECT_NE(report.find("Notification"), std::string::npos) << report;
    // The bubble unwound every thread, the pool's destructor included: nothing was abandoned.
    EXPECT_EQ(report.find("abandoned"), std::string::npos) << report;
  }
}

// The same deadlock found while the root drains the pool: shutdown() waits for the workers,
// which wait for inner jobs that never get a worker. The bubble reports it and unwinds every
// thread, the pool's destructor included.
TEST(PoolDeadlock, NestedSubmitDeadlockIsReportedWhileShutdownDrains) {
  try {
    bubble::run([](bubble::Runtime& rt) {
      Pool pool({.workers = 2, .queue_capacity = 100, .name = "orders"}, rt);
      for (int order = 0; order < 2; ++order) {
        ASSERT_FALSE(pool.submit(Context::background(), [&pool](const Context& ctx) {
          bubble::Notification charged;
          ASSERT_FALSE(pool.submit(ctx, [&charged] { charged.notify(); }));
          charged.wait();
        }));
      }
      bubble::wait();  // Both outer jobs wait for their inner jobs.
      (void)pool.shutdown();
    });
    FAIL() << "the run did not deadlock";
  } catch (const bubble::DeadlockError& e) {
    const std::string report = e.what();
    EXPECT_NE(report.find("\"root\": blocked on CondVar::wait"), std::string::npos) << report;
    EXPECT_NE(report.find("orders/worker-0"), std::string::npos) << report;
    EXPECT_NE(report.find("orders/worker-1"), std::string::npos) << report;
    EXPECT_EQ(report.find("abandoned"), std::string::npos) << report;
  }
}

// The fix: the inner jobs get their own pool (a bulkhead), and everything completes.
BUBBLE_TEST(PoolDeadlock, SeparatePoolForInnerJobsCompletes) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool payments({.workers = 4, .queue_capacity = 100, .name = "payments"}, rt);
  Pool outer({.workers = 2, .queue_capacity = 100, .name = "orders"}, rt);
  int charged_orders = 0;
  for (int order = 0; order < 4; ++order) {
    ASSERT_FALSE(outer.submit(Context::background(), [&](const Context& ctx) {
      bubble::Notification charged;
      if (payments.submit(ctx, [&] {
            bubble::sleep_for(5ms);
            charged.notify();
          })) {
        return;
      }
      if (!charged.wait(ctx)) ++charged_orders;
    }));
  }
  EXPECT_FALSE(outer.shutdown());
  EXPECT_FALSE(payments.shutdown());
  EXPECT_EQ(charged_orders, 4);
  EXPECT_EQ(rt.now() - start, 10ms);  // Two rounds of two orders, 5 ms each.
}

}  // namespace
