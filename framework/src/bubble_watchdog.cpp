#include "bubble_watchdog.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace bubble::detail {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Never destroyed: the watchdog thread is detached and may outlive static destruction.
struct Watchdog {
  std::mutex mu;
  std::condition_variable cv;
  WatchdogEntry* head = nullptr;
  milliseconds tick{100};
  bool started = false;

  void loop() {
    std::unique_lock lock(mu);
    auto last_wake = steady_clock::now();
    for (;;) {
      // Polls even when idle, so that registering never needs a system call to wake it.
      cv.wait_for(lock, tick);
      const auto now = steady_clock::now();
      // Woken much later than asked: the whole process was paused (a debugger, SIGSTOP) or
      // starved. That time does not count against anyone.
      const bool paused = now - last_wake > tick + milliseconds{500};
      last_wake = now;
      for (WatchdogEntry* e = head; e != nullptr; e = e->next) {
        if (paused) {
          e->last_change = now;
          continue;
        }
        const std::uint64_t p = e->progress->load(std::memory_order_relaxed);
        if (p != e->last_seen) {
          e->last_seen = p;
          e->last_change = now;
          continue;
        }
        if (now - e->last_change > e->limit) {
          const std::string what = e->describe(e->context);
          std::fprintf(stderr, "%s\n", what.c_str());
          std::fflush(stderr);
          std::abort();
        }
      }
    }
  }
};

Watchdog& watchdog() {
  static Watchdog* w = new Watchdog;
  return *w;
}

}  // namespace

void watchdog_register(WatchdogEntry& e) {
  Watchdog& w = watchdog();
  std::lock_guard lock(w.mu);
  e.last_seen = e.progress->load(std::memory_order_relaxed);
  e.last_change = steady_clock::now();
  e.prev = nullptr;
  e.next = w.head;
  if (w.head != nullptr) w.head->prev = &e;
  w.head = &e;
  // Check at least four times per limit, at most every 100 ms.
  const milliseconds wanted = std::clamp(e.limit / 4, milliseconds{1}, milliseconds{100});
  const bool faster = wanted < w.tick;
  if (faster) w.tick = wanted;
  if (!w.started) {
    w.started = true;
    std::thread([&w] { w.loop(); }).detach();
  } else if (faster) {
    w.cv.notify_one();
  }
}

void watchdog_unregister(WatchdogEntry& e) noexcept {
  Watchdog& w = watchdog();
  std::lock_guard lock(w.mu);
  if (e.prev != nullptr) {
    e.prev->next = e.next;
  } else {
    w.head = e.next;
  }
  if (e.next != nullptr) e.next->prev = e.prev;
  e.prev = e.next = nullptr;
}

}  // namespace bubble::detail
