#include "engine/report/call_stacks.hpp"

#include <execinfo.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace bubble {

bool is_user_frame(const StackFrame& frame) noexcept {
  const std::string_view file = frame.file;
  if (file.empty()) return false;
  if (file.find("/c++/") != std::string_view::npos || file.rfind("/usr/include/", 0) == 0) {
    return false;
  }
  // Bubble's headers wherever they are: in its source tree (framework/include/bubble/, also under
  // add_subdirectory or FetchContent) or installed (<prefix>/include/bubble/); and its sources.
  for (std::string_view own :
       {"/include/bubble/", "framework/src/", "framework/testing/", "interpose/src/"}) {
    if (file.find(own) != std::string_view::npos) return false;
  }
  return true;
}

namespace detail {

[[gnu::noinline]] void capture_stack(CapturedStack& out, std::size_t skip) noexcept {
  std::array<void*, CapturedStack::kMaxFrames + 8> buffer{};
  const int n = ::backtrace(buffer.data(), static_cast<int>(buffer.size()));
  const std::size_t first = std::min<std::size_t>(skip + 1, static_cast<std::size_t>(n));
  out.size = std::min(CapturedStack::kMaxFrames, static_cast<std::size_t>(n) - first);
  std::copy_n(buffer.begin() + static_cast<std::ptrdiff_t>(first), out.size, out.frames.begin());
}

std::string stack_lines(const CapturedStack& stack, const StackSymbolizer& symbolize,
                        const std::string& indent, std::string* user_location) {
  if (user_location != nullptr) user_location->clear();
  if (stack.size == 0 || !symbolize) return {};
  std::vector<const void*> addresses(
      stack.frames.begin(), stack.frames.begin() + static_cast<std::ptrdiff_t>(stack.size));
  std::vector<StackFrame> frames;
  try {
    frames = symbolize(addresses);
  } catch (...) {
    return indent + "  (the stack could not be symbolized)\n";
  }
  std::string out;
  bool marked = false;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const StackFrame& f = frames[i];
    const bool mark = !marked && is_user_frame(f);
    marked = marked || mark;
    out += indent + (mark ? "> " : "  ") + (f.function.empty() ? "??" : f.function);
    if (!f.file.empty()) out += " at " + f.file + ":" + std::to_string(f.line);
    out += "\n";
    if (mark && user_location != nullptr) *user_location = f.file + ":" + std::to_string(f.line);
  }
  return out;
}

}  // namespace detail
}  // namespace bubble
