// bubble::select on the system runtime: real threads, the uniform choice among ready cases, and
// exactly one case completing while other threads race to complete its cases. Nothing sleeps:
// threads wait for each other by polling events (waiting_receivers), never for time.

#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/select.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>

#include "../../support/spin_until.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::Channel;
using bubble::Context;
using bubble::done;
using bubble::errc;
using bubble::recv;
using bubble::send;
using bubble::test_support::spin_until;

// Property: with three ready cases, each is chosen with probability 1/3 (Go's uniform choice).
// 3000 calls: each count is expected 1000 times; the bounds are more than 7 standard deviations
// (about 26) away.
TEST(SelectSystem, EachReadyCaseIsChosenRoughlyUniformly) {
  std::array<Channel<int>, 3> chans{Channel<int>(1), Channel<int>(1), Channel<int>(1)};
  for (auto& ch : chans) ASSERT_FALSE(ch.try_send(0));
  std::array<int, 3> counts{};
  for (int i = 0; i < 3000; ++i) {
    auto s = bubble::select(recv(chans[0]), recv(chans[1]), recv(chans[2]));
    ASSERT_LT(s.index(), 3u);
    ++counts[s.index()];
    ASSERT_FALSE(chans[s.index()].try_send(0));  // Ready again.
  }
  for (int c : counts) {
    EXPECT_GT(c, 800);
    EXPECT_LT(c, 1200);
  }
}

TEST(SelectSystem, BlocksUntilAnotherThreadSends) {
  Channel<int> a(0);
  Channel<int> b(0);
  std::thread sender([&] {
    spin_until([&] { return b.waiting_receivers() == 1; });
    EXPECT_FALSE(b.send(5));
  });
  auto s = bubble::select(recv(a), recv(b));
  sender.join();
  ASSERT_EQ(s.index(), 1u);
  EXPECT_EQ(s.get<1>().value(), 5);
  EXPECT_EQ(a.waiting_receivers(), 0u);
}

TEST(SelectSystem, AContextCancelledByAnotherThreadEndsTheSelect) {
  Channel<int> a(0);
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::thread canceller([&, c = cancel] {
    spin_until([&] { return a.waiting_receivers() == 1; });
    c();
  });
  auto s = bubble::select(recv(a), done(ctx));
  canceller.join();
  ASSERT_EQ(s.index(), 1u);
  EXPECT_EQ(s.get<1>(), errc::canceled);
  EXPECT_EQ(a.waiting_receivers(), 0u);
  EXPECT_EQ(ctx.registrations(), 0u);
}

TEST(SelectSystem, AnAfterCaseTimesOut) {
  Channel<int> never(0);
  auto s = bubble::select(recv(never), recv(bubble::after(1ms).channel()));
  EXPECT_EQ(s.index(), 1u);
}

// Exactly one case completes: two threads race to send on the two channels of a waiting select,
// each with try_send, which succeeds only if it completed a receiver. Every round exactly one of
// them succeeds (a value is never lost, never received twice). Then the same with a select on
// each side (selects that meet selects).
TEST(SelectSystem, RacingWakersCompleteExactlyOneCase) {
  constexpr int kRounds = 5'000;
  Channel<int> a(0);
  Channel<int> b(0);
  std::atomic<int> round{-1};
  std::atomic<int> finished{0};
  std::atomic<int> delivered{0};
  auto waker = [&](Channel<int>& ch, int value) {
    for (int r = 0; r < kRounds; ++r) {
      spin_until([&] { return round.load() >= r; });
      if (r % 2 == 0) {
        if (!ch.try_send(value)) delivered.fetch_add(1);
      } else {
        Channel<int> idle(0);
        auto s = bubble::select(send(ch, value), recv(idle), bubble::default_case());
        if (s.index() == 0) delivered.fetch_add(1);
      }
      finished.fetch_add(1);
    }
  };
  std::thread wa(waker, std::ref(a), 1);
  std::thread wb(waker, std::ref(b), 2);
  int received = 0;
  for (int r = 0; r < kRounds; ++r) {
    // Once the select is queued on both channels, both wakers go.
    std::thread release([&] {
      spin_until([&] { return a.waiting_receivers() == 1 && b.waiting_receivers() == 1; });
      round.store(r);
    });
    auto s = bubble::select(recv(a), recv(b));
    release.join();
    ASSERT_LT(s.index(), 2u);
    received += s.index() == 0 ? s.get<0>().value() : s.get<1>().value();
    spin_until([&] { return finished.load() == 2 * (r + 1); });
    ASSERT_EQ(delivered.load(), r + 1) << "round " << r;
    EXPECT_EQ(a.waiting_receivers() + b.waiting_receivers(), 0u);
  }
  wa.join();
  wb.join();
  EXPECT_GE(received, kRounds);
}

}  // namespace
