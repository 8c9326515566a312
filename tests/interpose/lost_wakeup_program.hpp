#pragma once

// A standard-library-only program with a lost wake-up, shared by the interposer's tests.

#include <chrono>
#include <thread>

#include "components/eager_queue.hpp"

// Two consumers each take one item; a producer pushes two, yielding between the pushes. The
// EagerQueue notifies only on empty -> non-empty: when the second push comes before the first
// woken consumer has run, the second consumer is never woken, and the run ends in a deadlock.
inline void two_consumers_two_items() {
  using namespace std::chrono_literals;
  components::EagerQueue<int> queue;
  std::thread c1([&] { queue.pop(); });
  std::thread c2([&] { queue.pop(); });
  std::this_thread::sleep_for(1ms);  // both consumers are waiting
  queue.push(1);
  std::this_thread::yield();
  queue.push(2);
  c1.join();
  c2.join();
}
