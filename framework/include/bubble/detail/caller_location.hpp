#pragma once

// Where a call into bubble came from when the caller's source line is not known: an entry point
// of the C library that bubble::interpose replaces, or a hook of bubble::instrument, can see the
// address it returns to, and that address names the calling code.

#include <string>

#include <bubble/source_location.hpp>

namespace bubble::detail {

// "my_tests+0x4f2a1": the module that contains the call that returns to `return_address` (the
// base name of the executable or shared object, as dladdr names it) and the offset in it of the
// call instruction, which `addr2line -e my_tests 0x4f2a1` turns into a file and line. The offset,
// not the address, so that the text is the same in every process of a program (address-space
// layout randomization moves the base). "0x..." with the address when the module is unknown.
std::string module_offset_text(const void* return_address);

// The location of a call of `entry_point` (a pthread/libc function name, or an operation's name)
// that returns to `return_address` (__builtin_return_address(0) in the callee): its file is
// "pthread_mutex_lock called from my_tests+0x4f2a1" (module_offset_text), its line 0 and its
// function `entry_point`; reports print a location with a file and no line as that text.
//
// The text is made once per distinct pair and kept for the life of the process (a SourceLocation
// holds a plain pointer, and reports and traces may outlive the run), in a table guarded by a spin
// lock: any OS thread may call it. Returns a location with an empty file (shown as "(unknown
// location)") if memory runs out.
SourceLocation caller_location(const char* entry_point, const void* return_address) noexcept;

}  // namespace bubble::detail
