#pragma once

// The check the blocking overrides make first: is this call to be routed into a bubble?

#include <new>

#include "real.hpp"
#include "run_state.hpp"

namespace bubble::interpose::detail {

// The run state and the calling bubble thread's record, when the call is to be intercepted; empty
// (false) when the calling OS thread runs no intercepting bubble, when the caller is that bubble's
// scheduler running a timer callback, or when memory for the run state runs out.
struct Intercepted {
  RunState* state = nullptr;
  ThreadRecord* self = nullptr;
  explicit operator bool() const noexcept { return self != nullptr; }
};

inline Intercepted intercepted() noexcept {
  Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return {};
  try {
    RunState& state = RunState::of(*rt);
    return {&state, state.self()};
  } catch (const std::bad_alloc&) {
    return {};
  }
}

// A deadline's timespec is valid: tv_nsec in [0, 1e9).
inline bool valid(const timespec* t) noexcept {
  return t != nullptr && t->tv_nsec >= 0 && t->tv_nsec < 1'000'000'000;
}

}  // namespace bubble::interpose::detail
