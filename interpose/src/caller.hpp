#pragma once

// Where a standard-library call came from, for deadlock reports and traces: the C entry point
// cannot see the user's source line, but it can see the address it returns to.

#include <bubble/source_location.hpp>

namespace bubble::interpose::detail {

// The location of a call of `entry_point` (a pthread/libc function name) that returns to
// `return_address` (__builtin_return_address(0) in the override): its file is
// "pthread_mutex_lock called from my_tests+0x4f2a1", the module that made the call (the base name
// of the executable or shared object, as dladdr names it) and the offset in it of the call
// instruction, which `addr2line -e my_tests 0x4f2a1` turns into the caller's file and line; its
// line is 0 and its function `entry_point`. The offset, not the address, so that the text is the
// same in every process of a program (address-space layout randomization moves the base). When
// the module is unknown, "called from 0x..." with the address.
//
// The text is made once per distinct return address and kept for the life of the process (a
// SourceLocation holds a plain pointer, and reports and traces may outlive the run), in a table
// guarded by a spin lock: any OS thread running an intercepting bubble may call it. Returns a
// location with an empty file (shown as "(unknown location)") if memory runs out.
SourceLocation caller_location(const char* entry_point, const void* return_address) noexcept;

}  // namespace bubble::interpose::detail

// The caller's location of the enclosing override named `fn`; a macro so that
// __builtin_return_address is evaluated in the override's own frame.
#define BUBBLE_CALLER(fn) \
  ::bubble::interpose::detail::caller_location(#fn, __builtin_return_address(0))
