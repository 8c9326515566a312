// Tests of bubble::Channel<T> on the system runtime (real threads; TSan in CI). Threads are
// sequenced with the channel's own signals (waiting_senders() / waiting_receivers()), never with
// sleeps; only ordering and lower bounds on time are asserted. Scheduling points are checked on
// a controlled ManualRuntime that records them.

#include <bubble/channel.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../../support/error_codes.hpp"
#include "manual_runtime.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::Channel;
using bubble::Context;
using bubble::errc;
using bubble::Result;
using bubble::test_support::ec;

template <class Pred>
void wait_until(Pred pred) {
  while (!pred()) std::this_thread::yield();
}

TEST(Channel, ReportsCapacitySizeAndClosed) {
  Channel<int> ch(3);
  EXPECT_EQ(ch.capacity(), 3u);
  EXPECT_EQ(ch.size(), 0u);
  EXPECT_FALSE(ch.closed());
  EXPECT_FALSE(ch.send(1));
  EXPECT_EQ(ch.size(), 1u);
  ch.close();
  EXPECT_TRUE(ch.closed());
  EXPECT_EQ(&ch.runtime(), &bubble::system_runtime());
}

TEST(Channel, BufferedValuesComeOutInFifoOrder) {
  Channel<int> ch(4);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(ch.send(i));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(ch.receive().value(), i);
}

TEST(Channel, TrySendReportsFullAndTryReceiveReportsEmpty) {
  Channel<int> ch(1);
  EXPECT_EQ(ch.try_receive().error(), ec(errc::empty));
  EXPECT_FALSE(ch.try_send(7));
  EXPECT_EQ(ch.try_send(8), ec(errc::full));
  EXPECT_EQ(ch.try_receive().value(), 7);
  EXPECT_EQ(ch.try_receive().error(), ec(errc::empty));
}

TEST(Channel, RingBufferWrapsAround) {
  Channel<int> ch(3);
  int next_in = 0;
  int next_out = 0;
  for (int round = 0; round < 10; ++round) {
    while (!ch.try_send(next_in)) ++next_in;
    EXPECT_EQ(ch.size(), 3u);
    EXPECT_EQ(ch.receive().value(), next_out++);
    EXPECT_EQ(ch.receive().value(), next_out++);
  }
}

TEST(Channel, UnbufferedTrySendFailsWithoutAWaitingReceiver) {
  Channel<int> ch;
  EXPECT_EQ(ch.capacity(), 0u);
  EXPECT_EQ(ch.try_send(1), ec(errc::full));
  EXPECT_EQ(ch.try_receive().error(), ec(errc::empty));
}

TEST(Channel, UnbufferedTrySendHandsTheValueToAWaitingReceiver) {
  Channel<int> ch;
  Result<int> got = errc::empty;
  std::thread receiver([&] { got = ch.receive(); });
  wait_until([&] { return ch.waiting_receivers() == 1; });
  EXPECT_FALSE(ch.try_send(42));
  receiver.join();
  EXPECT_EQ(got.value(), 42);
  EXPECT_EQ(ch.waiting_receivers(), 0u);
}

TEST(Channel, UnbufferedSendCompletesOnlyWhenAReceiverTakesTheValue) {
  Channel<std::string> ch;
  std::atomic<bool> returned{false};
  std::error_code result = ec(errc::empty);
  std::thread sender([&] {
    result = ch.send("hello");
    returned = true;
  });
  wait_until([&] { return ch.waiting_senders() == 1; });
  // The sender is queued: it cannot have completed, and nothing is buffered.
  EXPECT_FALSE(returned);
  EXPECT_EQ(ch.size(), 0u);
  EXPECT_EQ(ch.receive().value(), "hello");
  sender.join();
  EXPECT_TRUE(returned);
  EXPECT_FALSE(result);
}

TEST(Channel, BufferedSendWaitsForRoomAndAReceiveRefillsTheBufferFromTheWaitingSender) {
  Channel<int> ch(1);
  EXPECT_FALSE(ch.send(1));
  std::thread sender([&] { EXPECT_FALSE(ch.send(2)); });
  wait_until([&] { return ch.waiting_senders() == 1; });
  EXPECT_EQ(ch.receive().value(), 1);
  // The waiting sender's value moved into the freed slot.
  EXPECT_EQ(ch.waiting_senders(), 0u);
  EXPECT_EQ(ch.size(), 1u);
  sender.join();
  EXPECT_EQ(ch.receive().value(), 2);
}

TEST(Channel, WaitingReceiversAreServedInArrivalOrder) {
  Channel<int> ch;
  Result<int> a = errc::empty;
  Result<int> b = errc::empty;
  std::thread ta([&] { a = ch.receive(); });
  wait_until([&] { return ch.waiting_receivers() == 1; });
  std::thread tb([&] { b = ch.receive(); });
  wait_until([&] { return ch.waiting_receivers() == 2; });
  EXPECT_FALSE(ch.send(1));
  EXPECT_FALSE(ch.send(2));
  ta.join();
  tb.join();
  EXPECT_EQ(a.value(), 1);
  EXPECT_EQ(b.value(), 2);
}

TEST(Channel, WaitingSendersAreServedInArrivalOrder) {
  for (const std::size_t capacity : {0u, 1u}) {
    Channel<int> ch(capacity);
    if (capacity == 1) {
      EXPECT_FALSE(ch.send(0));
    }
    std::thread ta([&] { EXPECT_FALSE(ch.send(1)); });
    wait_until([&] { return ch.waiting_senders() == 1; });
    std::thread tb([&] { EXPECT_FALSE(ch.send(2)); });
    wait_until([&] { return ch.waiting_senders() == 2; });
    if (capacity == 1) {
      EXPECT_EQ(ch.receive().value(), 0);
    }
    EXPECT_EQ(ch.receive().value(), 1);
    EXPECT_EQ(ch.receive().value(), 2);
    ta.join();
    tb.join();
  }
}

TEST(Channel, ReceiveDrainsTheBufferBeforeReportingClosed) {
  Channel<int> ch(2);
  EXPECT_FALSE(ch.send(1));
  EXPECT_FALSE(ch.send(2));
  ch.close();
  EXPECT_EQ(ch.receive().value(), 1);
  EXPECT_EQ(ch.try_receive().value(), 2);
  EXPECT_EQ(ch.receive().error(), ec(errc::closed));
  EXPECT_EQ(ch.try_receive().error(), ec(errc::closed));
}

TEST(Channel, SendAfterCloseFailsWithClosed) {
  Channel<int> ch(2);
  ch.close();
  EXPECT_EQ(ch.send(1), ec(errc::closed));
  EXPECT_EQ(ch.try_send(1), ec(errc::closed));
  EXPECT_EQ(ch.try_send_from_callback(1), ec(errc::closed));
  EXPECT_EQ(ch.size(), 0u);
}

TEST(Channel, ClosingTwiceThrowsLogicError) {
  Channel<int> ch;
  ch.close();
  try {
    ch.close();
    FAIL() << "second close did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "bubble::Channel: close of a closed channel");
  }
}

TEST(Channel, CloseWakesWaitingReceiversWithClosed) {
  Channel<int> ch(1);
  std::vector<std::thread> receivers;
  std::atomic<int> closed_count{0};
  for (int i = 0; i < 3; ++i) {
    receivers.emplace_back([&] {
      if (ch.receive().error() == ec(errc::closed)) closed_count.fetch_add(1);
    });
  }
  wait_until([&] { return ch.waiting_receivers() == 3; });
  ch.close();
  for (auto& t : receivers) t.join();
  EXPECT_EQ(closed_count.load(), 3);
}

TEST(Channel, CloseWakesWaitingSendersWithClosedAndDropsTheirValues) {
  Channel<int> ch(1);
  EXPECT_FALSE(ch.send(0));
  std::vector<std::thread> senders;
  std::atomic<int> closed_count{0};
  for (int i = 1; i <= 2; ++i) {
    senders.emplace_back([&, i] {
      if (ch.send(i) == ec(errc::closed)) closed_count.fetch_add(1);
    });
  }
  wait_until([&] { return ch.waiting_senders() == 2; });
  ch.close();
  for (auto& t : senders) t.join();
  EXPECT_EQ(closed_count.load(), 2);
  EXPECT_EQ(ch.receive().value(), 0);
  EXPECT_EQ(ch.receive().error(), ec(errc::closed));
}

TEST(Channel, CancellingTheContextWakesAWaitingReceiverWithCtxErr) {
  Channel<int> ch;
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  Result<int> got = 0;
  std::thread receiver([&, c = ctx] { got = ch.receive(c); });
  wait_until([&] { return ch.waiting_receivers() == 1; });
  cancel(ec(errc::limiter_stopped));
  receiver.join();
  EXPECT_EQ(got.error(), ec(errc::canceled));
  EXPECT_EQ(ch.waiting_receivers(), 0u);
  EXPECT_EQ(ctx.registrations(), 0u);
}

TEST(Channel, CancellingTheContextWakesAWaitingSenderAndItsValueIsNotDelivered) {
  Channel<int> ch;
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::error_code result;
  std::thread sender([&, c = ctx] { result = ch.send(5, c); });
  wait_until([&] { return ch.waiting_senders() == 1; });
  cancel();
  sender.join();
  EXPECT_EQ(result, ec(errc::canceled));
  EXPECT_EQ(ch.waiting_senders(), 0u);
  EXPECT_EQ(ch.try_receive().error(), ec(errc::empty));
}

TEST(Channel, AlreadyDoneContextFailsEvenWhenTheOperationCouldComplete) {
  Channel<int> ch(1);
  EXPECT_FALSE(ch.send(1));
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel();
  EXPECT_EQ(ch.receive(ctx).error(), ec(errc::canceled));
  EXPECT_EQ(ch.size(), 1u);
  EXPECT_EQ(ch.receive().value(), 1);
  EXPECT_EQ(ch.send(2, ctx), ec(errc::canceled));
  EXPECT_EQ(ch.size(), 0u);
}

TEST(Channel, ContextDeadlineEndsAReceiveNoEarlierThanTheDeadline) {
  bubble::Runtime& rt = bubble::system_runtime();
  Channel<int> ch;
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 2ms, rt);
  const Result<int> got = ch.receive(ctx);
  EXPECT_EQ(got.error(), ec(errc::deadline_exceeded));
  EXPECT_GE(rt.now(), *ctx.deadline());
}

TEST(Channel, ReceiveUntilTimesOutNoEarlierThanItsDeadline) {
  bubble::Runtime& rt = bubble::system_runtime();
  Channel<int> ch;
  const bubble::TimePoint deadline = rt.now() + 2ms;
  EXPECT_EQ(ch.receive_until(deadline).error(), ec(errc::timed_out));
  EXPECT_GE(rt.now(), deadline);
  EXPECT_EQ(ch.waiting_receivers(), 0u);
}

TEST(Channel, ReceiveUntilAPastDeadlineReturnsAnAvailableValueOrTimesOutAtOnce) {
  bubble::Runtime& rt = bubble::system_runtime();
  Channel<int> ch(1);
  EXPECT_EQ(ch.receive_until(rt.now() - 1s).error(), ec(errc::timed_out));
  EXPECT_FALSE(ch.send(3));
  EXPECT_EQ(ch.receive_until(rt.now() - 1s).value(), 3);
  ch.close();
  EXPECT_EQ(ch.receive_until(rt.now() + 1h).error(), ec(errc::closed));
}

TEST(Channel, ReceiveUntilGetsAValueSentWhileItWaits) {
  bubble::Runtime& rt = bubble::system_runtime();
  Channel<int> ch;
  Result<int> got = errc::empty;
  std::thread receiver([&] { got = ch.receive_until(rt.now() + 1h); });
  wait_until([&] { return ch.waiting_receivers() == 1; });
  EXPECT_FALSE(ch.send(9));
  receiver.join();
  EXPECT_EQ(got.value(), 9);
}

TEST(Channel, CarriesMoveOnlyValues) {
  Channel<std::unique_ptr<int>> ch(1);
  EXPECT_FALSE(ch.send(std::make_unique<int>(4)));
  std::unique_ptr<int> p = ch.receive().value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 4);
}

TEST(Channel, DiscardBufferedDropsBufferedValuesOnly) {
  Channel<int> ch(2);
  EXPECT_FALSE(ch.send(1));
  EXPECT_FALSE(ch.send(2));
  EXPECT_EQ(ch.discard_buffered(), 2u);
  EXPECT_EQ(ch.size(), 0u);
  EXPECT_EQ(ch.try_receive().error(), ec(errc::empty));
}

TEST(Channel, DiscardBufferedLetsWaitingSendersFillTheFreedSlotsInOrder) {
  Channel<int> ch(1);
  EXPECT_FALSE(ch.send(1));
  std::thread a([&] { EXPECT_FALSE(ch.send(2)); });
  wait_until([&] { return ch.waiting_senders() == 1; });
  std::thread b([&] { EXPECT_FALSE(ch.send(3)); });
  wait_until([&] { return ch.waiting_senders() == 2; });
  EXPECT_EQ(ch.discard_buffered(), 1u);
  a.join();  // Its value took the freed slot.
  EXPECT_EQ(ch.waiting_senders(), 1u);
  EXPECT_EQ(ch.receive().value(), 2);
  EXPECT_EQ(ch.receive().value(), 3);
  b.join();
}

TEST(Channel, EveryPublicOperationIsASchedulingPointButTrySendFromCallbackIsNot) {
  bubble_test::ManualRuntime rt(/*controlled=*/true);
  const auto entered = rt.enter();  // A controlled runtime's channel checks its callers.
  Channel<int> ch(1, rt);
  (void)rt.take_points();
  EXPECT_FALSE(ch.send(1));
  EXPECT_EQ(ch.try_send(2), ec(errc::full));
  EXPECT_EQ(ch.receive().value(), 1);
  EXPECT_EQ(ch.try_receive().error(), ec(errc::empty));
  EXPECT_FALSE(ch.try_send_from_callback(3));
  EXPECT_EQ(ch.receive_until(rt.now()).value(), 3);
  ch.close();
  const auto points = rt.take_points();
  std::vector<std::string> kinds;
  for (const auto& p : points) {
    kinds.push_back(p.kind);
    EXPECT_EQ(p.object_id, ch.id());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"Channel::send", "Channel::try_send",
                                             "Channel::receive", "Channel::try_receive",
                                             "Channel::receive_until", "Channel::close"}));
}

// Property: with several producers and consumers, on buffered and unbuffered channels, every
// value sent is received exactly once, values of one producer arrive in the order it sent them,
// and after close every consumer ends with errc::closed.
TEST(Channel, ManyProducersAndConsumersDeliverEveryValueOnceInPerProducerOrder) {
  for (const std::size_t capacity : {0u, 1u, 16u}) {
    constexpr int kProducers = 3;
    constexpr int kConsumers = 3;
    constexpr int kPerProducer = 2000;
    Channel<int> ch(capacity);
    std::vector<std::vector<int>> received(kConsumers);
    std::vector<std::thread> consumers;
    for (int c = 0; c < kConsumers; ++c) {
      consumers.emplace_back([&, c] {
        for (;;) {
          Result<int> r = ch.receive();
          if (!r) {
            EXPECT_EQ(r.error(), ec(errc::closed));
            return;
          }
          received[static_cast<std::size_t>(c)].push_back(*r);
        }
      });
    }
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([&, p] {
        for (int i = 0; i < kPerProducer; ++i) EXPECT_FALSE(ch.send(p * kPerProducer + i));
      });
    }
    for (auto& t : producers) t.join();
    ch.close();
    for (auto& t : consumers) t.join();
    std::vector<int> all;
    for (const auto& r : received) {
      // Per consumer, each producer's values are increasing.
      std::vector<int> last(kProducers, -1);
      for (const int v : r) {
        EXPECT_GT(v, last[static_cast<std::size_t>(v / kPerProducer)]);
        last[static_cast<std::size_t>(v / kPerProducer)] = v;
      }
      all.insert(all.end(), r.begin(), r.end());
    }
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), static_cast<std::size_t>(kProducers * kPerProducer));
    for (int i = 0; i < kProducers * kPerProducer; ++i)
      EXPECT_EQ(all[static_cast<std::size_t>(i)], i);
  }
}

// Property: a receive racing a cancel either gets the value (and the value is gone from the
// channel) or fails with ctx.err() (and the value stays available) — never both, never lost.
TEST(Channel, CancellationRacingASendNeverLosesOrDuplicatesAValue) {
  for (int round = 0; round < 200; ++round) {
    Channel<int> ch;
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    Result<int> got = errc::empty;
    std::thread receiver([&, c = ctx] { got = ch.receive(c); });
    wait_until([&] { return ch.waiting_receivers() == 1; });
    std::thread canceller([c = cancel] { c(); });
    const std::error_code sent = ch.try_send(round);
    canceller.join();
    receiver.join();
    if (got) {
      EXPECT_FALSE(sent);
      EXPECT_EQ(*got, round);
    } else {
      EXPECT_EQ(got.error(), ec(errc::canceled));
      EXPECT_EQ(sent, ec(errc::full));  // Nobody took it.
    }
  }
}

}  // namespace
