#pragma once

// Private: capturing bubble threads' call stacks, and writing them into failure reports.

#include <array>
#include <cstddef>
#include <string>

#include <bubble/call_stack.hpp>

namespace bubble::detail {

// The return addresses of a captured stack, innermost first.
struct CapturedStack {
  static constexpr std::size_t kMaxFrames = 48;
  std::array<void*, kMaxFrames> frames{};
  std::size_t size = 0;
};

// Captures the calling thread's stack into `out`, leaving out this function and the `skip`
// frames above it (the engine's own). Never allocates.
void capture_stack(CapturedStack& out, std::size_t skip) noexcept;

// The report lines of `stack` (each starting with `indent`), one frame per line as
// "function at file:line", the first user frame (is_user_frame) marked with "> "; "" if the stack
// is empty. `user_location`, if not null, receives "file:line" of that frame, or "" if none.
std::string stack_lines(const CapturedStack& stack, const StackSymbolizer& symbolize,
                        const std::string& indent, std::string* user_location);

}  // namespace bubble::detail
