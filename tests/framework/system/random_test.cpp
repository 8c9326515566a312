// Tests of bubble::random() on the system runtime: one generator per OS thread, seeded from
// std::random_device, usable from many threads at once without a lock.

#include <bubble/random.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <thread>
#include <vector>

namespace {

TEST(SystemRandom, EachOsThreadHasItsOwnGenerator) {
  bubble::Random* main_thread = &bubble::random();
  EXPECT_EQ(&bubble::random(), main_thread);  // The same object on every call of a thread.
  bubble::Random* other = nullptr;
  std::thread([&other] { other = &bubble::random(); }).join();
  EXPECT_NE(other, main_thread);
}

TEST(SystemRandom, ThreadsDrawConcurrentlyAndDifferently) {
  // Eight threads draw at once (TSan checks there is no shared state); their first numbers come
  // from independently seeded generators, so they are all different.
  constexpr int kThreads = 8;
  std::vector<std::vector<std::uint64_t>> drawn(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&drawn, i] {
      for (int k = 0; k < 1000; ++k) drawn[i].push_back(bubble::random()());
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<std::uint64_t> firsts;
  for (const auto& d : drawn) firsts.insert(d.front());
  EXPECT_EQ(firsts.size(), static_cast<std::size_t>(kThreads));
}

}  // namespace
