// bubble::instrument's runtime, memory and static initialization: allocations made in a bubble are
// fresh memory for race detection (what an earlier owner of the same addresses did is forgotten),
// and the C++ runtime's guards of function-local statics order an initialization before every
// use that waited for it or found it done.
//
// The allocation functions replace the C library's for the whole program (operator new calls
// malloc) and forward to its own allocator (glibc's __libc_ entry points); free, which needs
// nothing, stays the C library's.

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <bubble/detail/atomic_hooks.hpp>
#include <bubble/detail/race_hooks.hpp>

// NOLINTBEGIN(bugprone-reserved-identifier,readability-identifier-naming): glibc's names
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void* __libc_valloc(std::size_t size);
void* __libc_pvalloc(std::size_t size);
}
// NOLINTEND(bugprone-reserved-identifier,readability-identifier-naming)

namespace {

using bubble::detail::in_controlled_thread;

void* fresh(void* p, std::size_t size) noexcept {
  if (p != nullptr && in_controlled_thread()) [[unlikely]]
    bubble::detail::memory_fresh(p, size);
  return p;
}

// The C++ runtime's definition of `name`, the next after this program's own.
void* next_definition(const char* name) noexcept {
  void* p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) {
    std::fprintf(stderr, "bubble::instrument: cannot find the C++ runtime's %s\n", name);
    std::abort();
  }
  return p;
}

// The C++ runtime's guard functions, resolved on first use. Not function-local statics: their
// initialization would take a guard, which would call these very functions.
constinit std::atomic<void*> next_guard_acquire{nullptr};
constinit std::atomic<void*> next_guard_release{nullptr};

template <class F>
F cached_next(std::atomic<void*>& cache, const char* name) noexcept {
  void* p = cache.load(std::memory_order_relaxed);
  if (p == nullptr) {
    p = next_definition(name);
    cache.store(p, std::memory_order_relaxed);
  }
  return reinterpret_cast<F>(p);
}

bool power_of_two(std::size_t n) noexcept {
  return n != 0 && (n & (n - 1)) == 0;
}

}  // namespace

// NOLINTBEGIN(bugprone-reserved-identifier,readability-identifier-naming): the C library's and the
// C++ ABI's names
extern "C" {

void* malloc(std::size_t size) {
  return fresh(__libc_malloc(size), size);
}

void* calloc(std::size_t count, std::size_t size) {
  return fresh(__libc_calloc(count, size), count * size);
}

void* realloc(void* p, std::size_t size) {
  void* q = __libc_realloc(p, size);
  // A block that moved is new; one that grew in place keeps its history (its first bytes are
  // the caller's, unchanged).
  return q != p ? fresh(q, size) : q;
}

void* memalign(std::size_t alignment, std::size_t size) {
  return fresh(__libc_memalign(alignment, size), size);
}

void* aligned_alloc(std::size_t alignment, std::size_t size) {
  return fresh(__libc_memalign(alignment, size), size);
}

int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  if (!power_of_two(alignment) || alignment % sizeof(void*) != 0) return 22;  // EINVAL
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr && size != 0) return 12;  // ENOMEM
  *out = fresh(p, size);
  return 0;
}

void* valloc(std::size_t size) {
  return fresh(__libc_valloc(size), size);
}

void* pvalloc(std::size_t size) {
  return fresh(__libc_pvalloc(size), size);
}

// The guard of a function-local static: the initializing thread's release and the acquire of a
// thread that waited for it (or found it done inside the call) are synchronization the C++
// runtime performs uninstrumented; the inline fast path's acquire load is instrumented.
int __cxa_guard_acquire(std::uint64_t* guard) {
  const auto real = cached_next<int (*)(std::uint64_t*)>(next_guard_acquire, "__cxa_guard_acquire");
  const int must_initialize = real(guard);
  if (must_initialize == 0 && in_controlled_thread()) [[unlikely]]
    bubble::detail::atomic_order_only(guard, bubble::detail::AtomicOp::load,
                                      std::memory_order_acquire);
  return must_initialize;
}

void __cxa_guard_release(std::uint64_t* guard) {
  if (in_controlled_thread()) [[unlikely]]
    bubble::detail::atomic_order_only(guard, bubble::detail::AtomicOp::store,
                                      std::memory_order_release);
  const auto real =
      cached_next<void (*)(std::uint64_t*)>(next_guard_release, "__cxa_guard_release");
  real(guard);
}

}  // extern "C"
// NOLINTEND(bugprone-reserved-identifier,readability-identifier-naming)
