#include <gtest/gtest.h>
#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/random.hpp>
#include <bubble/result.hpp>
#include <bubble/thread.hpp>
#include <functional>
using namespace std::chrono_literals;

TEST(Example, ConsumerSeesEveryValueAtExactVirtualTimes) {
  bubble::run({}, [](bubble::Runtime& rt) {
    bubble::Channel<int> values(0, rt);  // unbuffered: every send waits for the receiver
    bubble::Thread producer("producer", [&] {
      for (int i = 0; i < 3; ++i) {
        rt.sleep_for(1s);
        ASSERT_FALSE(values.send(i));
      }
      values.close();
    });  // a Thread of the calling bubble: the runtime argument, last, defaults to it
    int expected = 0;
    while (auto v = values.receive()) EXPECT_EQ(*v, expected++);
    EXPECT_EQ(rt.now(), bubble::kStart + 3s);  // exactly three virtual seconds, instantly
  });
}

// Retries with exponential backoff and jitter until the context ends. The jitter comes from the
// run's random stream, so every replay of a run sleeps exactly as long.
bubble::Result<int> call_with_retries(bubble::Runtime& rt, const bubble::Context& ctx,
                                      const std::function<bubble::Result<int>()>& attempt) {
  bubble::Duration backoff = 100ms;
  for (;;) {
    bubble::Result<int> r = attempt();
    if (r) return r;
    const bubble::Duration jitter{bubble::random().below(backoff.count() / 4)};
    if (std::error_code ec = rt.sleep_for(backoff + jitter, ctx)) return ec;  // cut short by ctx
    backoff *= 2;
  }
}

TEST(Example, RetriesBackOffUntilTheDeadlineCutsTheLastSleep) {
  bubble::run({.random_seed = 7}, [](bubble::Runtime& rt) {
    auto [ctx, cancel] = bubble::Context::with_timeout(bubble::Context::background(), 1s, rt);
    int calls = 0;
    const bubble::Result<int> r = call_with_retries(rt, ctx, [&]() -> bubble::Result<int> {
      ++calls;
      return bubble::errc::rate_limited;
    });
    EXPECT_EQ(r.error(), bubble::errc::deadline_exceeded);
    EXPECT_EQ(rt.now(), bubble::kStart + 1s);  // the fourth sleep ends at the deadline, exactly
    EXPECT_EQ(calls, 4);                       // attempts after 0, 100-125, 300-375 and 700-875 ms
  });
}
