// Using a primitive from a thread of another runtime is an immediate, clear error: every blocking
// operation throws std::logic_error at once, naming the primitive (kind and id), its runtime and
// the caller's runtime, and changes nothing. Without the check, a system-runtime primitive (say a
// fixture member) locked in a bubble blocks the bubble's only OS thread until the watchdog aborts,
// and a bubble's channel used after the run reads the destroyed runtime.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/latch.hpp>
#include <bubble/mutex.hpp>
#include <bubble/notification.hpp>
#include <bubble/semaphore.hpp>
#include <bubble/wait_group.hpp>
#include <bubble/weighted_semaphore.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

// The message of the std::logic_error that `f` throws, or a note that it threw none.
template <class F>
std::string logic_error_of(F f) {
  try {
    f();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "(no std::logic_error)";
}

// The message names the primitive with its id, its runtime, the operation and the caller's
// runtime.
void expect_names(const std::string& message, const std::string& primitive, std::uint64_t id,
                  const std::string& owner, const std::string& operation,
                  const std::string& caller) {
  const std::string expected = "bubble::" + primitive + " #" + std::to_string(id) + " belongs to " +
                               owner + ", but " + operation +
                               " was called on a thread of runtime '" + caller + "'";
  EXPECT_EQ(message.rfind(expected, 0), 0u) << "message: " << message << "\nexpected: " << expected;
}

constexpr const char* kSystem = "runtime 'system'";

// Runs `body` in a bubble named "misuse" and checks that it took no virtual time: every misuse
// below is reported at once, not after a hang or a watchdog.
template <class F>
void in_bubble(F body) {
  bubble::run({.name = "misuse"}, [&](Runtime& rt) {
    const bubble::TimePoint start = rt.now();
    body(rt);
    EXPECT_EQ(rt.now(), start);
  });
}

// --- A primitive of the system runtime used inside a bubble --------------------------------

// Asking a bubble to intercept the standard library in a program without bubble::interpose (this
// one) fails at once, saying how to link or preload it: the run would otherwise pass, with its
// std::threads and clocks real, outside the bubble.
TEST(Misuse, InterceptingTheStandardLibraryWithoutTheInterposer) {
  ASSERT_FALSE(bubble::intercept_std_available());
  bool ran = false;
  const std::string m =
      logic_error_of([&] { bubble::run({.intercept_std = true}, [&](Runtime&) { ran = true; }); });
  EXPECT_NE(m.find("bubble::run: Options::intercept_std is true, but this program has no "
                   "bubble::interpose"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("target_link_libraries(<your target> PRIVATE bubble::interpose)"),
            std::string::npos)
      << m;
  EXPECT_FALSE(ran);
  EXPECT_EQ(bubble::replay_line(bubble::Strategy::random(5)), "replay: BUBBLE_STRATEGY=random:5");
}

TEST(Misuse, SystemMutexLockedInABubble) {
  bubble::Mutex mu(bubble::system_runtime());  // A fixture member, say.
  in_bubble([&](Runtime&) {
    expect_names(logic_error_of([&] { mu.lock(); }), "Mutex", mu.id(), kSystem, "Mutex::lock",
                 "misuse");
  });
  EXPECT_TRUE(mu.try_lock());  // The failed lock took nothing.
  mu.unlock();
}

TEST(Misuse, SystemCondVarWaitedInABubble) {
  bubble::CondVar cv(bubble::system_runtime());
  in_bubble([&](Runtime&) {
    bubble::Mutex mu;
    std::unique_lock lock(mu);
    expect_names(logic_error_of([&] { cv.wait(lock); }), "CondVar", cv.id(), kSystem,
                 "CondVar::wait", "misuse");
    expect_names(logic_error_of([&] { (void)cv.wait_for(lock, 1s); }), "CondVar", cv.id(), kSystem,
                 "CondVar::wait_until", "misuse");
    EXPECT_TRUE(lock.owns_lock());  // The mutex was never released.
  });
}

TEST(Misuse, BubbleCondVarWaitedWithASystemMutex) {
  // The same check, with the same message, for the Mutex a CondVar wait unlocks and relocks.
  bubble::Mutex mu(bubble::system_runtime());
  in_bubble([&](Runtime&) {
    bubble::CondVar cv;
    std::unique_lock lock(mu, std::adopt_lock);  // Not locked: the check comes first.
    expect_names(logic_error_of([&] { cv.wait(lock); }), "Mutex", mu.id(), kSystem, "CondVar::wait",
                 "misuse");
    (void)lock.release();
    EXPECT_EQ(cv.waiters(), 0u);
  });
}

TEST(Misuse, SystemSemaphoreAcquiredInABubble) {
  bubble::Semaphore sem(0, bubble::system_runtime());
  in_bubble([&](Runtime&) {
    expect_names(logic_error_of([&] { sem.acquire(); }), "Semaphore", sem.id(), kSystem,
                 "Semaphore::acquire", "misuse");
    expect_names(logic_error_of([&] { (void)sem.try_acquire_for(1s); }), "Semaphore", sem.id(),
                 kSystem, "Semaphore::try_acquire_for", "misuse");
    // Not a structured binding: clang before 16 cannot capture those in a lambda.
    const auto cancellable = bubble::Context::with_cancel(bubble::Context::background());
    const bubble::Context& ctx = cancellable.first;
    expect_names(logic_error_of([&] { (void)sem.acquire(ctx); }), "Semaphore", sem.id(), kSystem,
                 "Semaphore::acquire", "misuse");
  });
  EXPECT_EQ(sem.waiters(), 0u);
}

TEST(Misuse, SystemWeightedSemaphoreAcquiredInABubble) {
  bubble::WeightedSemaphore sem(4, bubble::system_runtime());
  in_bubble([&](Runtime&) {
    expect_names(logic_error_of([&] { (void)sem.acquire(bubble::Context::background(), 1); }),
                 "WeightedSemaphore", sem.id(), kSystem, "WeightedSemaphore::acquire", "misuse");
  });
  EXPECT_EQ(sem.in_use(), 0);  // Not even the free units were taken.
}

TEST(Misuse, SystemWaitGroupWaitedInABubble) {
  bubble::WaitGroup wg(bubble::system_runtime());
  wg.add(1);
  in_bubble([&](Runtime&) {
    expect_names(logic_error_of([&] { wg.wait(); }), "WaitGroup", wg.id(), kSystem,
                 "WaitGroup::wait", "misuse");
  });
  wg.done();
}

TEST(Misuse, SystemLatchWaitedInABubble) {
  bubble::Latch latch(2, bubble::system_runtime());
  in_bubble([&](Runtime&) {
    expect_names(logic_error_of([&] { latch.wait(); }), "Latch", latch.id(), kSystem, "Latch::wait",
                 "misuse");
    expect_names(logic_error_of([&] { latch.arrive_and_wait(); }), "Latch", latch.id(), kSystem,
                 "Latch::arrive_and_wait", "misuse");
  });
  EXPECT_EQ(latch.count(), 2);  // The failed arrive_and_wait did not count down.
}

TEST(Misuse, SystemNotificationWaitedInABubble) {
  bubble::Notification n(bubble::system_runtime());
  in_bubble([&](Runtime&) {
    expect_names(logic_error_of([&] { n.wait(); }), "Notification", n.id(), kSystem,
                 "Notification::wait", "misuse");
    expect_names(logic_error_of([&] { (void)n.wait_for(1s); }), "Notification", n.id(), kSystem,
                 "Notification::wait_for", "misuse");
    // Not a structured binding: clang before 16 cannot capture those in a lambda.
    const auto cancellable = bubble::Context::with_cancel(bubble::Context::background());
    const bubble::Context& ctx = cancellable.first;
    expect_names(logic_error_of([&] { (void)n.wait(ctx); }), "Notification", n.id(), kSystem,
                 "Notification::wait", "misuse");
  });
}

TEST(Misuse, SystemChannelUsedInABubble) {
  bubble::Channel<int> ch(1, bubble::system_runtime());
  in_bubble([&](Runtime&) {
    expect_names(logic_error_of([&] { (void)ch.send(1); }), "Channel", ch.id(), kSystem,
                 "Channel::send", "misuse");
    expect_names(logic_error_of([&] { (void)ch.receive(); }), "Channel", ch.id(), kSystem,
                 "Channel::receive", "misuse");
    expect_names(logic_error_of([&] { (void)ch.receive_until(bubble::kNoDeadline); }), "Channel",
                 ch.id(), kSystem, "Channel::receive_until", "misuse");
  });
  EXPECT_EQ(ch.size(), 0u);  // The failed send buffered nothing.
}

TEST(Misuse, ContextWithASystemDeadlineWaitedInABubble) {
  const auto timed =
      bubble::Context::with_timeout(bubble::Context::background(), 1h, bubble::system_runtime());
  const bubble::Context& ctx = timed.first;
  in_bubble([&](Runtime&) {
    const std::string message = logic_error_of([&] { ctx.wait(); });
    EXPECT_NE(message.find("bubble::Context #"), std::string::npos) << message;
    EXPECT_NE(message.find("belongs to runtime 'system', but Context::wait was called on a "
                           "thread of runtime 'misuse'"),
              std::string::npos)
        << message;
  });
  timed.second();
}

// --- A bubble's primitive used by a thread that is not the bubble's -------------------------

TEST(Misuse, BubbleMutexLockedByAnOsThread) {
  in_bubble([&](Runtime&) {
    bubble::Mutex mu;
    std::string message;
    std::thread([&] { message = logic_error_of([&] { mu.lock(); }); }).join();
    expect_names(message, "Mutex", mu.id(), "runtime 'misuse'", "Mutex::lock", "system");
  });
}

// --- A bubble's channel used after the bubble ended ------------------------------------------

TEST(Misuse, ChannelUsedAfterItsBubbleEnded) {
  std::unique_ptr<bubble::Channel<int>> ch;
  bubble::run({.name = "ended"}, [&](Runtime&) {
    ch = std::make_unique<bubble::Channel<int>>(2);
    ASSERT_FALSE(ch->send(7));
  });
  const std::string owner = "a bubble that has ended";
  expect_names(logic_error_of([&] { (void)ch->send(1); }), "Channel", ch->id(), owner,
               "Channel::send", "system");
  expect_names(logic_error_of([&] { (void)ch->receive(); }), "Channel", ch->id(), owner,
               "Channel::receive", "system");
  expect_names(logic_error_of([&] { (void)ch->try_receive(); }), "Channel", ch->id(), owner,
               "Channel::try_receive", "system");
  expect_names(logic_error_of([&] { (void)ch->try_send(2); }), "Channel", ch->id(), owner,
               "Channel::try_send", "system");
  expect_names(logic_error_of([&] { ch->close(); }), "Channel", ch->id(), owner, "Channel::close",
               "system");
  // The accessors never touch the runtime: still usable, and the failed calls changed nothing.
  EXPECT_EQ(ch->size(), 1u);
  EXPECT_FALSE(ch->closed());
}

TEST(Misuse, ChannelOfAnEndedBubbleUsedInAnotherBubble) {
  std::unique_ptr<bubble::Channel<int>> ch;
  bubble::run({.name = "first"}, [&](Runtime&) { ch = std::make_unique<bubble::Channel<int>>(); });
  bubble::run({.name = "second"}, [&](Runtime&) {
    expect_names(logic_error_of([&] { (void)ch->receive(); }), "Channel", ch->id(),
                 "a bubble that has ended", "Channel::receive", "second");
  });
}

// --- Correct use is not affected ----------------------------------------------------------

TEST(Misuse, PrimitivesOfTheCallersOwnRuntimeDoNotThrow) {
  in_bubble([&](Runtime& rt) {
    bubble::Mutex mu(rt);
    bubble::CondVar cv(rt);
    std::unique_lock lock(mu);
    EXPECT_EQ(cv.wait_for(lock, 0s), std::cv_status::timeout);
    bubble::Notification n(rt);
    n.notify();
    n.wait();
    bubble::Channel<int> ch(1, rt);
    ASSERT_FALSE(ch.send(3));
    EXPECT_EQ(ch.receive().value(), 3);
  });
  // And on the system runtime, from the test's own thread.
  bubble::Mutex mu;
  mu.lock();
  mu.unlock();
}

}  // namespace
