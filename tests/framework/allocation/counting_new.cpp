// Replaces the global operator new and delete with malloc and free, counting the allocations
// that counting_new.hpp's functions ask for.

#include "counting_new.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

// Whether a count is running, whether it includes every thread, and the allocations counted.
// tl_counting_thread marks the OS thread that started the count.
std::atomic<bool> g_counting{false};
std::atomic<bool> g_all_threads{false};
std::atomic<std::size_t> g_allocations{0};
thread_local bool tl_counting_thread = false;

}  // namespace

namespace bubble::test {

void start_counting_allocations(AllocationScope scope) noexcept {
  g_allocations.store(0);
  g_all_threads.store(scope == AllocationScope::all_threads);
  tl_counting_thread = true;
  g_counting.store(true);
}

std::size_t stop_counting_allocations() noexcept {
  g_counting.store(false);
  tl_counting_thread = false;
  return g_allocations.load();
}

}  // namespace bubble::test

void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed) &&
      (tl_counting_thread || g_all_threads.load(std::memory_order_relaxed))) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  return ::operator new(size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
