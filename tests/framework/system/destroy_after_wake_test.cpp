// Every primitive may be destroyed as soon as a wait on it has returned (a Mutex: as soon as it is
// unlocked and nobody waits), as std::condition_variable and absl::Notification allow. The waker
// may still be inside the call that woke the waiter (notify, release, unlock, send, close) when
// the waiter destroys the object: that call must not touch the object after the wake-up (the
// pattern of glibc bug 13690).
//
// Each test runs two long-lived real threads. The waker allocates a primitive on the heap, prepares
// it (arm), hands it to the waiter, waits until the waiter is blocked where that matters (ready),
// and wakes it. The waiter waits and deletes the object the moment its wait returns. So every
// iteration is a fresh heap object that AddressSanitizer sees freed while the waker may still be
// inside the waking call, and ThreadSanitizer sees the waker's accesses racing with the delete
// unless the waker's last access happens before the wake-up. Nothing sleeps; the threads hand
// objects over through one atomic slot.

#include <bubble/channel.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/latch.hpp>
#include <bubble/mutex.hpp>
#include <bubble/notification.hpp>
#include <bubble/select.hpp>
#include <bubble/semaphore.hpp>
#include <bubble/wait_group.hpp>
#include <bubble/weighted_semaphore.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace {

constexpr int kIterations = 100'000;

// A polling loop's pause: spins briefly, then gives the processor away (on a loaded machine a
// yield alone may cost a whole time slice per iteration).
void relax(int& spins) {
  if (++spins < 100) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    std::this_thread::yield();
  }
}

template <class Pred>
void poll_until(Pred pred) {
  for (int spins = 0; !pred(); relax(spins)) {
  }
}

// Runs kIterations hand-overs of a fresh `P` from a waker thread to this (waiting) thread.
// make() allocates the object; arm(p) runs on the waker before the hand-over; ready(p) is polled
// by the waker after it, before wake(p) (so a waiter that must be blocked is blocked);
// wait(p) runs on the waiter, which then deletes p. Returns how many waits returned.
template <class P, class Make, class Arm, class Ready, class Wake, class Wait>
int destroy_after_wake(Make make, Arm arm, Ready ready, Wake wake, Wait wait,
                       int iterations = kIterations) {
  std::atomic<P*> slot{nullptr};
  std::thread waker([&] {
    for (int i = 0; i < iterations; ++i) {
      P* p = make();
      arm(*p);
      // The previous object has been taken (the waiter may still be waiting on it).
      poll_until([&] { return slot.load(std::memory_order_acquire) == nullptr; });
      slot.store(p, std::memory_order_release);
      poll_until([&] { return ready(*p); });
      wake(*p);  // The waiter may destroy *p while this call is still running.
    }
  });
  int returned = 0;
  for (int i = 0; i < iterations; ++i) {
    P* p = nullptr;
    poll_until([&] { return (p = slot.exchange(nullptr, std::memory_order_acq_rel)) != nullptr; });
    wait(*p);
    delete p;
    ++returned;
  }
  waker.join();
  return returned;
}

constexpr auto kNoArm = [](auto&) {};
constexpr auto kAlwaysReady = [](auto&) { return true; };

TEST(DestroyAfterWake, Notification) {
  // No readiness wait: the waiter either parks or sees the flag on the lock-free fast path while
  // notify() may still be running; both must be safe.
  const int returned = destroy_after_wake<bubble::Notification>(
      [] { return new bubble::Notification(); }, kNoArm, kAlwaysReady,
      [](bubble::Notification& n) { n.notify(); }, [](bubble::Notification& n) { n.wait(); });
  EXPECT_EQ(returned, kIterations);
}

TEST(DestroyAfterWake, NotificationWaitWithContext) {
  const int returned = destroy_after_wake<bubble::Notification>(
      [] { return new bubble::Notification(); }, kNoArm,
      [](bubble::Notification& n) { return n.waiters() == 1; },
      [](bubble::Notification& n) { n.notify(); },
      [](bubble::Notification& n) {
        auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background());
        EXPECT_FALSE(n.wait(ctx));
      });
  EXPECT_EQ(returned, kIterations);
}

// A CondVar with its Mutex, destroyed together by the waiter.
struct CondVarAndMutex {
  bubble::Mutex mu;
  bubble::CondVar cv;
};

TEST(DestroyAfterWake, CondVar) {
  // The notify is issued outside the mutex, once the waiter is queued: the woken waiter takes the
  // free mutex and returns while notify_one may still be running.
  const int returned = destroy_after_wake<CondVarAndMutex>(
      [] { return new CondVarAndMutex(); }, kNoArm,
      [](CondVarAndMutex& c) { return c.cv.waiters() == 1; },
      [](CondVarAndMutex& c) { c.cv.notify_one(); },
      [](CondVarAndMutex& c) {
        std::unique_lock lock(c.mu);
        c.cv.wait(lock);  // No spurious wake-ups: returns only after the notify.
      });
  EXPECT_EQ(returned, kIterations);
}

TEST(DestroyAfterWake, CondVarNotifyAll) {
  const int returned =
      destroy_after_wake<CondVarAndMutex>([] { return new CondVarAndMutex(); }, kNoArm,
                                          [](CondVarAndMutex& c) { return c.cv.waiters() == 1; },
                                          [](CondVarAndMutex& c) { c.cv.notify_all(); },
                                          [](CondVarAndMutex& c) {
                                            std::unique_lock lock(c.mu);
                                            c.cv.wait(lock);
                                          });
  EXPECT_EQ(returned, kIterations);
}

// Semaphore, WeightedSemaphore, WaitGroup and Latch read their state only under their lock, so
// the race that matters is with a parked waiter: the waker wakes it once it is queued.
TEST(DestroyAfterWake, Semaphore) {
  const int returned = destroy_after_wake<bubble::Semaphore>(
      [] { return new bubble::Semaphore(0); }, kNoArm,
      [](bubble::Semaphore& s) { return s.waiters() == 1; },
      [](bubble::Semaphore& s) { s.release(); }, [](bubble::Semaphore& s) { s.acquire(); });
  EXPECT_EQ(returned, kIterations);
}

TEST(DestroyAfterWake, WeightedSemaphore) {
  // The waker holds every unit; the waiter's acquire queues until the release hands them over.
  const int returned = destroy_after_wake<bubble::WeightedSemaphore>(
      [] { return new bubble::WeightedSemaphore(2); },
      [](bubble::WeightedSemaphore& s) { ASSERT_TRUE(s.try_acquire(2)); },
      [](bubble::WeightedSemaphore& s) { return s.waiters() == 1; },
      [](bubble::WeightedSemaphore& s) { s.release(2); },
      [](bubble::WeightedSemaphore& s) {
        EXPECT_FALSE(s.acquire(bubble::Context::background(), 2));
      });
  EXPECT_EQ(returned, kIterations);
}

TEST(DestroyAfterWake, WaitGroup) {
  const int returned = destroy_after_wake<bubble::WaitGroup>(
      [] { return new bubble::WaitGroup(); }, [](bubble::WaitGroup& wg) { wg.add(1); },
      [](bubble::WaitGroup& wg) { return wg.waiters() == 1; },
      [](bubble::WaitGroup& wg) { wg.done(); }, [](bubble::WaitGroup& wg) { wg.wait(); });
  EXPECT_EQ(returned, kIterations);
}

TEST(DestroyAfterWake, Latch) {
  const int returned = destroy_after_wake<bubble::Latch>(
      [] { return new bubble::Latch(1); }, kNoArm,
      [](bubble::Latch& l) { return l.waiters() == 1; }, [](bubble::Latch& l) { l.count_down(); },
      [](bubble::Latch& l) { l.wait(); });
  EXPECT_EQ(returned, kIterations);
}

TEST(DestroyAfterWake, Mutex) {
  // The waker holds the mutex and unlocks it once the waiter is queued, so the unlock takes the
  // slow path and wakes it; the waiter then locks, unlocks and destroys the mutex (nobody else
  // waits) while the waker's unlock may still be running.
  const int returned = destroy_after_wake<bubble::Mutex>(
      [] { return new bubble::Mutex(); }, [](bubble::Mutex& m) { m.lock(); },
      [](bubble::Mutex& m) { return m.waiters() == 1; }, [](bubble::Mutex& m) { m.unlock(); },
      [](bubble::Mutex& m) {
        m.lock();
        m.unlock();
      });
  EXPECT_EQ(returned, kIterations);
}

// The waker's send or receive must complete without waiting (a waker still waiting in it would
// make the destruction undefined behaviour): it acts once the waiter is queued.
TEST(DestroyAfterWake, ChannelReceiveWokenBySend) {
  using Chan = bubble::Channel<int>;
  const int returned = destroy_after_wake<Chan>([] { return new Chan(0); }, kNoArm,
                                                [](Chan& c) { return c.waiting_receivers() == 1; },
                                                [](Chan& c) { EXPECT_FALSE(c.send(7)); },
                                                [](Chan& c) {
                                                  const bubble::Result<int> r = c.receive();
                                                  EXPECT_TRUE(r.has_value() && *r == 7);
                                                });
  EXPECT_EQ(returned, kIterations);
}

TEST(DestroyAfterWake, ChannelSendWokenByReceive) {
  using Chan = bubble::Channel<int>;
  const int returned = destroy_after_wake<Chan>(
      [] { return new Chan(0); }, kNoArm, [](Chan& c) { return c.waiting_senders() == 1; },
      [](Chan& c) { EXPECT_TRUE(c.receive().has_value()); },
      [](Chan& c) { EXPECT_FALSE(c.send(7)); });
  EXPECT_EQ(returned, kIterations);
}

TEST(DestroyAfterWake, ChannelReceiveWokenByClose) {
  using Chan = bubble::Channel<int>;
  const int returned = destroy_after_wake<Chan>(
      [] { return new Chan(0); }, kNoArm, [](Chan& c) { return c.waiting_receivers() == 1; },
      [](Chan& c) { c.close(); },
      [](Chan& c) { EXPECT_EQ(c.receive().error(), bubble::errc::closed); });
  EXPECT_EQ(returned, kIterations);
}

// A select parks on a waiter of its own and queues one per case: the waker completes one case
// and unparks the select, which may destroy every channel (and the context) at once.
// Fewer iterations: each makes two channels and a context.
constexpr int kSelectIterations = 20'000;

struct SelectTargets {
  bubble::Channel<int> a{0};
  bubble::Channel<int> b{0};
  std::pair<bubble::Context, bubble::CancelFunc> ctx =
      bubble::Context::with_cancel(bubble::Context::background());
};

TEST(DestroyAfterWake, SelectWokenBySend) {
  using P = SelectTargets;
  const int returned = destroy_after_wake<P>(
      [] { return new P; }, kNoArm,
      [](P& p) { return p.a.waiting_receivers() == 1 && p.b.waiting_receivers() == 1; },
      [](P& p) { EXPECT_FALSE(p.b.send(7)); },
      [](P& p) {
        auto s = bubble::select(bubble::recv(p.a), bubble::recv(p.b), bubble::done(p.ctx.first));
        EXPECT_TRUE(s.index() == 1 && s.get<1>().value() == 7);
      },
      kSelectIterations);
  EXPECT_EQ(returned, kSelectIterations);
}

TEST(DestroyAfterWake, SelectWokenByClose) {
  using P = SelectTargets;
  const int returned = destroy_after_wake<P>(
      [] { return new P; }, kNoArm,
      [](P& p) { return p.a.waiting_senders() == 1 && p.b.waiting_receivers() == 1; },
      [](P& p) { p.a.close(); },
      [](P& p) {
        auto s = bubble::select(bubble::send(p.a, 1), bubble::recv(p.b));
        EXPECT_TRUE(s.index() == 0 && s.get<0>() == bubble::errc::closed);
      },
      kSelectIterations);
  EXPECT_EQ(returned, kSelectIterations);
}

TEST(DestroyAfterWake, SelectWokenByCancel) {
  using P = SelectTargets;
  const int returned = destroy_after_wake<P>(
      [] { return new P; }, kNoArm, [](P& p) { return p.a.waiting_receivers() == 1; },
      [](P& p) { p.ctx.second(); },
      [](P& p) {
        auto s = bubble::select(bubble::recv(p.a), bubble::done(p.ctx.first));
        EXPECT_EQ(s.index(), 1u);
      },
      kSelectIterations);
  EXPECT_EQ(returned, kSelectIterations);
}

// A timed wait racing with its wake-up: the timeout may fire just after the waker has dequeued the
// waiter and before its unpark. The wait must then stay parked until that unpark arrives (the
// Waiter lives on the waiter's stack). The timeouts are a few microseconds, to make the race
// frequent; nothing asserts on time. A waiter that timed out waits again without a deadline
// before it destroys the object, because the waker is sure to call it. Fewer iterations: a timed
// park costs a kernel timer (about a millisecond per iteration under ThreadSanitizer).
constexpr int kTimedIterations = 10'000;

std::chrono::microseconds short_timeout(int i) {
  return std::chrono::microseconds(i % 8);
}

TEST(DestroyAfterWake, SemaphoreTimedWaitRacingTheRelease) {
  int i = 0;
  const int returned =
      destroy_after_wake<bubble::Semaphore>([] { return new bubble::Semaphore(0); }, kNoArm,
                                            kAlwaysReady, [](bubble::Semaphore& s) { s.release(); },
                                            [&i](bubble::Semaphore& s) {
                                              if (!s.try_acquire_for(short_timeout(++i)))
                                                s.acquire();
                                              EXPECT_EQ(s.available(), 0);
                                            },
                                            kTimedIterations);
  EXPECT_EQ(returned, kTimedIterations);
}

TEST(DestroyAfterWake, NotificationTimedWaitRacingTheNotify) {
  int i = 0;
  const int returned = destroy_after_wake<bubble::Notification>(
      [] { return new bubble::Notification(); }, kNoArm, kAlwaysReady,
      [](bubble::Notification& n) { n.notify(); },
      [&i](bubble::Notification& n) {
        if (!n.wait_for(short_timeout(++i))) n.wait();
      },
      kTimedIterations);
  EXPECT_EQ(returned, kTimedIterations);
}

}  // namespace
