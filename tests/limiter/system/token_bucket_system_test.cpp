// TokenBucket on the system runtime (real threads; run under ThreadSanitizer in CI). Assertions
// are on counts, ordering and lower bounds of time only.
#include <bubble/context.hpp>
#include <bubble/limiter/token_bucket.hpp>
#include <bubble/runtime.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

namespace bubble {
namespace {

using namespace std::chrono_literals;

// Upstream's TestSimultaneousRequests, made independent of real time: at rate 0 the bucket never
// refills, so of 15 concurrent allow() calls exactly `burst` succeed.
TEST(TokenBucketSystem, SimultaneousRequestsTakeExactlyTheBurst) {
  Runtime& rt = system_runtime();
  TokenBucket lim(0, 5, rt);
  std::atomic<int> ok{0};
  std::vector<std::unique_ptr<ThreadHandle>> threads;
  for (int i = 0; i < 15; ++i) {
    threads.push_back(rt.spawn("allow", [&] {
      if (lim.allow()) ok.fetch_add(1);
    }));
  }
  for (auto& t : threads) t->join();
  EXPECT_EQ(ok.load(), 5);
  EXPECT_EQ(lim.tokens(), 0.0);
}

// Concurrent waiters on a fast bucket: every wait succeeds, and the last one cannot return before
// the tokens it needed could have accumulated (a lower bound).
TEST(TokenBucketSystem, ConcurrentWaitersAllGetTheirTokens) {
  Runtime& rt = system_runtime();
  TokenBucket lim(2000, 1, rt);  // one token every 500 us
  const TimePoint start = rt.now();
  std::atomic<int> ok{0};
  std::vector<std::unique_ptr<ThreadHandle>> threads;
  for (int i = 0; i < 4; ++i) {
    threads.push_back(rt.spawn("waiter", [&] {
      for (int j = 0; j < 5; ++j) {
        if (!lim.wait(Context::background())) ok.fetch_add(1);
      }
    }));
  }
  for (auto& t : threads) t->join();
  EXPECT_EQ(ok.load(), 20);
  // 20 tokens from a bucket of 1 at 2000/s: 19 refills of 500 us after the first take (less one
  // refill of slack for the floating-point truncation of each reservation's time).
  EXPECT_GE(rt.now() - start, 18 * 500us);
}

// A waiter on a bucket that never refills is woken by its context being cancelled from another
// thread, and its reservation is cancelled (the token goes back).
TEST(TokenBucketSystem, CancelWakesAWaiterAndRefunds) {
  Runtime& rt = system_runtime();
  TokenBucket lim(0, 1, rt);
  ASSERT_TRUE(lim.allow());
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::atomic<bool> returned{false};
  std::error_code result;
  auto waiter = rt.spawn("waiter", [&, ctx = ctx] {
    result = lim.wait(ctx);
    returned.store(true);
  });
  // The reservation is visible as a debt once the waiter has reserved.
  while (lim.tokens() > -1.0) rt.yield();
  EXPECT_FALSE(returned.load());
  cancel();
  waiter->join();
  EXPECT_EQ(result, errc::canceled);
  EXPECT_EQ(lim.tokens(), 0.0);
}

}  // namespace
}  // namespace bubble
