// bubble::Atomic in a bubble: every operation is a scheduling point (explored, recorded,
// replayed), traced with its memory order and the object's name, and wait() blocks the bubble
// thread as a primitive does.

#include <bubble/atomic.hpp>
#include <bubble/bubble.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace {

using bubble::Atomic;
using bubble::Runtime;
using bubble::Strategy;

// Two threads increment with a load and a store (not a read-modify-write). Returns the count.
int load_store_increments(const bubble::Options& options, bubble::Schedule* schedule = nullptr) {
  int result = 0;
  const bubble::RunResult r = bubble::run(options, [&](Runtime& rt) {
    Atomic<int> counter("counter", 0);
    auto add = [&] {
      for (int i = 0; i < 3; ++i) {
        const int seen = counter.load(std::memory_order_relaxed);
        counter.store(seen + 1, std::memory_order_relaxed);
      }
    };
    bubble::Thread a("a", add, rt);
    bubble::Thread b("b", add, rt);
    a.join();
    b.join();
    result = counter.load();
  });
  if (schedule != nullptr) *schedule = r.schedule;
  return result;
}

// Property: exploration finds the interleaving where one thread's store overwrites the other's
// (the load and the store are separate scheduling points), and its recorded schedule replays it.
TEST(AtomicBubble, ExplorationFindsALostUpdateBetweenALoadAndAStore) {
  int seed = 1;
  bubble::Schedule schedule;
  int lost_at = 0;
  for (; seed <= 200; ++seed) {
    lost_at = load_store_increments({.strategy = Strategy::random(seed)}, &schedule);
    if (lost_at < 6) break;
  }
  ASSERT_LE(seed, 200) << "no seed of 200 lost an update";
  bubble::Options replay;
  replay.replay = schedule;
  EXPECT_EQ(load_store_increments(replay), lost_at);
  EXPECT_EQ(load_store_increments({.strategy = Strategy::fifo()}), 6);  // fifo never preempts
}

// Property: with fetch_add no schedule loses an update.
TEST(AtomicBubble, FetchAddLosesNothingUnderAnySchedule) {
  for (int seed = 1; seed <= 100; ++seed) {
    int total = 0;
    bubble::run({.strategy = Strategy::pct(static_cast<std::uint64_t>(seed), 3)}, [&](Runtime& rt) {
      Atomic<int> counter(0);
      bubble::Thread a(
          "a",
          [&] {
            for (int i = 0; i < 5; ++i) counter.fetch_add(1);
          },
          rt);
      bubble::Thread b(
          "b",
          [&] {
            for (int i = 0; i < 5; ++i) counter += 1;
          },
          rt);
      a.join();
      b.join();
      total = counter.load();
    });
    EXPECT_EQ(total, 10) << "pct seed " << seed;
  }
}

// The trace names each operation with its memory order, and the object by name and id; an
// unnamed atomic gets its id at its first operation; unsync_load is no scheduling point.
TEST(AtomicBubble, TraceShowsTheOperationItsOrderAndTheObject) {
  bubble::Options options;
  options.trace = true;
  const bubble::RunResult r = bubble::run(options, [](Runtime&) {
    Atomic<std::uint64_t> tail("inbox.tail", 0);
    Atomic<int> plain(0);
    tail.fetch_add(1, std::memory_order_acq_rel);
    std::uint64_t expected = 1;
    (void)tail.compare_exchange_strong(expected, 5, std::memory_order_release,
                                       std::memory_order_relaxed);
    plain.store(2, std::memory_order_release);
    (void)tail.unsync_load();
    (void)plain.load();
  });
  const std::string text = r.trace_text();
  EXPECT_NE(text.find("op Atomic::fetch_add(acq_rel) \"inbox.tail\" #1 "), std::string::npos)
      << text;
  EXPECT_NE(text.find("op Atomic::compare_exchange_strong(release) \"inbox.tail\" #1 "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("op Atomic::store(release) #2 "), std::string::npos) << text;
  EXPECT_NE(text.find("op Atomic::load(seq_cst) #2 "), std::string::npos) << text;
  // Four operations are traced: the unsync_load is not among them.
  std::size_t ops = 0;
  for (std::size_t at = text.find("op Atomic::"); at != std::string::npos;
       at = text.find("op Atomic::", at + 1)) {
    ++ops;
  }
  EXPECT_EQ(ops, 4u) << text;
}

// A compare-exchange in a bubble fails only when the value differs (no spurious failures, so a
// run depends on its schedule alone).
TEST(AtomicBubble, WeakCompareExchangeNeverFailsSpuriously) {
  bubble::run([](Runtime&) {
    Atomic<int> a(0);
    for (int i = 0; i < 1000; ++i) {
      int expected = i;
      ASSERT_TRUE(a.compare_exchange_weak(expected, i + 1));
    }
  });
}

// wait() parks the thread until a notify after a change; a thread waiting on an atomic nobody
// changes is reported blocked on it, by name.
TEST(AtomicBubble, WaitBlocksUntilNotifiedAndDeadlocksAreReported) {
  for (int seed = 0; seed <= 20; ++seed) {
    int seen = 0;
    bubble::run({.strategy = seed == 0 ? Strategy::fifo() : Strategy::random(seed)},
                [&](Runtime& rt) {
                  Atomic<int> flag("flag", 0);
                  bubble::Thread setter(
                      "setter",
                      [&] {
                        flag.store(1, std::memory_order_release);
                        flag.notify_all();
                      },
                      rt);
                  flag.wait(0, std::memory_order_acquire);
                  seen = flag.load();
                });
    EXPECT_EQ(seen, 1) << "seed " << seed;
  }
  try {
    bubble::run([](Runtime&) {
      Atomic<int> flag("never", 0);
      flag.wait(0);
    });
    FAIL() << "no deadlock";
  } catch (const bubble::DeadlockError& e) {
    EXPECT_NE(std::string(e.what()).find("blocked on Atomic::wait \"never\" (object #1)"),
              std::string::npos)
        << e.what();
  }
}

// Object ids are the same in every run of the same program: a later run of the process numbers
// its atomics as the first did.
TEST(AtomicBubble, ObjectIdsAreTheSameInEveryRun) {
  auto trace_of_run = [] {
    bubble::Options options;
    options.trace = true;
    return bubble::run(options,
                       [](Runtime&) {
                         Atomic<int> a(0);
                         Atomic<int> b("b", 0);
                         a.store(1);
                         b.store(1);
                       })
        .trace_text();
  };
  const std::string first = trace_of_run();
  EXPECT_EQ(trace_of_run(), first);
  EXPECT_NE(first.find("Atomic::store(seq_cst) #2"), std::string::npos) << first;
  EXPECT_NE(first.find("Atomic::store(seq_cst) \"b\" #1"), std::string::npos) << first;
}

// An atomic touched from a timer callback (which runs between threads) just performs the
// operation.
TEST(AtomicBubble, TimerCallbacksMayUseAtomics) {
  bubble::run([](Runtime& rt) {
    Atomic<int> fired(0);
    (void)rt.schedule_at(rt.now() + std::chrono::seconds(1), [&] { fired.fetch_add(1); });
    rt.sleep_for(std::chrono::seconds(2));
    EXPECT_EQ(fired.load(), 1);
  });
}

}  // namespace
