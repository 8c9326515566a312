// Guide: from a failing run to its replay and a trace in Perfetto (docs/GUIDE-REPLAY.md), the
// picture. A lock-protected two-stage pipeline in a bubble, traced: two loaders take turns on a
// shared batch under a Mutex (holding it while they "fetch", a sleep in virtual time), and a
// flusher waits for the mutex, flushes inside a span and notes what it flushed. Writes the
// run's trace as Chrome trace JSON, the file docs/images/trace-pipeline.svg is drawn from.
//   traced_pipeline OUT.json

#include <bubble/bubble.hpp>
#include <bubble/mutex.hpp>
#include <bubble/trace.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: traced_pipeline OUT.json\n");
    return 2;
  }
  const bubble::RunResult r =
      bubble::run({.strategy = bubble::Strategy::random(7),
                   .trace = true,
                   .trace_level = bubble::TraceLevel::blocking_only},
                  [](bubble::Runtime& rt) {
                    bubble::Mutex batch_lock(rt);
                    int batch = 0;
                    auto loader = [&](int items) {
                      for (int round = 0; round < 2; ++round) {
                        auto span = bubble::trace_span("load");
                        std::lock_guard guard(batch_lock);
                        rt.sleep_for(20ms);  // Fetching, with the lock held.
                        batch += items;
                      }
                    };
                    auto a = rt.spawn("loader-a", [&] { loader(10); });
                    auto b = rt.spawn("loader-b", [&] { loader(5); });
                    auto flusher = rt.spawn("flusher", [&] {
                      rt.sleep_for(30ms);
                      auto span = bubble::trace_span("flush");
                      std::lock_guard guard(batch_lock);
                      rt.sleep_for(10ms);  // Writing the batch out.
                      bubble::trace_note("flushed a batch of " + std::to_string(batch));
                      batch = 0;
                    });
                    a->join();
                    b->join();
                    flusher->join();
                  });
  std::ofstream(argv[1]) << r.trace_json();
  std::printf("%s", r.trace_text().c_str());
  return 0;
}
