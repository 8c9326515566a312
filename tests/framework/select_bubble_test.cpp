// bubble::select inside bubbles: Go's select semantics (one case proceeds, exactly once; send,
// receive, context and timer cases; closed and absent channels; default), the choice among ready
// cases as a recorded, replayable scheduling decision, exact virtual times, and durability (a
// thread blocked in select is blocked: time advances, and a deadlock report names the select).

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/select.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Channel;
using bubble::Context;
using bubble::done;
using bubble::errc;
using bubble::recv;
using bubble::Runtime;
using bubble::send;
using bubble::Strategy;

TEST(SelectBubble, ReceivesFromTheOnlyReadyCaseAndSaysWhich) {
  bubble::run([](Runtime&) {
    Channel<int> empty(1);
    Channel<int> full(1);
    ASSERT_FALSE(full.try_send(42));
    auto s = bubble::select(recv(empty), recv(full));
    ASSERT_EQ(s.index(), 1u);
    EXPECT_EQ(s.get<1>().value(), 42);
    EXPECT_EQ(full.size(), 0u);
    EXPECT_THROW((void)s.get<0>(), std::logic_error);
  });
}

// An unchosen case has no effect: its value is not sent, and nothing stays queued.
TEST(SelectBubble, ASendCaseThatIsNotChosenDeliversNothing) {
  bubble::run([](Runtime&) {
    Channel<int> out(0);  // Nobody receives: the send case cannot proceed.
    Channel<int> in(1);
    ASSERT_FALSE(in.try_send(5));
    auto s = bubble::select(send(out, 1), recv(in));
    ASSERT_EQ(s.index(), 1u);
    EXPECT_EQ(s.get<1>().value(), 5);
    EXPECT_EQ(out.waiting_senders(), 0u);
    EXPECT_EQ(out.try_receive().error(), errc::empty);
  });
}

TEST(SelectBubble, ASendCaseHandsItsValueToAWaitingReceiver) {
  bubble::run([](Runtime& rt) {
    Channel<int> ch(0);
    Channel<int> never(0);
    int got = 0;
    bubble::Thread receiver("receiver", [&] { got = ch.receive().value(); });
    while (ch.waiting_receivers() == 0) rt.yield();
    auto s = bubble::select(recv(never), send(ch, 7));
    ASSERT_EQ(s.index(), 1u);
    EXPECT_FALSE(s.get<1>());
    receiver.join();
    EXPECT_EQ(got, 7);
  });
}

// Blocks until a case can proceed, at the exact virtual time it can, and leaves nothing queued on
// the channels whose cases did not proceed.
TEST(SelectBubble, BlocksUntilACaseCanProceedThenUnlinksTheOthers) {
  bubble::run([](Runtime& rt) {
    Channel<int> a(0);
    Channel<std::string> b(0);
    const bubble::TimePoint start = rt.now();
    bubble::Thread sender("sender", [&] {
      rt.sleep_for(5ms);
      EXPECT_FALSE(b.send("five"));
    });
    auto s = bubble::select(recv(a), recv(b));
    ASSERT_EQ(s.index(), 1u);
    EXPECT_EQ(s.get<1>().value(), "five");
    EXPECT_EQ(rt.now() - start, 5ms);
    EXPECT_EQ(a.waiting_receivers(), 0u);
    EXPECT_EQ(b.waiting_receivers(), 0u);
  });
}

// Both channels become ready while the select waits: only the first waker completes a case; the
// second finds no receiver (the select's other waiter is skipped), so its try_send fails.
TEST(SelectBubble, ExactlyOneCaseCompletesWhenTwoBecomeReady) {
  bubble::run([](Runtime& rt) {
    Channel<int> a(0);
    Channel<int> b(0);
    bubble::Thread selector("selector", [&] {
      auto s = bubble::select(recv(a), recv(b));
      ASSERT_EQ(s.index(), 0u);
      EXPECT_EQ(s.get<0>().value(), 1);
    });
    while (a.waiting_receivers() == 0 || b.waiting_receivers() == 0) rt.yield();
    EXPECT_FALSE(a.try_send(1));
    EXPECT_EQ(b.try_send(2), errc::full);
    selector.join();
    EXPECT_EQ(b.waiting_receivers(), 0u);
  });
}

// Fifo takes the first ready case in argument order; random and PCT take a ready one.
TEST(SelectBubble, FifoTakesTheFirstReadyCaseInArgumentOrder) {
  bubble::run([](Runtime&) {
    Channel<int> a(1);
    Channel<int> b(1);
    Channel<int> c(1);
    ASSERT_FALSE(b.try_send(2));
    ASSERT_FALSE(c.try_send(3));
    auto s = bubble::select(recv(a), recv(b), recv(c));
    EXPECT_EQ(s.index(), 1u);
    EXPECT_EQ(c.size(), 1u);
  });
}

// The index chosen among three ready cases under Strategy::random(seed) (and the run's schedule).
std::size_t chosen_under(const bubble::Options& options, bubble::Schedule* schedule = nullptr) {
  std::size_t index = 99;
  bubble::RunResult r = bubble::run(options, [&](Runtime&) {
    std::array<Channel<int>, 3> chans{Channel<int>(1), Channel<int>(1), Channel<int>(1)};
    for (auto& ch : chans) ASSERT_FALSE(ch.try_send(1));
    auto s = bubble::select(recv(chans[0]), recv(chans[1]), recv(chans[2]));
    index = s.index();
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(chans[i].size(), i == index ? 0u : 1u);
  });
  if (schedule != nullptr) *schedule = r.schedule;
  return index;
}

// Property: under the random strategy, each of k ready cases is chosen with probability 1/k
// (Go's uniform choice). Over 600 seeds each of 3 cases is expected 200 times; the bounds are
// more than 5 standard deviations (about 11.5) away. PCT draws from the same generator.
TEST(SelectBubble, UnderRandomEachReadyCaseIsChosenRoughlyUniformlyOverSeeds) {
  for (bool pct : {false, true}) {
    std::array<int, 3> counts{};
    for (std::uint64_t seed = 0; seed < 600; ++seed) {
      const Strategy strategy = pct ? Strategy::pct(seed, 2) : Strategy::random(seed);
      const std::size_t i = chosen_under({.strategy = strategy});
      ASSERT_LT(i, 3u);
      ++counts[i];
    }
    for (int c : counts) {
      EXPECT_GT(c, 140) << (pct ? "pct" : "random");
      EXPECT_LT(c, 260) << (pct ? "pct" : "random");
    }
  }
}

// The choice is a scheduling decision: recorded in the schedule (one decision with 3 candidates),
// replayed by Options::replay, and imposed by Strategy::choices.
TEST(SelectBubble, TheChoiceIsRecordedAndReplayed) {
  std::array<bool, 3> seen{};
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    bubble::Schedule schedule;
    const std::size_t i = chosen_under({.strategy = Strategy::random(seed)}, &schedule);
    seen[i] = true;
    EXPECT_EQ(schedule.decisions, 1u);
    EXPECT_EQ(schedule.picks,
              i == 0 ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{std::uint32_t(i)});
    EXPECT_EQ(chosen_under({.replay = schedule}), i) << "seed " << seed;
  }
  EXPECT_EQ(seen, (std::array<bool, 3>{true, true, true}));
  EXPECT_EQ(chosen_under({.strategy = Strategy::choices({2})}), 2u);
  EXPECT_EQ(chosen_under({.strategy = Strategy::choices({4})}), 1u);  // Modulo 3.
}

// A receive case on a closed, drained channel proceeds with errc::closed; buffered values are
// still received first. A send case on a closed channel proceeds with errc::closed (Go panics).
TEST(SelectBubble, ClosedChannelsMakeTheirCasesProceedWithClosed) {
  bubble::run([](Runtime&) {
    Channel<int> never(0);
    Channel<int> ch(1);
    ASSERT_FALSE(ch.try_send(9));
    ch.close();
    auto first = bubble::select(recv(never), recv(ch));
    ASSERT_EQ(first.index(), 1u);
    EXPECT_EQ(first.get<1>().value(), 9);
    auto second = bubble::select(recv(never), recv(ch));
    ASSERT_EQ(second.index(), 1u);
    EXPECT_EQ(second.get<1>().error(), errc::closed);
    auto third = bubble::select(recv(never), send(ch, 1));
    ASSERT_EQ(third.index(), 1u);
    EXPECT_EQ(third.get<1>(), errc::closed);
  });
}

TEST(SelectBubble, ClosingAChannelWakesASelectWaitingOnIt) {
  bubble::run([](Runtime& rt) {
    Channel<int> a(0);
    Channel<int> b(0);
    bubble::Thread closer("closer", [&] {
      rt.sleep_for(3ms);
      b.close();
    });
    auto s = bubble::select(recv(a), send(b, 4));
    ASSERT_EQ(s.index(), 1u);
    EXPECT_EQ(s.get<1>(), errc::closed);
    EXPECT_EQ(rt.now() - bubble::kStart, 3ms);
    EXPECT_EQ(a.waiting_receivers(), 0u);
  });
}

// Go's nil channel: an absent case never proceeds, even when other cases wait.
TEST(SelectBubble, AbsentCasesNeverProceed) {
  bubble::run([](Runtime& rt) {
    Channel<int>* none = nullptr;
    const Context* no_context = nullptr;
    Channel<int> ch(0);
    bubble::Thread sender("sender", [&] {
      rt.sleep_for(1ms);
      EXPECT_FALSE(ch.send(3));
    });
    auto s = bubble::select(recv(none), send(none, 1), done(no_context), recv(ch));
    ASSERT_EQ(s.index(), 3u);
    EXPECT_EQ(s.get<3>().value(), 3);
    auto d = bubble::select(recv(none), bubble::default_case());
    EXPECT_EQ(d.index(), 1u);
  });
}

TEST(SelectBubble, TheDefaultCaseIsTakenOnlyWhenNoOtherCaseCanProceed) {
  bubble::run([](Runtime& rt) {
    Channel<int> ch(1);
    const bubble::TimePoint start = rt.now();
    auto idle = bubble::select(bubble::default_case(), recv(ch), send(ch, 0));
    // The buffer has room, so the send case proceeds: not the default.
    EXPECT_EQ(idle.index(), 2u);
    auto take = bubble::select(bubble::default_case(), recv(ch));
    ASSERT_EQ(take.index(), 1u);
    EXPECT_EQ(take.get<1>().value(), 0);
    auto none = bubble::select(recv(ch), bubble::default_case());
    EXPECT_EQ(none.index(), 1u);
    EXPECT_EQ(rt.now(), start);  // Never blocked.
    EXPECT_EQ(ch.waiting_receivers(), 0u);
  });
}

// Go's `select { case v := <-ch: case <-time.After(time.Second): }` on an empty channel: the
// timeout case at exactly start + 1s, with the timer's scheduled time as its value.
TEST(SelectBubble, AnAfterCaseTimesOutAtExactlyItsVirtualTime) {
  bubble::run([](Runtime& rt) {
    Channel<int> empty(0);
    const bubble::TimePoint start = rt.now();
    auto s = bubble::select(recv(empty), recv(bubble::after(1s).channel()));
    ASSERT_EQ(s.index(), 1u);
    EXPECT_EQ(s.get<1>().value(), start + 1s);
    EXPECT_EQ(rt.now(), start + 1s);
    EXPECT_EQ(empty.waiting_receivers(), 0u);
  });
}

TEST(SelectBubble, ATickerCaseFiresOnItsGrid) {
  bubble::run([](Runtime& rt) {
    Channel<int> empty(0);
    bubble::Ticker ticker(100ms, rt);
    const bubble::TimePoint start = rt.now();
    for (int i = 1; i <= 3; ++i) {
      auto s = bubble::select(recv(empty), recv(ticker.channel()));
      ASSERT_EQ(s.index(), 1u);
      EXPECT_EQ(rt.now(), start + i * 100ms);
    }
  });
}

TEST(SelectBubble, AContextCaseProceedsWhenTheContextEnds) {
  bubble::run([](Runtime& rt) {
    Channel<int> empty(0);
    const bubble::TimePoint start = rt.now();
    auto [ctx, cancel] = Context::with_timeout(Context::background(), 250ms, rt);
    auto s = bubble::select(recv(empty), done(ctx));
    ASSERT_EQ(s.index(), 1u);
    EXPECT_EQ(s.get<1>(), errc::deadline_exceeded);
    EXPECT_EQ(rt.now(), start + 250ms);
    EXPECT_EQ(ctx.registrations(), 0u);

    auto [ctx2, cancel2] = Context::with_cancel(Context::background());
    bubble::Thread canceller("canceller", [&, c = cancel2] {
      rt.sleep_for(7ms);
      c();
    });
    auto t = bubble::select(done(ctx2), recv(empty));
    ASSERT_EQ(t.index(), 0u);
    EXPECT_EQ(t.get<0>(), errc::canceled);
    EXPECT_EQ(rt.now(), start + 257ms);
    // An already-done context proceeds at once.
    auto u = bubble::select(recv(empty), done(ctx2));
    EXPECT_EQ(u.index(), 1u);
  });
}

// Two selects meet on an unbuffered channel: one's send case completes the other's receive case.
TEST(SelectBubble, TwoSelectsRendezvousOnAChannel) {
  bubble::run([](Runtime& rt) {
    Channel<int> ch(0);
    Channel<int> idle1(0);
    Channel<int> idle2(0);
    int received = 0;
    bubble::Thread receiver("receiver", [&] {
      auto s = bubble::select(recv(idle1), recv(ch));
      ASSERT_EQ(s.index(), 1u);
      received = s.get<1>().value();
    });
    while (ch.waiting_receivers() == 0) rt.yield();
    auto s = bubble::select(recv(idle2), send(ch, 11));
    EXPECT_EQ(s.index(), 1u);
    receiver.join();
    EXPECT_EQ(received, 11);
    EXPECT_EQ(idle1.waiting_receivers(), 0u);
  });
}

// The ticket booth of Go's synctest examples, with select: the booth offers tickets until its
// context ends, `select { case tickets <- t: case <-ctx.Done(): return }`.
TEST(SelectBubble, TicketBoothOffersTicketsUntilItsContextEnds) {
  bubble::run([](Runtime& rt) {
    Channel<int> tickets(0);
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    int offered = 0;
    bubble::Thread booth("booth", [&, c = ctx] {
      for (int t = 0;; ++t) {
        auto s = bubble::select(send(tickets, t), done(c));
        if (s.index() == 1) return;
        ++offered;
        rt.sleep_for(10ms);
      }
    });
    for (int i = 0; i < 3; ++i) EXPECT_EQ(tickets.receive().value(), i);
    EXPECT_EQ(rt.now() - bubble::kStart, 20ms);
    rt.sleep_for(15ms);  // The booth now waits in its select with ticket 3.
    cancel();
    booth.join();
    EXPECT_EQ(offered, 3);
    EXPECT_EQ(tickets.waiting_senders(), 0u);
  });
}

// A thread blocked in select is blocked: with nothing else to run, the run deadlocks, and the
// report names the select and each of its cases with the channel's object id.
TEST(SelectBubble, ADeadlockReportNamesTheSelectAndItsCases) {
  std::uint64_t a_id = 0;
  std::uint64_t b_id = 0;
  try {
    bubble::run([&](Runtime&) {
      Channel<int> a(0);
      Channel<int> b(0);
      a_id = a.id();
      b_id = b.id();
      auto [ctx, cancel] = Context::with_cancel(Context::background());
      Channel<int>* none = nullptr;
      bubble::Thread stuck("stuck", [&, c = ctx] {
        (void)bubble::select(recv(a), send(b, 1), done(c), recv(none));
      });
      stuck.join();
    });
    FAIL() << "expected a deadlock";
  } catch (const bubble::DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("\"stuck\": blocked on select at "), std::string::npos) << m;
    EXPECT_NE(m.find("cases: [0] Channel::receive (object #" + std::to_string(a_id) + ")"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("[1] Channel::send (object #" + std::to_string(b_id) + ")"), std::string::npos)
        << m;
    EXPECT_NE(m.find("[2] Context::done"), std::string::npos) << m;
    EXPECT_NE(m.find("[3] Channel::receive (absent channel)"), std::string::npos) << m;
  }
}

// Go's `select {}`: only absent cases and no default blocks forever.
TEST(SelectBubble, ASelectWithOnlyAbsentCasesBlocksForever) {
  EXPECT_THROW(bubble::run([](Runtime&) {
                 Channel<int>* none = nullptr;
                 (void)bubble::select(recv(none));
               }),
               bubble::DeadlockError);
}

// A channel of another runtime is refused before anything changes.
TEST(SelectBubble, AChannelOfAnotherRuntimeIsRefused) {
  Channel<int> outside(1, bubble::system_runtime());
  bubble::run([&](Runtime&) {
    Channel<int> inside(1);
    ASSERT_FALSE(inside.try_send(1));
    EXPECT_THROW((void)bubble::select(recv(inside), recv(outside)), std::logic_error);
    EXPECT_EQ(inside.size(), 1u);
  });
}

}  // namespace
