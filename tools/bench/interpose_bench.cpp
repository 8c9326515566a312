// bubble::interpose outside any intercepting bubble: the overrides of clock_gettime, of an
// uncontended pthread mutex, of an uncontended pthread rwlock (read and write) and of a POSIX
// semaphore's post + wait against the real functions (glibc's, reached through the pointer
// dlsym(RTLD_NEXT) returns), in the same binary and run. Goal: within a few nanoseconds.
//
// Also the two costs behind a per-bubble-thread thread_local design (docs/unmodified-code.md): a
// hand-off between two OS threads through a futex (std::atomic wait/notify: what running each
// bubble thread on its own OS thread, one at a time, would pay per switch), against a hand-off
// between two bubble threads (fibers) in the same run.

#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include <benchmark/benchmark.h>

#include <bubble/bubble.hpp>
#include <bubble/interpose.hpp>

#include "multi_threaded_process.hpp"

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

// The loop every lock benchmark times: take the lock, touch what it guards, release it.
template <class Lock, class Unlock>
void lock_unlock_loop(benchmark::State& state, Lock lock, Unlock unlock) {
  long counter = 0;
  for (auto _ : state) {
    lock();
    benchmark::DoNotOptimize(++counter);
    unlock();
  }
}

void BM_MutexLockUnlock_Real(benchmark::State& state) {
  auto* lock = real<decltype(pthread_mutex_lock)>("pthread_mutex_lock");
  auto* unlock = real<decltype(pthread_mutex_unlock)>("pthread_mutex_unlock");
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  lock_unlock_loop(
      state, [&] { lock(&m); }, [&] { unlock(&m); });
}
BENCHMARK(BM_MutexLockUnlock_Real);

void BM_StdMutexLockUnlock_Interposed(benchmark::State& state) {
  static std::mutex m;
  lock_unlock_loop(
      state, [] { m.lock(); }, [] { m.unlock(); });
}
BENCHMARK(BM_StdMutexLockUnlock_Interposed);

// glibc's rwlock taken for reading (`lock_name` "pthread_rwlock_rdlock") or for writing
// ("pthread_rwlock_wrlock"), through the real functions.
void rwlock_real_loop(benchmark::State& state, const char* lock_name) {
  auto* lock = real<decltype(pthread_rwlock_rdlock)>(lock_name);
  auto* unlock = real<decltype(pthread_rwlock_unlock)>("pthread_rwlock_unlock");
  static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  lock_unlock_loop(
      state, [&] { lock(&rw); }, [&] { unlock(&rw); });
}

void BM_RwlockReadLockUnlock_Real(benchmark::State& state) {
  rwlock_real_loop(state, "pthread_rwlock_rdlock");
}
BENCHMARK(BM_RwlockReadLockUnlock_Real);

void BM_SharedMutexLockSharedUnlock_Interposed(benchmark::State& state) {
  static std::shared_mutex m;
  lock_unlock_loop(
      state, [] { m.lock_shared(); }, [] { m.unlock_shared(); });
}
BENCHMARK(BM_SharedMutexLockSharedUnlock_Interposed);

void BM_RwlockWriteLockUnlock_Real(benchmark::State& state) {
  rwlock_real_loop(state, "pthread_rwlock_wrlock");
}
BENCHMARK(BM_RwlockWriteLockUnlock_Real);

void BM_SharedMutexLockUnlock_Interposed(benchmark::State& state) {
  static std::shared_mutex m;
  lock_unlock_loop(
      state, [] { m.lock(); }, [] { m.unlock(); });
}
BENCHMARK(BM_SharedMutexLockUnlock_Interposed);

void BM_SemPostWait_Real(benchmark::State& state) {
  auto* post = real<decltype(sem_post)>("sem_post");
  auto* wait = real<decltype(sem_wait)>("sem_wait");
  static sem_t s;
  sem_init(&s, 0, 0);
  for (auto _ : state) {
    post(&s);
    wait(&s);
  }
  sem_destroy(&s);
}
BENCHMARK(BM_SemPostWait_Real);

void BM_SemPostWait_Interposed(benchmark::State& state) {
  static sem_t s;
  sem_init(&s, 0, 0);
  for (auto _ : state) {
    sem_post(&s);
    sem_wait(&s);
  }
  sem_destroy(&s);
}
BENCHMARK(BM_SemPostWait_Interposed);

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
