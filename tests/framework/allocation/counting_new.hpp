#pragma once

// Allocation counting for the allocation tests. counting_new.cpp replaces the global operator new
// and delete (so it must be linked into a test program of its own, once); these functions count
// the calls of operator new that a piece of code makes.

#include <cstddef>

namespace bubble::test {

// Which allocations a count includes.
enum class AllocationScope {
  this_thread,  // only those made on the calling OS thread
  all_threads,  // those made on any thread while counting
};

// Starts counting in `scope` from zero. Counting does not nest.
void start_counting_allocations(AllocationScope scope) noexcept;

// Stops counting and returns the number of allocations counted since the start.
std::size_t stop_counting_allocations() noexcept;

// Runs `fn` and returns the number of allocations made in `scope` while it ran.
template <class F>
std::size_t allocations_of(AllocationScope scope, F&& fn) {
  start_counting_allocations(scope);
  fn();
  return stop_counting_allocations();
}

}  // namespace bubble::test
