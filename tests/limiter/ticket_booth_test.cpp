// TicketBooth in bubbles: exact virtual times, and the Ticker-based booth kept here as the
// counter-example.
#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/limiter/ticket_booth.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bubble {
namespace {

using namespace std::chrono_literals;

// The fake-clock fact: five tickets every 50 ms (one every 10 ms); the first ticket is
// there at once, so three jobs take exactly 20 ms.
BUBBLE_TEST(TicketBooth, ThreeJobsTakeExactlyTwentyMilliseconds) {
  Runtime& rt = current_runtime();
  TicketBooth booth(50ms, 5, rt);
  const TimePoint start = rt.now();
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(booth.take(Context::background()));
  EXPECT_EQ(rt.now() - start, 20ms);
  EXPECT_EQ(booth.taken(), 3u);
}

// The classic ticket-booth program: ten tickets per second, a worker that reads a job first and
// only then waits for a ticket, and 31 jobs. In virtual time the last job runs at exactly 3 s
// (3.25 s in real time, jobs included).
BUBBLE_TEST(TicketBooth, ThirtyOneJobsAtTenPerSecondFinishAtExactlyThreeSeconds) {
  Runtime& rt = current_runtime();
  const TimePoint start = rt.now();
  TicketBooth booth(1s, 10, rt);
  Channel<std::function<void()>> jobs(0, rt);
  std::vector<Duration> ran;
  Thread worker(
      "worker",
      [&] {
        for (;;) {
          auto job = jobs.receive();
          if (!job) return;  // closed: shut down without taking a ticket
          ASSERT_FALSE(booth.take(Context::background()));
          (*job)();
        }
      },
      rt);
  for (int i = 0; i <= 30; ++i) {
    ASSERT_FALSE(jobs.send([&] { ran.push_back(rt.now() - start); }));
  }
  jobs.close();
  worker.join();
  ASSERT_EQ(ran.size(), 31u);
  for (int i = 0; i <= 30; ++i) EXPECT_EQ(ran[i], i * 100ms) << "job " << i;
  EXPECT_EQ(rt.now() - start, 3s);
}

// Takes `count` tickets with `take`, the first after a stall of `stall`, and returns when each
// arrived, relative to `start`.
std::vector<Duration> take_after_stall(Runtime& rt, TimePoint start, Duration stall, int count,
                                       const std::function<std::error_code()>& take) {
  std::vector<Duration> arrivals;
  rt.sleep_for(stall);
  for (int i = 0; i < count; ++i) {
    EXPECT_FALSE(take());
    arrivals.push_back(rt.now() - start);
  }
  return arrivals;
}

// After a 250 ms stall the booth never emits two tickets less than an interval apart: the next
// interval counts from the moment the stalled ticket was taken.
BUBBLE_TEST(TicketBooth, AfterAStallTicketsStayOneIntervalApart) {
  Runtime& rt = current_runtime();
  const TimePoint start = rt.now();
  TicketBooth booth(1s, 10, rt);
  const auto arrivals =
      take_after_stall(rt, start, 250ms, 4, [&] { return booth.take(Context::background()); });
  EXPECT_EQ(arrivals, (std::vector<Duration>{250ms, 350ms, 450ms, 550ms}));
}

// The counter-example: the same booth written with a Ticker. The ticker keeps
// ticking while the booth is stuck handing out ticket 0 and keeps one tick in its channel, so
// ticket 1 comes out right after ticket 0 — two at once, and there goes the limit.
class TickerBooth {
 public:
  TickerBooth(Duration window, int n, Runtime& rt = current_runtime())
      : ticker_(window / n, rt),
        tickets_(0, rt),
        thread_(
            "ticker_booth", [this] { loop(); }, rt) {}
  ~TickerBooth() {
    cancel_();
    thread_.join();
  }
  std::error_code take() { return tickets_.receive(Context::background()).error(); }

 private:
  void loop() {
    for (std::uint64_t i = 0;; ++i) {
      if (tickets_.send(i, ctx_)) return;
      if (!ticker_.channel().receive(ctx_)) return;  // wait for the tick, hand out the ticket
    }
  }
  std::pair<Context, CancelFunc> cancellable_ = Context::with_cancel(Context::background());
  Context ctx_ = cancellable_.first;
  CancelFunc cancel_ = cancellable_.second;
  Ticker ticker_;
  Channel<std::uint64_t> tickets_;
  Thread thread_;
};

BUBBLE_TEST(TicketBooth, TickerBasedBoothEmitsTwoAtOnceAfterAStall) {
  Runtime& rt = current_runtime();
  const TimePoint start = rt.now();
  TickerBooth booth(1s, 10, rt);
  const auto arrivals = take_after_stall(rt, start, 250ms, 4, [&] { return booth.take(); });
  // In real time this measures about 250, 251, 300, 400 ms; in virtual time the stale tick's
  // ticket comes out at the very instant of the stalled one.
  EXPECT_EQ(arrivals, (std::vector<Duration>{250ms, 250ms, 300ms, 400ms}));
  EXPECT_LT(arrivals[1] - arrivals[0], 100ms);  // the limit is broken
}

// No saved-up tickets: a booth left alone for 10 s has one ticket waiting, not a hundred.
BUBBLE_TEST(TicketBooth, NoSavedUpTicketsAfterIdleness) {
  Runtime& rt = current_runtime();
  const TimePoint start = rt.now();
  TicketBooth booth(1s, 10, rt);
  ASSERT_FALSE(booth.take(Context::background()));
  rt.sleep_for(10s);
  std::vector<Duration> arrivals;
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(booth.take(Context::background()));
    arrivals.push_back(rt.now() - start);
  }
  EXPECT_EQ(arrivals, (std::vector<Duration>{10s, 10s + 100ms, 10s + 200ms}));
}

// Several takers share the booth: each gets one ticket, one interval after the previous one.
BUBBLE_TEST(TicketBooth, TakersGetOneTicketEachOneIntervalApart) {
  Runtime& rt = current_runtime();
  const TimePoint start = rt.now();
  TicketBooth booth(30ms, 3, rt);  // one every 10 ms
  std::vector<Duration> served;
  std::vector<Thread> takers;
  for (int i = 0; i < 4; ++i) {
    takers.emplace_back(
        "taker",
        [&] {
          ASSERT_FALSE(booth.take(Context::background()));
          served.push_back(rt.now() - start);
        },
        rt);
  }
  for (auto& t : takers) t.join();
  std::sort(served.begin(), served.end());
  EXPECT_EQ(served, (std::vector<Duration>{0ms, 10ms, 20ms, 30ms}));
  EXPECT_EQ(booth.taken(), 4u);
}

// A taker whose context ends gets its error and takes no ticket: the next taker gets it at once.
BUBBLE_TEST(TicketBooth, TakeWithAnEndedContextTakesNothing) {
  Runtime& rt = current_runtime();
  const TimePoint start = rt.now();
  TicketBooth booth(1s, 10, rt);
  ASSERT_FALSE(booth.take(Context::background()));  // ticket 0 at 0
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 50ms, rt);
  EXPECT_EQ(booth.take(ctx), errc::deadline_exceeded);  // ticket 1 is due at 100 ms
  EXPECT_EQ(rt.now() - start, 50ms);
  ASSERT_FALSE(booth.take(Context::background()));
  EXPECT_EQ(rt.now() - start, 100ms);
  EXPECT_EQ(booth.taken(), 2u);
  cancel();
}

// The booth stops with its context: a waiting taker and later takers get limiter_stopped.
BUBBLE_TEST(TicketBooth, StopsWithItsContext) {
  Runtime& rt = current_runtime();
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  TicketBooth booth(1s, 1, ctx, rt);
  ASSERT_FALSE(booth.take(Context::background()));
  Thread canceller(
      "canceller",
      [&, cancel = cancel] {
        rt.sleep_for(300ms);
        cancel();
      },
      rt);
  const TimePoint before = rt.now();
  EXPECT_EQ(booth.take(Context::background()), errc::limiter_stopped);  // next ticket at 1 s
  EXPECT_EQ(rt.now() - before, 300ms);
  EXPECT_EQ(booth.take(Context::background()), errc::limiter_stopped);
  canceller.join();
}

BUBBLE_TEST(TicketBooth, StopIsIdempotentAndWakesTakers) {
  Runtime& rt = current_runtime();
  TicketBooth booth(1s, 1, rt);
  ASSERT_FALSE(booth.take(Context::background()));
  std::error_code waiting;
  Thread taker(
      "taker", [&] { waiting = booth.take(Context::background()); }, rt);
  rt.sleep_for(10ms);
  booth.stop();
  booth.stop();
  taker.join();
  EXPECT_EQ(waiting, errc::limiter_stopped);
  EXPECT_EQ(booth.take(Context::background()), errc::limiter_stopped);
}

BUBBLE_TEST(TicketBooth, BadArgumentsThrowNamingTheValue) {
  Runtime& rt = current_runtime();
  auto message = [&](Duration window, int n) {
    try {
      TicketBooth booth(window, n, rt);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(message(0s, 1), "bubble::TicketBooth: window must be > 0, got 0s");
  EXPECT_EQ(message(-1s, 1), "bubble::TicketBooth: window must be > 0, got -1s");
  EXPECT_EQ(message(1s, 0), "bubble::TicketBooth: n must be >= 1, got 0");
  EXPECT_EQ(message(5ns, 10), "bubble::TicketBooth: window / n must be at least 1ns, got 5ns / 10");
}

}  // namespace
}  // namespace bubble
