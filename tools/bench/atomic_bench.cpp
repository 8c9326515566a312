// bubble::Atomic against std::atomic, in the same binary, on real threads; and the price of an
// atomic operation in a bubble, where it is a scheduling point.
//
// The goal: on the system runtime an Atomic operation costs what the std::atomic operation costs
// (the difference is one thread-local load and a branch that is never taken). The rows pair up:
// BM_Std<Op> and BM_Bubble<Op> do the same operation on the same memory order. In a bubble
// (BM_InBubble_*), each operation is a scheduling point: one thread alone (the decision has one
// candidate), and two threads under random, whose points are decisions that may switch.

#include <bubble/atomic.hpp>
#include <bubble/bubble.hpp>
#include <bubble/thread.hpp>

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>

namespace {

template <class A>
void load_relaxed(benchmark::State& state) {
  A a(1);
  for (auto _ : state) benchmark::DoNotOptimize(a.load(std::memory_order_relaxed));
  state.SetItemsProcessed(state.iterations());
}
template <class A>
void load_acquire(benchmark::State& state) {
  A a(1);
  for (auto _ : state) benchmark::DoNotOptimize(a.load(std::memory_order_acquire));
  state.SetItemsProcessed(state.iterations());
}
template <class A>
void store_release(benchmark::State& state) {
  A a(0);
  std::uint64_t i = 0;
  for (auto _ : state) {
    a.store(++i, std::memory_order_release);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
template <class A>
void fetch_add_relaxed(benchmark::State& state) {
  A a(0);
  for (auto _ : state) benchmark::DoNotOptimize(a.fetch_add(1, std::memory_order_relaxed));
  state.SetItemsProcessed(state.iterations());
}
template <class A>
void compare_exchange(benchmark::State& state) {
  A a(0);
  std::uint64_t expected = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a.compare_exchange_strong(expected, expected + 1));
  }
  state.SetItemsProcessed(state.iterations());
}

using Std = std::atomic<std::uint64_t>;
using Bubble = bubble::Atomic<std::uint64_t>;

void BM_StdLoadRelaxed(benchmark::State& s) {
  load_relaxed<Std>(s);
}
void BM_BubbleLoadRelaxed(benchmark::State& s) {
  load_relaxed<Bubble>(s);
}
void BM_StdLoadAcquire(benchmark::State& s) {
  load_acquire<Std>(s);
}
void BM_BubbleLoadAcquire(benchmark::State& s) {
  load_acquire<Bubble>(s);
}
void BM_StdStoreRelease(benchmark::State& s) {
  store_release<Std>(s);
}
void BM_BubbleStoreRelease(benchmark::State& s) {
  store_release<Bubble>(s);
}
void BM_StdFetchAddRelaxed(benchmark::State& s) {
  fetch_add_relaxed<Std>(s);
}
void BM_BubbleFetchAddRelaxed(benchmark::State& s) {
  fetch_add_relaxed<Bubble>(s);
}
void BM_StdCompareExchange(benchmark::State& s) {
  compare_exchange<Std>(s);
}
void BM_BubbleCompareExchange(benchmark::State& s) {
  compare_exchange<Bubble>(s);
}

BENCHMARK(BM_StdLoadRelaxed);
BENCHMARK(BM_BubbleLoadRelaxed);
BENCHMARK(BM_StdLoadAcquire);
BENCHMARK(BM_BubbleLoadAcquire);
BENCHMARK(BM_StdStoreRelease);
BENCHMARK(BM_BubbleStoreRelease);
BENCHMARK(BM_StdFetchAddRelaxed);
BENCHMARK(BM_BubbleFetchAddRelaxed);
BENCHMARK(BM_StdCompareExchange);
BENCHMARK(BM_BubbleCompareExchange);

constexpr int kOpsPerRun = 10'000;

// One bubble thread doing kOpsPerRun fetch_adds: the price of a scheduling point with nothing
// else runnable, per operation (the run's own start and end included).
void BM_InBubble_OneThreadFetchAdd(benchmark::State& state) {
  for (auto _ : state) {
    bubble::run([](bubble::Runtime&) {
      bubble::Atomic<std::uint64_t> a(0);
      for (int i = 0; i < kOpsPerRun; ++i) a.fetch_add(1, std::memory_order_relaxed);
      benchmark::DoNotOptimize(a.unsync_load());
    });
  }
  state.SetItemsProcessed(state.iterations() * kOpsPerRun);
}
BENCHMARK(BM_InBubble_OneThreadFetchAdd);

// Two bubble threads doing kOpsPerRun / 2 fetch_adds each under random: every operation is a
// decision between two threads, and about half of them switch.
void BM_InBubble_TwoThreadsFetchAddRandom(benchmark::State& state) {
  std::uint64_t seed = 0;
  for (auto _ : state) {
    bubble::run({.strategy = bubble::Strategy::random(++seed)}, [](bubble::Runtime& rt) {
      bubble::Atomic<std::uint64_t> a(0);
      auto add = [&] {
        for (int i = 0; i < kOpsPerRun / 2; ++i) a.fetch_add(1, std::memory_order_relaxed);
      };
      bubble::Thread t1("t1", add, rt);
      bubble::Thread t2("t2", add, rt);
    });
  }
  state.SetItemsProcessed(state.iterations() * kOpsPerRun);
}
BENCHMARK(BM_InBubble_TwoThreadsFetchAddRandom);

}  // namespace
