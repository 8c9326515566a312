// Simulation speed: `bubble sim`'s engine (bubble::sim::simulate) against a baseline in the same
// run, the bare minimum the same simulation needs: a generator thread in a bubble submitting, at
// 128 jobs per virtual second, jobs that sleep 100 ms on a 16-worker pool, without draws,
// statistics, series or on_complete callbacks. Items are simulated jobs; items_per_second is per
// second of CPU time: a bubble runs on one OS thread, so that is jobs per second of one core, and
// it stays meaningful on a loaded machine, where wall time measures the queue for the CPU.
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUBBLE_BUILD_BENCHMARKS=ON
//   cmake --build build/bench --target sim_bench && build/bench/tools/bench/sim_bench

#include <chrono>
#include <cstdlib>

#include <benchmark/benchmark.h>

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/sim/engine.hpp>

namespace {

using namespace std::chrono_literals;

// The simulated hour of docs/SIMULATIONS.md: 16 workers, exponential 100 ms jobs, Poisson
// arrivals at 128/s (80% load).
void BM_SimulateHour16Workers(benchmark::State& state) {
  bubble::sim::SimConfig c;
  c.workers = 16;
  c.job_time = {bubble::sim::JobTimeKind::exponential, 100ms};
  c.arrivals = {bubble::sim::ArrivalKind::poisson, 128};
  c.duration = std::chrono::hours{1};
  std::uint64_t jobs = 0;
  for (auto _ : state) {
    const auto r = bubble::sim::simulate(c);
    jobs += r.jobs_simulated;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(jobs));
}

// Baseline: the same arrivals (clockwork) and pool, nothing else.
void BM_BareSleepingJobs(benchmark::State& state) {
  constexpr int kJobs = 128 * 3600;
  for (auto _ : state) {
    bubble::run({.max_steps = 0}, [](bubble::Runtime& rt) {
      bubble::Pool pool({.workers = 16, .queue_capacity = 1 << 20, .name = "bare"}, rt);
      const auto gap = std::chrono::nanoseconds{1'000'000'000 / 128};
      for (int i = 0; i < kJobs; ++i) {
        rt.sleep_for(gap);
        if (pool.try_submit(bubble::Context::background(), [&rt] { rt.sleep_for(100ms); })) {
          std::abort();
        }
      }
      if (pool.shutdown()) std::abort();
    });
  }
  state.SetItemsProcessed(state.iterations() * kJobs);
}

BENCHMARK(BM_BareSleepingJobs)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_SimulateHour16Workers)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
