// How the bubble scales with the number of threads alive at once: N threads each sleep 10 times
// (each sleep: a timer, a park, a fire, a wake-up, two switches), N from 10 to 100,000. Items:
// thread operations (spawn, 10 sleeps, exit, join: 13 per thread). The baseline is the N = 10
// row of the same run: time per thread operation should stay flat (within 2x) up to 100,000.
// BM_YieldingThreads does the same with yields instead of sleeps (no timers): the half of the
// cost that is the threads themselves, and the like-for-like of Go's scheduler in
// tools/bench/scale_vs_go.sh.
//
// Baseline of the machine: N raw Boost.Context fibers on stacks laid out as the bubble lays out
// its own (256 KiB + a 4 KiB page apart, in one mapping), each resumed 11 times (10 sleeps and
// the exit), round-robin or in the order the bubble runs the sleeping threads. Items: resumes. It
// shows what the memory hierarchy alone does once N threads' stack tops no longer fit in the
// caches and the TLB.
//
// One untimed run first warms the stack pool (a run keeps the stacks it needed for the next).
// Counter maps_per_1k_threads: the kernel memory mappings (lines of /proc/self/maps) the process
// has, beyond those it had before its first benchmark, per 1,000 threads, while the N threads of
// that warm-up run are all alive (asleep). Counter faults_per_1k_threads: the page faults the
// process took during the timed runs (getrusage's minor and major faults), per run and per 1,000
// threads: what memory the runs touched for the first time (on a virtual machine a fault can cost
// microseconds).

#include <benchmark/benchmark.h>

#include <bubble/bubble.hpp>

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

constexpr std::int64_t kSleepsPerThread = 10;
constexpr std::int64_t kOpsPerThread = kSleepsPerThread + 3;  // spawn, sleeps, exit, join

std::int64_t mapping_count() {
  std::ifstream maps("/proc/self/maps");
  std::int64_t n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

// The page faults the process has taken so far (minor and major).
std::int64_t page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_minflt) + static_cast<std::int64_t>(usage.ru_majflt);
}

// The length of sleep `k` of thread `i`, in milliseconds.
std::int64_t sleep_ms(std::int64_t i, std::int64_t k) {
  return 1 + (i + k) % 7;
}

// The mappings of the process before any benchmark ran (initialised before main()).
const std::int64_t kMappingsAtStart = mapping_count();

// N threads, each sleeping kSleepsPerThread times; `alive` runs once all of them are asleep.
template <typename Alive>
void sleeping_threads(const bubble::Options& o, std::int64_t n, Alive alive) {
  bubble::run(o, [&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    threads.reserve(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      threads.push_back(rt.spawn("sleeper", [&rt, i] {
        for (std::int64_t k = 0; k < kSleepsPerThread; ++k) {
          rt.sleep_for(std::chrono::milliseconds(sleep_ms(i, k)));
        }
      }));
    }
    alive();
    for (auto& t : threads) t->join();
  });
}

// Hands out consecutive slices of one mapping, again from the first after reset(); frees
// nothing (the mapping goes at the end).
class SliceStacks {
 public:
  static constexpr std::size_t kStride = 256 * 1024 + 4096;
  explicit SliceStacks(std::size_t n) : bytes_(n * kStride) {
    void* mem = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<char*>(mem);
  }
  SliceStacks(const SliceStacks&) = delete;
  SliceStacks& operator=(const SliceStacks&) = delete;
  ~SliceStacks() { ::munmap(base_, bytes_); }
  void reset() noexcept { used_ = 0; }
  // A Boost.Context stack allocator over the next slice.
  struct Allocator {
    SliceStacks* stacks;
    boost::context::stack_context allocate() {
      boost::context::stack_context sctx;
      sctx.size = kStride - 4096;
      sctx.sp = stacks->base_ + (++stacks->used_) * kStride;
      return sctx;
    }
    void deallocate(boost::context::stack_context&) noexcept {}
  };

 private:
  char* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t used_ = 0;
};

// The order in which BM_SleepingThreads' threads run, as fiber indices: each thread once as it is
// spawned (until its first sleep), then one entry per sleep's end, by the sleep's deadline (ties
// in order of the threads' creation, as the bubble fires timers).
std::vector<std::uint32_t> bubble_wake_order(std::int64_t n) {
  std::vector<std::uint32_t> order;
  order.reserve(static_cast<std::size_t>(n * (kSleepsPerThread + 1)));
  for (std::int64_t i = 0; i < n; ++i) order.push_back(static_cast<std::uint32_t>(i));
  std::vector<std::pair<std::int64_t, std::uint32_t>> wakes;  // (deadline in ms, thread)
  wakes.reserve(static_cast<std::size_t>(n * kSleepsPerThread));
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t t = 0;
    for (std::int64_t k = 0; k < kSleepsPerThread; ++k) {
      t += sleep_ms(i, k);
      wakes.emplace_back(t, static_cast<std::uint32_t>(i));
    }
  }
  std::sort(wakes.begin(), wakes.end());
  for (const auto& w : wakes) order.push_back(w.second);
  return order;
}

// Second argument: the order of the resumes, 0 round robin (every fiber once, then again, ...),
// 1 the order in which BM_SleepingThreads' threads run (bubble_wake_order).
void BM_RawFibers(benchmark::State& state) {
  namespace ctx = boost::context;
  const std::int64_t n = state.range(0);
  constexpr int kResumes = kSleepsPerThread + 1;
  std::vector<std::uint32_t> order;
  if (state.range(1) == 0) {
    for (int k = 0; k < kResumes; ++k) {
      for (std::int64_t i = 0; i < n; ++i) order.push_back(static_cast<std::uint32_t>(i));
    }
  } else {
    order = bubble_wake_order(n);
  }
  SliceStacks stacks(static_cast<std::size_t>(n));  // Reused by every run, as a warm pool.
  auto run_once = [&] {
    stacks.reset();
    std::vector<ctx::fiber> fibers;
    fibers.reserve(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      fibers.emplace_back(std::allocator_arg, SliceStacks::Allocator{&stacks},
                          [](ctx::fiber&& main) {
                            for (int k = 0; k + 1 < kResumes; ++k) main = std::move(main).resume();
                            return std::move(main);
                          });
    }
    for (std::uint32_t i : order) fibers[i] = std::move(fibers[i]).resume();
    benchmark::DoNotOptimize(fibers.data());
  };
  run_once();  // Untimed: faults the stacks' pages in.
  for (auto _ : state) run_once();
  state.SetItemsProcessed(state.iterations() * n * kResumes);
}
BENCHMARK(BM_RawFibers)
    ->ArgNames({"", "bubble_order"})
    ->ArgsProduct({{10, 100, 1'000, 10'000, 100'000}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

// The options of the measured runs: no step budget, no watchdog.
bubble::Options scale_options() {
  bubble::Options o;
  o.max_steps = 0;
  o.watchdog = std::chrono::milliseconds{0};
  return o;
}

// The thread counts of the bubble rows: N = 10 to 100,000.
void thread_counts(benchmark::internal::Benchmark* b) {
  for (std::int64_t n : {10, 100, 1'000, 10'000, 100'000}) b->Arg(n);
  b->Unit(benchmark::kMillisecond);
}

void BM_SleepingThreads(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const bubble::Options o = scale_options();
  std::int64_t mappings = 0;
  sleeping_threads(o, n, [&] { mappings = mapping_count() - kMappingsAtStart; });
  const std::int64_t faults_before = page_faults();
  for (auto _ : state) sleeping_threads(o, n, [] {});
  const std::int64_t faults = page_faults() - faults_before;
  state.SetItemsProcessed(state.iterations() * n * kOpsPerThread);
  state.counters["faults_per_1k_threads"] = static_cast<double>(faults) * 1000.0 /
                                            static_cast<double>(n) /
                                            static_cast<double>(state.iterations());
  state.counters["maps_per_1k_threads"] =
      static_cast<double>(mappings) * 1000.0 / static_cast<double>(n);
}
BENCHMARK(BM_SleepingThreads)->Apply(thread_counts);

// N threads, each yielding kSleepsPerThread times (a scheduling point that puts it behind every
// runnable thread): no timers, so each operation touches only the thread's stack and record and
// the run queue. The like-for-like of tools/bench/go/scale.go (goroutines calling
// runtime.Gosched(), GOMAXPROCS=1), which tools/bench/scale_vs_go.sh runs beside it.
void BM_YieldingThreads(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const bubble::Options o = scale_options();
  auto run_once = [&] {
    bubble::run(o, [&](Runtime& rt) {
      std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
      threads.reserve(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        threads.push_back(rt.spawn("yielder", [&rt] {
          for (std::int64_t k = 0; k < kSleepsPerThread; ++k) rt.yield();
        }));
      }
      for (auto& t : threads) t->join();
    });
  };
  run_once();  // Untimed: warms the stack pool.
  for (auto _ : state) run_once();
  state.SetItemsProcessed(state.iterations() * n * kOpsPerThread);
}
BENCHMARK(BM_YieldingThreads)->Apply(thread_counts);

}  // namespace
