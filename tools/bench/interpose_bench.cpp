// bubble::interpose outside any intercepting bubble: the overrides of clock_gettime and of an
// uncontended pthread mutex against the real functions (glibc's, reached through the pointer
// dlsym(RTLD_NEXT) returns), in the same binary and run. Goal: within a few nanoseconds.
//
// Also the two costs behind a per-bubble-thread thread_local design (docs/unmodified-code.md): a
// hand-off between two OS threads through a futex (std::atomic wait/notify: what running each
// bubble thread on its own OS thread, one at a time, would pay per switch), against a hand-off
// between two bubble threads (fibers) in the same run.

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <benchmark/benchmark.h>

#include <bubble/bubble.hpp>
#include <bubble/interpose.hpp>

namespace {

template <class F>
F* real(const char* name) {
  return reinterpret_cast<F*>(dlsym(RTLD_NEXT, name));
}

void BM_ClockGettime_Real(benchmark::State& state) {
  auto* fn = real<decltype(clock_gettime)>("clock_gettime");
  timespec ts{};
  for (auto _ : state) {
    fn(CLOCK_MONOTONIC, &ts);
    benchmark::DoNotOptimize(ts);
  }
}
BENCHMARK(BM_ClockGettime_Real);

void BM_ClockGettime_Interposed(benchmark::State& state) {
  timespec ts{};
  for (auto _ : state) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    benchmark::DoNotOptimize(ts);
  }
}
BENCHMARK(BM_ClockGettime_Interposed);

void BM_SteadyClockNow_Interposed(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(std::chrono::steady_clock::now());
}
BENCHMARK(BM_SteadyClockNow_Interposed);

void BM_MutexLockUnlock_Real(benchmark::State& state) {
  auto* lock = real<decltype(pthread_mutex_lock)>("pthread_mutex_lock");
  auto* unlock = real<decltype(pthread_mutex_unlock)>("pthread_mutex_unlock");
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  long counter = 0;
  for (auto _ : state) {
    lock(&m);
    benchmark::DoNotOptimize(++counter);
    unlock(&m);
  }
}
BENCHMARK(BM_MutexLockUnlock_Real);

void BM_StdMutexLockUnlock_Interposed(benchmark::State& state) {
  static std::mutex m;
  long counter = 0;
  for (auto _ : state) {
    m.lock();
    benchmark::DoNotOptimize(++counter);
    m.unlock();
  }
}
BENCHMARK(BM_StdMutexLockUnlock_Interposed);

// One hand-off = one side wakes the other and waits to be woken: items are hand-offs.
void BM_OsThreadHandOff_Futex(benchmark::State& state) {
  std::atomic<int> turn{0};
  std::atomic<bool> stop{false};
  std::thread other([&] {
    for (;;) {
      turn.wait(0);
      if (stop.load()) return;
      turn.store(0);
      turn.notify_one();
    }
  });
  for (auto _ : state) {
    turn.store(1);
    turn.notify_one();
    turn.wait(1);
  }
  stop.store(true);
  turn.store(1);
  turn.notify_one();
  other.join();
  state.SetItemsProcessed(2 * state.iterations());
}
BENCHMARK(BM_OsThreadHandOff_Futex)->UseRealTime();

// Two bubble threads alternating with yield(): every yield is a fiber switch.
void BM_BubbleThreadHandOff_Yield(benchmark::State& state) {
  constexpr int kYields = 100'000;
  for (auto _ : state) {
    bubble::run([](bubble::Runtime& rt) {
      auto other = rt.spawn("other", [&] {
        for (int i = 0; i < kYields; ++i) rt.yield();
      });
      for (int i = 0; i < kYields; ++i) rt.yield();
      other->join();
    });
  }
  state.SetItemsProcessed(2 * kYields * state.iterations());
}
BENCHMARK(BM_BubbleThreadHandOff_Yield)->UseRealTime();

}  // namespace
