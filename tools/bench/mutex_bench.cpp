// bubble::Mutex against std::mutex, in the same binary.
//
// The goal (docs/design/primitives.md, "Fast paths"): an uncontended lock/unlock pair of a
// bubble::Mutex on the system runtime costs at most 1.2x a std::mutex pair. The uncontended rows
// include the runtime check of lock() (one thread-local load and one comparison: the caller must
// run on the mutex's runtime); docs/PERFORMANCE.md has the current figure. The
// contended runs (->Threads) are for information: bubble::Mutex barges with starvation protection
// (see mutex.hpp), which trades some fairness for throughput.

#include <bubble/mutex.hpp>

#include <benchmark/benchmark.h>

#include <mutex>

#include "multi_threaded_process.hpp"

namespace {

template <class M>
void lock_unlock(benchmark::State& state) {
  static M mu;  // Shared by the threads of a ->Threads run.
  long counter = 0;
  for (auto _ : state) {
    mu.lock();
    ++counter;
    benchmark::DoNotOptimize(counter);
    mu.unlock();
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_StdMutex_Uncontended(benchmark::State& state) {
  lock_unlock<std::mutex>(state);
}
void BM_BubbleMutex_Uncontended(benchmark::State& state) {
  lock_unlock<bubble::Mutex>(state);
}

template <class M>
void lock_guard_pair(benchmark::State& state) {
  M mu;
  long counter = 0;
  for (auto _ : state) {
    std::lock_guard lock(mu);
    ++counter;
    benchmark::DoNotOptimize(counter);
  }
}

void BM_StdMutex_LockGuard(benchmark::State& state) {
  lock_guard_pair<std::mutex>(state);
}
void BM_BubbleMutex_LockGuard(benchmark::State& state) {
  lock_guard_pair<bubble::Mutex>(state);
}

template <class M>
void try_lock_unlock(benchmark::State& state) {
  M mu;
  for (auto _ : state) {
    const bool locked = mu.try_lock();
    benchmark::DoNotOptimize(locked);
    mu.unlock();
  }
}

void BM_StdMutex_TryLock(benchmark::State& state) {
  try_lock_unlock<std::mutex>(state);
}
void BM_BubbleMutex_TryLock(benchmark::State& state) {
  try_lock_unlock<bubble::Mutex>(state);
}

}  // namespace

BENCHMARK(BM_StdMutex_Uncontended);
BENCHMARK(BM_BubbleMutex_Uncontended);
BENCHMARK(BM_StdMutex_LockGuard);
BENCHMARK(BM_BubbleMutex_LockGuard);
BENCHMARK(BM_StdMutex_TryLock);
BENCHMARK(BM_BubbleMutex_TryLock);
BENCHMARK(BM_StdMutex_Uncontended)->Name("BM_StdMutex_Contended")->Threads(2);
BENCHMARK(BM_BubbleMutex_Uncontended)->Name("BM_BubbleMutex_Contended")->Threads(2);
