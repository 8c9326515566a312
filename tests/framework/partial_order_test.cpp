// Partial-order reduction: a ScheduleTree with Reduction::dpor reaches every outcome that plain
// bounded enumeration reaches, finds the same bugs, and runs far fewer schedules when threads
// touch different objects; Options::dependencies records what it needs.

#include <bubble/atomic.hpp>
#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/random.hpp>
#include <bubble/schedule_tree.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "racy_counter.hpp"

namespace {

using bubble::Decision;
using bubble::Options;
using bubble::Reduction;
using bubble::RunDependencies;
using bubble::Runtime;
using bubble::ScheduleTree;
using bubble::Strategy;

// What a search saw: how many schedules, the distinct outcomes (a body's result or its failure's
// first line), and how many failed.
struct Explored {
  std::uint64_t schedules = 0;
  std::set<std::string> outcomes;
  std::uint64_t failures = 0;
  std::string certificate;
};

Explored explore(std::uint32_t bound, Reduction reduction,
                 const std::function<std::string(Runtime&)>& body, bubble::TreeShard shard = {}) {
  Explored out;
  ScheduleTree tree(bound, shard, reduction);
  std::vector<Decision> decisions;
  RunDependencies dependencies;
  Options options;
  options.decisions = &decisions;
  if (reduction == Reduction::dpor) options.dependencies = &dependencies;
  while (std::optional<Strategy> s = tree.next()) {
    decisions.clear();
    dependencies.clear();
    options.strategy = *s;
    std::string outcome;
    bool failed = false;
    try {
      (void)bubble::run(options, [&](Runtime& rt) { outcome = body(rt); });
    } catch (const bubble::RunFailure& e) {
      const std::string what = e.what();
      outcome = what.substr(0, what.find('\n'));
      failed = true;
    }
    if (tree.owns(decisions)) {  // Another shard's schedule is only passed through.
      ++out.schedules;
      out.outcomes.insert(outcome);
      out.failures += failed ? 1 : 0;
    }
    tree.record(decisions, &dependencies);
  }
  out.certificate = tree.certificate(out.failures);
  EXPECT_EQ(out.schedules, tree.schedules());
  return out;
}

// Three threads that each lock and unlock a mutex of their own `locks` times, and count under it,
// after sleeping until the same instant when `sleep_first` (a worker that waits for its next
// tick: a plain sleep touches nothing the other threads share). Returns the counts.
std::string threads_on_their_own_mutexes(Runtime& rt, int locks, bool sleep_first) {
  int counts[3] = {0, 0, 0};
  std::vector<std::unique_ptr<bubble::Mutex>> mutexes;
  std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
  for (int i = 0; i < 3; ++i) mutexes.push_back(std::make_unique<bubble::Mutex>(rt));
  for (int i = 0; i < 3; ++i) {
    threads.push_back(rt.spawn("worker", [&, i] {
      if (sleep_first) rt.sleep_for(std::chrono::milliseconds(1));
      for (int k = 0; k < locks; ++k) {
        mutexes[i]->lock();
        ++counts[i];
        mutexes[i]->unlock();
      }
    }));
  }
  for (auto& t : threads) t->join();
  return std::to_string(counts[0]) + std::to_string(counts[1]) + std::to_string(counts[2]);
}

std::string three_threads_on_their_own_mutexes(Runtime& rt) {
  return threads_on_their_own_mutexes(rt, 3, false);
}

TEST(PartialOrder, ThreadsOnDifferentObjectsNeedFarFewerSchedules) {
  const Explored plain = explore(2, Reduction::none, three_threads_on_their_own_mutexes);
  const Explored reduced = explore(2, Reduction::dpor, three_threads_on_their_own_mutexes);
  EXPECT_EQ(plain.outcomes, (std::set<std::string>{"333"}));
  EXPECT_EQ(reduced.outcomes, plain.outcomes);
  std::cout << "plain " << plain.schedules << ", reduced " << reduced.schedules << "\n";
  EXPECT_GE(plain.schedules, 10 * reduced.schedules)
      << "plain " << plain.schedules << ", reduced " << reduced.schedules;
  EXPECT_EQ(reduced.failures, 0u);
}

std::string three_sleepers_on_their_own_mutexes(Runtime& rt) {
  return threads_on_their_own_mutexes(rt, 2, true);
}

TEST(PartialOrder, PlainSleepsCommuteWithOtherThreadsSteps) {
  const Explored plain = explore(1, Reduction::none, three_sleepers_on_their_own_mutexes);
  const Explored reduced = explore(1, Reduction::dpor, three_sleepers_on_their_own_mutexes);
  EXPECT_EQ(plain.outcomes, (std::set<std::string>{"222"}));
  EXPECT_EQ(reduced.outcomes, plain.outcomes);
  std::cout << "plain " << plain.schedules << ", reduced " << reduced.schedules << "\n";
  EXPECT_GE(plain.schedules, 10 * reduced.schedules)
      << "plain " << plain.schedules << ", reduced " << reduced.schedules;
}

TEST(PartialOrder, TheLostUpdateIsFoundWithTheSamePreemption) {
  for (const std::uint32_t bound : {0u, 1u, 2u}) {
    const auto body = [](Runtime& rt) {
      return std::to_string(bubble::test_programs::racy_counter(rt));
    };
    const Explored plain = explore(bound, Reduction::none, body);
    const Explored reduced = explore(bound, Reduction::dpor, body);
    EXPECT_EQ(reduced.outcomes, plain.outcomes) << "bound " << bound;
    EXPECT_EQ(reduced.outcomes.count("1"), bound >= 1 ? 1u : 0u) << "bound " << bound;
  }
}

// A small program drawn from `seed`: `threads` threads of `ops` operations each, on two hooked
// atomics and two mutexes that guard a plain counter each (held across a load of an atomic, so that
// threads block on them), a channel of capacity 1 (try_send, try_receive), a context (cancel, and
// sleeps it may cut short), and yields and sleeps (which touch
// every object, and move time on). Each thread notes what it reads; the outcome is every thread's
// notes and the final values.
std::string random_program(Runtime& rt, std::uint64_t seed, int threads, int ops) {
  bubble::Random draw(seed);
  bubble::Atomic<int> atomics[2] = {0, 0};
  int guarded[2] = {0, 0};
  bubble::Mutex m0(rt);
  bubble::Mutex m1(rt);
  bubble::Mutex* mutexes[2] = {&m0, &m1};
  bubble::Channel<int> channel(1, rt);
  const std::pair<bubble::Context, bubble::CancelFunc> context =
      bubble::Context::with_cancel(bubble::Context::background());
  std::vector<std::string> notes(static_cast<std::size_t>(threads));
  std::vector<std::vector<std::uint64_t>> plans(static_cast<std::size_t>(threads));
  for (auto& plan : plans) {
    for (int k = 0; k < ops; ++k) plan.push_back(draw() % 14);
  }
  std::vector<std::unique_ptr<bubble::ThreadHandle>> handles;
  for (int t = 0; t < threads; ++t) {
    handles.push_back(rt.spawn("t", [&, t] {
      std::string& note = notes[static_cast<std::size_t>(t)];
      for (const std::uint64_t op : plans[static_cast<std::size_t>(t)]) {
        const std::size_t which = op % 2;
        switch (op / 2) {
          case 0:
            note += "l" + std::to_string(atomics[which].load());
            break;
          case 1:
            atomics[which].store(t + 1);
            break;
          case 2:
            note += "f" + std::to_string(atomics[which].fetch_add(1));
            break;
          case 3: {
            // Held across another operation, so that threads block on it.
            mutexes[which]->lock();
            note += "g" + std::to_string(guarded[which]++);
            note += "l" + std::to_string(atomics[1 - which].load());
            mutexes[which]->unlock();
            break;
          }
          case 5:
            if (which == 0) {
              note += "s" + std::to_string(channel.try_send(t + 1) ? 0 : 1);
            } else {
              const bubble::Result<int> got = channel.try_receive();
              note += "r" + (got ? std::to_string(*got) : std::string("-"));
            }
            break;
          case 6:
            if (which == 0) {
              context.second();
            } else {
              note += rt.sleep_for(std::chrono::milliseconds(1), context.first) ? "zc" : "zt";
            }
            break;
          default:
            if (which == 0) {
              rt.yield();
            } else {
              rt.sleep_for(std::chrono::milliseconds(1));
            }
            break;
        }
      }
    }));
  }
  for (auto& h : handles) h->join();
  std::string out;
  for (const std::string& note : notes) out += note + "|";
  return out + std::to_string(atomics[0].load()) + "," + std::to_string(atomics[1].load()) + "," +
         std::to_string(guarded[0]) + "," + std::to_string(guarded[1]);
}

// The property: for every program drawn, the reduced search reaches exactly the outcomes plain
// enumeration reaches within the same bound (it can reach no others: each of its schedules is one
// of plain enumeration's).
TEST(PartialOrder, RandomProgramsReachTheSameOutcomesAsPlainEnumeration) {
  std::uint64_t plain_total = 0;
  std::uint64_t reduced_total = 0;
  struct Shape {
    int threads;
    int ops;
    std::uint32_t bound;
    std::uint64_t programs;
  };
  // Three threads of three operations at bound 2: the smallest shape here on which a reduction
  // that prunes more than the bound allows (sleep sets) misses outcomes.
  for (const Shape shape : {Shape{2, 3, 1'000, 12}, Shape{3, 2, 2, 8}, Shape{3, 3, 1, 4},
                            Shape{2, 4, 1, 8}, Shape{3, 3, 2, 6}}) {
    for (std::uint64_t seed = 1; seed <= shape.programs; ++seed) {
      const auto body = [&](Runtime& rt) {
        return random_program(rt, seed, shape.threads, shape.ops);
      };
      const Explored plain = explore(shape.bound, Reduction::none, body);
      const Explored reduced = explore(shape.bound, Reduction::dpor, body);
      ASSERT_EQ(reduced.outcomes, plain.outcomes)
          << shape.threads << " threads of " << shape.ops << " operations, bound " << shape.bound
          << ", seed " << seed;
      EXPECT_LE(reduced.schedules, plain.schedules);
      plain_total += plain.schedules;
      reduced_total += reduced.schedules;
    }
  }
  std::cout << "plain " << plain_total << " schedules, reduced " << reduced_total << "\n";
}

// Property: the shards of a reduced search together reach every outcome of plain enumeration,
// and their certificates merge into one.
TEST(PartialOrder, ShardsOfAReducedSearchTogetherReachEveryOutcome) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const auto body = [&](Runtime& rt) { return random_program(rt, seed, 3, 3); };
    const Explored plain = explore(1, Reduction::none, body);
    std::set<std::string> outcomes;
    std::vector<std::string> certificates;
    for (std::uint32_t i = 0; i < 3; ++i) {
      const Explored shard = explore(1, Reduction::dpor, body, bubble::TreeShard{i, 3});
      outcomes.insert(shard.outcomes.begin(), shard.outcomes.end());
      certificates.push_back(shard.certificate);
    }
    EXPECT_EQ(outcomes, plain.outcomes) << "seed " << seed;
    EXPECT_EQ(bubble::merge_certificates(certificates).rfind("bubble: complete: ", 0), 0u);
  }
}

TEST(PartialOrder, AReducedSearchNeedsTheRunsDependencies) {
  ScheduleTree tree(1, {}, Reduction::dpor);
  std::vector<Decision> decisions;
  Options options;
  options.decisions = &decisions;
  options.strategy = *tree.next();
  (void)bubble::run(options, [](Runtime& rt) { (void)bubble::test_programs::racy_counter(rt); });
  EXPECT_THROW(tree.record(decisions), std::invalid_argument);

  RunDependencies dependencies;
  Options without_decisions;
  without_decisions.dependencies = &dependencies;
  EXPECT_THROW((void)bubble::run(without_decisions, [](Runtime&) {}), std::invalid_argument);
}

TEST(PartialOrder, AStoppedReducedSearchResumesFromItsCheckpoint) {
  const Explored whole = explore(2, Reduction::dpor, three_threads_on_their_own_mutexes);
  // Stop after every run, resume from the checkpoint line.
  std::string checkpoint = ScheduleTree(2, {}, Reduction::dpor).checkpoint();
  std::uint64_t runs = 0;
  for (;;) {
    ScheduleTree tree = ScheduleTree::resume(checkpoint);
    EXPECT_EQ(tree.reduction(), Reduction::dpor);
    const std::optional<Strategy> s = tree.next();
    if (!s) break;
    std::vector<Decision> decisions;
    RunDependencies dependencies;
    Options options;
    options.decisions = &decisions;
    options.dependencies = &dependencies;
    options.strategy = *s;
    (void)bubble::run(options, [](Runtime& rt) { (void)three_threads_on_their_own_mutexes(rt); });
    tree.record(decisions, &dependencies);
    ++runs;
    checkpoint = tree.checkpoint();
    ASSERT_EQ(checkpoint.rfind("bubble-schedule-tree-2 bound=2 shard=0/1 reduction=dpor ", 0), 0u)
        << checkpoint;
  }
  EXPECT_EQ(runs, whole.schedules);
  EXPECT_THROW((void)ScheduleTree::resume(
                   "bubble-schedule-tree-2 bound=2 shard=0/1 reduction=dpor schedules=1 "
                   "transit=0 path=3:1"),
               std::invalid_argument);
  EXPECT_THROW((void)ScheduleTree::resume(
                   "bubble-schedule-tree-2 bound=2 shard=0/1 reduction=dpor schedules=1 "
                   "transit=0 path=3:1/201"),
               std::invalid_argument);
}

}  // namespace
