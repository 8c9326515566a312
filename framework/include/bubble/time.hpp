#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace bubble {

// Duration is the one duration type of the project: signed 64-bit nanoseconds.
using Duration = std::chrono::nanoseconds;

// Clock is the monotonic clock of the calling thread's runtime, as a std::chrono clock.
//
// Clock::now() asks bubble::current_runtime(): inside a bubble it returns the bubble's virtual
// time, elsewhere the system runtime's steady clock. Code that holds a Runtime& should prefer
// Runtime::now(); Clock exists so TimePoint is a distinct, type-safe std::chrono::time_point.
struct Clock {
  using rep = Duration::rep;
  using period = Duration::period;
  using duration = Duration;
  using time_point = std::chrono::time_point<Clock, Duration>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept;
};

// TimePoint is a point on a runtime's monotonic clock. Time points of different runtimes are not
// comparable: the system runtime counts from an arbitrary origin, a bubble from its start time.
using TimePoint = Clock::time_point;

// WallTime is a calendar time, for logs and traces only (never for measuring intervals).
using WallTime = std::chrono::time_point<std::chrono::system_clock, Duration>;

// Formats a wall time as RFC 3339 in UTC, for example "2000-01-01T00:00:03Z"; fractional seconds
// are printed only when non-zero, with as many digits as needed ("...:03.25Z",
// "...:03.000000001Z").
std::string format_wall_time(WallTime t);

// Formats a duration for people: "0s", "1.5s", "20ms", "250us", "7ns", "-3s", "1h2m3s".
std::string format_duration(Duration d);

// The latest representable time point, used as "no deadline".
inline constexpr TimePoint kNoDeadline = TimePoint::max();

}  // namespace bubble
