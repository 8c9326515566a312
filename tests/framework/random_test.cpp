// Tests of bubble::Random (the generator) and bubble::random() in a bubble: streams derived from
// Options::random_seed and each thread's place in the tree of spawns, the same under every
// strategy and on replay.

#include <bubble/bubble.hpp>
#include <bubble/random.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Random;
using bubble::Runtime;

static_assert(std::uniform_random_bit_generator<Random>);

// Reference outputs of splitmix64-seeded xoshiro256**, computed from the authors' published
// definitions independently of this implementation.
TEST(Random, FollowsTheXoshiro256StarStarDefinition) {
  Random zero(0);
  EXPECT_EQ(zero(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(zero(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(zero(), 0x1a5f849d4933e6e0ULL);
  Random answer(42);
  EXPECT_EQ(answer(), 0x15780b2e0c2ec716ULL);
  EXPECT_EQ(answer(), 0x6104d9866d113a7eULL);
  EXPECT_EQ(answer(), 0xae17533239e499a1ULL);
}

TEST(Random, TheSameSeedGivesTheSameSequence) {
  Random a(7), b(7), c(8);
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a();
    EXPECT_EQ(x, b());
    EXPECT_NE(x, c());
  }
  EXPECT_EQ(a, b);
}

TEST(Random, BelowStaysInRangeAndReachesEveryValue) {
  Random r(1);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 600; ++i) {
    const std::uint64_t x = r.below(6);
    ASSERT_LT(x, 6u);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(r.below(1), 0u);
  // A bound above 2^63, where a modulo would be visibly biased: still in range.
  const std::uint64_t big = (1ULL << 63) + 12345;
  for (int i = 0; i < 100; ++i) EXPECT_LT(r.below(big), big);
}

TEST(Random, BelowIsRoughlyUniform) {
  // 60000 draws over 3 buckets: each count is within 5 standard deviations (about 580) of 20000.
  Random r(3);
  std::uint64_t counts[3] = {0, 0, 0};
  for (int i = 0; i < 60000; ++i) ++counts[r.below(3)];
  for (std::uint64_t c : counts) {
    EXPECT_GT(c, 19420u);
    EXPECT_LT(c, 20580u);
  }
}

TEST(Random, BelowZeroThrowsNamingTheArgument) {
  Random r(1);
  try {
    (void)r.below(0);
    FAIL() << "below(0) did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("n must be > 0, got 0"), std::string::npos) << e.what();
  }
}

TEST(Random, CanonicalIsInTheUnitInterval) {
  Random r(5);
  double lo = 1, hi = 0;
  for (int i = 0; i < 10000; ++i) {
    const double x = r.canonical();
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_LT(lo, 0.01);
  EXPECT_GT(hi, 0.99);
}

TEST(Random, WorksWithStandardDistributions) {
  Random r(9);
  std::uniform_int_distribution<int> die(1, 6);
  const int x = die(r);
  EXPECT_GE(x, 1);
  EXPECT_LE(x, 6);
  std::vector<int> v{1, 2, 3, 4, 5};
  std::shuffle(v.begin(), v.end(), r);
  EXPECT_TRUE(std::is_permutation(v.begin(), v.end(), std::vector<int>{1, 2, 3, 4, 5}.begin()));
}

// What each thread of `program` drew, by the thread's name; also which id each thread got.
struct Draws {
  std::map<std::string, std::vector<std::uint64_t>> values;
  std::map<std::string, std::uint64_t> spawn_order;
};

// Two workers, each of which yields, draws, and spawns a child that draws: which child is spawned
// first (and so which thread id each child gets) depends on the schedule.
bubble::RunResult draw_in_threads(const bubble::Options& options, Draws& out) {
  out = {};
  std::uint64_t spawned = 0;
  return bubble::run(options, [&](Runtime& rt) {
    auto draw = [&out](const std::string& who) {
      for (int i = 0; i < 3; ++i) out.values[who].push_back(bubble::random()());
    };
    draw("root");
    auto worker = [&](const std::string& name) {
      return [&, name] {
        rt.yield();
        draw(name);
        bubble::Thread child(
            name + "/child",
            [&, name] {
              out.spawn_order[name + "/child"] = ++spawned;
              rt.yield();
              draw(name + "/child");
            },
            rt);
      };
    };
    bubble::Thread a("a", worker("a"), rt);
    bubble::Thread b("b", worker("b"), rt);
    rt.sleep_for(1s);
    draw("root after sleep");
  });
}

// Property: a thread's numbers depend only on the run's seed and its place in the spawn tree,
// never on the interleaving: every strategy, and a replay, gives each thread the same numbers.
TEST(BubbleRandom, EachThreadDrawsTheSameNumbersUnderEveryScheduleAndOnReplay) {
  Draws fifo;
  draw_in_threads({}, fifo);
  ASSERT_EQ(fifo.values.size(), 6u);
  bool child_order_changed = false;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const bubble::Strategy& s :
         {bubble::Strategy::random(seed), bubble::Strategy::pct(seed, 3, 50)}) {
      Draws other;
      const bubble::RunResult r = draw_in_threads({.strategy = s}, other);
      EXPECT_EQ(other.values, fifo.values) << s.to_string();
      child_order_changed |= other.spawn_order != fifo.spawn_order;
      Draws replayed;
      draw_in_threads({.replay = r.schedule}, replayed);
      EXPECT_EQ(replayed.values, fifo.values) << "replay of " << s.to_string();
    }
  }
  // Otherwise the test would not show independence from the order of spawns.
  EXPECT_TRUE(child_order_changed);
}

TEST(BubbleRandom, ThreadsHaveDistinctStreams) {
  Draws d;
  draw_in_threads({}, d);
  std::set<std::uint64_t> firsts;
  for (const auto& [who, values] : d.values) firsts.insert(values.front());
  EXPECT_EQ(firsts.size(), d.values.size());
  // The root's stream goes on after a sleep: it does not restart.
  EXPECT_NE(d.values["root after sleep"], d.values["root"]);
}

TEST(BubbleRandom, TheSeedChoosesTheNumbers) {
  Draws zero, again, one;
  draw_in_threads({}, zero);
  draw_in_threads({.random_seed = 0}, again);
  draw_in_threads({.random_seed = 1}, one);
  EXPECT_EQ(zero.values, again.values);
  for (const auto& [who, values] : zero.values) EXPECT_NE(one.values[who], values) << who;
}

TEST(BubbleRandom, TimerCallbacksAndAfterFuncThreadsAreReproducible) {
  auto program = [](std::vector<std::uint64_t>& out) {
    bubble::run({.random_seed = 5}, [&out](Runtime& rt) {
      const std::uint64_t timer =
          rt.schedule_at(rt.now() + 1s, [&out] { out.push_back(bubble::random()()); });
      (void)timer;
      bubble::after_func(
          2s, [&out] { out.push_back(bubble::random()()); }, rt);
      rt.sleep_for(3s);
      out.push_back(bubble::random()());
    });
  };
  std::vector<std::uint64_t> first, second;
  program(first);
  program(second);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first, second);
  EXPECT_EQ(std::set<std::uint64_t>(first.begin(), first.end()).size(), 3u);
}

}  // namespace
