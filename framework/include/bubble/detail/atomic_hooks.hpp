#pragma once

// The hooks through which atomic operations reach the running bubble: those of bubble::Atomic
// (atomic.hpp) and those of code compiled with bubble::instrument (ThreadSanitizer's
// instrumentation, interpose/src/instrument/). Every hook is called only where
// tl_controlled_serial is set (a bubble runs on the calling OS thread); the callers test that
// inline, so that outside a bubble an atomic operation costs one thread-local load more than the
// bare operation.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <bubble/detail/runtime_check.hpp>
#include <bubble/source_location.hpp>

namespace bubble::detail {

// The operations the hooks name, in traces and reports. The read-modify-writes that return the
// new value (__atomic_add_fetch, ...) are reported as the fetch_ operation they extend.
enum class AtomicOp : std::uint8_t {
  load,
  store,
  exchange,
  compare_exchange_weak,
  compare_exchange_strong,
  fetch_add,
  fetch_sub,
  fetch_and,
  fetch_or,
  fetch_xor,
  fetch_nand,
  wait,
  notify_one,
  notify_all,
  thread_fence,
};

// Who performs the operation: a bubble::Atomic, or code compiled with bubble::instrument (whose
// atomics are std::atomic, C11 atomics or __atomic builtins: "atomic" in traces).
enum class AtomicSource : std::uint8_t { bubble_atomic, instrumented };

// The text a trace and a report show for an operation, e.g. "Atomic::fetch_add(acq_rel)" or
// "atomic load(acquire)"; a string with static storage duration.
std::string_view atomic_op_text(AtomicSource source, AtomicOp op, std::memory_order order) noexcept;

// The scheduling point of an atomic operation on `object` (nullptr for a fence), made before the
// operation: the strategy may run another thread first, and the operation then runs at once,
// before any other thread of the bubble. It also applies the operation's ordering to the run's
// happens-before relation (race detection), except for compare-exchanges, whose ordering depends
// on their outcome (atomic_cas_outcome). The object is identified by its address: the first
// operation on an address in a run gives it the run's next object id (as a primitive's
// construction does), so ids are the same in every run of the same program and schedule. Not a
// blocking call: never throws bubble::Unwind.
void atomic_point(const void* object, AtomicSource source, AtomicOp op, std::memory_order order,
                  SourceLocation where) noexcept;

// The ordering of a compare-exchange on `object` once its outcome is known: `success` if it
// exchanged, `failure` (a load) if it did not.
void atomic_cas_outcome(const void* object, bool exchanged, std::memory_order success,
                        std::memory_order failure) noexcept;

// Only the happens-before effect of an atomic operation on `object`, without a scheduling point:
// for synchronization that uninstrumented code performs and a hook observes from outside (the C++
// runtime's guard of a static local's initialization).
void atomic_order_only(const void* object, AtomicOp op, std::memory_order order) noexcept;

// Gives `object` (an atomic constructed in the running bubble) a fresh object id called `name`,
// shown in traces and reports.
void atomic_name(const void* object, std::string_view name);

// The atomic at `object` ends: its address may be reused by another object, which is then a new
// object (a new id, no name, no happens-before history).
void atomic_forget(const void* object) noexcept;

// Blocks the calling bubble thread until atomic_unpark(object) wakes it; the wait of
// Atomic::wait, which checks the value before each call. May throw bubble::Unwind (a failed run
// is torn down). Throws std::logic_error from a timer callback.
void atomic_park(const void* object, SourceLocation where);

// Wakes one (or every) thread blocked in atomic_park(object). Never blocks.
void atomic_unpark(const void* object, bool all) noexcept;

// Whether the calling OS thread is running a bubble: the inline test every caller of the hooks
// makes first (one thread-local load).
inline bool in_controlled_thread() noexcept {
  return tl_controlled_serial != 0;
}

}  // namespace bubble::detail
