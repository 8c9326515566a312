#pragma once

#include <string>
#include <system_error>
#include <type_traits>

namespace bubble {

// errc lists every expected outcome of a bubble operation that is not plain success.
//
// Operations that can fail in an expected way return a std::error_code (marked [[nodiscard]]);
// compare it with these values: `if (ec == bubble::errc::full)`. Programmer errors (a negative
// capacity, an object used outside its bubble) are not listed here: they throw
// std::invalid_argument or std::logic_error with a message naming the argument and its value.
enum class errc {
  // 0 is reserved for success, as std::error_code requires.
  canceled = 1,           // The context was cancelled before the operation completed.
  deadline_exceeded,      // The context's deadline passed before the operation completed.
  closed,                 // The channel, pool or other receiver was closed or shut down.
  full,                   // No room: a bounded queue is full (or stayed full for the time allowed).
  empty,                  // Nothing to take: a non-blocking receive found no value.
  rate_limited,           // No token was available and the call does not wait for one.
  limiter_stopped,        // The limiter was stopped; it admits nothing more.
  tenant_limit,           // The job's tenant is over its cap of queued or running jobs.
  too_late,               // The job's deadline was too near for its expected duration; not run.
  job_failed,             // The job threw an exception; it was caught and reported.
  exceeds_burst,          // The request is larger than the limiter's burst and can never succeed.
  would_exceed_deadline,  // Waiting for the request would outlast the context's deadline.
  timed_out,              // A timed wait (not a context deadline) ran out.
};

// The category of errc values; its name() is "bubble" and message() describes each value.
const std::error_category& bubble_category() noexcept;

// Makes `std::error_code ec = bubble::errc::full;` work (found by argument-dependent lookup).
std::error_code make_error_code(errc e) noexcept;

// The short name of an errc value, for example "deadline_exceeded"; "unknown" for other values.
const char* to_string(errc e) noexcept;

}  // namespace bubble

template <>
struct std::is_error_code_enum<bubble::errc> : std::true_type {};
