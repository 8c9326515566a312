#pragma once

// Private: the parts of a bubble's failure report that say what a blocked thread waits for and
// who could release it: object names, mutex holders, the other side of a channel, and cycles in
// the wait-for graph.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include <bubble/runtime.hpp>
#include <bubble/time.hpp>

namespace bubble::detail {

// One live thread of a bubble, as the report sees it.
struct ReportThread {
  std::uint64_t id = 0;
  std::string_view name;
  const void* token = nullptr;     // Its owner token: the record Runtime::prepare binds.
  const WaitInfo* what = nullptr;  // What it is blocked on; nullptr if it is not blocked.
};

// Everything the report functions read: the run's live threads (in creation order), the names
// given to objects, and the run's start (holders' times are shown relative to it).
struct ReportView {
  std::span<const ReportThread> threads;
  const std::unordered_map<std::uint64_t, std::string>* names = nullptr;
  TimePoint start{};
};

// `kind "name" (object #N)`, `kind (object #N)` when the object has no name, or `kind` alone
// when the wait is on no object (a sleep).
std::string blocked_on_text(const WaitInfo& what, const ReportView& view);

// The lines (each indented by four spaces, each ending in a newline) that follow a blocked
// thread's line: for a Mutex, who holds it and since when (`held by thread #3 "reader" since
// +2s`); for a WeightedSemaphore, how many units are free; for a Channel, the threads blocked on
// its other side, or that there are none. Empty when there is nothing to add.
std::string blocked_detail_lines(const ReportThread& thread, const ReportView& view);

// The cycles of the wait-for graph, one line per edge, each cycle starting at its thread with
// the smallest id (`cycle: thread #2 "a" waits for Mutex "audit" held by thread #3 "b"`, the
// next edges aligned under it). An edge goes from a blocked thread to the thread that holds the
// Mutex it waits for, or to the thread it joins: edges that are certain, so every cycle found is
// a real deadlock. Empty when there is no cycle.
std::string cycle_lines(const ReportView& view);

}  // namespace bubble::detail
