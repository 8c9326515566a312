// A channel ping-pong written as a user would write it in their own program: its own translation
// unit, only public headers, default run options (the watchdog and the step budget on) but for
// the strategy. tools/bench/handoff_vs_go.sh runs it alternately with bubble_bench's ping-pong and
// with Go's goroutine hand-off (tools/bench/go/handoff.go); docs/PERFORMANCE.md has the figures.
//
// Items: hand-offs (a round trip is two); items_per_second is per second of CPU time.
// arg 0: fifo; arg 1: random (every decision recorded).

#include <benchmark/benchmark.h>

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>

#include <cstdint>

namespace {

constexpr std::int64_t kRounds = 500'000;

void BM_UserChannelPingPong(benchmark::State& state) {
  bubble::Options options;
  options.strategy = state.range(0) != 0 ? bubble::Strategy::random(1) : bubble::Strategy::fifo();
  for (auto _ : state) {
    bubble::run(options, [](bubble::Runtime& rt) {
      bubble::Channel<int> ping(0, rt);
      bubble::Channel<int> pong(0, rt);
      auto echo = rt.spawn("echo", [&] {
        for (std::int64_t i = 0; i < kRounds; ++i) {
          auto v = ping.receive();
          if (!v || pong.send(*v)) return;
        }
      });
      std::int64_t sum = 0;
      for (std::int64_t i = 0; i < kRounds; ++i) {
        if (ping.send(static_cast<int>(i))) break;
        auto v = pong.receive();
        if (!v) break;
        sum += *v;
      }
      benchmark::DoNotOptimize(sum);
      echo->join();
    });
  }
  const double handoffs = static_cast<double>(state.iterations()) * 2.0 * kRounds;
  state.SetItemsProcessed(static_cast<std::int64_t>(handoffs));
}
BENCHMARK(BM_UserChannelPingPong)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
