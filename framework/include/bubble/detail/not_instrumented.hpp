#pragma once

// BUBBLE_NOT_INSTRUMENTED marks an inline function of bubble's own headers that performs atomic
// operations on bubble's internal state (a Mutex's state word, a Context's status, bubble::Atomic
// itself). In a translation unit compiled with bubble::instrument (which defines
// BUBBLE_INSTRUMENTED), such a function is compiled without ThreadSanitizer's instrumentation
// and is never inlined into instrumented code: its atomics are bubble's internals, which the
// scheduler and race detection see through their own hooks (a primitive's scheduling point and
// its Runtime::sync_release / sync_acquire), and an instrumented copy would add scheduling points
// inside a primitive's operation. Elsewhere (including bubble's own ThreadSanitizer build, where
// the real ThreadSanitizer must see every atomic) it expands to nothing.

#if defined(BUBBLE_INSTRUMENTED)
#if defined(__clang__)
#define BUBBLE_NOT_INSTRUMENTED __attribute__((disable_sanitizer_instrumentation, noinline))
#else
#define BUBBLE_NOT_INSTRUMENTED __attribute__((no_sanitize_thread, noinline))
#endif
#else
#define BUBBLE_NOT_INSTRUMENTED
#endif
