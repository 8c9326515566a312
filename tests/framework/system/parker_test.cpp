// The system runtime's parking under load: the parker's wake-up tokens, detail::SpinLock's sleep
// and wake, and CondVar's notify that skips the lock when nobody waits. Threads loop on events
// (counts, flags), never on time; a lost wake-up shows as a test that never ends (CTest's
// timeout).

#include <bubble/cond_var.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/mutex.hpp>
#include <bubble/runtime.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::ParkResult;
using bubble::Runtime;
using bubble::Waiter;

const bubble::WaitInfo kWhat{"test", 0, bubble::SourceLocation::current()};

TEST(SystemParker, AStaleWakeUpDoesNotEndTheNextPark) {
  // Property: park returns notified only once its own waiter was unparked, even when the thread's
  // parker still holds the token of an earlier unpark (one whose waiter was seen notified before
  // the park slept, so the token was never taken).
  Runtime& rt = bubble::system_runtime();
  for (int round = 0; round < 200; ++round) {
    Waiter first;
    Waiter second;
    std::latch first_prepared(1);
    std::latch first_unparked(1);
    std::latch second_prepared(1);
    std::atomic<bool> second_unparked{false};
    bool unparked_before_return = false;
    ParkResult result = ParkResult::timed_out;
    auto handle = rt.spawn("parker", [&] {
      rt.prepare(first);
      first_prepared.count_down();
      first_unparked.wait();
      // Already notified: returns at once and leaves the unpark's token in the parker.
      EXPECT_EQ(rt.park(first, bubble::kNoDeadline, kWhat), ParkResult::notified);
      rt.prepare(second);
      second_prepared.count_down();
      result = rt.park(second, bubble::kNoDeadline, kWhat);
      unparked_before_return = second_unparked.load();
    });
    first_prepared.wait();
    rt.unpark(first);
    first_unparked.count_down();
    second_prepared.wait();
    second_unparked.store(true);
    rt.unpark(second);
    handle->join();
    ASSERT_EQ(result, ParkResult::notified);
    ASSERT_TRUE(unparked_before_return) << "park ended on a stale token, round " << round;
  }
}

TEST(SystemParker, ManyThreadsParkAndUnparkEachOtherInARing) {
  // Property: every unpark reaches its waiter, whether the waiter is still spinning, about to
  // sleep or asleep. Each thread waits for its turn and passes it on; a lost wake-up stops the
  // ring. Threads exit and new ones reuse their parkers between rounds.
  Runtime& rt = bubble::system_runtime();
  constexpr int kThreads = 4;
  constexpr int kLaps = 2000;
  for (int round = 0; round < 3; ++round) {
    struct Slot {
      std::atomic<Waiter*> waiter{nullptr};
      std::atomic<int> turns{0};
    };
    std::vector<Slot> slots(kThreads);
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.push_back(rt.spawn("ring-" + std::to_string(i), [&, i] {
        Slot& mine = slots[static_cast<std::size_t>(i)];
        Slot& next = slots[static_cast<std::size_t>((i + 1) % kThreads)];
        for (int lap = 0; lap < kLaps; ++lap) {
          if (i != 0 || lap != 0) {
            // Wait for the turn: publish a waiter, park until the previous thread unparks it.
            Waiter w;
            rt.prepare(w);
            mine.waiter.store(&w);
            // Until notified, not until the turn is seen: the passer unparks after handing the
            // turn over, and the waiter must outlive that unpark (the parking protocol).
            while (rt.park(w, bubble::kNoDeadline, kWhat) != ParkResult::notified) {
            }
            mine.turns.fetch_sub(1);
          }
          // Pass the turn on: wait until the next thread has published its waiter.
          Waiter* w = nullptr;
          while ((w = next.waiter.exchange(nullptr)) == nullptr) {
            if (i == kThreads - 1 && lap == kLaps - 1) return;  // The ring's last move.
            std::this_thread::yield();
          }
          next.turns.fetch_add(1);
          rt.unpark(*w);
        }
      }));
    }
    for (auto& t : threads) t->join();
    for (const Slot& s : slots) EXPECT_EQ(s.turns.load(), 0);
  }
}

TEST(SpinLock, ContendedLockExcludesAndWakesEverySleeper) {
  // Property: the lock is mutually exclusive (no increment is lost) and a thread that slept on
  // it is woken by an unlock (otherwise the test never ends). More threads than processors, so
  // holders are preempted and waiters go past the spin to the futex.
  constexpr int kThreads = 6;
  constexpr int kIncrements = 50'000;
  bubble::detail::SpinLock lock;
  long long counter = 0;
  {
    std::vector<bubble::Thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back("locker", [&] {
        for (int i = 0; i < kIncrements; ++i) {
          std::lock_guard guard(lock);
          ++counter;
        }
      });
    }
  }
  EXPECT_EQ(counter, static_cast<long long>(kThreads) * kIncrements);
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(CondVar, PingPongWithNotifiesAfterUnlockingNeverLosesAWakeUp) {
  // Property: a notify that finds no thread counted as waiting (and so skips the lock) loses no
  // wake-up: two threads take turns, each changing the turn under the mutex and notifying after
  // unlocking it (the pattern of bubble::Pool), so a waiter that queued just before the change
  // must be seen. A lost wake-up stops both threads.
  constexpr int kRounds = 20'000;
  bubble::Mutex mu;
  bubble::CondVar cv;
  int turn = 0;  // Guarded by mu: 0 or 1, whose move it is.
  auto player = [&](int me) {
    for (int i = 0; i < kRounds; ++i) {
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return turn == me; });
        turn = 1 - me;
      }
      cv.notify_one();
    }
  };
  {
    bubble::Thread a("ping", [&] { player(0); });
    bubble::Thread b("pong", [&] { player(1); });
  }
  EXPECT_EQ(turn, 0);
  EXPECT_EQ(cv.waiters(), 0u);
}

TEST(CondVar, NotifiesAmongTimedOutWaitsNeverLoseAWakeUp) {
  // Property: waits that end by timing out keep CondVar's count of waiting threads exact, so a
  // notify racing with them still reaches the one consumer that waits without a timeout (and
  // relies on notifies alone). A producer hands out kItems one at a time with one notify each;
  // the other consumers wait with short timeouts. Every item is taken exactly once, and the
  // untimed consumer ends (a lost wake-up would leave it waiting).
  constexpr int kItems = 5'000;
  constexpr int kConsumers = 3;
  bubble::Mutex mu;
  bubble::CondVar cv;
  int available = 0;  // Guarded by mu.
  int taken = 0;      // Guarded by mu.
  bool done = false;  // Guarded by mu.
  {
    std::vector<bubble::Thread> consumers;
    for (int c = 0; c < kConsumers; ++c) {
      consumers.emplace_back("consumer", [&, c] {
        std::unique_lock lock(mu);
        for (;;) {
          if (c == 0) {
            cv.wait(lock, [&] { return available > 0 || done; });
          } else {
            while (available == 0 && !done) (void)cv.wait_for(lock, 20us);
          }
          if (available == 0) return;
          --available;
          ++taken;
        }
      });
    }
    for (int i = 0; i < kItems; ++i) {
      {
        std::lock_guard lock(mu);
        ++available;
      }
      cv.notify_one();
    }
    {
      std::lock_guard lock(mu);
      done = true;
    }
    cv.notify_all();
  }
  EXPECT_EQ(taken, kItems);
  EXPECT_EQ(available, 0);
  EXPECT_EQ(cv.waiters(), 0u);
}

}  // namespace
