// What failing runs cost, against baselines measured in the same run:
//
// - Exploring a program written with the standard library only (std::thread, std::mutex, through
//   bubble::interpose) whose schedules often deadlock, against the same program on bubble's own
//   API (bubble::Thread, bubble::Mutex): runs per second over the same seeds. Goal: the std
//   program at least 0.5x.
// - The teardown of a failing run against a passing run of the same program: a component whose
//   std::thread member is joined in its destructor, which forgets to notify its worker (a
//   deadlock, torn down by unwinding the worker) or does not. Goal: the failing run at most 2x.
// - Memory over many failing runs: the resident set after 1,000 and after 100,000 failing runs of
//   the std program. Goal: within 10%.

#include <benchmark/benchmark.h>

#include <bubble/bubble.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/mutex.hpp>
#include <bubble/thread.hpp>

#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace {

// Two threads take two locks in opposite orders, yielding in between: a deadlock under many
// schedules (every fifo one).
void std_lock_order() {
  std::mutex a;
  std::mutex b;
  std::thread t1([&] {
    std::lock_guard la(a);
    std::this_thread::yield();
    std::lock_guard lb(b);
  });
  std::thread t2([&] {
    std::lock_guard lb(b);
    std::this_thread::yield();
    std::lock_guard la(a);
  });
  t1.join();
  t2.join();
}

void bubble_lock_order(bubble::Runtime& rt) {
  bubble::Mutex a(rt);
  bubble::Mutex b(rt);
  bubble::Thread t1(
      "t1",
      [&] {
        std::lock_guard la(a);
        rt.yield();
        std::lock_guard lb(b);
      },
      rt);
  bubble::Thread t2(
      "t2",
      [&] {
        std::lock_guard lb(b);
        rt.yield();
        std::lock_guard la(a);
      },
      rt);
}

// Runs `body` under random(seed), seeds 1, 2, ...; counts the runs that failed.
template <class Body>
void explore(benchmark::State& state, bool intercept, Body body) {
  std::uint64_t seed = 0;
  std::int64_t failed = 0;
  for (auto _ : state) {
    try {
      bubble::run({.strategy = bubble::Strategy::random(++seed), .intercept_std = intercept}, body);
    } catch (const bubble::RunFailure&) {
      ++failed;
    }
  }
  state.counters["runs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["failed %"] =
      100.0 * static_cast<double>(failed) / static_cast<double>(state.iterations());
}

void BM_ExploreDeadlock_BubbleApi(benchmark::State& state) {
  explore(state, false, [](bubble::Runtime& rt) { bubble_lock_order(rt); });
}
BENCHMARK(BM_ExploreDeadlock_BubbleApi);

void BM_ExploreDeadlock_StdOnly(benchmark::State& state) {
  explore(state, true, [](bubble::Runtime&) { std_lock_order(); });
}
BENCHMARK(BM_ExploreDeadlock_StdOnly);

// A component as real code writes it: a worker std::thread member that waits for work or a stop
// request, joined by the destructor, which (with `forget_to_notify`) never wakes it.
class Worker {
 public:
  explicit Worker(bool forget_to_notify) : forget_(forget_to_notify), thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    if (!forget_) cv_.notify_all();
    thread_.join();
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return stopping_; });
  }

  bool forget_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

void run_worker(benchmark::State& state, bool forget) {
  std::int64_t failed = 0;
  for (auto _ : state) {
    try {
      bubble::run({.intercept_std = true}, [forget](bubble::Runtime&) {
        Worker w1(forget);
        Worker w2(forget);
        std::this_thread::yield();
      });
    } catch (const bubble::RunFailure&) {
      ++failed;
    }
  }
  state.counters["failed %"] =
      100.0 * static_cast<double>(failed) / static_cast<double>(state.iterations());
}

void BM_WorkerRun_Passing(benchmark::State& state) {
  run_worker(state, false);
}
BENCHMARK(BM_WorkerRun_Passing);

void BM_WorkerRun_FailingTornDown(benchmark::State& state) {
  run_worker(state, true);
}
BENCHMARK(BM_WorkerRun_FailingTornDown);

// The same component on bubble's own API.
class BubbleWorker {
 public:
  BubbleWorker(bubble::Runtime& rt, bool forget_to_notify)
      : forget_(forget_to_notify),
        m_(rt),
        cv_(rt),
        thread_(
            "worker", [this] { loop(); }, rt) {}
  ~BubbleWorker() {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    if (!forget_) cv_.notify_all();
    thread_.join();
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    while (!stopping_) cv_.wait(lock);
  }

  bool forget_;
  bubble::Mutex m_;
  bubble::CondVar cv_;
  bool stopping_ = false;
  bubble::Thread thread_;
};

void run_bubble_worker(benchmark::State& state, bool forget) {
  for (auto _ : state) {
    try {
      bubble::run({}, [forget](bubble::Runtime& rt) {
        BubbleWorker w1(rt, forget);
        BubbleWorker w2(rt, forget);
        rt.yield();
      });
    } catch (const bubble::RunFailure&) {
    }
  }
}

void BM_BubbleWorkerRun_Passing(benchmark::State& state) {
  run_bubble_worker(state, false);
}
BENCHMARK(BM_BubbleWorkerRun_Passing);

void BM_BubbleWorkerRun_FailingTornDown(benchmark::State& state) {
  run_bubble_worker(state, true);
}
BENCHMARK(BM_BubbleWorkerRun_FailingTornDown);

// The floor of a teardown that runs destructors: one C++ exception thrown and caught through
// `depth` frames, each with an object to destroy (a failing run of the worker program throws
// three: bubble::Unwind in each worker, then the RunFailure out of run()).
struct Guard {
  ~Guard() { benchmark::DoNotOptimize(this); }
};
[[gnu::noinline]] void throw_through(int depth) {
  const Guard guard;
  if (depth == 0) throw std::runtime_error("unwind");
  throw_through(depth - 1);
  benchmark::ClobberMemory();
}

void BM_ThrowCatchThroughFrames(benchmark::State& state) {
  for (auto _ : state) {
    try {
      throw_through(static_cast<int>(state.range(0)));
    } catch (const std::exception& e) {
      benchmark::DoNotOptimize(&e);
    }
  }
}
BENCHMARK(BM_ThrowCatchThroughFrames)->Arg(4)->Arg(16);

long resident_kb() {
  long pages = 0;
  long resident = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

// 100,000 failing runs (fifo: every one deadlocks); the resident set after the first 1,000 and
// after all of them.
void BM_FailingRunsMemory(benchmark::State& state) {
  const bubble::Options options{.intercept_std = true};
  long after_1k = 0;
  long after_100k = 0;
  for (auto _ : state) {
    for (int i = 1; i <= 100'000; ++i) {
      try {
        bubble::run(options, [](bubble::Runtime&) { std_lock_order(); });
      } catch (const bubble::RunFailure&) {
      }
      if (i == 1'000) after_1k = resident_kb();
    }
    after_100k = resident_kb();
  }
  state.counters["rss 1k runs KiB"] = static_cast<double>(after_1k);
  state.counters["rss 100k runs KiB"] = static_cast<double>(after_100k);
  state.counters["growth %"] =
      100.0 * static_cast<double>(after_100k - after_1k) / static_cast<double>(after_1k);
}
BENCHMARK(BM_FailingRunsMemory)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
