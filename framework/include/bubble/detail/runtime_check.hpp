#pragma once

#include <cstdint>

#include <bubble/runtime.hpp>

namespace bubble::detail {

// The check every blocking operation of a primitive makes first: the calling thread must run on
// the primitive's runtime. A Mutex of the system runtime (say, a test fixture's member) locked by
// a bubble thread would otherwise block that thread outside the bubble's scheduler, and the bubble
// would hang until its watchdog aborts; a bubble's primitive used from outside that bubble (or
// after it ended) would reach a scheduler that is not running (or is gone).
//
// Runtimes that are not controlled run their threads as plain OS threads that belong to no
// bubble, so for this check they are all one: a primitive of the system runtime may be used by
// any thread that is not a bubble's.

// The Runtime::serial() of the controlled runtime (a bubble) whose thread is running on this OS
// thread, or 0 when none is (detail::set_current_runtime keeps it up to date). constinit: read
// without a TLS wrapper call.
extern constinit thread_local std::uint64_t tl_controlled_serial;

// What a primitive records at construction (while `rt` is surely alive) and compares on every
// blocking call: rt.serial() if `rt` is controlled, 0 otherwise. A serial, not an address, so
// that a primitive of an ended bubble never matches a later bubble allocated at the same address.
inline std::uint64_t binding_of(const Runtime& rt) noexcept {
  return rt.controlled() ? rt.serial() : 0;
}

// Throws the std::logic_error of check_caller. Out of line and cold: the message names the
// primitive ("bubble::Mutex #3"), its runtime (or "a bubble that has ended", when `runtime` is no
// longer alive: it is looked up, never dereferenced, in the registry of live runtimes), the
// operation and the caller's runtime.
[[noreturn, gnu::cold, gnu::noinline]] void throw_foreign_caller(std::uint64_t binding,
                                                                 const Runtime* runtime,
                                                                 const char* primitive,
                                                                 std::uint64_t id,
                                                                 const char* operation);

// Throws std::logic_error unless the calling thread runs on the runtime that `binding` (from
// binding_of) stands for. `primitive` is the class name without namespace ("Mutex"), `id` the
// primitive's object id, `runtime` its runtime and `operation` the call ("Mutex::lock"), for the
// message. The fast path is one thread-local load and one comparison; `runtime` is never
// dereferenced (it may be a bubble that has ended).
inline void check_caller(std::uint64_t binding, const Runtime* runtime, const char* primitive,
                         std::uint64_t id, const char* operation) {
  if (tl_controlled_serial != binding) [[unlikely]] {
    throw_foreign_caller(binding, runtime, primitive, id, operation);
  }
}

// The same check for an object that keeps only a Runtime* that may have ended (a Context keeps
// the runtime of its deadline timer): out of line, with no fast path beyond a pointer comparison;
// whether `runtime` is alive and controlled is looked up in the registry of live runtimes.
void check_caller_on(const Runtime* runtime, const char* primitive, std::uint64_t id,
                     const char* operation);

}  // namespace bubble::detail
