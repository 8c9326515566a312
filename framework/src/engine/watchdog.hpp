#pragma once

// Private: the process-wide watchdog shared by all bubble runs.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <bubble/detail/intrusive_list.hpp>

namespace bubble::detail {

// One running bubble, as the watchdog sees it. The bubble advances `progress` at every
// scheduling step; if it stays the same for longer than `limit` of real time, the watchdog calls
// describe(context), prints the result to stderr and aborts the process.
struct WatchdogEntry {
  const std::atomic<std::uint64_t>* progress = nullptr;
  std::chrono::milliseconds limit{0};
  std::string (*describe)(const void* context) = nullptr;
  const void* context = nullptr;

  // Owned by the watchdog (guarded by its mutex).
  std::thread::id owner{};       // The OS thread that registered it (the one running the bubble).
  bool orphaned = false;         // Dropped in a forked child whose bubble ran on another OS thread.
  ListHook<WatchdogEntry> hook;  // On the watchdog's list while watched.
  std::uint64_t last_seen = 0;
  std::chrono::steady_clock::time_point last_change{};
};

// Starts watching `e` (starting the shared watchdog thread on first use). Cheap: one mutex
// lock, no system call once the thread runs. A process forked while the watchdog runs gets a
// watchdog of its own in the child (pthread_atfork), watching the entries of the thread that
// forked.
void watchdog_register(WatchdogEntry& e);
// Stops watching `e`; after it returns the watchdog no longer touches `e`.
void watchdog_unregister(WatchdogEntry& e) noexcept;

}  // namespace bubble::detail
