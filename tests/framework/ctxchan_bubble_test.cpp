// Channel, Context, Timer, Ticker, after_func, after_done and signal_context inside bubbles: exact
// virtual times, determinism under several strategies, and durability (a thread blocked on them
// counts as blocked for deadlock detection).

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/signal_context.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Channel;
using bubble::Context;
using bubble::Duration;
using bubble::errc;
using bubble::Runtime;
using bubble::TimePoint;

// The ticket booth, Ticker version: the booth blocks on delivering ticket 0 until the worker asks
// for it at 250ms; the ticker keeps one tick in its channel meanwhile, so ticket 1 comes out at
// once (two tickets at 250ms), then the ticks are on the 100ms grid again.
TEST(CtxChanBubble, TicketBoothWithATickerLetsTwoTicketsOutTogetherAfterAStall) {
  bubble::run([](Runtime& rt) {
    Channel<int> tickets(0, rt);
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    bubble::Thread booth(
        "booth",
        [&, c = ctx] {
          bubble::Ticker ticker(100ms, rt);
          for (int i = 0;; ++i) {
            if (tickets.send(i, c)) return;
            if (!ticker.channel().receive(c)) return;
          }
        },
        rt);
    std::vector<Duration> at;
    rt.sleep_for(250ms);
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(tickets.receive().value(), i);
      at.push_back(rt.now() - bubble::kStart);
    }
    cancel();
    EXPECT_EQ(at, (std::vector<Duration>{250ms, 250ms, 300ms, 400ms}));
  });
}

// The ticket booth, Timer version: reset after each delivery, so the interval counts from the
// delivery and two tickets never come out together.
TEST(CtxChanBubble, TicketBoothWithATimerResetAfterDeliveryKeepsTheInterval) {
  bubble::run([](Runtime& rt) {
    Channel<int> tickets(0, rt);
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    bubble::Thread booth(
        "booth",
        [&, c = ctx] {
          bubble::Timer pause(100ms, rt);
          for (int i = 0;; ++i) {
            if (tickets.send(i, c)) return;
            (void)pause.reset(100ms);
            if (!pause.channel().receive(c)) return;
          }
        },
        rt);
    std::vector<Duration> at;
    rt.sleep_for(250ms);
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(tickets.receive().value(), i);
      at.push_back(rt.now() - bubble::kStart);
    }
    cancel();
    EXPECT_EQ(at, (std::vector<Duration>{250ms, 350ms, 450ms, 550ms}));
  });
}

TEST(CtxChanBubble, AReceiveWithADeadlineContextEndsExactlyAtTheDeadline) {
  bubble::run([](Runtime& rt) {
    Channel<int> ch(0, rt);
    auto [ctx, cancel] = Context::with_timeout(Context::background(), 3s, rt);
    EXPECT_EQ(ch.receive(ctx).error(), errc::deadline_exceeded);
    EXPECT_EQ(rt.now(), bubble::kStart + 3s);
    EXPECT_EQ(ch.receive_until(rt.now() + 2s).error(), errc::timed_out);
    EXPECT_EQ(rt.now(), bubble::kStart + 5s);
  });
}

TEST(CtxChanBubble, ContextWaitIsDurableAndEndsExactlyAtTheDeadline) {
  bubble::run([](Runtime& rt) {
    auto [ctx, cancel] = Context::with_timeout(Context::background(), 7s, rt);
    ctx.wait();
    EXPECT_EQ(rt.now(), bubble::kStart + 7s);
  });
  // Nothing can end this context: the run deadlocks instead of hanging.
  EXPECT_THROW(bubble::run([](Runtime&) {
                 auto [ctx, cancel] = Context::with_cancel(Context::background());
                 ctx.wait();
               }),
               bubble::DeadlockError);
}

TEST(CtxChanBubble, AfterFuncsRunInNewBubbleThreadsAtExactTimes) {
  bubble::run([](Runtime& rt) {
    TimePoint ran_at{};
    auto handle = bubble::after_func(
        2s, [&] { ran_at = rt.now(); }, rt);
    auto [ctx, cancel] = Context::with_timeout(Context::background(), 5s, rt);
    TimePoint ctx_ran_at{};
    auto ctx_handle = bubble::after_done(
        ctx, [&] { ctx_ran_at = rt.now(); }, rt);
    rt.sleep_for(10s);
    EXPECT_EQ(ran_at, bubble::kStart + 2s);
    EXPECT_EQ(ctx_ran_at, bubble::kStart + 5s);
    EXPECT_FALSE(handle.stop());
    EXPECT_FALSE(ctx_handle.stop());
  });
}

TEST(CtxChanBubble, AResetAfterFuncRunsAtItsNewTimeAndAgainAfterItRan) {
  bubble::run([](Runtime& rt) {
    std::vector<TimePoint> runs;
    auto handle = bubble::after_func(
        2s, [&] { runs.push_back(rt.now()); }, rt);
    rt.sleep_for(1s);
    EXPECT_TRUE(handle.reset(3s));  // Pending: moves from +2s to +4s.
    rt.sleep_for(4s);
    EXPECT_FALSE(handle.reset(1s));  // Ran at +4s: runs again at +6s.
    rt.sleep_for(2s);
    EXPECT_EQ(runs, (std::vector<TimePoint>{bubble::kStart + 4s, bubble::kStart + 6s}));
  });
}

TEST(CtxChanBubble, DeliverSignalCancelsTheBubblesSignalContextsSynchronously) {
  bubble::run([](Runtime& rt) {
    const Context term = bubble::signal_context({SIGTERM, SIGINT});
    const Context usr = bubble::signal_context({SIGUSR1});
    EXPECT_FALSE(term.done());
    bubble::deliver_signal(SIGINT);
    EXPECT_TRUE(term.done());
    EXPECT_EQ(term.err(), errc::canceled);
    EXPECT_FALSE(usr.done());
    EXPECT_EQ(rt.now(), bubble::kStart);
  });
}

// Property: under every strategy tried, each value sent by several producers through an
// unbuffered or buffered channel is received exactly once, in per-producer order, and close() ends
// the consumers with errc::closed.
TEST(CtxChanBubble, ManyProducersAndConsumersUnderRandomSchedules) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const std::size_t capacity = seed % 3;  // 0, 1 or 2.
    bubble::Options options;
    options.strategy = bubble::Strategy::random(seed);
    bubble::run(options, [capacity](Runtime& rt) {
      Channel<int> ch(capacity, rt);
      std::vector<std::vector<int>> per_consumer(2);
      std::vector<bubble::Thread> consumers;
      for (std::size_t c = 0; c < 2; ++c) {
        consumers.emplace_back(
            "consumer",
            [&, c] {
              for (;;) {
                auto r = ch.receive();
                if (!r) {
                  EXPECT_EQ(r.error(), errc::closed);
                  return;
                }
                per_consumer[c].push_back(*r);
              }
            },
            rt);
      }
      {
        std::vector<bubble::Thread> producers;
        for (int p = 0; p < 3; ++p) {
          producers.emplace_back(
              "producer",
              [&, p] {
                for (int i = 0; i < 20; ++i) EXPECT_FALSE(ch.send(p * 100 + i));
              },
              rt);
        }
      }
      ch.close();
      for (auto& t : consumers) t.join();
      std::vector<int> got;
      for (const auto& mine : per_consumer) {
        // One consumer sees each producer's values in the order they were sent.
        std::vector<int> last(3, -1);
        for (const int v : mine) {
          EXPECT_GT(v, last[static_cast<std::size_t>(v / 100)]);
          last[static_cast<std::size_t>(v / 100)] = v;
        }
        got.insert(got.end(), mine.begin(), mine.end());
      }
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got.size(), 60u);
      EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end());
    });
  }
}

}  // namespace
