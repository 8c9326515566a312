// The README's first example, as it is printed there.
#include <bubble/testing.hpp>  // link bubble::testing and bubble::interpose
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>
using namespace std::chrono_literals;

BUBBLE_STD_TEST(Example, StdThreadsTakeTurnsInVirtualTime) {
  std::mutex m;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      std::lock_guard lock(m);
      std::this_thread::sleep_for(1h);
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(std::chrono::steady_clock::now() - start, 3h);  // exactly, and instantly
}
