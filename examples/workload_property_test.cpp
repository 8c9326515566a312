// Guide: writing a property over workloads and schedules (docs/GUIDE-PROPERTIES.md).
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/wait_group.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <chrono>
#include <mutex>
#include <vector>

// Property: whatever the number of workers, the jobs' durations and the schedule, a pool that is
// shut down after every job was accepted runs each accepted job exactly once, and the whole
// workload takes at least as long as its longest job (virtual time, exactly).
BUBBLE_PROP(GuidePool, EveryAcceptedJobRunsExactlyOnce) {
  bubble::Runtime& rt = bubble::current_runtime();
  // The workload: drawn by RapidCheck, shown in a counterexample and shrunk with the schedule.
  const int workers = *rc::gen::inRange(1, 5);
  const auto millis = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 50));
  bubble::Pool pool({.workers = workers, .queue_capacity = 4, .name = "guide"}, rt);
  bubble::Mutex mutex(rt);
  std::vector<int> runs(millis.size(), 0);
  const bubble::TimePoint start = rt.now();
  int longest = 0;
  for (std::size_t i = 0; i < millis.size(); ++i) {
    longest = std::max(longest, millis[i]);
    const std::error_code ec = pool.submit(bubble::Context::background(), [&, i](auto&) {
      rt.sleep_for(std::chrono::milliseconds(millis[i]));
      const std::lock_guard<bubble::Mutex> lock(mutex);
      ++runs[i];
    });
    RC_ASSERT(!ec);  // submit waits for room: nothing is refused before shutdown
  }
  RC_ASSERT(!pool.shutdown(bubble::Context::background()));  // drains the queue, then stops
  for (const int r : runs) RC_ASSERT(r == 1);
  RC_ASSERT(rt.now() - start >= std::chrono::milliseconds(longest));
}
