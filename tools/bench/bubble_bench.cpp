// Benchmarks of the bubble (the simulated runtime), each next to a baseline measured in the same
// binary: a raw Boost.Context fiber switch and a raw fiber creation.
//
// Goals (docs/PERFORMANCE.md), with a recording strategy on and tracing off: a channel
// ping-pong hand-off <= 40 ns; >= 5 M timer fires per second; 10,000 threads sleeping random
// durations in < 1 s; a trivial run (2 threads x 10 operations) >= 100,000 runs per second.

#include <benchmark/benchmark.h>

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/mutex.hpp>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

bubble::Options bench_options(bool random) {
  bubble::Options o;
  o.strategy = random ? bubble::Strategy::random(1) : bubble::Strategy::fifo();
  o.max_steps = 0;
  o.watchdog = std::chrono::milliseconds{0};
  return o;
}

// Baseline: one round trip between two raw fibers (two switches).
void BM_RawFiberSwitchRoundTrip(benchmark::State& state) {
  namespace ctx = boost::context;
  bool done = false;
  ctx::fiber f{[&done](ctx::fiber&& main) {
    while (!done) main = std::move(main).resume();
    return std::move(main);
  }};
  for (auto _ : state) f = std::move(f).resume();
  done = true;
  f = std::move(f).resume();
  state.SetItemsProcessed(state.iterations() * 2);  // Items: switches.
}
BENCHMARK(BM_RawFiberSwitchRoundTrip);

// Baseline: creating, running and finishing one raw fiber with a guard-paged stack.
void BM_RawFiberCreate(benchmark::State& state) {
  namespace ctx = boost::context;
  for (auto _ : state) {
    ctx::fiber f{std::allocator_arg, ctx::protected_fixedsize_stack(256 * 1024),
                 [](ctx::fiber&& main) { return std::move(main); }};
    f = std::move(f).resume();
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_RawFiberCreate);

// One run in which two bubble threads ping-pong `n` round trips over two unbuffered
// Channel<int>s.
void run_ping_pong(const bubble::Options& options, std::int64_t n) {
  bubble::run(options, [n](Runtime& rt) {
    bubble::Channel<int> ping(0, rt), pong(0, rt);
    auto echo = rt.spawn("echo", [&] {
      for (std::int64_t i = 0; i < n; ++i) (void)pong.send(*ping.receive());
    });
    for (std::int64_t i = 0; i < n; ++i) {
      (void)ping.send(static_cast<int>(i));
      benchmark::DoNotOptimize(pong.receive());
    }
    echo->join();
  });
}

// The ping-pong, 500,000 round trips per run. Items: hand-offs (two per round trip). arg 0: fifo;
// arg 1: random, every decision recorded.
void BM_ChannelPingPong(benchmark::State& state) {
  const std::int64_t n = 500'000;
  const bubble::Options options = bench_options(state.range(0) != 0);
  for (auto _ : state) run_ping_pong(options, n);
  state.SetItemsProcessed(state.iterations() * n * 2);
}
BENCHMARK(BM_ChannelPingPong)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The ping-pong under each Options::thread_model, fifo, 20,000 round trips per run. Items:
// hand-offs. arg 0: fibers (the baseline); arg 1: os_threads, where every hand-off is an OS
// context switch between two OS threads.
void BM_ChannelPingPongThreadModel(benchmark::State& state) {
  const std::int64_t n = 20'000;
  bubble::Options options = bench_options(false);
  options.thread_model =
      state.range(0) != 0 ? bubble::ThreadModel::os_threads : bubble::ThreadModel::fibers;
  for (auto _ : state) run_ping_pong(options, n);
  state.SetItemsProcessed(state.iterations() * n * 2);
}
BENCHMARK(BM_ChannelPingPongThreadModel)
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()  // With os_threads the work is on other OS threads than the benchmark's.
    ->Unit(benchmark::kMillisecond);

// The engine alone: two threads hand a token back and forth with park/unpark.
void BM_ParkUnparkPingPong(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  const std::int64_t n = 1'000'000;
  for (auto _ : state) {
    bubble::run(bench_options(random), [n](Runtime& rt) {
      bubble::Waiter* parked[2] = {nullptr, nullptr};
      int turn = 0;
      auto player = [&](int me) {
        for (std::int64_t i = 0; i < n; ++i) {
          while (turn != me) {
            bubble::Waiter w;
            rt.prepare(w);
            parked[me] = &w;
            rt.park(w, bubble::kNoDeadline, {"token", 0, {}});
            parked[me] = nullptr;
          }
          turn = 1 - me;
          if (bubble::Waiter* other = parked[1 - me]) rt.unpark(*other);
        }
      };
      auto a = rt.spawn("a", [&] { player(0); });
      auto b = rt.spawn("b", [&] { player(1); });
      a->join();
      b->join();
    });
  }
  state.SetItemsProcessed(state.iterations() * n * 2);
}
BENCHMARK(BM_ParkUnparkPingPong)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Timer throughput: one thread sleeps 1ns n times (each sleep: a timer, a jump of the clock, a
// fire, a wake-up, two context switches). Items: timer fires.
void BM_SleepLoop(benchmark::State& state) {
  const std::int64_t n = 1'000'000;
  for (auto _ : state) {
    bubble::run(bench_options(true), [n](Runtime& rt) {
      for (std::int64_t i = 0; i < n; ++i) rt.sleep_for(1ns);
    });
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_SleepLoop)->Unit(benchmark::kMillisecond);

// n timer callbacks scheduled at random microseconds of one second, then fired (random order
// among timers due at the same instant). Items: timers scheduled and fired. arg: n, i.e. how many
// are pending at once (a million pending timers no longer fit in the caches).
void BM_TimerCallbacks(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  for (auto _ : state) {
    bubble::run(bench_options(true), [n](Runtime& rt) {
      std::mt19937_64 gen(7);
      std::int64_t fired = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        rt.schedule_at(rt.now() + std::chrono::microseconds(gen() % 1'000'000),
                       [&fired] { ++fired; });
      }
      rt.sleep_for(2s);
      benchmark::DoNotOptimize(fired);
    });
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_TimerCallbacks)
    ->Arg(1'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMicrosecond);

// 10,000 threads each sleeping a random duration (goal: < 1 s per run).
void BM_TenThousandSleepers(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  for (auto _ : state) {
    bubble::run(bench_options(random), [](Runtime& rt) {
      std::mt19937_64 gen(3);
      std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
      threads.reserve(10'000);
      for (int i = 0; i < 10'000; ++i) {
        const auto d = std::chrono::milliseconds(gen() % 60'000);
        threads.push_back(rt.spawn("sleeper", [&rt, d] { rt.sleep_for(d); }));
      }
      for (auto& t : threads) t->join();
    });
  }
}
BENCHMARK(BM_TenThousandSleepers)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// A trivial run: spawn 2 threads that each do 10 mutex lock/unlock pairs. Items: runs.
void BM_TrivialRun(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  std::uint64_t seed = 0;
  for (auto _ : state) {
    bubble::Options o = bench_options(random);
    if (random) o.strategy = bubble::Strategy::random(++seed);
    bubble::run(o, [](Runtime& rt) {
      bubble::Mutex mu(rt);
      int counter = 0;
      auto body = [&] {
        for (int i = 0; i < 10; ++i) {
          std::lock_guard lock(mu);
          ++counter;
        }
      };
      auto a = rt.spawn("a", body);
      auto b = rt.spawn("b", body);
      a->join();
      b->join();
      benchmark::DoNotOptimize(counter);
    });
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TrivialRun)->Arg(0)->Arg(1);

}  // namespace
