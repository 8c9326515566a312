// The pool names what it owns ("<name>.lock", "<name>.work", "<name>.room", "<name>.stopped",
// threads "<name>/worker-<i>"), and those names reach a bubble's deadlock report.

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>

#include <gtest/gtest.h>

#include <string>

#include "../support/failure_text.hpp"

namespace {

using bubble::test_support::deadlock_of;
using bubble::test_support::line_without_location;

using bubble::Context;
using bubble::Pool;
using bubble::Runtime;

// A job that never returns holds the only worker; a second job fills the queue, so a third
// submit waits for room ("<name>.room") for ever.
TEST(PoolNames, SubmitWaitingForRoomIsReportedUnderThePoolsNames) {
  const std::string m = deadlock_of([](Runtime& rt) {
    bubble::Notification never("never", rt);
    Pool pool({.workers = 1, .queue_capacity = 1, .name = "orders"}, rt);
    for (int i = 0; i < 3; ++i) {
      (void)pool.submit(Context::background(), [&](const Context&) { never.wait(); });
    }
  });
  EXPECT_EQ(line_without_location(m, "  thread #1 "),
            "  thread #1 \"root\": blocked on CondVar::wait \"orders.room\" (object #4)")
      << m;
  EXPECT_EQ(line_without_location(m, "  thread #2 "),
            "  thread #2 \"orders/worker-0\": blocked on Notification::wait \"never\" (object #1)")
      << m;
}

// shutdown() waits for the running job to end ("<name>.stopped"), which it never does.
TEST(PoolNames, ShutdownWaitingForAJobIsReportedUnderThePoolsNames) {
  const std::string m = deadlock_of([](Runtime& rt) {
    bubble::Notification never("never", rt);
    Pool pool({.workers = 1}, rt);
    (void)pool.submit(Context::background(), [&](const Context&) { never.wait(); });
    (void)pool.shutdown(Context::background());
  });
  EXPECT_EQ(line_without_location(m, "  thread #1 "),
            "  thread #1 \"root\": blocked on CondVar::wait \"pool.stopped\" (object #5)")
      << m;
}

}  // namespace
