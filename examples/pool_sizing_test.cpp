// Guide: choosing workers, queue and policy for a pool (docs/GUIDE-POOL-SIZING.md). The numbers
// come from `bubble size --rate 300/s --latency 80ms` (24 in flight, 30 workers at 80% busy) and
// the check is the one `bubble sim` makes at scale: a burst beyond workers + queue is refused at
// once by try_submit (load shedding), never queued without bound.
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/testing.hpp>

#include <gtest/gtest.h>

using namespace std::chrono_literals;

BUBBLE_TEST(GuideSizing, ABurstBeyondWorkersPlusQueueIsRefusedAtOnce) {
  bubble::Runtime& rt = bubble::current_runtime();
  constexpr int kWorkers = 30;  // bubble size: 24 in flight / 80% busy
  constexpr int kQueue = 30;    // about 100 ms of arrivals at 300/s
  bubble::Pool pool({.workers = kWorkers, .queue_capacity = kQueue, .name = "api"}, rt);
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < 100; ++i) {  // 100 requests at the same instant
    const std::error_code ec =
        pool.try_submit(bubble::Context::background(), [&](auto&) { rt.sleep_for(80ms); });
    if (!ec) ++accepted;
    if (ec == bubble::errc::full) ++refused;
  }
  // Each worker takes one job off the queue only when it runs; at most workers + queue are held.
  EXPECT_LE(accepted, kWorkers + kQueue);
  EXPECT_GE(accepted, kQueue);
  EXPECT_EQ(accepted + refused, 100);
  const bubble::TimePoint start = rt.now();
  EXPECT_FALSE(pool.shutdown(bubble::Context::background()));
  // Draining: the accepted jobs take ceil(accepted / workers) rounds of 80 ms, exactly.
  EXPECT_EQ(rt.now() - start, ((accepted + kWorkers - 1) / kWorkers) * 80ms);
}
