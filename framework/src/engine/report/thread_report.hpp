#pragma once

// Private: the thread listing of a bubble's failure messages.

#include <bubble/source_location.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bubble::detail {

// One thread that had not exited when the run failed, as the report shows it.
struct ReportedThread {
  std::uint64_t id = 0;
  std::string_view name;
  std::string_view state;  // "runnable", "running", "blocked".
  bool blocked = false;
  // While blocked: what on (kind, object id, 0 for none) and where. Otherwise: the kind and
  // location of its last scheduling point.
  std::string_view kind;
  std::uint64_t object_id = 0;
  SourceLocation where;
  // If not empty: what it is blocked on as its own line shows it, replacing kind and object id
  // (with the object's name: `Mutex::lock "accounts" (object #3)`).
  std::string blocked_on{};
  // If not empty: the location to show instead of `where` (the user's frame of a captured stack).
  std::string user_location{};
  // Text that ends the thread's own line after its location (a select's cases).
  std::string after_location{};
  // Lines that follow the thread's own line (its stack), each ending with a newline; a thread
  // summarised in a group line shows none.
  std::string details{};
};

// Threads with the same state, kind and location form a group; a group of more than this many
// threads is summarised in one line instead of listed.
inline constexpr std::size_t kReportGroupAbove = 20;
// How many members a summary line names.
inline constexpr std::size_t kReportGroupExamples = 3;

// "file:line", or "(unknown location)" for a default-constructed location.
std::string location_text(const SourceLocation& where);

// The thread lines of a failure message, in the order of `threads` (creation order), each
// ending with a newline. A thread in a group of at most kReportGroupAbove threads has its own line:
//   `  thread #3 "b": blocked on Forever::wait (object #99) at f.cpp:12`
//   `  thread #4 "c": runnable, last at spawned f.cpp:20`
// A bigger group has one line, where its first member would be, naming its first
// kReportGroupExamples members:
//   `  31,990 threads runnable, last at spawned f.cpp:43: #2 "s", #3 "s", #4 "s" and 31,987 more`
//   `  25 threads blocked on Forever::wait (object #1) at f.cpp:12: #2 "w", ... and 22 more`
// (a group blocked on several objects says "(on 30 objects)" instead of the object). So the
// listing grows with the number of distinct places threads are at, not with the threads.
std::string format_thread_report(const std::vector<ReportedThread>& threads);

// `n` with a comma between groups of three digits: 31990 -> "31,990".
std::string with_thousands_separators(std::uint64_t n);

}  // namespace bubble::detail
