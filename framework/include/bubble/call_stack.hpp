#pragma once

// Call stacks in failure reports: the frames a symbolizer makes of captured return addresses.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace bubble {

// One frame of a symbolized call stack. `file` is empty and `line` 0 when the symbolizer has no
// debug information for the address (code compiled without -g); `function` is empty when it has
// no symbol either.
struct StackFrame {
  std::string function;
  std::string file;
  std::size_t line = 0;
};

// Turns return addresses, innermost first, into frames, innermost first: at least one per address,
// more where functions were inlined at the address (the inlined ones first). Called only while a
// failure report is written, never on a run's hot path. The core library captures addresses but
// does not read debug information; bubble::testing provides one built on Boost.Stacktrace
// (bubble/testing/stacks.hpp).
using StackSymbolizer = std::function<std::vector<StackFrame>(const std::vector<const void*>&)>;

// True if `frame` is the user's code: it has a source file, and that file is neither a header of
// the standard library or another system library (a path containing "/c++/" or starting with
// "/usr/include/") nor a source of bubble itself (a path containing "/include/bubble/", bubble's
// headers in its source tree or installed under any prefix, "framework/src/", "framework/testing/"
// or "interpose/src/", the standard-library interposer).
// Failure reports mark the first such frame of a blocked thread's stack and give its line as the
// thread's location.
bool is_user_frame(const StackFrame& frame) noexcept;

}  // namespace bubble
