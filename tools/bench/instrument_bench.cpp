// What bubble::instrument's hooks cost: an atomic operation and a plain access of code compiled
// with the instrumentation, outside a bubble, against the same loop compiled without it (in-run
// baselines, instrument_baseline.cpp); and an instrumented atomic operation in a bubble, where it
// is a scheduling point, against bubble::Atomic's (atomic_bench).

#include <bubble/bubble.hpp>

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>

#include "instrument_loops.hpp"

namespace bench::instrumented {
#include "instrument_loops.inc"
}  // namespace bench::instrumented

namespace {

constexpr std::uint64_t kOps = 1000;

template <std::uint64_t (*Loop)(std::atomic<std::uint64_t>&, std::uint64_t)>
void atomic_loop(benchmark::State& state) {
  std::atomic<std::uint64_t> a{1};
  for (auto _ : state) benchmark::DoNotOptimize(Loop(a, kOps));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kOps));
}

template <std::uint64_t (*Loop)(volatile std::uint64_t*, std::uint64_t)>
void plain_loop(benchmark::State& state) {
  volatile std::uint64_t cells[8] = {};
  for (auto _ : state) benchmark::DoNotOptimize(Loop(cells, kOps));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kOps));
}

BENCHMARK(atomic_loop<bench::baseline::atomic_loads>)->Name("BM_PlainAtomicLoadAcquire");
BENCHMARK(atomic_loop<bench::instrumented::atomic_loads>)->Name("BM_InstrumentedAtomicLoadAcquire");
BENCHMARK(atomic_loop<bench::baseline::atomic_fetch_adds>)->Name("BM_PlainAtomicFetchAdd");
BENCHMARK(atomic_loop<bench::instrumented::atomic_fetch_adds>)
    ->Name("BM_InstrumentedAtomicFetchAdd");
BENCHMARK(atomic_loop<bench::baseline::atomic_stores>)->Name("BM_PlainAtomicStoreRelease");
BENCHMARK(atomic_loop<bench::instrumented::atomic_stores>)
    ->Name("BM_InstrumentedAtomicStoreRelease");
BENCHMARK(plain_loop<bench::baseline::plain_accesses>)->Name("BM_PlainReadWrite");
BENCHMARK(plain_loop<bench::instrumented::plain_accesses>)->Name("BM_InstrumentedReadWrite");

// One bubble thread doing kRunOps instrumented fetch_adds: each a scheduling point.
constexpr std::uint64_t kRunOps = 10'000;
void BM_InBubble_InstrumentedFetchAdd(benchmark::State& state) {
  for (auto _ : state) {
    bubble::run([](bubble::Runtime&) {
      std::atomic<std::uint64_t> a{0};
      benchmark::DoNotOptimize(bench::instrumented::atomic_fetch_adds(a, kRunOps));
    });
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRunOps));
}
BENCHMARK(BM_InBubble_InstrumentedFetchAdd);

// One bubble thread doing kRunOps instrumented plain read-and-writes: each checked for races.
void BM_InBubble_InstrumentedReadWrite(benchmark::State& state) {
  for (auto _ : state) {
    bubble::run([](bubble::Runtime&) {
      volatile std::uint64_t cells[8] = {};
      benchmark::DoNotOptimize(bench::instrumented::plain_accesses(cells, kRunOps));
    });
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRunOps));
}
BENCHMARK(BM_InBubble_InstrumentedReadWrite);

}  // namespace
