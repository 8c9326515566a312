// What call stacks in failure reports cost (Options::symbolize_stacks): capturing a stack at every
// block, measured on a channel ping-pong against the same ping-pong without capture in the same
// run; and symbolizing the stacks of a failure report, against the same report without stacks.

#include <benchmark/benchmark.h>

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/mutex.hpp>
#include <bubble/testing/stacks.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

// A symbolizer that is never called on a passing run: only capture is measured.
const bubble::StackSymbolizer kUnused = [](const std::vector<const void*>& a) {
  return std::vector<bubble::StackFrame>(a.size());
};

bubble::Options options(bool stacks) {
  bubble::Options o;
  o.max_steps = 0;
  o.watchdog = std::chrono::milliseconds{0};
  if (stacks) o.symbolize_stacks = kUnused;
  return o;
}

// Two bubble threads ping-pong over two unbuffered channels, 100,000 round trips per run; every
// receive blocks. Items: hand-offs. arg 0: no capture (the baseline); arg 1: a stack captured at
// every block.
void BM_PingPongStackCapture(benchmark::State& state) {
  const bool stacks = state.range(0) != 0;
  const std::int64_t n = 100'000;
  for (auto _ : state) {
    bubble::run(options(stacks), [n](Runtime& rt) {
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
  state.SetItemsProcessed(state.iterations() * n * 2);
}
BENCHMARK(BM_PingPongStackCapture)->Arg(0)->Arg(1);

// A lock-order deadlock of two threads, reported: arg 0 without stacks (the baseline), arg 1 with
// stacks symbolized by bubble::testing::stack_symbolizer() (debug information read once, then
// cached by libbacktrace).
void BM_DeadlockReport(benchmark::State& state) {
  bubble::Options o;
  if (state.range(0) != 0) o.symbolize_stacks = bubble::testing::stack_symbolizer();
  for (auto _ : state) {
    try {
      bubble::run(o, [](Runtime& rt) {
        bubble::Mutex a(rt), b(rt);
        auto t = rt.spawn("t", [&] {
          std::lock_guard first(b);
          rt.sleep_for(1s);
          std::lock_guard second(a);
        });
        std::lock_guard first(a);
        rt.sleep_for(1s);
        std::lock_guard second(b);
      });
    } catch (const bubble::DeadlockError& e) {
      benchmark::DoNotOptimize(e.what());
    }
  }
}
BENCHMARK(BM_DeadlockReport)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
