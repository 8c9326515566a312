// Options::thread_model: with os_threads every bubble thread runs on an OS thread of its own, one
// at a time. Each thread then has its own thread_local variables and errno, and its thread_local
// destructors run before run() returns; everything else (the schedule, virtual times, the trace,
// failure reports, the teardown of a failed run) is the same as with fibers, byte for byte.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/mutex.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <atomic>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Options;
using bubble::Runtime;
using bubble::Strategy;
using bubble::ThreadModel;

Options with_model(ThreadModel model, Strategy strategy = Strategy::fifo()) {
  Options o;
  o.thread_model = model;
  o.strategy = strategy;
  o.trace = true;
  return o;
}

thread_local int tl_value = 0;

// Two threads each store their own number in a thread_local, block (so that the other runs and
// stores its number), and read it back. Returns what each read.
std::vector<int> thread_local_round_trip(ThreadModel model) {
  std::vector<int> seen(2, -1);
  bubble::run(with_model(model), [&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    for (int i = 0; i < 2; ++i) {
      threads.push_back(rt.spawn("t" + std::to_string(i), [&, i] {
        tl_value = i + 1;
        rt.sleep_for(1s);
        seen[static_cast<std::size_t>(i)] = tl_value;
      }));
    }
    for (auto& t : threads) t->join();
  });
  return seen;
}

TEST(ThreadModel, OsThreadsGiveEachThreadItsOwnThreadLocals) {
  EXPECT_EQ(thread_local_round_trip(ThreadModel::os_threads), (std::vector<int>{1, 2}));
}

TEST(ThreadModel, FibersShareThreadLocalsBetweenThreads) {
  // The documented limit of fibers: the second thread's store is what both read.
  EXPECT_EQ(thread_local_round_trip(ThreadModel::fibers), (std::vector<int>{2, 2}));
}

TEST(ThreadModel, OsThreadsGiveEachThreadItsOwnErrno) {
  std::vector<int> seen(2, -1);
  bubble::run(with_model(ThreadModel::os_threads), [&](Runtime& rt) {
    auto a = rt.spawn("a", [&] {
      errno = EAGAIN;
      rt.sleep_for(1s);
      seen[0] = errno;
    });
    auto b = rt.spawn("b", [&] {
      errno = EINTR;
      rt.sleep_for(2s);
      seen[1] = errno;
    });
    a->join();
    b->join();
  });
  EXPECT_EQ(seen, (std::vector<int>{EAGAIN, EINTR}));
}

// Set once run() has returned; read by thread_local destructors.
std::atomic<bool> g_run_returned{false};

struct CountsDestruction {
  std::atomic<int>* destroyed = nullptr;
  std::atomic<int>* after_run = nullptr;
  ~CountsDestruction() {
    if (destroyed == nullptr) return;
    // Give an unjoined thread every chance to be overtaken by run() returning (no sleep: yields).
    for (int i = 0; i < 2000; ++i) std::this_thread::yield();
    if (g_run_returned.load()) ++*after_run;
    ++*destroyed;
  }
};
thread_local CountsDestruction tl_counter;

TEST(ThreadModel, OsThreadsRunThreadLocalDestructorsBeforeRunReturns) {
  std::atomic<int> destroyed{0};
  std::atomic<int> after_run{0};
  g_run_returned = false;
  bubble::run(with_model(ThreadModel::os_threads), [&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    for (int i = 0; i < 5; ++i) {
      threads.push_back(rt.spawn("t", [&] {
        tl_counter.destroyed = &destroyed;
        tl_counter.after_run = &after_run;
      }));
    }
    for (auto& t : threads) t->join();
  });
  g_run_returned = true;
  // Five spawned threads; the root never touched tl_counter (constructed on first use), so its
  // destructor has nothing to count. None ran after run() returned.
  EXPECT_EQ(destroyed.load(), 5);
  EXPECT_EQ(after_run.load(), 0);
}

// A program with contention, timers and channels: three workers move tokens through a channel
// under a mutex, sleeping between rounds.
void contended_program(Runtime& rt) {
  bubble::Mutex m;
  bubble::Channel<int> ch(1);
  int total = 0;
  std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
  for (int w = 0; w < 3; ++w) {
    threads.push_back(rt.spawn("worker" + std::to_string(w), [&, w] {
      for (int round = 0; round < 4; ++round) {
        ASSERT_FALSE(ch.send(w));
        {
          std::lock_guard lock(m);
          total += ch.receive().value();
        }
        rt.sleep_for(std::chrono::milliseconds(10 * (w + 1)));
      }
    }));
  }
  for (auto& t : threads) t->join();
  EXPECT_EQ(total, 4 * (0 + 1 + 2));
}

// Property: for every strategy and seed, a run with os_threads takes exactly the decisions,
// steps, virtual time and trace of the same run with fibers.
TEST(ThreadModel, OsThreadsRunTheSameScheduleAsFibers) {
  std::vector<Strategy> strategies{Strategy::fifo()};
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    strategies.push_back(Strategy::random(seed));
    strategies.push_back(Strategy::pct(seed, 3));
  }
  for (const Strategy& s : strategies) {
    SCOPED_TRACE(s.to_string());
    const bubble::RunResult fibers =
        bubble::run(with_model(ThreadModel::fibers, s), contended_program);
    const bubble::RunResult os =
        bubble::run(with_model(ThreadModel::os_threads, s), contended_program);
    EXPECT_EQ(os.schedule.picks, fibers.schedule.picks);
    EXPECT_EQ(os.steps, fibers.steps);
    EXPECT_EQ(os.elapsed, fibers.elapsed);
    EXPECT_EQ(os.trace.text(), fibers.trace.text());
  }
}

// A lock-order deadlock: two threads each hold one mutex and wait for the other's.
void lock_order_deadlock(Runtime& rt) {
  bubble::Mutex a("a");
  bubble::Mutex b("b");
  auto t1 = rt.spawn("ab", [&] {
    std::lock_guard la(a);
    rt.sleep_for(1s);
    std::lock_guard lb(b);
  });
  auto t2 = rt.spawn("ba", [&] {
    std::lock_guard lb(b);
    rt.sleep_for(1s);
    std::lock_guard la(a);
  });
  t1->join();
  t2->join();
}

std::string deadlock_message(ThreadModel model) {
  try {
    bubble::run(with_model(model), lock_order_deadlock);
  } catch (const bubble::DeadlockError& e) {
    return e.what();
  }
  return "no deadlock";
}

TEST(ThreadModel, OsThreadsReportADeadlockAsFibersDo) {
  const std::string os = deadlock_message(ThreadModel::os_threads);
  EXPECT_NE(os.find("cycle:"), std::string::npos) << os;
  EXPECT_EQ(os, deadlock_message(ThreadModel::fibers));
}

TEST(ThreadModel, OsThreadsTearDownAFailedRun) {
  // One thread throws while others are blocked on a channel that nobody will send on: the run
  // fails with the exception, and the blocked threads are unwound (their destructors run).
  int unwound = 0;
  struct Unwound {
    int* count;
    ~Unwound() { ++*count; }
  };
  try {
    bubble::run(with_model(ThreadModel::os_threads), [&](Runtime& rt) {
      bubble::Channel<int> never(0);
      std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
      for (int i = 0; i < 3; ++i) {
        threads.push_back(rt.spawn("blocked", [&] {
          Unwound u{&unwound};
          static_cast<void>(never.receive());
        }));
      }
      threads.push_back(rt.spawn("thrower", [&] {
        rt.sleep_for(1s);
        throw std::runtime_error("boom");
      }));
      for (auto& t : threads) t->join();
    });
    FAIL() << "the run did not fail";
  } catch (const bubble::RunFailure& f) {
    EXPECT_NE(std::string(f.what()).find("boom"), std::string::npos) << f.what();
  }
  EXPECT_EQ(unwound, 3);
}

TEST(ThreadModel, OsThreadsRunManyThreads) {
  int done = 0;
  const bubble::RunResult r = bubble::run(with_model(ThreadModel::os_threads), [&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    for (int i = 0; i < 200; ++i) {
      threads.push_back(rt.spawn("t", [&, i] {
        rt.sleep_for(std::chrono::milliseconds(i % 7));
        ++done;
      }));
    }
    for (auto& t : threads) t->join();
  });
  EXPECT_EQ(done, 200);
  EXPECT_EQ(r.elapsed, 6ms);
  EXPECT_EQ(r.threads, 201u);
}

}  // namespace
