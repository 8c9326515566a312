// bubble::Pool throughput, against baselines measured in the same binary:
//   - a plain bounded pool (std::mutex + two std::condition_variable, the same capacity),
//   - asio::thread_pool (Debian's standalone, header-only asio; its queue is unbounded).
// Each benchmark pushes kJobs empty jobs from one submitter through two workers on real
// threads, and reports jobs per second of wall time; the CPU column is the whole process's CPU
// time (every thread), the fairer comparison on a loaded machine. BM_PoolInBubble runs a 4-worker
// pool in a bubble and reports simulated jobs per second of wall time.
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUBBLE_BUILD_BENCHMARKS=ON
//   cmake --build build/bench --target pool_bench && build/bench/tools/bench/pool_bench

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <asio/post.hpp>
#include <asio/thread_pool.hpp>

#include <bubble/bubble.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/pool.hpp>
#include <bubble/runtime.hpp>

namespace {

constexpr int kJobs = 1'000'000;
constexpr std::ptrdiff_t kCapacity = 1024;
constexpr int kWorkers = 2;

// The baseline: the textbook bounded pool, with std::function jobs. Instantiated with the
// standard library's mutex and condition variable (the baseline proper), and with bubble's
// (a diagnostic: the same pool on the primitives bubble::Pool is built on).
template <class MutexT, class CondVarT>
class PlainPool {
 public:
  PlainPool(int workers, std::size_t capacity) : capacity_(capacity) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~PlainPool() { shutdown(); }

  void submit(std::function<void()> job) {
    std::unique_lock<MutexT> lk(mu_);
    not_full_.wait(lk, [&] { return queue_.size() < capacity_; });
    queue_.push_back(std::move(job));
    lk.unlock();
    not_empty_.notify_one();
  }

  void shutdown() {
    {
      std::lock_guard<MutexT> lk(mu_);
      closed_ = true;
    }
    not_empty_.notify_all();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  void work() {
    for (;;) {
      std::unique_lock<MutexT> lk(mu_);
      not_empty_.wait(lk, [&] { return !queue_.empty() || closed_; });
      if (queue_.empty()) return;
      std::function<void()> job = std::move(queue_.front());
      queue_.pop_front();
      lk.unlock();
      not_full_.notify_one();
      job();
    }
  }

  MutexT mu_;
  CondVarT not_empty_;
  CondVarT not_full_;
  std::deque<std::function<void()>> queue_;
  const std::size_t capacity_;
  bool closed_ = false;
  std::vector<std::thread> threads_;
};

// Arg 1: measure queue wait and service time (the default); 0: PoolOptions::measure_latency off.
void BM_BubblePool(benchmark::State& state) {
  const bool measure = state.range(0) != 0;
  for (auto _ : state) {
    bubble::Pool pool({.workers = kWorkers,
                       .queue_capacity = kCapacity,
                       .name = "bench",
                       .measure_latency = measure},
                      bubble::system_runtime());
    for (int i = 0; i < kJobs; ++i) {
      if (pool.submit(bubble::Context::background(), [] {})) state.SkipWithError("refused");
    }
    if (pool.shutdown()) state.SkipWithError("shutdown failed");
  }
  state.SetItemsProcessed(state.iterations() * kJobs);
}

template <class MutexT, class CondVarT>
void BM_PlainMutexCondvarPool(benchmark::State& state) {
  for (auto _ : state) {
    PlainPool<MutexT, CondVarT> pool(kWorkers, static_cast<std::size_t>(kCapacity));
    for (int i = 0; i < kJobs; ++i) pool.submit([] {});
    pool.shutdown();
  }
  state.SetItemsProcessed(state.iterations() * kJobs);
}

void BM_AsioThreadPool(benchmark::State& state) {
  for (auto _ : state) {
    asio::thread_pool pool(kWorkers);
    for (int i = 0; i < kJobs; ++i) asio::post(pool, [] {});
    pool.join();
  }
  state.SetItemsProcessed(state.iterations() * kJobs);
}

// The price of one clock read on the system runtime: with measure_latency the pool reads it twice
// per job (see pool.cpp), the difference between BM_BubblePool's two arguments.
void BM_SystemRuntimeNow(benchmark::State& state) {
  bubble::Runtime& rt = bubble::system_runtime();
  for (auto _ : state) benchmark::DoNotOptimize(rt.now());
}

// A 4-worker pool in a bubble: jobs per second of wall time, simulated.
void BM_PoolInBubble(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  for (auto _ : state) {
    bubble::run({.watchdog = std::chrono::milliseconds{0}}, [&](bubble::Runtime& rt) {
      bubble::Pool pool({.workers = 4, .queue_capacity = 64, .name = "sim"}, rt);
      for (int i = 0; i < jobs; ++i) {
        if (pool.submit(bubble::Context::background(), [] {})) std::abort();
      }
      if (pool.shutdown()) std::abort();
    });
  }
  state.SetItemsProcessed(state.iterations() * jobs);
}

BENCHMARK(BM_BubblePool)
    ->ArgName("measure_latency")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_PlainMutexCondvarPool<std::mutex, std::condition_variable>)
    ->Name("BM_PlainMutexCondvarPool")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_PlainMutexCondvarPool<bubble::Mutex, bubble::CondVar>)
    ->Name("BM_PlainPoolOnBubbleMutexCondVar")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_AsioThreadPool)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_SystemRuntimeNow);
BENCHMARK(BM_PoolInBubble)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace
