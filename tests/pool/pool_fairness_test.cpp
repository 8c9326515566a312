// Per-tenant fairness in a bubble (virtual time, exact): round robin across tenants, a cap on
// queued jobs (errc::tenant_limit, the "429") and a cap on running jobs (one customer
// shouldn't fill the queue).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::errc;
using bubble::Pool;

BUBBLE_TEST(PoolFairness, TenantsAreServedRoundRobin) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 1, .queue_capacity = 16}, rt);
  bubble::Notification gate;
  std::vector<std::string> order;
  ASSERT_FALSE(pool.submit(Context::background(), [&] { gate.wait(); }));
  bubble::wait();
  // Tenant A's batch of four arrives first; B and C arrive after it.
  const std::pair<const char*, const char*> jobs[] = {
      {"A", "A1"}, {"A", "A2"}, {"A", "A3"}, {"A", "A4"}, {"B", "B1"}, {"C", "C1"}, {"C", "C2"}};
  for (const auto& [tenant, name] : jobs) {
    ASSERT_FALSE(pool.submit(Context::background(),
                             [&order, n = std::string(name)] { order.push_back(n); },
                             {.tenant = tenant}));
  }
  gate.notify();
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(order, (std::vector<std::string>{"A1", "B1", "C1", "A2", "C2", "A3", "A4"}));
}

BUBBLE_TEST(PoolFairness, QueuedCapRefusesAtOnceWithTenantLimit) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 16, .max_queued_per_tenant = 2}, rt);
  bubble::Notification gate;
  ASSERT_FALSE(pool.submit(Context::background(), [&] { gate.wait(); }, {.tenant = "big"}));
  bubble::wait();
  ASSERT_FALSE(pool.submit(Context::background(), [] {}, {.tenant = "big"}));
  ASSERT_FALSE(pool.submit(Context::background(), [] {}, {.tenant = "big"}));
  EXPECT_EQ(pool.submit(Context::background(), [] {}, {.tenant = "big"}), errc::tenant_limit);
  EXPECT_EQ(pool.try_submit(Context::background(), [] {}, {.tenant = "big"}), errc::tenant_limit);
  EXPECT_FALSE(pool.submit(Context::background(), [] {}, {.tenant = "small"}));
  EXPECT_EQ(rt.now(), start);  // Nothing waited.
  gate.notify();
  EXPECT_FALSE(pool.shutdown());
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.rejected_tenant_limit, 2u);
  EXPECT_EQ(s.shed, 2u);
  EXPECT_EQ(s.completed, 4u);
}

BUBBLE_TEST(PoolFairness, RunningCapKeepsATenantToItsShareOfWorkers) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 3, .queue_capacity = 16, .max_running_per_tenant = 1}, rt);
  std::vector<std::pair<std::string, bubble::Duration>> started;
  auto job = [&](std::string name) {
    return [&, name] {
      started.emplace_back(name, rt.now() - start);
      bubble::sleep_for(10ms);
    };
  };
  for (const char* name : {"A1", "A2", "A3"}) {
    ASSERT_FALSE(pool.submit(Context::background(), job(name), {.tenant = "A"}));
  }
  ASSERT_FALSE(pool.submit(Context::background(), job("B1"), {.tenant = "B"}));
  EXPECT_FALSE(pool.shutdown());
  // Three workers, but tenant A never has more than one job running. Jobs starting at the same
  // instant on different workers do so in an order the schedule decides: compare in time order,
  // then by name.
  std::sort(started.begin(), started.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second, a.first) < std::tie(b.second, b.first);
  });
  EXPECT_EQ(started, (std::vector<std::pair<std::string, bubble::Duration>>{
                         {"A1", 0ms}, {"B1", 0ms}, {"A2", 10ms}, {"A3", 20ms}}));
  EXPECT_EQ(rt.now() - start, 30ms);
}

// Properties, for any schedule (run it with BUBBLE_SCHEDULES=N to explore): with priorities,
// aging, tenants and both caps in play, every accepted job runs exactly once and no refused job
// runs; a tenant never has more than max_running_per_tenant jobs running; and jobs of one
// submitter with the same tenant and priority start in submission order (FIFO within a lane).
BUBBLE_TEST(PoolFairness, MixedWorkloadKeepsEveryPromise) {
  bubble::Runtime& rt = bubble::current_runtime();
  constexpr int kSubmitters = 3;
  constexpr int kJobs = 30;
  constexpr int kTenants = 3;
  Pool pool({.workers = 2,
             .queue_capacity = 8,
             .aging_step = 3ms,
             .max_queued_per_tenant = 3,
             .max_running_per_tenant = 1},
            rt);
  std::vector<int> runs(kSubmitters * kJobs, 0);
  std::vector<bool> accepted(kSubmitters * kJobs, false);
  std::vector<int> running(kTenants, 0);
  int max_running = 0;
  // last_started[submitter][tenant][priority]: the index of the last job that started.
  std::vector<int> last_started(kSubmitters * kTenants * 2, -1);
  bool fifo = true;
  std::vector<bubble::Thread> submitters;
  for (int s = 0; s < kSubmitters; ++s) {
    submitters.emplace_back(
        "submitter-" + std::to_string(s),
        [&, s] {
          for (int i = 0; i < kJobs; ++i) {
            const int id = s * kJobs + i;
            const int tenant = (i + s) % kTenants;
            const int priority = (i / 3) % 2;
            const int lane = (s * kTenants + tenant) * 2 + priority;
            const std::error_code ec =
                pool.submit(Context::background(),
                            [&, id, i, tenant, lane] {
                              if (last_started[lane] >= i) fifo = false;
                              last_started[lane] = i;
                              max_running = std::max(max_running, ++running[tenant]);
                              bubble::sleep_for(2ms);
                              --running[tenant];
                              ++runs[id];
                            },
                            {.priority = priority, .tenant = "t" + std::to_string(tenant)});
            if (!ec) {
              accepted[id] = true;
            } else {
              EXPECT_EQ(ec, errc::tenant_limit);
            }
            if (i % 4 == 0) bubble::sleep_for(1ms);
          }
        },
        rt);
  }
  for (auto& t : submitters) t.join();
  EXPECT_FALSE(pool.shutdown());
  std::uint64_t accepted_count = 0;
  for (std::size_t id = 0; id < runs.size(); ++id) {
    EXPECT_EQ(runs[id], accepted[id] ? 1 : 0) << "job " << id;
    accepted_count += accepted[id] ? 1 : 0;
  }
  EXPECT_TRUE(fifo);
  EXPECT_EQ(max_running, 1);
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.completed, accepted_count);
  EXPECT_EQ(s.submitted, accepted_count);
  EXPECT_EQ(s.submitted + s.rejected_tenant_limit, static_cast<std::uint64_t>(kSubmitters * kJobs));
  EXPECT_GT(s.rejected_tenant_limit, 0u);  // The caps were exercised.
}

}  // namespace
