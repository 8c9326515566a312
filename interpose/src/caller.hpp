#pragma once

// Where a standard-library call came from, for deadlock reports and traces: the C entry point
// cannot see the user's source line, but it can see the address it returns to
// (bubble::detail::caller_location, in the framework).

#include <bubble/detail/caller_location.hpp>

namespace bubble::interpose::detail {
using ::bubble::detail::caller_location;
}  // namespace bubble::interpose::detail

// The caller's location of the enclosing override named `fn`; a macro so that
// __builtin_return_address is evaluated in the override's own frame.
#define BUBBLE_CALLER(fn) ::bubble::detail::caller_location(#fn, __builtin_return_address(0))
