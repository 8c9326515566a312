// The teardown of a deadlocked run: whatever the blocked threads wait in (join, ~Thread,
// WaitGroup::wait, a CondVar, a Channel), the deadlock is reported once with every thread, and
// every thread ends (unwound, or returned from a wait that completed) before any object it is
// parked on is destroyed, with no undefined behaviour and no abort.
//
// Each scenario is registered twice: "...AsFirstBubble" runs it alone (CTest runs every test in a
// process of its own, so there it is the first bubble of its process) and "...AfterOtherBubbles"
// runs other bubbles first (warm stack pool, running watchdog, an earlier teardown). Under ASan a
// thread that unwinds after the object it waits on is gone is a use-after-free; in every build the
// Probe below also checks the order explicitly.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/mutex.hpp>
#include <bubble/notification.hpp>
#include <bubble/thread.hpp>
#include <bubble/wait_group.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

// What the threads of a scenario saw while the run was torn down.
struct Probe {
  int ended = 0;        // Stacks that ended (unwound or returned).
  int late = 0;         // Threads whose wait ended after the object they waited on was destroyed.
  int waits_ended = 0;  // Waits watched by a WaitsOn that ended.
};

// Lives next to the primitives a scenario's threads wait on; `alive` turns false when it is
// destroyed, i.e. when they are.
struct Lifetime {
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
  ~Lifetime() { *alive = false; }
};

// On a waiting thread's stack, declared just before the wait: its destructor runs once the wait
// has ended (returned, or unwound after the primitive unlinked the waiter) and checks that the
// objects waited on still existed then.
struct WaitsOn {
  Probe& probe;
  std::shared_ptr<bool> alive;
  WaitsOn(Probe& p, const Lifetime& l) : probe(p), alive(l.alive) {}
  ~WaitsOn() {
    ++probe.waits_ended;
    if (!*alive) ++probe.late;
  }
};

// At the top of every thread body of a scenario.
struct Ends {
  Probe& probe;
  ~Ends() { ++probe.ended; }
};

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t pos = s.find(part); pos != std::string::npos; pos = s.find(part, pos + 1)) ++n;
  return n;
}

// Runs `scenario` in a bubble and checks that it ends in one DeadlockError listing `threads`
// threads, that every thread ended, and that no thread's wait outlived what it waited on.
void expect_clean_deadlock(const std::function<void(Runtime&, Probe&)>& scenario, int threads,
                           const std::string& root_waits_in) {
  Probe probe;
  int deadlocks = 0;
  std::string message;
  try {
    bubble::run([&](Runtime& rt) {
      Ends e{probe};
      scenario(rt, probe);
    });
  } catch (const bubble::DeadlockError& err) {
    ++deadlocks;
    message = err.what();
  }
  ASSERT_EQ(deadlocks, 1);
  EXPECT_EQ(count(message, "\n  thread #"), static_cast<std::size_t>(threads)) << message;
  EXPECT_EQ(count(message, "deadlock"), 1u) << message;
  EXPECT_NE(message.find("thread #1 \"root\": blocked on " + root_waits_in), std::string::npos)
      << message;
  EXPECT_EQ(message.find("abandoned"), std::string::npos) << message;
  EXPECT_EQ(probe.ended, threads);
  EXPECT_EQ(probe.late, 0) << "a thread's wait ended after the object it waited on was destroyed";
  EXPECT_GE(probe.waits_ended, 1);  // The check above saw at least one wait end.
}

// Other bubbles in the same process first: plain runs, a run with many threads (so the stack pool
// holds reusable stacks), and a failed run with its own teardown.
void run_other_bubbles() {
  for (int i = 0; i < 3; ++i) {
    bubble::run([](Runtime& rt) {
      bubble::Thread a(
          "a", [&] { rt.sleep_for(1s); }, rt);
      bubble::Thread b(
          "b", [&] { rt.yield(); }, rt);
    });
  }
  EXPECT_THROW(bubble::run([](Runtime& rt) {
                 bubble::Notification never(rt);
                 bubble::Thread t(
                     "t", [&] { never.wait(); }, rt);
                 never.wait();
               }),
               bubble::DeadlockError);
}

#define BUBBLE_TEARDOWN_TEST(Name, threads, root_waits_in, scenario) \
  TEST(BubbleTeardown, Name##AsFirstBubble) {                        \
    expect_clean_deadlock(scenario, threads, root_waits_in);         \
  }                                                                  \
  TEST(BubbleTeardown, Name##AfterOtherBubbles) {                    \
    run_other_bubbles();                                             \
    expect_clean_deadlock(scenario, threads, root_waits_in);         \
  }

// The root joins a worker stuck on a Notification that lives on the root's stack.
void root_joins(Runtime& rt, Probe& p) {
  bubble::Notification never(rt);
  Lifetime life;
  auto worker = rt.spawn("worker", [&] {
    Ends e{p};
    WaitsOn w(p, life);
    never.wait();
  });
  worker->join();
}
BUBBLE_TEARDOWN_TEST(RootInJoin, 2, "Thread::join", root_joins)

// The commonest pattern: a component whose destructor joins a worker that is stuck (here on the
// component's own CondVar, for a flag that nobody sets).
void root_in_thread_destructor(Runtime& rt, Probe& p) {
  struct Component {
    bubble::Mutex mu;
    bubble::CondVar cv;
    bool go = false;
    Lifetime life;
    bubble::Thread worker;
    Component(Runtime& rt, Probe& p) : mu(rt), cv(rt) {
      worker = bubble::Thread(
          "worker",
          [this, &p] {
            Ends e{p};
            std::unique_lock<bubble::Mutex> lk(mu);
            WaitsOn w(p, life);
            cv.wait(lk, [&] { return go; });
          },
          rt);
    }
  };
  Component c(rt, p);
}
BUBBLE_TEARDOWN_TEST(RootInThreadDestructor, 2, "Thread::join", root_in_thread_destructor)

// Two levels: the root joins a thread that joins a worker stuck on a Channel of the root.
void nested_joins(Runtime& rt, Probe& p) {
  bubble::Channel<int> ch(0, rt);
  Lifetime life;
  bubble::Thread outer(
      "outer",
      [&] {
        Ends e{p};
        bubble::Thread inner(
            "inner",
            [&] {
              Ends e2{p};
              WaitsOn w(p, life);
              (void)ch.receive();
            },
            rt);
      },
      rt);
}
BUBBLE_TEARDOWN_TEST(NestedJoins, 3, "Thread::join", nested_joins)

// The root waits on a WaitGroup whose worker is stuck on a Channel send nobody receives. The
// Thread object is declared before the objects its thread waits on, so unwinding the root first
// would destroy them before ~Thread joins the worker: the worker must be unwound first.
void root_in_wait_group(Runtime& rt, Probe& p) {
  bubble::Thread sender;
  bubble::Channel<int> ch(0, rt);
  bubble::WaitGroup wg(rt);
  Lifetime life;
  wg.add(1);
  sender = bubble::Thread(
      "sender",
      [&] {
        Ends e{p};
        WaitsOn w(p, life);
        (void)ch.send(1);
        wg.done();
      },
      rt);
  wg.wait();
}
BUBBLE_TEARDOWN_TEST(RootInWaitGroupWait, 2, "WaitGroup::wait", root_in_wait_group)

// The root waits on a CondVar for a worker that is stuck on a Notification.
void root_in_cond_var(Runtime& rt, Probe& p) {
  bubble::Mutex mu(rt);
  bubble::CondVar cv(rt);
  bubble::Notification never(rt);
  Lifetime life;
  bool done = false;
  bubble::Thread worker(
      "worker",
      [&] {
        Ends e{p};
        {
          WaitsOn w(p, life);
          never.wait();
        }
        std::lock_guard<bubble::Mutex> lk(mu);
        done = true;
        cv.notify_all();
      },
      rt);
  std::unique_lock<bubble::Mutex> lk(mu);
  cv.wait(lk, [&] { return done; });
}
BUBBLE_TEARDOWN_TEST(RootInCondVarWait, 2, "CondVar::wait", root_in_cond_var)

// The root receives from a Channel; the two workers that would send are stuck, one in a CondVar
// of the root, one joining the other.
void root_in_channel(Runtime& rt, Probe& p) {
  bubble::Channel<int> ch(1, rt);
  bubble::Mutex mu(rt);
  bubble::CondVar cv(rt);
  Lifetime life;
  bubble::Thread stuck(
      "stuck",
      [&] {
        Ends e{p};
        std::unique_lock<bubble::Mutex> lk(mu);
        WaitsOn w(p, life);
        cv.wait(lk);
        (void)ch.send(1);
      },
      rt);
  bubble::Thread joiner(
      "joiner",
      [&] {
        Ends e{p};
        stuck.join();
        (void)ch.send(2);
      },
      rt);
  (void)ch.receive();
}
BUBBLE_TEARDOWN_TEST(RootInChannelReceive, 3, "Channel::receive", root_in_channel)

// Threads that are runnable, not blocked, when another thread's exception fails the run go on
// normally until they block, and are then unwound in the same order.
TEST(BubbleTeardown, ThreadsRunnableWhenAnotherThrowsGoOnUntilTheyBlock) {
  Probe probe;
  int failures = 0;
  try {
    bubble::run([&](Runtime& rt) {
      Ends e{probe};
      bubble::Notification never(rt);
      Lifetime life;
      bubble::Thread stuck(
          "stuck",
          [&] {
            Ends e2{probe};
            WaitsOn w(probe, life);
            never.wait();
          },
          rt);
      bubble::Thread thrower(
          "thrower",
          [&] {
            Ends e3{probe};
            rt.sleep_for(1s);
            throw std::runtime_error("boom");
          },
          rt);
      rt.sleep_for(1s);  // Wakes at the same instant as the thrower, after it.
      rt.yield();
    });
  } catch (const bubble::RunFailure& err) {
    ++failures;
    EXPECT_NE(std::string(err.what()).find("\"thrower\" threw std::runtime_error: boom"),
              std::string::npos)
        << err.what();
    EXPECT_EQ(std::string(err.what()).find("abandoned"), std::string::npos) << err.what();
  }
  EXPECT_EQ(failures, 1);
  EXPECT_EQ(probe.ended, 3);
  EXPECT_EQ(probe.late, 0);
}

// A thread notified in CondVar::wait that is unwound while it waits to lock the mutex again (its
// holder blocked for good while holding it) leaves wait without the mutex: its unique_lock must
// not own it then, or its destructor unlocks a mutex this thread does not hold, which throws from
// a destructor during the unwinding and terminates the process.
TEST(BubbleTeardown, AThreadUnwoundWhileRelockingAfterANotifyLeavesItsLockUnowned) {
  bool unwound_without_lock = false;
  EXPECT_THROW(bubble::run([&](Runtime& rt) {
                 bubble::Mutex m(rt);
                 bubble::CondVar cv(rt);
                 bubble::Notification never(rt);
                 bool ready = false;
                 bubble::Thread holder(
                     "holder",
                     [&] {
                       rt.sleep_for(1s);
                       std::lock_guard guard(m);
                       ready = true;
                       cv.notify_one();
                       never.wait();  // Holds m until the teardown unwinds it.
                     },
                     rt);
                 bubble::Thread waiter(
                     "waiter",
                     [&] {
                       std::unique_lock lock(m);
                       try {
                         while (!ready) cv.wait(lock);
                       } catch (const bubble::Unwind&) {
                         unwound_without_lock = !lock.owns_lock();
                         throw;
                       }
                     },
                     rt);
               }),
               bubble::DeadlockError);
  EXPECT_TRUE(unwound_without_lock);
}

}  // namespace
