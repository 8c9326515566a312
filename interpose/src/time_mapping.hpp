#pragma once

// Conversions between the POSIX clocks and a bubble's clocks.

#include <time.h>

#include <chrono>

#include <bubble/detail/intercept.hpp>
#include <bubble/runtime.hpp>

namespace bubble::interpose::detail {

// Which bubble clock a POSIX clock reads: the virtual steady clock (Runtime::now), the bubble's
// wall view (Runtime::wall_now), or neither (CPU-time clocks, which stay real).
enum class ClockKind { steady, wall, other };

constexpr ClockKind classify(clockid_t clock) noexcept {
  switch (clock) {
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
      return ClockKind::steady;
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_TAI:
      return ClockKind::wall;
    default:
      return ClockKind::other;
  }
}

inline timespec to_timespec(Duration since_epoch) noexcept {
  const auto s = std::chrono::floor<std::chrono::seconds>(since_epoch);
  return timespec{static_cast<time_t>(s.count()), static_cast<long>((since_epoch - s).count())};
}

inline Duration to_duration(const timespec& ts) noexcept {
  return std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec};
}

// The virtual steady deadline of an absolute time on a POSIX clock of kind steady or wall: a wall
// deadline is as far from wall_now() as the steady deadline is from now().
inline TimePoint deadline_of(Runtime& rt, ClockKind kind, const timespec& abs) noexcept {
  const Duration t = to_duration(abs);
  if (kind == ClockKind::steady) return TimePoint{t};
  return rt.now() + (t - rt.wall_now().time_since_epoch());
}

// True when the caller is a bubble thread (not the scheduler running a timer callback).
inline bool on_bubble_thread() noexcept {
  return ::bubble::detail::intercepted_thread_slot() != nullptr;
}

}  // namespace bubble::interpose::detail
