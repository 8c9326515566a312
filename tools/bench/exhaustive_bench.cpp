// Exhaustive search (ScheduleTree) with partial-order reduction against its baselines, measured
// in the same run and reported as ratios:
//
// - Reduction (BM_Reduction/<program>/<bound>): every schedule of a program within the bound,
//   once by plain bounded enumeration (Reduction::none) and once reduced (Reduction::dpor).
//   Counters: plain_schedules, dpor_schedules, reduction = plain / dpor. Goal: at least 10x on
//   programs whose threads mostly touch different objects (the "own" programs). The "shared"
//   program, whose threads all take one mutex, is the case reduction cannot help; it is here to
//   show that figure too, not to meet the goal. Programs (the first argument, and the label):
//   0 own3x3+atomic (3 threads, 3 sections each on a mutex of their own, and one increment each
//   of an atomic they share), 1 own3x3 (the same without the atomic), 2 own4x2 (4 threads of 2
//   sections on their own mutexes), 3 shared3x2 (3 threads of 2 sections on one mutex). Bounds
//   1 and 2 (the second argument).
// - The same bugs (BM_SameBug/<bound>): a lost update through a shared Atomic's load and store,
//   between sections on the threads' own mutexes, searched both ways. Counter same_bug_found: 1
//   when both searches find the failure (and reach the same outcomes); the row fails when they
//   disagree. Goal: 1, with the reduction counters beside it.
// - Speed (BM_Speed/<body>): runs per second of an exhaustive reduced search (each run logging
//   its decisions and dependencies, and record()'s race analysis) against runs per second of
//   random exploration of the same body (Strategy::random(seed), seeds 1, 2, ..., neither
//   decisions nor dependencies), as many runs of each, timed in CPU time of the benchmark's
//   thread. Counter speed_ratio = exhaustive runs/s / random runs/s. Goal: at least 0.5. Bodies:
//   "small" (3 threads, each two sections on one shared mutex and an atomic increment: about 25
//   scheduling points) and "large" (3 threads of 20 sections each, alternating their own mutex and
//   a shared one: about 120 points; its search is cut at kMaxSpeedRuns runs).

#include <benchmark/benchmark.h>

#include <bubble/atomic.hpp>
#include <bubble/bubble.hpp>
#include <bubble/mutex.hpp>
#include <bubble/schedule_tree.hpp>

#include <time.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Body = std::function<std::string(bubble::Runtime&)>;

// `threads` threads; each takes its own mutex `sections` times, and (with `shared_atomic`)
// increments one atomic that all of them share once, halfway through. Returns the counts.
std::string own_mutexes(bubble::Runtime& rt, int threads, int sections, bool shared_atomic) {
  std::vector<std::unique_ptr<bubble::Mutex>> mutexes;
  std::vector<int> counts(static_cast<std::size_t>(threads), 0);
  bubble::Atomic<int> shared{0};
  for (int i = 0; i < threads; ++i) mutexes.push_back(std::make_unique<bubble::Mutex>(rt));
  std::vector<std::unique_ptr<bubble::ThreadHandle>> handles;
  for (int i = 0; i < threads; ++i) {
    handles.push_back(rt.spawn("worker", [&, i] {
      const auto t = static_cast<std::size_t>(i);
      for (int k = 0; k < sections; ++k) {
        if (shared_atomic && k == sections / 2) shared.fetch_add(1);
        mutexes[t]->lock();
        ++counts[t];
        mutexes[t]->unlock();
      }
    }));
  }
  for (auto& h : handles) h->join();
  std::string out = std::to_string(shared.load());
  for (const int c : counts) out += "," + std::to_string(c);
  return out;
}

// `threads` threads that each take one shared mutex `sections` times.
std::string shared_mutex(bubble::Runtime& rt, int threads, int sections) {
  bubble::Mutex m(rt);
  int count = 0;
  std::vector<std::unique_ptr<bubble::ThreadHandle>> handles;
  for (int i = 0; i < threads; ++i) {
    handles.push_back(rt.spawn("worker", [&] {
      for (int k = 0; k < sections; ++k) {
        m.lock();
        ++count;
        m.unlock();
      }
    }));
  }
  for (auto& h : handles) h->join();
  return std::to_string(count);
}

// Three threads that each take their own mutex twice, then increment a shared Atomic by a load
// and a store (the bug: another thread's increment between them is lost), then take their mutex
// twice more. The run fails when an increment was lost.
std::string lost_update(bubble::Runtime& rt) {
  constexpr int kThreads = 3;
  std::vector<std::unique_ptr<bubble::Mutex>> mutexes;
  bubble::Atomic<int> value{0};
  for (int i = 0; i < kThreads; ++i) mutexes.push_back(std::make_unique<bubble::Mutex>(rt));
  std::vector<std::unique_ptr<bubble::ThreadHandle>> handles;
  for (int i = 0; i < kThreads; ++i) {
    handles.push_back(rt.spawn("worker", [&, i] {
      bubble::Mutex& mine = *mutexes[static_cast<std::size_t>(i)];
      for (int k = 0; k < 2; ++k) {
        mine.lock();
        mine.unlock();
      }
      const int read = value.load();
      value.store(read + 1);
      for (int k = 0; k < 2; ++k) {
        mine.lock();
        mine.unlock();
      }
    }));
  }
  for (auto& h : handles) h->join();
  const int final_value = value.load();
  if (final_value != kThreads) {
    throw std::logic_error("lost update: value " + std::to_string(final_value));
  }
  return std::to_string(final_value);
}

// The speed rows' small body: 3 threads, each two sections on one shared mutex around an atomic
// increment.
std::string small_body(bubble::Runtime& rt) {
  bubble::Mutex m(rt);
  bubble::Atomic<int> hits{0};
  int guarded = 0;
  std::vector<std::unique_ptr<bubble::ThreadHandle>> handles;
  for (int i = 0; i < 3; ++i) {
    handles.push_back(rt.spawn("worker", [&] {
      m.lock();
      ++guarded;
      m.unlock();
      hits.fetch_add(1);
      m.lock();
      ++guarded;
      m.unlock();
    }));
  }
  for (auto& h : handles) h->join();
  return std::to_string(guarded) + "," + std::to_string(hits.load());
}

// The speed rows' large body: 3 threads of 20 sections each, alternating between a mutex of
// their own and one they share.
std::string large_body(bubble::Runtime& rt) {
  constexpr int kThreads = 3;
  bubble::Mutex shared(rt);
  std::vector<std::unique_ptr<bubble::Mutex>> own;
  for (int i = 0; i < kThreads; ++i) own.push_back(std::make_unique<bubble::Mutex>(rt));
  int guarded = 0;
  std::vector<std::unique_ptr<bubble::ThreadHandle>> handles;
  for (int i = 0; i < kThreads; ++i) {
    handles.push_back(rt.spawn("worker", [&, i] {
      bubble::Mutex& mine = *own[static_cast<std::size_t>(i)];
      for (int k = 0; k < 20; ++k) {
        bubble::Mutex& m = k % 2 == 0 ? mine : shared;
        m.lock();
        if (&m == &shared) ++guarded;
        m.unlock();
      }
    }));
  }
  for (auto& h : handles) h->join();
  return std::to_string(guarded);
}

// What a search saw: its schedules, the outcomes it reached (a body's result or its failure's
// first line) and how many schedules failed.
struct Explored {
  std::uint64_t schedules = 0;
  std::set<std::string> outcomes;
  std::uint64_t failures = 0;
};

// Runs the search of `body` within `bound` preemptions, at most `max_runs` runs (0: no limit).
Explored explore(const Body& body, std::uint32_t bound, bubble::Reduction reduction,
                 std::uint64_t max_runs = 0) {
  Explored out;
  bubble::ScheduleTree tree(bound, {}, reduction);
  std::vector<bubble::Decision> decisions;
  bubble::RunDependencies dependencies;
  bubble::Options options;
  options.decisions = &decisions;
  if (reduction == bubble::Reduction::dpor) options.dependencies = &dependencies;
  while (const std::optional<bubble::Strategy> s = tree.next()) {
    if (max_runs != 0 && out.schedules == max_runs) break;
    decisions.clear();
    dependencies.clear();
    options.strategy = *s;
    ++out.schedules;
    try {
      (void)bubble::run(options, [&](bubble::Runtime& rt) { out.outcomes.insert(body(rt)); });
    } catch (const bubble::RunFailure& e) {
      const std::string what = e.what();
      out.outcomes.insert(what.substr(0, what.find('\n')));
      ++out.failures;
    }
    tree.record(decisions, &dependencies);
  }
  return out;
}

// The reduction rows' programs, by the benchmark's first argument.
struct Program {
  const char* name;
  Body body;
};
const std::vector<Program>& programs() {
  static const std::vector<Program> all = {
      {"own3x3+atomic",
       [](bubble::Runtime& rt) { return own_mutexes(rt, 3, 3, /*shared_atomic=*/true); }},
      {"own3x3", [](bubble::Runtime& rt) { return own_mutexes(rt, 3, 3, false); }},
      {"own4x2", [](bubble::Runtime& rt) { return own_mutexes(rt, 4, 2, false); }},
      {"shared3x2", [](bubble::Runtime& rt) { return shared_mutex(rt, 3, 2); }},
  };
  return all;
}

void set_reduction_counters(benchmark::State& state, const Explored& plain,
                            const Explored& reduced) {
  state.counters["plain_schedules"] = static_cast<double>(plain.schedules);
  state.counters["dpor_schedules"] = static_cast<double>(reduced.schedules);
  state.counters["reduction"] =
      static_cast<double>(plain.schedules) / static_cast<double>(reduced.schedules);
}

void BM_Reduction(benchmark::State& state) {
  const Program& program = programs().at(static_cast<std::size_t>(state.range(0)));
  const auto bound = static_cast<std::uint32_t>(state.range(1));
  state.SetLabel(program.name);
  for (auto _ : state) {
    const Explored plain = explore(program.body, bound, bubble::Reduction::none);
    const Explored reduced = explore(program.body, bound, bubble::Reduction::dpor);
    if (reduced.outcomes != plain.outcomes) {
      state.SkipWithError("the reduced search reached other outcomes than plain enumeration");
      return;
    }
    set_reduction_counters(state, plain, reduced);
  }
}
BENCHMARK(BM_Reduction)
    ->ArgsProduct({{0, 1, 2, 3}, {1, 2}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_SameBug(benchmark::State& state) {
  const auto bound = static_cast<std::uint32_t>(state.range(0));
  state.SetLabel("lost update");
  for (auto _ : state) {
    const Explored plain = explore(lost_update, bound, bubble::Reduction::none);
    const Explored reduced = explore(lost_update, bound, bubble::Reduction::dpor);
    const bool same =
        plain.failures > 0 && reduced.failures > 0 && plain.outcomes == reduced.outcomes;
    state.counters["same_bug_found"] = same ? 1 : 0;
    state.counters["plain_failures"] = static_cast<double>(plain.failures);
    state.counters["dpor_failures"] = static_cast<double>(reduced.failures);
    set_reduction_counters(state, plain, reduced);
    if (!same) {
      state.SkipWithError("plain enumeration and the reduced search disagree on the lost update");
      return;
    }
  }
}
BENCHMARK(BM_SameBug)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kMillisecond);

// The speed rows' bodies, by the benchmark's argument, with the bound of their search.
struct SpeedBody {
  const char* name;
  Body body;
  std::uint32_t bound;
};
const std::vector<SpeedBody>& speed_bodies() {
  static const std::vector<SpeedBody> all = {
      {"small: 3 threads, ~25 points", small_body, 2},
      {"large: 3 threads x 20 sections", large_body, 2},
  };
  return all;
}

// At most this many runs of a speed row's exhaustive search (the large body's is far longer).
constexpr std::uint64_t kMaxSpeedRuns = 5'000;

// CPU time of the calling thread, in seconds: the bubble's fibers run on it, and other
// processes on the machine do not count.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void BM_Speed(benchmark::State& state) {
  const SpeedBody& b = speed_bodies().at(static_cast<std::size_t>(state.range(0)));
  state.SetLabel(b.name);
  double exhaustive_seconds = 0;
  double random_seconds = 0;
  std::uint64_t runs = 0;
  std::uint64_t seed = 0;
  for (auto _ : state) {
    const double start = thread_seconds();
    const Explored e = explore(b.body, b.bound, bubble::Reduction::dpor, kMaxSpeedRuns);
    const double middle = thread_seconds();
    for (std::uint64_t i = 0; i < e.schedules; ++i) {
      bubble::Options options;
      options.strategy = bubble::Strategy::random(++seed);
      (void)bubble::run(options,
                        [&](bubble::Runtime& rt) { benchmark::DoNotOptimize(b.body(rt)); });
    }
    exhaustive_seconds += middle - start;
    random_seconds += thread_seconds() - middle;
    runs += e.schedules;
  }
  const double exhaustive_rate = static_cast<double>(runs) / exhaustive_seconds;
  const double random_rate = static_cast<double>(runs) / random_seconds;
  state.counters["runs"] = static_cast<double>(runs);
  state.counters["exhaustive_runs/s"] = exhaustive_rate;
  state.counters["random_runs/s"] = random_rate;
  state.counters["speed_ratio"] = exhaustive_rate / random_rate;
}
BENCHMARK(BM_Speed)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
