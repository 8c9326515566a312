#include "engine/watchdog.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <pthread.h>

namespace bubble::detail {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Never destroyed: the watchdog thread is detached and may outlive static destruction.
struct Watchdog {
  std::mutex mu;
  std::condition_variable cv;
  IntrusiveList<WatchdogEntry, &WatchdogEntry::hook> entries;  // The bubbles it watches.
  milliseconds tick{100};
  bool started = false;
  std::atomic<bool> running{false};  // The thread has started (see start()).
  Watchdog* before_fork = nullptr;   // The parent's watchdog, in a forked child (kept reachable).

  // Starts the thread, and returns once it runs. A thread that is still starting may be inside
  // the allocator, and AddressSanitizer's allocator takes a lock there that its clang 14 runtime
  // does not hold across fork() (glibc's malloc does): a fork at that moment, such as a
  // GoogleTest death test right after the first watched run, would copy the held lock into the
  // child, whose next allocation of that size would wait forever. Once running, the thread
  // allocates nothing until it aborts.
  void start() {
    started = true;
    std::thread([this] {
      running.store(true, std::memory_order_release);
      running.notify_one();
      loop();
    }).detach();
    running.wait(false, std::memory_order_acquire);
  }

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
      for (WatchdogEntry& e : entries) {
        if (paused) {
          e.last_change = now;
          continue;
        }
        const std::uint64_t p = e.progress->load(std::memory_order_relaxed);
        if (p != e.last_seen) {
          e.last_seen = p;
          e.last_change = now;
          continue;
        }
        if (now - e.last_change > e.limit) {
          const std::string what = e.describe(e.context);
          std::fprintf(stderr, "%s\n", what.c_str());
          std::fflush(stderr);
          std::abort();
        }
      }
    }
  }
};

// fork() copies the memory of the watchdog but not its thread (nor any thread but the one that
// forked): without care, a child that runs a bubble (a GoogleTest death test in the default
// "fast" style) would have no watchdog at all, since `started` says there is one. So around fork
// the watchdog's mutex is held (the child's copy is consistent), and the child gets a new
// watchdog, with its own thread, that watches only the bubbles of the thread that forked: the
// others' OS threads do not exist in the child, so they would look stuck.
Watchdog* g_watchdog = nullptr;

void before_fork() noexcept {
  g_watchdog->mu.lock();
}

void after_fork_in_parent() noexcept {
  g_watchdog->mu.unlock();
}

void after_fork_in_child() noexcept {
  Watchdog* old = g_watchdog;  // Its mutex stays locked: it is never used again.
  auto* fresh = new Watchdog;  // NOLINT(bugprone-unhandled-exception-at-new): ends the child
  fresh->before_fork = old;
  fresh->tick = old->tick;
  const std::thread::id self = std::this_thread::get_id();
  const auto now = steady_clock::now();
  while (WatchdogEntry* e = old->entries.pop_front()) {
    if (e->owner == self) {
      fresh->entries.push_back(*e);
      e->last_change = now;
    } else {
      e->orphaned = true;  // Its bubble's OS thread is gone; unregister ignores it.
    }
  }
  g_watchdog = fresh;
  if (!fresh->entries.empty()) fresh->start();
}

Watchdog& watchdog() {
  static const bool installed = [] {
    g_watchdog = new Watchdog;
    ::pthread_atfork(&before_fork, &after_fork_in_parent, &after_fork_in_child);
    return true;
  }();
  (void)installed;
  return *g_watchdog;
}

}  // namespace

void watchdog_register(WatchdogEntry& e) {
  Watchdog& w = watchdog();
  std::lock_guard lock(w.mu);
  e.owner = std::this_thread::get_id();
  e.orphaned = false;
  e.last_seen = e.progress->load(std::memory_order_relaxed);
  e.last_change = steady_clock::now();
  w.entries.push_back(e);
  // Check at least four times per limit, at most every 100 ms.
  const milliseconds wanted = std::clamp(e.limit / 4, milliseconds{1}, milliseconds{100});
  const bool faster = wanted < w.tick;
  if (faster) w.tick = wanted;
  if (!w.started) {
    w.start();
  } else if (faster) {
    w.cv.notify_one();
  }
}

void watchdog_unregister(WatchdogEntry& e) noexcept {
  Watchdog& w = watchdog();
  std::lock_guard lock(w.mu);
  if (e.orphaned) return;  // Dropped by a fork (not linked anywhere).
  w.entries.remove(e);
}

}  // namespace bubble::detail
