// Channel's own results inside a bubble, where send and receive take their bubble path (no lock,
// wake-ups at once): closed channels, done contexts and the hand-off to a waiting thread, for
// unbuffered and buffered channels, under fifo and random.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <system_error>
#include <vector>

#include "../support/error_codes.hpp"

namespace {

using bubble::Channel;
using bubble::Context;
using bubble::errc;
using bubble::Runtime;
using bubble::test_support::ec;

std::vector<bubble::Options> strategies() {
  return {{.strategy = bubble::Strategy::fifo()},
          {.strategy = bubble::Strategy::random(1)},
          {.strategy = bubble::Strategy::random(2)}};
}

// A send on a closed channel fails with closed at once, buffered or not, with or without a
// waiting receiver having been there; a receive drains the buffer, then fails with closed.
TEST(ChannelBubble, SendAfterCloseFailsWithClosedAndReceiveDrainsFirst) {
  for (const bubble::Options& options : strategies()) {
    for (const std::size_t capacity : {std::size_t{0}, std::size_t{2}}) {
      bubble::run(options, [&](Runtime& rt) {
        Channel<int> ch(capacity, rt);
        if (capacity > 0) {
          EXPECT_FALSE(ch.send(1));
        }
        ch.close();
        EXPECT_EQ(ch.send(2), ec(errc::closed)) << "capacity " << capacity;
        if (capacity > 0) {
          EXPECT_EQ(ch.receive().value(), 1);
        }
        EXPECT_EQ(ch.receive().error(), ec(errc::closed)) << "capacity " << capacity;
        EXPECT_EQ(ch.waiting_senders(), 0u);
      });
    }
  }
}

// An operation whose context is done returns its error without touching the channel, even
// though it could complete at once: a waiting receiver keeps waiting, a waiting sender's value
// stays undelivered.
TEST(ChannelBubble, ADoneContextWinsOverAnOperationThatCouldCompleteAtOnce) {
  for (const bubble::Options& options : strategies()) {
    bubble::run(options, [&](Runtime& rt) {
      Channel<int> ch(0, rt);
      auto [ctx, cancel] = Context::with_cancel(Context::background());
      cancel();
      auto receiver = rt.spawn("receiver", [&] { EXPECT_EQ(ch.receive().value(), 2); });
      while (ch.waiting_receivers() == 0) rt.yield();
      EXPECT_EQ(ch.send(1, ctx), ctx.err());
      EXPECT_EQ(ch.waiting_receivers(), 1u);
      EXPECT_FALSE(ch.send(2));
      receiver->join();
      auto sender = rt.spawn("sender", [&] { EXPECT_FALSE(ch.send(3)); });
      while (ch.waiting_senders() == 0) rt.yield();
      EXPECT_EQ(ch.receive(ctx).error(), ctx.err());
      EXPECT_EQ(ch.waiting_senders(), 1u);
      EXPECT_EQ(ch.receive().value(), 3);
      sender->join();
    });
  }
}

// Property: a sequence of values sent by one thread arrives in order at a receiver, over an
// unbuffered and a buffered channel, whichever thread waits first (the strategies vary it).
TEST(ChannelBubble, ValuesArriveInOrderWhicheverSideWaits) {
  for (const bubble::Options& options : strategies()) {
    for (const std::size_t capacity : {std::size_t{0}, std::size_t{3}}) {
      std::vector<int> received;
      bubble::run(options, [&](Runtime& rt) {
        Channel<int> ch(capacity, rt);
        auto sender = rt.spawn("sender", [&] {
          for (int i = 0; i < 20; ++i) EXPECT_FALSE(ch.send(i));
          ch.close();
        });
        while (auto v = ch.receive()) received.push_back(*v);
        sender->join();
      });
      std::vector<int> expected;
      for (int i = 0; i < 20; ++i) expected.push_back(i);
      EXPECT_EQ(received, expected) << "capacity " << capacity;
    }
  }
}

// A receive with a thread about to send (spawned just before): receive_until with a deadline
// that has passed, or try_receive. The result of the receive, and the run's schedule.
struct OneReceive {
  std::error_code result;  // {} if it got the value.
  bubble::Schedule schedule;
};

OneReceive receive_once(const bubble::Strategy& strategy, bool until) {
  OneReceive out;
  const bubble::RunResult run = bubble::run({.strategy = strategy}, [&](Runtime& rt) {
    Channel<int> ch(0, rt);
    auto sender = rt.spawn("sender", [&] { EXPECT_FALSE(ch.send(1)); });
    const bubble::Result<int> r = until ? ch.receive_until(rt.now()) : ch.try_receive();
    out.result = r ? std::error_code{} : r.error();
    if (!r) {
      EXPECT_EQ(ch.receive().value(), 1);
    }
    sender->join();
  });
  out.schedule = run.schedule;
  return out;
}

// Property: a receive_until whose deadline has passed is one scheduling point and one look, as a
// try_receive is: it takes the value if a sender waits, and otherwise times out at once, without
// a second scheduling point at which another thread (here one about to send) could run first. So
// under every strategy it gets the value exactly when try_receive does, and the run makes the
// same decisions.
TEST(ChannelBubble, AReceiveWhoseDeadlineHasPassedIsOneLookAsATryReceive) {
  std::vector<bubble::Strategy> all{bubble::Strategy::fifo()};
  for (std::uint64_t seed = 1; seed <= 40; ++seed) all.push_back(bubble::Strategy::random(seed));
  for (const bubble::Strategy& strategy : all) {
    const OneReceive tried = receive_once(strategy, false);
    const OneReceive until = receive_once(strategy, true);
    EXPECT_EQ(until.result, tried.result == ec(errc::empty) ? ec(errc::timed_out) : tried.result)
        << strategy.to_string();
    EXPECT_EQ(until.schedule, tried.schedule) << strategy.to_string();
  }
}

}  // namespace
