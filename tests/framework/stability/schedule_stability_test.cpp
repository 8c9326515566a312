// Schedule stability: the engine makes the same decisions, at the same steps and virtual times,
// with the same trace, as the build the golden digests were recorded with. A seed or a saved
// schedule is what a user keeps to reproduce a failure, so a change of the engine that moves a
// decision (an optimisation of the hand-off, a scheduling point added or dropped) must be a
// deliberate one: this test fails on it and names the program and the strategy.
//
// Seven small programs (a ping-pong, a pipeline that ends in close, select, mutex contention
// with yields, sleeps with timed receives, a deadlock, per-thread random streams) each run under
// 156 strategies (fifo; random:1-60; pct with and without a step estimate; replayed choices
// lists), once without a trace (the engine's fast paths) and once with one (the trace text). Each
// run is reduced to a 64-bit FNV-1a digest of what it printed, its result or failure message,
// its steps, virtual time, timers fired, recorded schedule and decision count, with source
// locations removed (they depend on paths and line numbers, not on the engine).
//
// After an intended change of the schedules, regenerate the digests:
//   (cd build/release/tests/framework &&
//    BUBBLE_PRINT_SCHEDULE_DIGESTS=1 ./framework_schedule_stability_tests | grep '^{') >
//     tests/framework/stability/schedule_digests.inc
// and say in the change that seeds and saved schedules of earlier versions replay differently.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/mutex.hpp>
#include <bubble/random.hpp>
#include <bubble/select.hpp>
#include <bubble/thread.hpp>

namespace {

using namespace std::chrono_literals;
using bubble::Channel;
using bubble::Runtime;

struct RecordedDigest {
  const char* program;
  const char* strategy;
  std::uint64_t untraced;
  std::uint64_t traced;
};

constexpr RecordedDigest kRecorded[] = {
#include "schedule_digests.inc"
};

// What a program prints, to be digested with its run's result.
std::string printed;

// Halfway, a timer due at once: it fires before the next thread runs, however the sender's
// block hands over.
void pingpong(Runtime& rt) {
  Channel<int> ping(0, rt);
  Channel<int> pong(0, rt);
  int echoed = 0;
  auto echo = rt.spawn("echo", [&] {
    for (int i = 0; i < 40; ++i) {
      auto v = ping.receive();
      ++echoed;
      if (!v || pong.send(*v)) return;
    }
  });
  long sum = 0;
  for (int i = 0; i < 40; ++i) {
    if (i == 20) {
      rt.schedule_at(rt.now(), [&] { printed += "timer after " + std::to_string(echoed) + "; "; });
    }
    if (ping.send(i)) break;
    auto v = pong.receive();
    if (!v) break;
    sum += *v;
  }
  echo->join();
  printed += "sum " + std::to_string(sum);
}

void pipeline(Runtime& rt) {
  Channel<int> a(0, rt);
  Channel<int> b(1, rt);
  Channel<int> c(0, rt);
  auto source = rt.spawn("source", [&] {
    for (int i = 0; i < 20; ++i) (void)a.send(i);
    a.close();
  });
  auto doubler = rt.spawn("doubler", [&] {
    while (auto v = a.receive()) (void)b.send(*v * 2);
    b.close();
  });
  auto adder = rt.spawn("adder", [&] {
    while (auto v = b.receive()) (void)c.send(*v + 1);
    c.close();
  });
  std::uint64_t hash = 0;  // Wraps around.
  while (auto v = c.receive()) hash = hash * 31 + static_cast<std::uint64_t>(*v);
  source->join();
  doubler->join();
  adder->join();
  printed += "hash " + std::to_string(hash);
}

void selects(Runtime& rt) {
  Channel<int> a(0, rt);
  Channel<int> b(0, rt);
  auto sa = rt.spawn("sa", [&] {
    for (int i = 0; i < 15; ++i) (void)a.send(i);
  });
  auto sb = rt.spawn("sb", [&] {
    for (int i = 0; i < 15; ++i) (void)b.send(100 + i);
  });
  for (int i = 0; i < 30; ++i) {
    auto s = bubble::select(bubble::recv(a), bubble::recv(b));
    printed += s.index() == 0 ? "a" + std::to_string(s.get<0>().value())
                              : "b" + std::to_string(s.get<1>().value());
  }
  sa->join();
  sb->join();
}

void mutexes(Runtime& rt) {
  bubble::Mutex m(rt);
  int counter = 0;
  std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
  for (int k = 0; k < 4; ++k) {
    threads.push_back(rt.spawn("m" + std::to_string(k), [&, k] {
      for (int i = 0; i < 10; ++i) {
        std::lock_guard lock(m);
        const int seen = counter;
        rt.yield();
        counter = seen + 1;
        printed += static_cast<char>('0' + k);
      }
    }));
  }
  for (auto& t : threads) t->join();
  printed += " counter " + std::to_string(counter);
}

void timers(Runtime& rt) {
  Channel<int> ch(2, rt);
  std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
  for (int k = 0; k < 4; ++k) {
    threads.push_back(rt.spawn("s" + std::to_string(k), [&, k] {
      for (int i = 0; i < 5; ++i) {
        rt.sleep_for(std::chrono::milliseconds(1 + (k * 3 + i) % 4));
        (void)ch.send(k * 10 + i);
      }
    }));
  }
  auto receiver = rt.spawn("receiver", [&] {
    for (int i = 0; i < 20; ++i) {
      auto v = ch.receive_until(rt.now() + 2ms);
      printed += v ? std::to_string(*v) + "," : "timeout,";
    }
  });
  for (auto& t : threads) t->join();
  receiver->join();
}

void deadlock(Runtime& rt) {
  Channel<int> a(0, rt);
  Channel<int> b(0, rt);
  auto t = rt.spawn("d", [&] {
    (void)a.receive();
    (void)b.send(1);
  });
  (void)a.send(1);
  (void)b.receive();
  (void)a.send(2);  // Nobody receives: a deadlock.
  t->join();
}

void randoms(Runtime& rt) {
  Channel<std::uint64_t> ch(0, rt);
  auto t = rt.spawn("r", [&] {
    for (int i = 0; i < 10; ++i) (void)ch.send(bubble::random()());
  });
  std::uint64_t x = 0;
  for (int i = 0; i < 10; ++i) x ^= ch.receive().value();
  t->join();
  printed += "xor " + std::to_string(x);
}

const std::vector<std::pair<std::string, std::function<void(Runtime&)>>>& programs() {
  static const std::vector<std::pair<std::string, std::function<void(Runtime&)>>> all = {
      {"pingpong", pingpong}, {"pipeline", pipeline}, {"select", selects}, {"mutex", mutexes},
      {"timers", timers},     {"deadlock", deadlock}, {"randoms", randoms}};
  return all;
}

std::vector<std::string> strategies() {
  std::vector<std::string> out = {"fifo",
                                  "choices:",
                                  "choices:1",
                                  "choices:0,1,1,0,2",
                                  "choices:1,1,1,1,1,1,1,1",
                                  "choices:3,0,2,1,0,0,5"};
  for (int s = 1; s <= 60; ++s) out.push_back("random:" + std::to_string(s));
  for (int s = 1; s <= 30; ++s) {
    out.push_back("pct:" + std::to_string(s) + ":" + std::to_string(1 + s % 4));
  }
  for (int s = 1; s <= 30; ++s) {
    out.push_back("pct:" + std::to_string(s) + ":" + std::to_string(1 + s % 3) + ":" +
                  std::to_string(50 + 37 * s));
  }
  for (int s = 1; s <= 30; ++s) {
    std::string c = "choices:";
    for (int i = 0; i < 40; ++i) {
      if (i != 0) c += ",";
      c += std::to_string((s * 7 + i * i * 3) % (1 + s % 4));
    }
    out.push_back(c);
  }
  return out;
}

// Source locations (`../../tests/x.cpp:12`, `/usr/include/c++/12/bits/unique_lock.h:139`) say
// where, not what the engine decided: they are left out of the digests.
std::string without_locations(const std::string& text) {
  static const std::regex location(R"re([^\s()"]*\.(cpp|hpp|h)(:\d+)?|/usr/include/[^\s()"]*)re");
  return std::regex_replace(text, location, "<location>");
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// Everything one run shows of its schedule, as text.
std::string run_text(const std::function<void(Runtime&)>& program, const std::string& strategy,
                     bool trace) {
  printed.clear();
  bubble::Options options;
  options.strategy = bubble::Strategy::parse(strategy);
  options.trace = trace;
  std::string text;
  try {
    const bubble::RunResult r = bubble::run(options, program);
    text = "ok steps=" + std::to_string(r.steps) + " elapsed=" + std::to_string(r.elapsed.count()) +
           " fired=" + std::to_string(r.timers_fired) + "\nschedule " + r.schedule.to_string() +
           " decisions=" + std::to_string(r.schedule.decisions) + "\n" + r.replay_line() + "\n" +
           (trace ? r.trace_text() : "");
  } catch (const bubble::RunFailure& f) {
    text = std::string("failed ") + f.what() + "\nschedule " + f.schedule().to_string() +
           " decisions=" + std::to_string(f.schedule().decisions) + "\n" +
           (trace ? f.trace().text() : "");
  }
  return printed + "\n" + without_locations(text);
}

TEST(ScheduleStability, EveryStrategyMakesTheDecisionsRecordedForIt) {
  const bool print = std::getenv("BUBBLE_PRINT_SCHEDULE_DIGESTS") != nullptr;
  const std::vector<std::string> all_strategies = strategies();
  std::size_t index = 0;
  std::size_t differing = 0;
  for (const auto& [name, program] : programs()) {
    for (const std::string& strategy : all_strategies) {
      const std::uint64_t untraced = fnv1a(run_text(program, strategy, false));
      const std::uint64_t traced = fnv1a(run_text(program, strategy, true));
      if (print) {
        std::printf("{\"%s\", \"%s\", 0x%016llxULL, 0x%016llxULL},\n", name.c_str(),
                    strategy.c_str(), static_cast<unsigned long long>(untraced),
                    static_cast<unsigned long long>(traced));
        continue;
      }
      ASSERT_LT(index, std::size(kRecorded)) << "more runs than recorded digests";
      const RecordedDigest& recorded = kRecorded[index++];
      ASSERT_EQ(name, recorded.program);
      ASSERT_EQ(strategy, recorded.strategy);
      if (untraced != recorded.untraced || traced != recorded.traced) {
        ++differing;
        // The first few in full, so that the change can be read.
        if (differing <= 3) {
          ADD_FAILURE() << name << " under " << strategy << " no longer runs as recorded ("
                        << (untraced != recorded.untraced ? "untraced" : "") << " "
                        << (traced != recorded.traced ? "traced" : "")
                        << "); the traced run now reads:\n"
                        << run_text(program, strategy, true);
        }
      }
    }
  }
  if (!print) {
    EXPECT_EQ(index, std::size(kRecorded)) << "fewer runs than recorded digests";
    EXPECT_EQ(differing, 0u) << "runs that no longer make the recorded decisions";
  }
}

}  // namespace
