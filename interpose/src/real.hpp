#pragma once

// How an override reaches the function it replaces ("the real one").

#include <atomic>

#include <bubble/detail/intercept.hpp>

namespace bubble::interpose::detail {

// The next definition of `name` after this executable's own: glibc's, or, in a sanitized build,
// the sanitizer's interceptor. AddressSanitizer's runtime is linked into the executable itself
// (its interceptors are weak definitions that ours replace), so RTLD_NEXT would skip it: the
// interceptor is looked up first under its own name, "__interceptor_<name>" (compiler-rt), and
// chained to when present, so the sanitizer still sees every thread and lock. Aborts with a
// message if neither exists (a libc without `name`).
void* resolve_next(const char* name, const char* interceptor_name) noexcept;

// The intercepting runtime of the calling OS thread, or nullptr: the one check every override
// makes before anything else (one thread-local load).
inline Runtime* intercepting() noexcept {
  return ::bubble::detail::tl_intercepting_runtime;
}

}  // namespace bubble::interpose::detail

// BUBBLE_REAL(fn): a pointer to the real `fn`, of the type of ::fn, resolved on first use and
// cached (a benign race: every thread resolves the same pointer). No function-local static with
// a guard: a guard may itself lock a pthread mutex, which would call back into the overrides.
#define BUBBLE_REAL(fn)                                                         \
  ([]() noexcept {                                                              \
    static constinit std::atomic<void*> cached{nullptr};                        \
    void* p = cached.load(std::memory_order_relaxed);                           \
    if (p == nullptr) [[unlikely]] {                                            \
      p = ::bubble::interpose::detail::resolve_next(#fn, "__interceptor_" #fn); \
      cached.store(p, std::memory_order_relaxed);                               \
    }                                                                           \
    return reinterpret_cast<decltype(&::fn)>(p);                                \
  }())
