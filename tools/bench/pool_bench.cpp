// bubble::Pool throughput, against baselines measured in the same binary:
//   - a plain bounded pool (std::mutex + two std::condition_variable, the same capacity),
//   - asio::thread_pool (Debian's standalone, header-only asio; its queue is unbounded),
//   - oneTBB (Debian's libtbb-dev, when found): jobs enqueued into a task_arena of two worker
//     threads from an outside submitter (the same shape as the pools), and a task_group run
//     inside a two-slot arena, where the submitter is one of the two threads that run jobs,
//   - no pool at all: the jobs run on one thread (BM_InlineJobs), or split between two threads
//     that share nothing (BM_TwoThreadsNoPool, the machine's ceiling for these jobs),
//   - the least a pool can do (least_pools.hpp): a ring per worker (BM_SpscRingsNoPool), and one
//     ring under one lock for both workers (BM_SharedRingNoPool).
// Each benchmark pushes jobs from one submitter through two workers on real threads, and reports
// jobs per second of wall time; the CPU column is the whole process's CPU time (every thread).
// Counters line_ns_before and line_ns_after: the time a cache line took between the two
// processors just before and just after the row's timed loop (see line_transfer_ns).
// The first argument is the job: 0 an empty job (kJobs of them, the cost of the pool itself),
// 1 about a microsecond of CPU work (kBusyJobs of them; two workers cannot exceed 2 M jobs/s).
// BM_PoolInBubble runs a 4-worker pool in a bubble and reports simulated jobs per second of wall
// time.
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUBBLE_BUILD_BENCHMARKS=ON
//   cmake --build build/bench --target pool_bench && build/bench/tools/bench/pool_bench

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <asio/post.hpp>
#include <asio/thread_pool.hpp>
#if BUBBLE_BENCH_HAVE_TBB
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif

#include <bubble/bubble.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/pool/latency_histogram.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>

#include "least_pools.hpp"

namespace {

using bubble_bench::SharedRing;
using bubble_bench::SpscRing;
using bubble_bench::TtasSpinLock;

constexpr int kJobs = 1'000'000;
constexpr int kBusyJobs = 200'000;
constexpr std::ptrdiff_t kCapacity = 1024;
constexpr int kWorkers = 2;

// Spins for `iterations` rounds of a loop the compiler cannot remove.
void spin(std::int64_t iterations) {
  for (std::int64_t i = 0; i < iterations; ++i) benchmark::DoNotOptimize(i);
}

// The loop rounds that take about a microsecond of CPU on this machine, measured once: the
// fastest of 20 short probes on the thread's CPU clock (a wall clock counts the time other
// processes took the processor, and on a loaded virtual machine even the CPU clock counts the
// time the hypervisor took it; the fastest probe is the one least disturbed). Each process
// measures its own, and on a virtual machine two processes may find rounds that differ by half:
// to compare two builds, pin the job with the environment variable
// POOL_BENCH_ROUNDS_PER_MICROSECOND (a positive integer; the `rounds_per_us` counter of the
// ~1 us rows reports the value a run used). Any other value stops the benchmark with status 2.
std::int64_t rounds_per_microsecond() {
  static const std::int64_t rounds = [] {
    if (const char* pinned = std::getenv("POOL_BENCH_ROUNDS_PER_MICROSECOND")) {
      char* end = nullptr;
      errno = 0;
      const long long value = std::strtoll(pinned, &end, 10);
      if (end == pinned || *end != '\0' || errno != 0 || value <= 0) {
        std::fprintf(stderr,
                     "pool_bench: POOL_BENCH_ROUNDS_PER_MICROSECOND must be a positive integer, "
                     "got \"%s\"\n",
                     pinned);
        std::exit(2);
      }
      return static_cast<std::int64_t>(value);
    }
    const auto cpu_ns = [] {
      timespec ts{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    };
    constexpr std::int64_t kProbe = 1'000'000;
    spin(kProbe);  // Warm up.
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    for (int i = 0; i < 20; ++i) {
      const std::int64_t start = cpu_ns();
      spin(kProbe);
      best = std::min(best, cpu_ns() - start);
    }
    return std::max<std::int64_t>(1, kProbe * 1000 / std::max<std::int64_t>(best, 1));
  }();
  return rounds;
}

// The job of a benchmark run: nothing (arg 0) or about 1 us of CPU (arg 1), and how many.
struct Workload {
  std::int64_t rounds;
  int jobs;
  explicit Workload(benchmark::State& state)
      : rounds(state.range(0) != 0 ? rounds_per_microsecond() : 0),
        jobs(state.range(0) != 0 ? kBusyJobs : kJobs) {
    if (rounds != 0) state.counters["rounds_per_us"] = static_cast<double>(rounds);
  }
  auto job() const {
    return [r = rounds] { spin(r); };
  }
};

// The time one cache line takes to move from one processor to the other (one-way, the mean of
// 20,000 hand-offs between two spinning threads): what every hand-off of a job between threads
// costs at least. On a virtual machine it depends on where the host placed the two virtual
// processors (same core complex or not) and changes while a benchmark runs, so each throughput
// benchmark measures it before and after its timed loop and reports both as counters
// (line_ns_before, line_ns_after): rows compare only when they ran under the same placement.
double line_transfer_ns() {
  constexpr long kHandOffs = 20'000;
  alignas(64) std::atomic<long> turn{0};
  std::thread other([&turn] {
    for (long i = 1; i < kHandOffs; i += 2) {
      while (turn.load(std::memory_order_acquire) != i) {
      }
      turn.store(i + 1, std::memory_order_release);
    }
  });
  // Timed from the other thread's first answer, so that its start is not counted.
  std::chrono::steady_clock::time_point start;
  for (long i = 0; i < kHandOffs; i += 2) {
    while (turn.load(std::memory_order_acquire) != i) {
    }
    if (i == 2) start = std::chrono::steady_clock::now();
    turn.store(i + 1, std::memory_order_release);
  }
  other.join();
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  return took.count() / (kHandOffs - 2);
}

// Measures line_transfer_ns() when constructed (before the timed loop) and when destroyed (after
// it), into the benchmark's counters.
class LineTransferProbe {
 public:
  explicit LineTransferProbe(benchmark::State& state)
      : state_(state), before_(line_transfer_ns()) {}
  ~LineTransferProbe() {
    state_.counters["line_ns_before"] = before_;
    state_.counters["line_ns_after"] = line_transfer_ns();
  }
  LineTransferProbe(const LineTransferProbe&) = delete;
  LineTransferProbe& operator=(const LineTransferProbe&) = delete;

 private:
  benchmark::State& state_;
  const double before_;
};

// No pool: the jobs run one after the other on the benchmark's thread. Its CPU per job is the
// job's own cost, from which the pools' ceiling on this machine follows (two processors shared by
// the workers and the submitter: 2 / (job + the least per-job overhead of a pool)).
void BM_InlineJobs(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  for (auto _ : state) {
    auto job = work.job();
    for (int i = 0; i < work.jobs; ++i) job();
  }
  state.SetItemsProcessed(state.iterations() * work.jobs);
}

// No pool either: the jobs split in two halves, each run by a thread of its own, with nothing
// shared between the two but the start and the join. What two processors of this machine deliver
// for these jobs when no job moves between threads: the ceiling any pool can approach, measured
// rather than assumed to be twice BM_InlineJobs (a virtual machine's two processors may share a
// physical core, or lose time to the host).
void BM_TwoThreadsNoPool(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kWorkers; ++t) {
      const int share = work.jobs / kWorkers + (t < work.jobs % kWorkers ? 1 : 0);
      threads.emplace_back([&work, share] {
        auto job = work.job();
        for (int i = 0; i < share; ++i) job();
      });
    }
    for (auto& t : threads) t.join();
  }
  state.SetItemsProcessed(state.iterations() * work.jobs);
}

// The least a pool can do to move jobs between threads (SpscRing: one ring per worker, jobs dealt
// in turn, the submitter never waits). What this row loses against BM_TwoThreadsNoPool is the
// least that handing jobs over costs on this machine.
void BM_SpscRingsNoPool(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  const auto per_ring = static_cast<std::size_t>(work.jobs / kWorkers + 1);
  for (auto _ : state) {
    std::deque<SpscRing> rings;
    for (int w = 0; w < kWorkers; ++w) rings.emplace_back(per_ring);
    std::vector<std::thread> threads;
    for (auto& ring : rings) threads.emplace_back([&ring] { ring.consume(); });
    for (int i = 0; i < work.jobs; ++i)
      rings[static_cast<std::size_t>(i % kWorkers)].push(work.job());
    for (auto& ring : rings) ring.close();
    for (auto& t : threads) t.join();
  }
  state.SetItemsProcessed(state.iterations() * work.jobs);
}

// The least a pool with one queue for all its workers can do (SharedRing: one ring, one lock, one
// job per critical section), with std::mutex and with a spin lock. What it loses against
// BM_SpscRingsNoPool is what keeping one order of jobs across the workers costs on this machine.
template <class LockT>
void BM_SharedRingNoPool(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  for (auto _ : state) {
    SharedRing<LockT> ring(static_cast<std::size_t>(work.jobs));
    std::vector<std::thread> threads;
    for (int w = 0; w < kWorkers; ++w) threads.emplace_back([&ring] { ring.consume(); });
    for (int i = 0; i < work.jobs; ++i) ring.push(work.job());
    ring.close();
    for (auto& t : threads) t.join();
  }
  state.SetItemsProcessed(state.iterations() * work.jobs);
}

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

// Runs the workload through a bubble::Pool with `options` on the system runtime: a new pool per
// iteration, every job submitted by this thread, then a graceful shutdown.
void run_bubble_pool(benchmark::State& state, const Workload& work,
                     const bubble::PoolOptions& options) {
  for (auto _ : state) {
    bubble::Pool pool(options, bubble::system_runtime());
    for (int i = 0; i < work.jobs; ++i) {
      if (pool.submit(bubble::Context::background(), work.job())) state.SkipWithError("refused");
    }
    if (pool.shutdown()) state.SkipWithError("shutdown failed");
  }
  state.SetItemsProcessed(state.iterations() * work.jobs);
}

// Second argument 1: measure queue wait and service time (the default); 0: measure_latency off.
void BM_BubblePool(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  run_bubble_pool(state, work,
                  {.workers = kWorkers,
                   .queue_capacity = kCapacity,
                   .name = "bench",
                   .measure_latency = state.range(1) != 0});
}

// The default pool, but resuming a submitter that waits for room at every freed slot
// (room_to_resume = 1) instead of once a quarter of the queue is free: what the hysteresis saves
// when the submitter is faster than the workers.
void BM_BubblePoolResumeEverySlot(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  run_bubble_pool(
      state, work,
      {.workers = kWorkers, .queue_capacity = kCapacity, .room_to_resume = 1, .name = "bench"});
}

// The same pool with room for every job (capacity kJobs), like asio's unbounded queue: the
// submitter never waits for room. The difference from BM_BubblePool/measure_latency:1 is what the
// bound costs when the submitter is faster than the workers (with ~1 us jobs the 1024-slot queue
// is full, and the submitter waits until the workers have freed a batch of slots).
void BM_BubblePoolRoomForAll(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  run_bubble_pool(state, work, {.workers = kWorkers, .queue_capacity = kJobs, .name = "bench"});
}

template <class MutexT, class CondVarT>
void BM_PlainMutexCondvarPool(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  for (auto _ : state) {
    PlainPool<MutexT, CondVarT> pool(kWorkers, static_cast<std::size_t>(kCapacity));
    for (int i = 0; i < work.jobs; ++i) pool.submit(work.job());
    pool.shutdown();
  }
  state.SetItemsProcessed(state.iterations() * work.jobs);
}

void BM_AsioThreadPool(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  for (auto _ : state) {
    asio::thread_pool pool(kWorkers);
    for (int i = 0; i < work.jobs; ++i) asio::post(pool, work.job());
    pool.join();
  }
  state.SetItemsProcessed(state.iterations() * work.jobs);
}

#if BUBBLE_BENCH_HAVE_TBB
// Two worker threads take jobs enqueued from outside the arena (the submitter holds no slot).
// The market is allowed kWorkers + 1 threads so that it lends the arena two workers.
void BM_TbbTaskArena(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, kWorkers + 1);
  for (auto _ : state) {
    tbb::task_arena arena(kWorkers, /*reserved_for_masters=*/0);
    std::atomic<int> left{work.jobs};
    for (int i = 0; i < work.jobs; ++i) {
      arena.enqueue([&left, job = work.job()] {
        job();
        if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) left.notify_one();
      });
    }
    for (int n = left.load(); n != 0; n = left.load()) left.wait(n);
  }
  state.SetItemsProcessed(state.iterations() * work.jobs);
}

// A task_group in a two-slot arena: the submitter runs jobs too while it waits.
void BM_TbbTaskGroup(benchmark::State& state) {
  const Workload work(state);
  const LineTransferProbe probe(state);
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, kWorkers);
  for (auto _ : state) {
    tbb::task_arena arena(kWorkers);
    arena.execute([&] {
      tbb::task_group group;
      for (int i = 0; i < work.jobs; ++i) group.run(work.job());
      group.wait();
    });
  }
  state.SetItemsProcessed(state.iterations() * work.jobs);
}
#endif

// The price of one clock read on the system runtime: with measure_latency the pool reads it twice
// per job (see pool_impl.hpp), the difference between BM_BubblePool's two arguments.
void BM_SystemRuntimeNow(benchmark::State& state) {
  bubble::Runtime& rt = bubble::system_runtime();
  for (auto _ : state) benchmark::DoNotOptimize(rt.now());
}

// The price of one record into a latency histogram, the pool's other cost per measured job (two
// records per job: the queue wait and the service time). The durations cycle through a spread of
// magnitudes (1 ns to about 1 ms) so that the records touch several buckets, as a pool's do.
void BM_LatencyHistogramRecord(benchmark::State& state) {
  bubble::LatencyHistogram histogram;
  std::int64_t i = 0;
  for (auto _ : state) {
    histogram.record(bubble::Duration{1 + (i * 7919) % 1'000'000});
    ++i;
  }
  benchmark::DoNotOptimize(histogram.summary());
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

// Every throughput benchmark: arg "busy" 0 (empty jobs) and 1 (about 1 us of CPU each).
void throughput(benchmark::internal::Benchmark* b) {
  b->ArgName("busy")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3);
  b->UseRealTime()->MeasureProcessCPUTime();
}

BENCHMARK(BM_BubblePool)
    ->ArgNames({"busy", "measure_latency"})
    ->ArgsProduct({{0, 1}, {1, 0}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_InlineJobs)->Apply(throughput);
BENCHMARK(BM_TwoThreadsNoPool)
    ->ArgName("busy")
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_SpscRingsNoPool)->Apply(throughput);
BENCHMARK(BM_SharedRingNoPool<std::mutex>)->Name("BM_SharedRingNoPool/mutex")->Apply(throughput);
BENCHMARK(BM_SharedRingNoPool<TtasSpinLock>)->Name("BM_SharedRingNoPool/spin")->Apply(throughput);
BENCHMARK(BM_BubblePoolResumeEverySlot)->Apply(throughput);
BENCHMARK(BM_BubblePoolRoomForAll)->Apply(throughput);
BENCHMARK(BM_PlainMutexCondvarPool<std::mutex, std::condition_variable>)
    ->Name("BM_PlainMutexCondvarPool")
    ->Apply(throughput);
BENCHMARK(BM_PlainMutexCondvarPool<bubble::Mutex, bubble::CondVar>)
    ->Name("BM_PlainPoolOnBubbleMutexCondVar")
    ->Apply(throughput);
BENCHMARK(BM_AsioThreadPool)->Apply(throughput);
#if BUBBLE_BENCH_HAVE_TBB
BENCHMARK(BM_TbbTaskArena)->Apply(throughput);
BENCHMARK(BM_TbbTaskGroup)->Apply(throughput);
#endif
BENCHMARK(BM_SystemRuntimeNow);
BENCHMARK(BM_LatencyHistogramRecord);
BENCHMARK(BM_PoolInBubble)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace
