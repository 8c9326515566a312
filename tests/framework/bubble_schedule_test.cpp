// Scheduling strategies, recorded schedules, replay, determinism and traces.

#include <bubble/bubble.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;
using bubble::Strategy;

// Three threads append their name at each of three scheduling points; the log is the
// interleaving.
std::string interleaving(const bubble::Options& options, bubble::RunResult* out = nullptr) {
  std::string log;
  bubble::RunResult r = bubble::run(options, [&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    for (char c : std::string("abc")) {
      threads.push_back(rt.spawn(std::string(1, c), [&rt, &log, c] {
        for (int i = 0; i < 3; ++i) {
          log += c;
          rt.schedule_point({"step", 0, {}});
        }
      }));
    }
    for (auto& t : threads) t->join();
  });
  if (out != nullptr) *out = std::move(r);
  return log;
}

// Point 9: fifo never preempts; threads run in spawn order.
TEST(BubbleStrategy, FifoDoesNotPreempt) {
  bubble::RunResult r;
  EXPECT_EQ(interleaving({}, &r), "aaabbbccc");
  EXPECT_TRUE(r.schedule.picks.empty());
  EXPECT_EQ(r.replay_line(), "replay: BUBBLE_STRATEGY=fifo");
}

// Point 9: choices consumes one pick per decision (modulo the candidates), then acts as fifo.
TEST(BubbleStrategy, ChoicesPicksThenFallsBackToFifo) {
  // First decision with several candidates: root spawning b ([root, a] -> keep root). Give a
  // schedule that preempts at once and see it differ from fifo.
  const std::string fifo = interleaving({});
  std::set<std::string> seen;
  for (std::uint32_t p = 0; p < 6; ++p) {
    seen.insert(interleaving({.strategy = Strategy::choices({p, p, p, p, p, p})}));
  }
  EXPECT_GT(seen.size(), 1u);
  EXPECT_EQ(interleaving({.strategy = Strategy::choices({})}), fifo);
  EXPECT_EQ(interleaving({.strategy = Strategy::choices({0, 0, 0})}), fifo);
}

// Point 9: every decision is recorded; replaying the schedule reproduces the run exactly.
TEST(BubbleStrategy, ReplayReproducesRandomAndPctRuns) {
  for (const Strategy& s : {Strategy::random(1), Strategy::random(2), Strategy::pct(3, 2, 50),
                            Strategy::pct(4, 3, 50)}) {
    bubble::RunResult r;
    const std::string original = interleaving({.strategy = s, .trace = true}, &r);
    EXPECT_GT(r.schedule.decisions, 0u);
    bubble::RunResult replayed;
    EXPECT_EQ(interleaving({.replay = r.schedule, .trace = true}, &replayed), original)
        << s.to_string();
    EXPECT_EQ(replayed.trace_text(), r.trace_text()) << s.to_string();
    EXPECT_EQ(replayed.schedule.picks, r.schedule.picks);
    // The choices strategy with the recorded picks is the same thing.
    EXPECT_EQ(interleaving({.strategy = r.schedule.to_strategy()}), original);
  }
}

// Point 10: the same seed gives the same run, byte for byte; different seeds explore different
// interleavings.
TEST(BubbleStrategy, SameSeedSameTraceDifferentSeedsDiffer) {
  std::set<std::string> interleavings;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    bubble::RunResult a, b;
    const std::string la = interleaving({.strategy = Strategy::random(seed), .trace = true}, &a);
    const std::string lb = interleaving({.strategy = Strategy::random(seed), .trace = true}, &b);
    EXPECT_EQ(la, lb);
    EXPECT_EQ(a.trace_text(), b.trace_text());
    EXPECT_FALSE(a.trace_text().empty());
    interleavings.insert(la);
  }
  EXPECT_GE(interleavings.size(), 5u);
}

// Escapes every POSIX extended regex metacharacter of `text`.
std::string regex_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string traced_run_text() {
  bubble::RunResult r;
  interleaving({.strategy = Strategy::random(11), .trace = true}, &r);
  return r.trace_text();
}

// Point 10: the trace is byte-identical in another process (a fresh process, with its own
// address-space layout: nothing in the trace may depend on pointers).
TEST(BubbleStrategyDeathTest, TraceIsIdenticalAcrossProcesses) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // Re-executes the test binary.
  const std::string expected = traced_run_text();
  ASSERT_GT(expected.size(), 100u);
  EXPECT_EXIT(
      {
        const std::string text = traced_run_text();
        std::fprintf(stderr, "BEGIN\n%sEND\n", text.c_str());
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "BEGIN\n" + regex_escape(expected) + "END");
}

// Point 3: timers due at the same instant fire in creation order under fifo, in seeded orders
// otherwise (and the order is replayable).
TEST(BubbleStrategy, SameInstantTimerOrderIsDrawnFromTheSeed) {
  auto order = [](const bubble::Options& o, bubble::RunResult* out) {
    std::string log;
    *out = bubble::run(o, [&](Runtime& rt) {
      for (char c : std::string("wxyz")) {
        rt.schedule_at(rt.now() + 1s, [&log, c] { log += c; });
      }
      rt.sleep_for(2s);
    });
    return log;
  };
  bubble::RunResult r;
  EXPECT_EQ(order({}, &r), "wxyz");
  std::set<std::string> orders;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const std::string o = order({.strategy = Strategy::random(seed)}, &r);
    bubble::RunResult again;
    EXPECT_EQ(order({.replay = r.schedule}, &again), o);
    orders.insert(o);
  }
  EXPECT_GE(orders.size(), 5u);
}

// PCT with depth 1 never preempts a running thread that keeps running (highest priority first).
TEST(BubbleStrategy, PctRunsTheHighestPriorityThread) {
  std::set<std::string> firsts;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const std::string log = interleaving({.strategy = Strategy::pct(seed, 1)});
    // Depth 1: no change points, so once a thread runs it is only switched away from by a
    // higher-priority thread becoming runnable; each thread's steps stay in order.
    EXPECT_EQ(log.size(), 9u);
    firsts.insert(log.substr(0, 1));
  }
  EXPECT_GE(firsts.size(), 2u);
}

TEST(BubbleStrategy, TextualFormRoundTrips) {
  for (const char* text :
       {"fifo", "random:42", "pct:7:3", "pct:7:3:500", "choices:0,2,1", "choices:"}) {
    EXPECT_EQ(Strategy::parse(text).to_string(), text);
  }
  EXPECT_EQ(Strategy::parse(" random:9 "), Strategy::random(9));
  EXPECT_EQ(Strategy::parse("choices:1, 2,3"), Strategy::choices({1, 2, 3}));
  for (const char* bad :
       {"", "lifo", "random", "random:x", "pct:1", "pct:1:0", "choices:a", "fifo:1", "random:-1"}) {
    EXPECT_THROW(Strategy::parse(bad), std::invalid_argument) << bad;
  }
  EXPECT_THROW(Strategy::pct(1, 0), std::invalid_argument);
  EXPECT_EQ(bubble::Schedule::parse("3,0,2,0,0").picks, (std::vector<std::uint32_t>{3, 0, 2}));
  EXPECT_EQ(bubble::Schedule::parse("").to_string(), "");
  EXPECT_THROW(bubble::Schedule::parse("1,,2"), std::invalid_argument);
}

// The replay line of a failure reproduces it: a seeded strategy names its seed; a choices run
// names the picks it recorded.
TEST(BubbleStrategy, FailureReplayLineReproducesTheFailure) {
  auto racy = [](Runtime& rt) {
    int shared = 0;
    auto inc = [&] {
      const int v = shared;
      rt.schedule_point({"read", 0, {}});
      shared = v + 1;
    };
    auto a = rt.spawn("a", inc);
    auto b = rt.spawn("b", inc);
    a->join();
    b->join();
    if (shared != 2) throw std::runtime_error("lost update");
  };
  std::string line;
  for (std::uint64_t seed = 0; seed < 50 && line.empty(); ++seed) {
    try {
      bubble::run({.strategy = Strategy::random(seed), .replay_command = "./t"}, racy);
    } catch (const bubble::RunFailure& e) {
      const std::string m = e.what();
      line = m.substr(m.rfind('\n') + 1);
      EXPECT_EQ(line, "replay: BUBBLE_STRATEGY=random:" + std::to_string(seed) + " ./t");
      // Both the seed and the recorded schedule reproduce it.
      EXPECT_THROW(bubble::run({.strategy = Strategy::random(seed)}, racy), bubble::RunFailure);
      EXPECT_THROW(bubble::run({.replay = e.schedule()}, racy), bubble::RunFailure);
      try {
        bubble::run({.strategy = e.schedule().to_strategy()}, racy);
      } catch (const bubble::RunFailure& again) {
        const std::string m2 = again.what();
        EXPECT_EQ(m2.substr(m2.rfind('\n') + 1),
                  "replay: BUBBLE_STRATEGY=choices:" + e.schedule().to_string());
      }
    }
  }
  EXPECT_FALSE(line.empty()) << "no seed in 50 found the lost update";
}

// PCT with depth 2 finds a lost update (a bug of depth 2) that fifo never shows.
TEST(BubbleStrategy, PctFindsADepthTwoBug) {
  auto lost_update = [](const bubble::Options& o) {
    int shared = 0;
    bubble::run(o, [&](Runtime& rt) {
      auto inc = [&] {
        const int v = shared;
        rt.schedule_point({"read", 0, {}});
        shared = v + 1;
      };
      auto a = rt.spawn("a", inc);
      auto b = rt.spawn("b", inc);
      a->join();
      b->join();
    });
    return shared != 2;
  };
  EXPECT_FALSE(lost_update({}));
  int found = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    found += lost_update({.strategy = Strategy::pct(seed, 2, 10)}) ? 1 : 0;
  }
  // Probability per run >= 1 / (n * k) = 1 / 30; in practice much higher.
  EXPECT_GE(found, 3);
}

// Point 12: the text trace has virtual time, thread, event, object and location; stable.
TEST(BubbleTrace, TextHasTimeThreadKindObjectAndLocation) {
  const bubble::RunResult r = bubble::run({.trace = true}, [](Runtime& rt) {
    auto h = rt.spawn("worker", [&] {
      bubble::Waiter w;
      rt.prepare(w);
      rt.park(w, rt.now() + 1500ms, {"Thing::wait", 5, bubble::SourceLocation::current()});
    });
    h->join();
  });
  const std::string text = r.trace_text();
  EXPECT_NE(text.find("0s #1 root spawn worker #2 "), std::string::npos) << text;
  EXPECT_NE(text.find("0s #2 worker block Thing::wait #5 "), std::string::npos) << text;
  EXPECT_NE(text.find("bubble_schedule_test.cpp:"), std::string::npos) << text;
  EXPECT_NE(text.find("1.5s #0 scheduler advance"), std::string::npos) << text;
  EXPECT_NE(text.find("1.5s #2 worker timeout Thing::wait #5"), std::string::npos) << text;
  EXPECT_NE(text.find("1.5s #2 worker exit"), std::string::npos) << text;
  EXPECT_EQ(text.find("0x"), std::string::npos) << "no pointers in traces";
}

// Point 12: Chrome trace JSON: a named track per thread, blocked spans as complete slices.
TEST(BubbleTrace, ChromeJsonHasTracksAndBlockedSlices) {
  const bubble::RunResult r = bubble::run({.trace = true}, [](Runtime& rt) {
    auto h = rt.spawn("sleeper \"quoted\"", [&] { rt.sleep_for(2ms); });
    h->join();
  });
  const std::string json = r.trace_json();
  EXPECT_EQ(json.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0), 0u);
  EXPECT_NE(json.find("\"name\":\"thread_name\",\"args\":{\"name\":\"root #1\"}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("sleeper \\\"quoted\\\" #2"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":0,\"dur\":2000,\"name\":\"sleep\""),
            std::string::npos)
      << json;
  EXPECT_EQ(json.substr(json.size() - 4), "\n]}\n");
}

// Every event stays on one line of the text form, whatever the names contain.
TEST(BubbleTrace, TextEscapesControlCharacters) {
  const bubble::RunResult r =
      bubble::run({.trace = true}, [](Runtime& rt) { rt.spawn("two\nlines\\", [] {})->join(); });
  const std::string text = r.trace_text();
  EXPECT_NE(text.find("#2 two\\nlines\\\\ run"), std::string::npos) << text;
  EXPECT_EQ(text.find("two\nlines"), std::string::npos) << text;
  EXPECT_EQ(text.rfind("0s #0 scheduler spawn root #1\n", 0), 0u) << text;
}

TEST(BubbleTrace, OffByDefault) {
  const bubble::RunResult r = bubble::run([](Runtime& rt) { rt.sleep_for(1s); });
  EXPECT_TRUE(r.trace.empty());
  EXPECT_EQ(r.steps, 3u);  // The sleep's park, its deadline firing, the root's exit.
}

}  // namespace

// A lost update on a short run (under 32 steps), a bug that needs the one priority change of PCT
// depth 2 to fall between a thread's read and its write. PCT's bound for a bug of depth 2 is
// 1 / (n * k) per run, n threads (3, with the root) and k the estimate: the adaptive estimate
// (pct(seed, 2)) ends at k <= 32 on such a run, so it finds the bug in at least 1 run in 96; the
// old fixed estimate of 1000 steps (pct(seed, 2, 1000)) puts the change point after the run's end
// in at least 968 runs out of 1000. Measured: 61 of 1000 seeds against 0.
TEST(BubbleStrategy, AdaptivePctFindsAShortRunsBugInFarMoreSeedsThanAFixedEstimate) {
  auto lost_update = [](const Strategy& s, std::uint64_t* steps = nullptr) {
    int shared = 0;
    const bubble::RunResult r = bubble::run({.strategy = s}, [&](Runtime& rt) {
      auto inc = [&] {
        for (int i = 0; i < 4; ++i) rt.schedule_point({"work", 0, {}});
        const int v = shared;
        rt.schedule_point({"read", 0, {}});
        shared = v + 1;
      };
      auto a = rt.spawn("a", inc);
      auto b = rt.spawn("b", inc);
      a->join();
      b->join();
    });
    if (steps != nullptr) *steps = r.steps;
    return shared != 2;
  };
  std::uint64_t steps = 0;
  EXPECT_FALSE(lost_update(Strategy::fifo(), &steps));
  EXPECT_LT(steps, Strategy::kAdaptivePctFirstSteps * 2) << "the run is meant to be short";
  int adaptive = 0;
  int fixed = 0;
  constexpr int kSeeds = 1000;
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    adaptive += lost_update(Strategy::pct(seed, 2)) ? 1 : 0;
    fixed += lost_update(Strategy::pct(seed, 2, Strategy::kDefaultPctSteps)) ? 1 : 0;
  }
  std::printf("lost update found in %d of %d seeds with the adaptive estimate, %d with 1000\n",
              adaptive, kSeeds, fixed);
  EXPECT_GE(adaptive, kSeeds / 96);
  EXPECT_GE(adaptive, 10 * std::max(fixed, 1));
}

// The adaptive estimate is part of the strategy: its text has no estimate, parses back to an
// adaptive strategy, and replays the same run; an explicit estimate, even 1000, stays explicit.
TEST(BubbleStrategy, AdaptivePctRoundTripsAndReplays) {
  EXPECT_TRUE(Strategy::pct(5, 3).adaptive_steps());
  EXPECT_EQ(Strategy::pct(5, 3).to_string(), "pct:5:3");
  EXPECT_EQ(Strategy::parse("pct:5:3"), Strategy::pct(5, 3));
  EXPECT_FALSE(Strategy::pct(5, 3, 1000).adaptive_steps());
  EXPECT_EQ(Strategy::pct(5, 3, 1000).to_string(), "pct:5:3:1000");
  EXPECT_EQ(Strategy::parse("pct:5:3:1000"), Strategy::pct(5, 3, 1000));
  EXPECT_NE(Strategy::pct(5, 3), Strategy::pct(5, 3, 1000));
  EXPECT_EQ(Strategy::pct(5, 3).steps(), Strategy::kDefaultPctSteps);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    bubble::RunResult first;
    const std::string log = interleaving({.strategy = Strategy::pct(seed, 3)}, &first);
    bubble::RunResult again;
    EXPECT_EQ(interleaving({.strategy = Strategy::parse(first.strategy.to_string())}, &again), log);
    EXPECT_EQ(again.schedule.picks, first.schedule.picks);
  }
}

// Property: the adaptive estimate keeps up with a long run. Its change points are not all spent
// within the first estimate: each is drawn again, half the time, in every doubling's new half. On
// a two-thread run of some 400 steps, where PCT depth 2 runs one thread until a change point
// drops its priority, a preemption comes after the 8th time the first estimate (step 128) in
// about half of the seeds (measured: 42 of 100).
TEST(BubbleStrategy, AdaptivePctPreemptsLateInALongRun) {
  constexpr int kOps = 200;
  int late = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    std::string log;
    bubble::run({.strategy = Strategy::pct(seed, 2)}, [&](Runtime& rt) {
      auto body = [&](char c) {
        for (int i = 0; i < kOps; ++i) {
          log += c;
          rt.schedule_point({"op", 0, {}});
        }
      };
      auto a = rt.spawn("a", [&] { body('a'); });
      auto b = rt.spawn("b", [&] { body('b'); });
      a->join();
      b->join();
    });
    // A preemption: the letter changes while the thread that stopped still had work left.
    int done_a = 0;
    int done_b = 0;
    std::size_t last_preemption = 0;
    for (std::size_t i = 0; i < log.size(); ++i) {
      if (i > 0 && log[i] != log[i - 1] && (log[i - 1] == 'a' ? done_a : done_b) < kOps) {
        last_preemption = i;
      }
      ++(log[i] == 'a' ? done_a : done_b);
    }
    if (last_preemption > 8 * Strategy::kAdaptivePctFirstSteps) ++late;
  }
  std::printf("a preemption after step %llu in %d of 100 seeds\n",
              static_cast<unsigned long long>(8 * Strategy::kAdaptivePctFirstSteps), late);
  EXPECT_GE(late, 25);
}

// A thread that blocks while exactly one other thread is runnable and a timer is due: the due
// timer fires first, then the runnable thread runs, under every strategy (the engine's direct
// hand-off to the only runnable thread must not overtake a due timer). Neither schedule_at,
// unpark nor park is a scheduling point before the park blocks, so nothing else can fire the timer.
TEST(BubbleStrategy, ADueTimerFiresBeforeTheOnlyRunnableThreadWhenAThreadBlocks) {
  for (const char* strategy : {"fifo", "random:1", "random:2", "pct:1:2"}) {
    SCOPED_TRACE(strategy);
    bubble::Options options;
    options.strategy = Strategy::parse(strategy);
    bool fired = false;
    bool fired_when_other_ran = false;
    bubble::run(options, [&](Runtime& rt) {
      bubble::Waiter root_waiter;
      bubble::Waiter other_waiter;
      bool other_waiting = false;
      rt.prepare(root_waiter);
      auto other = rt.spawn("other", [&] {
        rt.prepare(other_waiter);
        other_waiting = true;
        rt.park(other_waiter, bubble::kNoDeadline, {"test::other", 0, {}});
        fired_when_other_ran = fired;
        rt.unpark(root_waiter);
      });
      while (!other_waiting) rt.yield();
      rt.schedule_at(rt.now(), [&] { fired = true; });  // Due at once.
      rt.unpark(other_waiter);                          // The only runnable thread.
      EXPECT_EQ(rt.park(root_waiter, bubble::kNoDeadline, {"test::root", 0, {}}),
                bubble::ParkResult::notified);
      other->join();
    });
    EXPECT_TRUE(fired);
    EXPECT_TRUE(fired_when_other_ran);
  }
}
