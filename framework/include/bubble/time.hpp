#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
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

// `from + d` without overflow: kNoDeadline when the sum would reach past it (a wait that long has
// no deadline), and `from` itself when `d` is zero or negative (a deadline already due).
constexpr TimePoint deadline_after(TimePoint from, Duration d) noexcept {
  if (d <= Duration::zero()) return from;
  return d >= kNoDeadline - from ? kNoDeadline : from + d;
}

// The time point at which a bubble's clock starts by default: 2000-01-01T00:00:00Z as a count
// since the epoch (Options::start, kDefaultStart, is the same instant as a WallTime). In a bubble
// run with the default start, `rt.now() == kStart` at the beginning and
// `rt.now() == kStart + 1s` after a one-second sleep.
inline constexpr TimePoint kStart{std::chrono::seconds{946'684'800}};

// Formats a time point for people, relative to kStart: "+1.5s since start", "+0s since start",
// "-2s since start" for a bubble time point near it; "no deadline" for kNoDeadline; and
// "<duration> since the clock's origin" for a time point less than half-way from the clock's
// origin to kStart (the system runtime's clock, which counts from boot).
std::string format_time(TimePoint t);

// GoogleTest's printer for TimePoint, found by argument-dependent lookup (TimePoint's clock is
// bubble::Clock), so a failed EXPECT_EQ(rt.now(), kStart + 1s) prints "+2s since start" instead
// of raw bytes. It needs only <ostream>: the framework does not depend on GoogleTest.
//
// Duration has no printer here: it is std::chrono::nanoseconds, whose associated namespaces are
// std and std::chrono, where nothing may be added, so no bubble function can be found for it by
// argument-dependent lookup. GoogleTest prints it with the standard library's operator<< (C++20),
// exactly: "150000000ns". (Specializing GoogleTest's internal printer for it would change how
// nanoseconds print only in the files that see the specialization: an ODR violation in any test
// program whose other files print a duration.)
void PrintTo(TimePoint t, std::ostream* os);

}  // namespace bubble
