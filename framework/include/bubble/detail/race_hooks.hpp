#pragma once

// The hooks through which code compiled with bubble::instrument (ThreadSanitizer's
// instrumentation, interpose/src/instrument/) reports its plain memory accesses, its allocations
// and its function calls to the running bubble, for race detection (the atomics' hooks are in
// atomic_hooks.hpp). Every hook is called only where detail::in_controlled_thread() holds (a
// bubble runs on the calling OS thread): the callers test that inline.

#include <cstddef>

namespace bubble::detail {

// A read (`write` false) or write of `size` bytes at `address`, made by the code that `pc` (the
// return address of the instrumentation's call) belongs to. The first one of a run starts race
// detection; one that races with an earlier access fails the run with a report of both.
void memory_access(const void* address, std::size_t size, bool write, const void* pc) noexcept;

// `size` bytes at `address` are new (an allocation): their earlier accesses are forgotten.
void memory_fresh(const void* address, std::size_t size) noexcept;

// The calling bubble thread entered a function called from `pc` (a return address), or left the
// one it entered last: its call stack for race reports.
void function_entry(const void* pc) noexcept;
void function_exit() noexcept;

}  // namespace bubble::detail
